"""Markdown bodies rewritten for an OKF export, so that the export, re-indexed, gives the
same units, links and edges as the original (the round trip of
:meth:`cairn.app.Cairn.compare_export`).

* **Obsidian syntax → OKF Markdown** (:func:`obsidian_to_okf`): OKF reads standard
  Markdown only, so what cairn's Markdown parser reads as Obsidian syntax is written
  the way the OKF parser reads the same text: wikilinks and embeds become Markdown links
  whose label is the text the Markdown parser shows (``[[T#h]]`` → ``[T > h](…)``,
  ``[[T|alias]]`` → ``[alias](…)``) and whose target is the exported file (a link that
  did not resolve keeps its target as written: ``/<target>.md``); callout markers
  (``> [!NOTE] Title``) become the title line; ``%%comments%%`` become HTML comments;
  ``==highlights==`` become ``<mark>``. Code blocks and code spans are left alone.
* **Bundle-absolute links of nested bundles** (:func:`rebase_links`,
  :func:`rebase_meta`): a concept's ``/tables/x.md`` means "from its bundle's root";
  when the export holds the bundle in a sub-folder (a root holding several bundles, or
  several roots), the targets are prefixed with that folder so they keep resolving.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

_CODE = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}(?P=fence)[`~]*[ \t]*$|\Z)"
    r"|(?P<ticks>`+)(?!`)[^\n]*?(?<!`)(?P=ticks)(?!`)",
    re.M | re.S,
)
_WIKI = re.compile(r"(!?)\[\[([^\]|#\n]*)(#[^\]|\n]*)?(?:\|([^\]\n]*))?\]\]")
_COMMENT = re.compile(r"%%(.*?)%%", re.S)
_HIGHLIGHT = re.compile(r"==(?=\S)(.+?)(?<=\S)==")
_CALLOUT = re.compile(r"^((?:[ \t]*>)+[ \t]?)\[![^\]\n]+\][+-]?[ \t]?", re.M)
_MD_LINK = re.compile(r"(!?\[(?:[^\]\\\n]|\\.)*\]\()(<[^>\n]*>|[^)\s]+)")
"""A Markdown link up to its target (label without nested brackets)."""


def _split_code(text: str, spans: bool = True) -> list[tuple[bool, str]]:
    """``text`` as ``(is code, piece)`` pieces (fenced blocks and, with ``spans``, code
    spans)."""
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _CODE.finditer(text):
        if not spans and m.group("fence") is None:
            continue
        if m.start() > pos:
            out.append((False, text[pos : m.start()]))
        out.append((True, m.group(0)))
        pos = m.end()
    if pos < len(text):
        out.append((False, text[pos:]))
    return out


def _href(path: str) -> str:
    return "/" + path.lstrip("/").replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _slug(anchor: str) -> str:
    return anchor.strip().replace(" ", "-").lower()


def obsidian_to_okf(text: str, resolved: Mapping[str, str]) -> tuple[str, int]:
    """A Markdown body with Obsidian syntax rewritten as OKF Markdown (module
    docstring). ``resolved``: a wikilink target as written → its exported path.

    Returns:
        ``(text, wikilinks rewritten)``.
    """
    count = 0

    def wiki(m: re.Match[str]) -> str:
        nonlocal count
        bang, target, anchor, alias = m.group(1), m.group(2).strip(), m.group(3), m.group(4)
        section = anchor[1:].strip() if anchor else ""
        if not target and not section:
            return m.group(0)
        count += 1
        if alias is not None and alias.strip():
            label = alias.strip()
        elif not target:
            label = section
        else:
            label = f"{target} > {section}" if section else target
        label = label.replace("[", "\\[").replace("]", "\\]")
        if not target:
            return f"{bang}[{label}](#{_slug(section)})"
        dest = resolved.get(target)
        if dest is None:
            dest = target if posixpath.splitext(target)[1] else target + ".md"
        href = _href(dest) + (f"#{_slug(section)}" if section else "")
        return f"{bang}[{label}]({href})"

    def prose(piece: str) -> str:
        piece = _COMMENT.sub(lambda m: f"<!--{m.group(1).replace('--', '- -')}-->", piece)
        piece = _WIKI.sub(wiki, piece)
        piece = _HIGHLIGHT.sub(r"<mark>\1</mark>", piece)
        return _CALLOUT.sub(r"\1", piece)

    out = "".join(p if code else prose(p) for code, p in _split_code(text))
    return out, count


def rebase_links(text: str, prefix: str) -> str:
    """Markdown links whose target starts with ``/`` (bundle-absolute), outside code
    blocks (a label may hold a code span), prefixed with the export folder ``prefix``
    of their bundle (``""``: unchanged)."""
    if not prefix:
        return text

    def sub(m: re.Match[str]) -> str:
        target = m.group(2)
        inner = target[1:-1] if target.startswith("<") else target
        if not inner.startswith("/") or inner.startswith("//"):
            return m.group(0)
        new = "/" + prefix.strip("/") + inner
        return m.group(1) + (f"<{new}>" if target.startswith("<") else new)

    return "".join(
        p if code else _MD_LINK.sub(sub, p) for code, p in _split_code(text, spans=False)
    )


def rebase_meta(meta: dict[str, Any], prefix: str) -> dict[str, Any]:
    """``meta`` with bundle-absolute ``relations``/``okfm_relations`` targets and
    ``sources`` resources prefixed with ``prefix`` (a copy; ``""``: unchanged)."""
    if not prefix:
        return meta
    out = dict(meta)

    def fix(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("/") and not value.startswith("//"):
            return "/" + prefix.strip("/") + value
        return value

    for key, field in (("relations", "target"), ("okfm_relations", "target"),
                       ("sources", "resource")):
        items = out.get(key)
        if isinstance(items, list):
            out[key] = [
                {**x, field: fix(x.get(field))} if isinstance(x, dict) and field in x else x
                for x in items
            ]
    return out


def bundle_prefix(exported: str, concept_id: Any) -> str:
    """The export folder of an OKF concept's bundle: its exported path ``exported``
    minus as many trailing segments as its ``concept_id`` (its path within the bundle)
    has; ``""`` when the bundle is the export's root."""
    if not isinstance(concept_id, str) or not concept_id.strip("/"):
        return ""
    parts = exported.split("/")
    k = len(concept_id.strip("/").split("/"))
    return "/".join(parts[:-k]) if len(parts) > k else ""
