"""Open Knowledge Format (OKF) bundles: concept files, index and log files, validation.

Follows OKF v0.2 (``okf/SPEC.md`` of GoogleCloudPlatform/knowledge-catalog; digest in
``OKF-SPEC.md``) and the layered agent-memory bundle (``OKF-MEMORY.md``).

Parsing (:func:`parse`) — one :class:`cairn.model.Document` per file, ``format="okf"``:

* A *concept* (every ``.md`` except ``index.md``/``log.md``, §3.1) has
  ``type`` = its required ``type`` key (``None`` plus a warning when missing, §4.1), and
  ``metadata`` = every front matter key as written (unknown keys too, §4.1 "Extensions")
  plus ``metadata["concept_id"]`` = the path within the bundle without ``.md`` (§2).
  ``relpath`` is taken as the path within the bundle (register the bundle folder as the
  source root). The first unit has kind ``concept`` (title = ``title`` or the file stem;
  body = ``description`` then the text before the first heading); heading sections
  follow as in Markdown. Derived signals are in ``units[0].extra["okf"]``:
  ``concept_id``, ``status`` (absent ⇒ ``stable``, §5.4), ``trust_tier``
  (``unverified``/``machine-confirmed``/``human-reviewed``, §5.3, a bare ``verified``
  mapping read as a one-element list), ``verified`` (normalised list), ``generated_by``,
  ``generated_at``, ``stale_after`` (ISO, only when it has an explicit offset),
  ``source_ids``.
* Links are standard Markdown links (§6.1). Their ``target`` is normalised to a path
  within the bundle: ``/tables/x.md`` → ``tables/x.md``; ``./x.md`` or ``../y/x.md``
  are resolved against the file's folder. A relative link that leaves the bundle keeps
  its written form (``../docs/a.md``). URLs stay URLs. Wikilinks, inline tags and
  Obsidian comments are not OKF syntax and are read as plain text.
* Typed relations are recorded in ``units[0].extra["relations"]`` as
  ``{"target": <bundle path>, "type": <relation>, "confidence": <float|None>,
  "field": <key>}``: OKF-MEMORY layer-2 ``relations`` (``{target, type, confidence}``),
  the okf-mesh extension ``okfm_relations`` (``{predicate, target}``), and ``sources``
  entries whose ``resource`` is a path to another concept (type ``derived_from``: §5.1
  lineage; a bare ``x/y.md`` resource also lists its bundle-root reading in
  ``"alternatives"``). They are *not* duplicated as :class:`~cairn.model.Link` values; the graph
  layer turns them into typed edges.
* ``index.md`` → type ``okf-index`` and ``log.md`` → type ``okf-log`` (not concepts;
  first unit kind ``preamble``; in a log each ``## YYYY-MM-DD`` section is a unit).
* ``modified`` = ``generated.at``, falling back to the legacy v0.1 ``timestamp`` (§13.1).

Bundle detection (:func:`is_bundle`): a folder is an OKF bundle when its root
``index.md`` declares ``okf_version`` (§12), or — when it holds no ``.obsidian`` folder —
when it has a root ``index.md`` and at least 90 % of its (first 500) non-reserved
``.md`` files carry a non-empty ``type`` key.

Validation (:func:`validate_bundle`) reports, as :class:`cairn.model.Diagnostic` values
whose message starts with a code: errors (``severity="error"``, the §11 conformance
rules) ``E1`` concept without a parseable YAML front matter mapping, ``E2`` missing,
empty or non-string ``type``, ``E3`` ``index.md`` front matter outside the bundle root,
``E4`` a ``log.md`` date heading that is not ``YYYY-MM-DD``; and warnings/info that
never make a bundle non-conformant (§11: missing optional fields, unknown types or
keys, broken links, missing ``index.md`` are never errors): ``W-link`` broken link,
``W-title``/``W-description`` missing, ``W-root-index-keys`` root index front matter
keys other than ``okf_version``, ``W-index-entry``, ``W-generated``, ``W-verified``,
``W-status``, ``W-offset`` timestamp without offset, ``W-source``, ``W-footnote``,
``W-runtime``, ``W-log-order``, ``W-log-summary``, ``W-ext``; info ``I-no-index``,
``I-timestamp`` (v0.1 ``timestamp``), ``I-citations`` (v0.1 ``# Citations``),
``I-version``, ``I-log-frontmatter``.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import os
import posixpath
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cairn.formats import frontmatter as fm_mod
from cairn.formats import markdown as md_mod
from cairn.model import CONCEPT, EMBED, MARKDOWN_LINK, PREAMBLE, Diagnostic, Document, Link

__all__ = [
    "RESERVED",
    "TRUST_HUMAN",
    "TRUST_MACHINE",
    "TRUST_UNVERIFIED",
    "concept_id",
    "find_bundles",
    "is_bundle",
    "is_stale",
    "normalise_link_target",
    "normalise_verified",
    "parse",
    "trust_tier",
    "validate_bundle",
]

RESERVED = ("index.md", "log.md")
TRUST_UNVERIFIED = "unverified"
TRUST_MACHINE = "machine-confirmed"
TRUST_HUMAN = "human-reviewed"
STATUSES = ("draft", "stable", "deprecated")
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
    """
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
    tags = md_mod.normalise_tags(meta.get("tags"))
    props = {k: md_mod.property_text(v) for k, v in meta.items()}
    generated = meta.get("generated")
    gen_at = _iso(generated.get("at")) if isinstance(generated, dict) else None
    modified = gen_at or _iso(meta.get("timestamp"))
    title_value = meta.get("title")
    title_text = str(title_value).strip() if isinstance(title_value, str | int | float) else ""
    if reserved:
        reserved_type = "okf-index" if name == "index.md" else "okf-log"
        title = title_text or analysis.first_h1 or md_mod.stem(relpath)
        units = md_mod.build_units(analysis, title, PREAMBLE, tags, props)
        return Document(
            path=relpath,
            format="okf",
            title=title,
            units=units,
            metadata=meta,
            tags=tuple(tags),
            modified=modified,
            type=reserved_type,
            warnings=tuple(warnings),
        )
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
    return Document(
        path=relpath,
        format="okf",
        title=title,
        units=units,
        metadata=meta,
        tags=tuple(tags),
        modified=modified,
        type=doc_type,
        declared_id=None,
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


def _iter_md(root: Path, limit: int | None = None) -> Iterator[Path]:
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if fname.startswith("."):
                continue
            if fname.lower().endswith((".md", ".mdx")):
                yield Path(dirpath) / fname
                count += 1
                if limit is not None and count >= limit:
                    return


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def is_bundle(root: Path) -> bool:
    """Whether the folder ``root`` is an OKF bundle (rule in the module docstring)."""
    index = root / "index.md"
    if index.is_file():
        text = _read(index)
        if text is not None and "okf_version" in fm_mod.split(text, allow_toml=False).data:
            return True
    if (root / ".obsidian").exists() or not index.is_file():
        return False
    total = typed = 0
    for path in _iter_md(root, limit=500):
        if path.name.lower() in RESERVED or not path.name.endswith(".md"):
            continue
        total += 1
        text = _read(path)
        if text is None:
            continue
        value = fm_mod.split(text, allow_toml=False).data.get("type")
        if isinstance(value, str) and value.strip():
            typed += 1
    return total > 0 and typed * 10 >= total * 9


def find_bundles(folder: Path, relpaths: list[str]) -> list[str]:
    """Root-relative folders (``""`` for the root) that are OKF bundles, outermost only.

    Candidates are the root and every folder holding an ``index.md``.
    """
    candidates = sorted(
        {""}
        | {
            r.rsplit("/", 1)[0] if "/" in r else ""
            for r in relpaths
            if r.rsplit("/", 1)[-1].lower() == "index.md"
        },
        key=lambda p: (p.count("/") + (1 if p else 0), p),
    )
    bundles: list[str] = []
    for cand in candidates:
        if any(cand == b or cand.startswith(b + "/") or not b for b in bundles):
            continue
        if is_bundle(folder / cand if cand else folder):
            bundles.append(cand)
    return bundles



# --- validation ------------------------------------------------------------------------


def _diag(path: str, code: str, message: str, line: int | None, severity: str) -> Diagnostic:
    return Diagnostic(path, f"{code}: {message}", line, severity)


def validate_bundle(root: Path) -> list[Diagnostic]:
    """Check the bundle at ``root`` against OKF v0.2 conformance (§11) and good practice.

    Returns:
        Diagnostics sorted by path then line; ``severity == "error"`` marks a broken
        conformance rule (codes ``E1``–``E4``), ``"warning"``/``"info"`` the rest (see
        the module docstring). Paths are relative to ``root``. Never raises on content.
    """
    root = Path(root)
    out: list[Diagnostic] = []
    if not (root / "index.md").is_file():
        out.append(_diag("index.md", "I-no-index", "the bundle has no root index.md", None, "info"))
    for path in _iter_md(root):
        rel = path.relative_to(root).as_posix()
        if not path.name.endswith(".md"):
            out.append(
                _diag(
                    rel, "W-ext", "OKF documents use the lower-case .md extension", None, "warning"
                )
            )
            continue
        text = _read(path)
        if text is None:
            out.append(_diag(rel, "E1", "file is not readable UTF-8 text", None, "error"))
            continue
        name = path.name.lower()
        if name == "index.md":
            out.extend(_check_index(root, rel, text, is_root=(path.parent == root)))
        elif name == "log.md":
            out.extend(_check_log(root, rel, text))
        else:
            out.extend(_check_concept(root, rel, text))
    out.sort(key=lambda d: (d.path, d.line or 0, d.message))
    return out


def _check_links(root: Path, rel: str, doc: Document) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for unit in doc.units:
        for link in unit.links:
            if link.kind not in (MARKDOWN_LINK, EMBED) or not link.target:
                continue
            target = link.target
            if _URLISH.match(target) or target.startswith("../") or target.startswith("/"):
                continue
            full = root / target
            if full.exists():
                continue
            out.append(
                _diag(
                    rel,
                    "W-link",
                    f"broken link to {target!r} (tolerated, §6.1)",
                    link.line,
                    "warning",
                )
            )
    return out


def _check_offset(rel: str, what: str, value: Any, line: int | None) -> list[Diagnostic]:
    if value is None:
        return []
    if _offset_datetime(value) is None:
        return [
            _diag(
                rel,
                "W-offset",
                f"{what} {value!r} is not an ISO 8601 datetime with an explicit offset (§5)",
                line,
                "warning",
            )
        ]
    return []


def _check_concept(root: Path, rel: str, text: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    front = fm_mod.split(text, rel, allow_toml=False)
    if front.kind is None:
        first = front.diagnostics[0].message if front.diagnostics else ""
        why = first or "no YAML front matter block opened by '---' on line 1"
        out.append(_diag(rel, "E1", f"concept without front matter: {why} (§11.1)", 1, "error"))
        return out
    if front.failed:
        why = front.diagnostics[0].message if front.diagnostics else "unreadable front matter"
        line = front.diagnostics[0].line if front.diagnostics else 1
        out.append(_diag(rel, "E1", f"{why} (§11.1)", line, "error"))
        return out
    meta = front.data
    kl = front.key_lines

    def line_of(key: str) -> int | None:
        return kl.get(key, 1)

    type_value = meta.get("type")
    if type_value is None:
        out.append(_diag(rel, "E2", "front matter has no 'type' (§4.1, §11.2)", 1, "error"))
    elif not isinstance(type_value, str) or not type_value.strip():
        out.append(
            _diag(
                rel,
                "E2",
                f"'type' must be a non-empty string, got {type_value!r} (§11.2)",
                line_of("type"),
                "error",
            )
        )
    for key in ("title", "description"):
        if not meta.get(key):
            out.append(
                _diag(rel, f"W-{key}", f"recommended field {key!r} is missing (§4.1)", 1, "warning")
            )
    if "timestamp" in meta and "generated" not in meta:
        out.append(
            _diag(
                rel,
                "I-timestamp",
                "v0.1 'timestamp' used; v0.2 records it as generated.at (§13.1)",
                line_of("timestamp"),
                "info",
            )
        )
    generated = meta.get("generated")
    if generated is not None:
        if not isinstance(generated, dict) or not generated.get("by"):
            out.append(
                _diag(
                    rel,
                    "W-generated",
                    "'generated' needs a 'by' actor (§5.2)",
                    line_of("generated"),
                    "warning",
                )
            )
        if isinstance(generated, dict):
            out += _check_offset(rel, "generated.at", generated.get("at"), line_of("generated"))
    verified = meta.get("verified")
    if verified is not None:
        items = verified if isinstance(verified, list) else [verified]
        for item in items:
            if not isinstance(item, dict) or not item.get("by"):
                out.append(
                    _diag(
                        rel,
                        "W-verified",
                        f"verified entry {item!r} needs a 'by' actor (§5.2)",
                        line_of("verified"),
                        "warning",
                    )
                )
            else:
                out += _check_offset(rel, "verified.at", item.get("at"), line_of("verified"))
    status = meta.get("status")
    if status is not None and status not in STATUSES:
        out.append(
            _diag(
                rel,
                "W-status",
                f"status {status!r} is not one of draft, stable, deprecated (§5.4)",
                line_of("status"),
                "warning",
            )
        )
    if "stale_after" in meta:
        out += _check_offset(rel, "stale_after", meta.get("stale_after"), line_of("stale_after"))
    sources = meta.get("sources")
    ids: set[str] = set()
    if sources is not None:
        if not isinstance(sources, list):
            out.append(
                _diag(
                    rel,
                    "W-source",
                    "'sources' should be a list (§5.1)",
                    line_of("sources"),
                    "warning",
                )
            )
        else:
            for item in sources:
                if not isinstance(item, dict) or not item.get("resource"):
                    out.append(
                        _diag(
                            rel,
                            "W-source",
                            f"sources entry {item!r} has no 'resource' (§5.1)",
                            line_of("sources"),
                            "warning",
                        )
                    )
                    continue
                if item.get("id") is not None:
                    ids.add(str(item["id"]))
                if "last_modified" in item:
                    out += _check_offset(
                        rel, "sources.last_modified", item["last_modified"], line_of("sources")
                    )
    window = meta.get("usage_window")
    if isinstance(window, dict):
        for k in ("from", "to"):
            out += _check_offset(rel, f"usage_window.{k}", window.get(k), line_of("usage_window"))
    if type_value == "Attested Computation" and not meta.get("runtime"):
        out.append(
            _diag(
                rel,
                "W-runtime",
                "an Attested Computation needs 'runtime' (§10.2)",
                line_of("type"),
                "warning",
            )
        )
    doc = parse(text, rel)
    if sources is not None:
        for unit in doc.units:
            for label in (unit.extra or {}).get("footnotes", ()):
                if label not in ids:
                    out.append(
                        _diag(
                            rel,
                            "W-footnote",
                            f"footnote [^{label}] matches no sources[].id (§5.1)",
                            unit.line_start,
                            "warning",
                        )
                    )
    for unit in doc.units:
        if unit.level == 1 and unit.title.strip().lower() == "citations":
            out.append(
                _diag(
                    rel,
                    "I-citations",
                    "v0.1 '# Citations' section; v0.2 uses the 'sources' field (§13.1)",
                    unit.line_start,
                    "info",
                )
            )
    out += _check_links(root, rel, doc)
    return out


def _check_index(root: Path, rel: str, text: str, *, is_root: bool) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    front = fm_mod.split(text, rel, allow_toml=False)
    if front.kind is not None:
        if not is_root:
            out.append(
                _diag(
                    rel,
                    "E3",
                    "index.md below the bundle root must not have front matter (§8)",
                    1,
                    "error",
                )
            )
        elif front.failed:
            why = front.diagnostics[0].message if front.diagnostics else "unreadable"
            out.append(_diag(rel, "E3", f"root index.md front matter: {why} (§8)", 1, "error"))
        else:
            extra = [k for k in front.data if k != "okf_version"]
            if extra:
                out.append(
                    _diag(
                        rel,
                        "W-root-index-keys",
                        f"root index.md front matter may only carry okf_version (§8, §12); "
                        f"also has {', '.join(map(repr, extra))}",
                        1,
                        "warning",
                    )
                )
            version = front.data.get("okf_version")
            if version is not None and str(version) not in KNOWN_VERSIONS:
                out.append(
                    _diag(
                        rel,
                        "I-version",
                        f"okf_version {version!r} is not one this reader knows; read best-effort",
                        front.key_lines.get("okf_version", 1),
                        "info",
                    )
                )
    doc = parse(text, rel)
    entries = sum(
        1
        for u in doc.units
        for link in u.links
        if link.kind in (MARKDOWN_LINK, EMBED) or link.kind == "url"
    )
    if not any(u.level > 0 for u in doc.units) or entries == 0:
        out.append(
            _diag(
                rel,
                "W-index-entry",
                "index.md should group '* [Title](url) - description' entries under headings (§8)",
                None,
                "warning",
            )
        )
    out += _check_links(root, rel, doc)
    return out


def _check_log(root: Path, rel: str, text: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    front = fm_mod.split(text, rel, allow_toml=False)
    if front.kind is not None:
        out.append(
            _diag(rel, "I-log-frontmatter", "log.md front matter is not defined by §9", 1, "info")
        )
    doc = parse(text, rel)
    dates: list[tuple[str, int]] = []
    for unit in doc.units[1:]:
        title = unit.title.strip()
        m = _LOG_DATE.fullmatch(title)
        valid = False
        if m:
            try:
                _dt.date.fromisoformat(m.group(1))
                valid = True
            except ValueError:
                valid = False
        if valid and m is not None:
            dates.append((m.group(1), unit.line_start))
            if m.group(2) is not None:
                out.append(
                    _diag(
                        rel,
                        "W-log-summary",
                        f"date heading {title!r} carries a summary; the frozen v0.2 text "
                        "shows bare dates (§9)",
                        unit.line_start,
                        "warning",
                    )
                )
            continue
        if unit.level == 1:
            continue  # the log's own title
        out.append(
            _diag(
                rel,
                "E4",
                f"log heading {title!r} is not an ISO 8601 YYYY-MM-DD date (§9)",
                unit.line_start,
                "error",
            )
        )
    for (prev, _), (cur, line) in itertools.pairwise(dates):
        if cur > prev:
            out.append(
                _diag(
                    rel,
                    "W-log-order",
                    f"log entries should be newest first: {cur} comes after {prev} (§9)",
                    line,
                    "warning",
                )
            )
    out += _check_links(root, rel, doc)
    return out
