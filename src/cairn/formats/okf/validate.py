"""OKF v0.2 conformance checks of a bundle (§11) and good-practice warnings."""

from __future__ import annotations

import datetime as _dt
import itertools
from pathlib import Path
from typing import Any

from cairn.formats import frontmatter as fm_mod
from cairn.formats.okf.bundles import _iter_md, _read
from cairn.formats.okf.concepts import (
    _LOG_DATE,
    _URLISH,
    KNOWN_VERSIONS,
    MEMORY_CONCEPT_TYPE,
    MEMORY_STATUSES,
    STATUSES,
    _offset_datetime,
    parse,
)
from cairn.model import EMBED, MARKDOWN_LINK, Diagnostic, Document

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


def _check_relations(root: Path, rel: str, relations: Any, line: int | None) -> list[Diagnostic]:
    """``W-relation``: a relation of a memory concept whose target (a path relative to
    its memory bundle: the nearest folder above it with an ``index.md`` and a
    ``concepts/`` folder) is no file."""
    if not isinstance(relations, list):
        return []
    bundle = (root / rel).parent
    while bundle != root and not (
        (bundle / "index.md").is_file() and (bundle / "concepts").is_dir()
    ):
        bundle = bundle.parent
    out: list[Diagnostic] = []
    for r in relations:
        target = r.get("target") if isinstance(r, dict) else None
        if not isinstance(target, str) or not target.strip():
            continue
        t = target.strip().lstrip("/")
        if ".." in Path(t).parts or not (bundle / t).is_file():
            out.append(_diag(rel, "W-relation", f"relation to {target!r} leads to no file "
                             "in the memory bundle", line, "warning"))
    return out


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
    allowed = MEMORY_STATUSES if type_value == MEMORY_CONCEPT_TYPE else STATUSES
    if status is not None and status not in allowed:
        out.append(
            _diag(
                rel,
                "W-status",
                f"status {status!r} is not one of {', '.join(allowed)}"
                + (" (OKF-MEMORY)" if allowed is MEMORY_STATUSES else " (§5.4)"),
                line_of("status"),
                "warning",
            )
        )
    if type_value == MEMORY_CONCEPT_TYPE:
        out += _check_relations(root, rel, meta.get("relations"), line_of("relations"))
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
