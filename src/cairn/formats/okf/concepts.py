"""OKF concept files → :class:`cairn.model.Document`: the fields (trust tier, staleness,
relations, link targets) and :func:`parse`. See :mod:`cairn.formats.okf`."""

from __future__ import annotations

import datetime as _dt
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from cairn.formats import frontmatter as fm_mod
from cairn.formats import markdown as md_mod
from cairn.formats.guard import check_text, gc_paused
from cairn.model import CONCEPT, EMBED, MARKDOWN_LINK, PREAMBLE, Diagnostic, Document, Link, Unit

RESERVED = ("index.md", "log.md")
TRUST_UNVERIFIED = "unverified"
TRUST_MACHINE = "machine-confirmed"
TRUST_HUMAN = "human-reviewed"
STATUSES = ("draft", "stable", "deprecated")
MEMORY_CONCEPT_TYPE = "L2 Concept"
"""The ``type`` of a concept of an agent-memory bundle (``OKF-MEMORY.md``)."""
MEMORY_STATUSES = ("active", "superseded", "archived")
"""The ``status`` values of such a concept: its own life cycle, not OKF's §5.4."""
KNOWN_VERSIONS = ("0.1", "0.2")

_OFFSET_DT = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[Zz]|[+-]\d{2}:?\d{2})"
)
_LOG_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?::\s*(.*))?")
_URLISH = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


# --- helpers ---------------------------------------------------------------------------


def concept_id(relpath: str) -> str:
    """The concept id of a file: its path within the bundle without ``.md`` (§2)."""
    rel = relpath.replace("\\", "/").lstrip("/")
    return rel[:-3] if rel.lower().endswith(".md") else rel


def normalise_link_target(target: str, relpath: str) -> str:
    """A link or path-valued field, as a path within the bundle (§6.1, §6.2).

    ``/x/y.md`` → ``x/y.md``; a relative path is joined to the folder of ``relpath`` and
    normalised; a path that would leave the bundle, a URL, or an empty target is
    returned unchanged.
    """
    if not target or _URLISH.match(target):
        return target
    if target.startswith("/"):
        norm = posixpath.normpath(target.lstrip("/"))
    else:
        norm = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), target))
    if norm == "." or norm.startswith("../") or norm == "..":
        return target
    if target.endswith("/") and not norm.endswith("/"):
        norm += "/"
    return norm


def normalise_verified(value: Any) -> list[dict[str, Any]]:
    """``verified`` as a list of mappings: a bare mapping is a one-element list (§5.2);
    entries that are not mappings are dropped."""
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


def trust_tier(verified: Any) -> str:
    """The trust tier of a concept from its ``verified`` value (§5.3).

    No (usable) ``verified`` ⇒ ``unverified``; only non-``human:`` actors ⇒
    ``machine-confirmed``; any ``human:`` actor ⇒ ``human-reviewed``.
    """
    entries = normalise_verified(verified)
    if not entries:
        return TRUST_UNVERIFIED
    if any(str(e.get("by", "")).startswith("human:") for e in entries):
        return TRUST_HUMAN
    return TRUST_MACHINE


def _offset_datetime(value: Any) -> _dt.datetime | None:
    if not isinstance(value, str) or not _OFFSET_DT.fullmatch(value.strip()):
        return None
    text = value.strip().replace(" ", "T", 1).replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        return _dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def is_stale(stale_after: Any, now: _dt.datetime | None = None) -> bool | None:
    """Whether ``now >= stale_after`` (§5.5); ``None`` unless ``stale_after`` is a full
    datetime with an explicit offset (date-only or naive values are not guessed at)."""
    when = _offset_datetime(stale_after)
    if when is None:
        return None
    now = now or _dt.datetime.now(_dt.UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=_dt.UTC)
    return now >= when


def _iso(value: Any) -> str | None:
    return fm_mod.normalise_date(value) if isinstance(value, str) else None


def _relations(meta: Mapping[str, Any], relpath: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key, type_key in (("relations", "type"), ("okfm_relations", "predicate")):
        value = meta.get(key)
        if not isinstance(value, list):
            continue
        for item in value:
            if not isinstance(item, dict) or not isinstance(item.get("target"), str):
                continue
            conf = item.get("confidence")
            out.append(
                {
                    "target": normalise_link_target(item["target"].strip(), relpath),
                    "type": str(item.get(type_key) or "related"),
                    "confidence": float(conf)
                    if isinstance(conf, int | float) and not isinstance(conf, bool)
                    else None,
                    "field": key,
                }
            )
    sources = meta.get("sources")
    if isinstance(sources, list):
        for item in sources:
            if not isinstance(item, dict):
                continue
            res = item.get("resource")
            if isinstance(res, str) and res.strip().lower().endswith(".md"):
                if _URLISH.match(res.strip()) or " " in res.strip():
                    continue
                res = res.strip()
                entry: dict[str, Any] = {
                    "target": normalise_link_target(res, relpath),
                    "type": "derived_from",
                    "confidence": None,
                    "field": "sources",
                }
                if not res.startswith(("/", "./", "../")):
                    # a bare path: the spec calls it relative, but its own examples
                    # (references/…) are written from the bundle root; offer both
                    root_rel = normalise_link_target("/" + res, relpath)
                    if root_rel != entry["target"]:
                        entry["alternatives"] = [root_rel]
                out.append(entry)
    return out


# --- parsing ---------------------------------------------------------------------------


def parse(text: str, relpath: str) -> Document:
    """Parse one file of an OKF bundle (a concept, ``index.md`` or ``log.md``).

    Args:
        text: the file's text, decoded.
        relpath: the file's path within the bundle, POSIX separators.

    Returns:
        A :class:`Document` with ``format == "okf"`` (see the module docstring).

    Raises:
        cairn.errors.ParseError: binary content (:func:`cairn.formats.guard.check_text`).
    """
    check_text(text, relpath)
    with gc_paused(len(text)):
        analysis = md_mod.analyse(text, relpath, obsidian=False, allow_toml=False)
    front = analysis.front
    meta: dict[str, Any] = dict(front.data)
    warnings = list(analysis.warnings)
    name = posixpath.basename(relpath).lower()
    reserved = name in RESERVED
    # links: normalise to bundle paths
    for sec in analysis.sections:
        sec.links = [
            _bundle_link(link, relpath) if link.kind in (MARKDOWN_LINK, EMBED) else link
            for link in sec.links
        ]
    # a wikilink written as a front matter value ("[[Parent]]") is a link to its target,
    # as in Obsidian (its "frontmatter links"); the body's wikilinks stay plain text
    fm_links = md_mod.frontmatter_links(front)
    if fm_links:
        analysis.sections[0].links[:0] = fm_links
    tags = md_mod.normalise_tags(meta.get("tags"))
    props = {k: md_mod.property_text(v) for k, v in meta.items()}
    generated = meta.get("generated")
    gen_at = _iso(generated.get("at")) if isinstance(generated, dict) else None
    modified = gen_at or _iso(meta.get("timestamp"))
    title_value = meta.get("title")
    title_text = str(title_value).strip() if isinstance(title_value, str | int | float) else ""
    if reserved:
        reserved_type = "okf-index" if name == "index.md" else "okf-log"
        title = title_text or analysis.leading_h1 or md_mod.stem(relpath)
        units = md_mod.build_units(analysis, title, PREAMBLE, tags, props)
        return _document(relpath, title, units, meta, tags, modified, reserved_type, warnings)
    cid = concept_id(relpath)
    if "concept_id" in meta and meta["concept_id"] != cid:
        warnings.append(
            Diagnostic(
                relpath,
                "front matter key 'concept_id' is replaced by the id derived from the path",
                front.key_lines.get("concept_id"),
            )
        )
    meta["concept_id"] = cid
    type_value = meta.get("type")
    doc_type: str | None = type_value.strip() if isinstance(type_value, str) else None
    if not doc_type:
        doc_type = None
        warnings.append(
            Diagnostic(relpath, "OKF concept has no non-empty 'type' (OKF §4.1)", front.start_line)
        )
    title = title_text or md_mod.stem(relpath)
    verified = normalise_verified(meta.get("verified"))
    stale = meta.get("stale_after")
    sources = meta.get("sources")
    okf: dict[str, Any] = {
        "concept_id": cid,
        "status": meta.get("status") if isinstance(meta.get("status"), str) else "stable",
        "trust_tier": trust_tier(meta.get("verified")),
        "verified": verified,
        "generated_by": generated.get("by") if isinstance(generated, dict) else None,
        "generated_at": gen_at,
        "stale_after": _iso(stale) if _offset_datetime(stale) else None,
        "source_ids": [
            str(s["id"]) for s in sources if isinstance(s, dict) and s.get("id") is not None
        ]
        if isinstance(sources, list)
        else [],
    }
    extra: dict[str, Any] = {"okf": okf}
    relations = _relations(meta, relpath)
    if relations:
        extra["relations"] = relations
    description = meta.get("description")
    prefix = description.strip() if isinstance(description, str) else ""
    units = md_mod.build_units(
        analysis, title, CONCEPT, tags, props, first_extra=extra, first_body_prefix=prefix
    )
    return _document(relpath, title, units, meta, tags, modified, doc_type, warnings)


def _document(
    relpath: str,
    title: str,
    units: tuple[Unit, ...],
    meta: dict[str, Any],
    tags: list[str],
    modified: str | None,
    doc_type: str | None,
    warnings: list[Diagnostic],
) -> Document:
    return Document(
        path=relpath,
        format="okf",
        title=title,
        units=units,
        metadata=meta,
        tags=tuple(tags),
        modified=modified,
        type=doc_type,
        warnings=tuple(warnings),
    )


def _bundle_link(link: Link, relpath: str) -> Link:
    if not link.target:
        return link
    target = normalise_link_target(link.target, relpath)
    if target == link.target:
        return link
    return Link(
        kind=link.kind,
        target=target,
        alias=link.alias,
        anchor=link.anchor,
        line=link.line,
        raw=link.raw,
    )


# --- bundle detection ------------------------------------------------------------------
