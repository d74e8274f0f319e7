"""Markdown bodies rewritten for an OKF export, so that the export, re-indexed, gives the
same units, links and edges as the original (the round trip of
:meth:`cairn.export.service.ExportService.compare`).

* **Obsidian syntax → OKF Markdown** (:func:`obsidian_to_okf`): OKF reads standard
  Markdown only, so what cairn's Markdown parser reads as Obsidian syntax is written
  the way the OKF parser reads the same text: wikilinks and embeds become Markdown links
  whose label is the text the Markdown parser shows (``[[T#h]]`` → ``[T > h](…)``,
  ``[[T|alias]]`` → ``[alias](…)``) and whose target is the exported file (a link that
  did not resolve keeps its target as written: ``/<target>.md``), split as that parser
  splits them (a table's ``\\|`` is the alias pipe, ``![[img.png|300]]`` is a size, not
  a label; ``[[T#^block]]`` shows ``T > block``), the label escaped so CommonMark shows
  it as written; a callout's first line (``> [!NOTE]- Title``) becomes its title with
  the marker in an HTML comment after it (``> Title <!-- [!NOTE]- -->``), an embed's
  size likewise (``![…](…)<!-- size:300 -->``);
  ``%%comments%%`` (inline or a block of lines) become HTML comments;
  ``==highlights==`` become ``<mark>``; a block id ``^id`` ending a line becomes an
  HTML anchor ``<a id="^id"></a>`` (no text, and ``#^id`` links still land). Code is
  left alone: the code, math and HTML blocks the Markdown parser itself finds (also
  inside block quotes and lists: :func:`cairn.formats.markdown.block_ranges`, passed
  in) and code spans — read after a wikilink that starts first, as that parser does.
* **Bundle-absolute links of nested bundles** (:func:`rebase_links`,
  :func:`rebase_meta`): a concept's ``/tables/x.md`` means "from its bundle's root";
  when the export holds the bundle in a sub-folder (a root holding several bundles, or
  several roots), the targets are prefixed with that folder so they keep resolving.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.export.org_markdown import html_comment, uncomment

_CODE = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}(?P=fence)[`~]*[ \t]*$|\Z)"
    r"|(?P<ticks>`+)(?!`)[^\n]*?(?<!`)(?P=ticks)(?!`)",
    re.M | re.S,
)
_INLINE = re.compile(
    r"(?P<esc>\\[^\n])"
    r"|(?P<comment>%%.*?%%)"
    r"|(?P<wiki>(?P<bang>!?)\[\[(?P<inner>(?:(?!\]\]|\[\[)[^\n])+)\]\])"
    r"|(?P<ticks>`+)(?!`)[^\n]*?(?<!`)(?P=ticks)(?!`)",
    re.S,
)
"""What the Markdown parser's inline rules read first, leftmost first as it does: an
escape, an inline ``%%comment%%``, a wikilink or embed (``[[`` up to the first ``]]``
on its line), a code span."""
_COMMENT = re.compile(r"%%(.*?)%%", re.S)
_HIGHLIGHT = re.compile(r"==(?=\S)(.+?)(?<=\S)==")
_CALLOUT = re.compile(r"^((?:[ \t]*>)+[ \t]?)(\[![^\]\n]+\][+-]?)[ \t]?([^\n]*)$", re.M)
"""A callout's first line: the quote prefix, its ``[!type]`` marker with fold state, its
title."""
_MARK = re.compile(
    r"\[!(?P<type>[^\]\n]+)\](?P<fold>[+-]?)"
    r"|!\[\[[^\]\n|]*?\\?\|(?P<size>\d+(?:x\d+)?)\]\]|<!-- size:(?P<kept>\d+(?:x\d+)?) -->"
)
"""What only Obsidian displays: a callout marker (type and fold state) and an embed's
size, as an Obsidian note writes them or as :func:`obsidian_to_okf` keeps them."""
_BLOCK_ID = re.compile(r"(?:(?<=[ \t])|(?<=\]\])|^)\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$", re.M)
"""A block id ``^id`` ending a line, after a blank, a wikilink or at the line start."""
_SIZE = re.compile(r"^\d+(?:x\d+)?$")
_MD_LINK = re.compile(r"(!?\[(?:[^\]\\\n]|\\.)*\]\()(<[^>\n]*>|[^)\s]+)")
"""A Markdown link up to its target (label without nested brackets)."""
_LABEL_SPECIAL = re.compile(r"([\\`*_\[\]<&$~|])")
"""What CommonMark (or the table and math rules of the OKF parser) would read in a
link label: escaped, so the label shows as the wikilink's text did."""
_HREF_SPECIAL = re.compile(r"[%\s()<>\\`#\[\]]")

Blocks = Sequence[tuple[int, int, str]]
"""``(first line, end line exclusive, kind)`` of a body's code (``code``) and ``%%``
comment (``comment``) blocks, as :func:`cairn.formats.markdown.block_ranges` gives."""


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


def _fence_blocks(text: str) -> list[tuple[int, int, str]]:
    """Top-level fenced code blocks of ``text`` as :data:`Blocks` (when the parser's
    own ranges are not given)."""
    out: list[tuple[int, int, str]] = []
    for m in _CODE.finditer(text):
        if m.group("fence") is not None:
            first = text.count("\n", 0, m.start())
            last = text.count("\n", 0, m.end()) + (0 if m.group(0).endswith("\n") else 1)
            out.append((first, last, "code"))
    return out


def _enc(part: str) -> str:
    return _HREF_SPECIAL.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), part)


def _href(path: str) -> str:
    return "/" + _enc(path.lstrip("/"))


def _slug(anchor: str) -> str:
    return _enc(anchor.strip().replace(" ", "-").lower())


def _split_wikilink(inner: str) -> tuple[str, str, str | None]:
    """``(target, anchor, alias)`` as the Markdown parser splits ``[[inner]]``: the
    alias after the first ``|`` or ``\\|`` (a table's escaped pipe), the anchor after
    the first ``#``, a target's trailing ``\\`` dropped."""
    alias: str | None = None
    m = re.search(r"\\?\|", inner)
    if m:
        alias, inner = inner[m.end() :].strip(), inner[: m.start()]
    target, _, anchor = inner.partition("#")
    return target.strip().rstrip("\\").strip(), anchor.strip(), alias


def _is_attachment(target: str) -> bool:
    suffix = posixpath.splitext(target)[1].lower()
    return bool(suffix) and suffix != ".md" and len(suffix) <= 6 and " " not in suffix


def obsidian_to_okf(
    text: str, resolved: Mapping[str, str], blocks: Blocks | None = None
) -> tuple[str, int]:
    """A Markdown body with Obsidian syntax rewritten as OKF Markdown (module
    docstring). ``resolved``: a wikilink target as written → its exported path;
    ``blocks``: the body's code and comment blocks as the Markdown parser reads them
    (default: top-level fenced blocks found here) — code is left alone, a ``%%`` block
    becomes an HTML comment.

    Returns:
        ``(text, wikilinks rewritten)``.
    """
    count = 0

    def wiki(m: re.Match[str]) -> str:
        nonlocal count
        bang = m.group("bang")
        target, section, alias = _split_wikilink(m.group("inner"))
        if not target and not section:
            return m.group(0)
        count += 1
        size = ""
        if bang and alias is not None and _is_attachment(target) and _SIZE.match(alias):
            size, alias = f"<!-- size:{alias} -->", None  # ![[img.png|300]]: a display size
        if alias:
            label = alias
        else:
            shown = section.lstrip("^")
            label = (f"{target} > {shown}" if section else target) if target else shown
        if not bang:  # an image's alt text is read as written
            label = _LABEL_SPECIAL.sub(r"\\\1", label)
        if not target:
            return f"{bang}[{label}](#{_slug(section)})"
        dest = resolved.get(target)
        if dest is None:
            dest = target if posixpath.splitext(target)[1] else target + ".md"
        href = _href(dest) + (f"#{_slug(section)}" if section else "")
        return f"{bang}[{label}]({href}){size}"

    def prose(chunk: str) -> str:
        chunk = _CALLOUT.sub(_callout, chunk)
        chunk = _BLOCK_ID.sub(lambda m: f'<a id="^{m.group(1)}"></a>', chunk)
        kept: list[str] = []

        def keep(piece: str) -> str:
            kept.append(piece)
            return f"\ue000{len(kept) - 1}\ue001"

        def token(m: re.Match[str]) -> str:
            if m.group("wiki") is not None:
                return keep(wiki(m))
            if m.group("comment") is not None:
                return keep(comment(m.group("comment")))
            return keep(m.group(0))  # an escape or a code span: as written

        chunk = _INLINE.sub(token, chunk)
        chunk = _HIGHLIGHT.sub(r"<mark>\1</mark>", chunk)
        return re.sub("\ue000(\\d+)\ue001", lambda m: kept[int(m.group(1))], chunk)

    lines = text.splitlines(keepends=True)
    kind_of: list[str] = ["prose"] * len(lines)
    for first, end, kind in (_fence_blocks(text) if blocks is None else blocks):
        for i in range(max(0, first), min(end, len(lines))):
            kind_of[i] = kind
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and kind_of[j] == kind_of[i]:
            j += 1
        chunk = "".join(lines[i:j])
        if kind_of[i] == "prose":
            chunk = prose(chunk)
        elif kind_of[i] == "comment":
            chunk = _COMMENT.sub(lambda m: comment(m.group(0)), chunk)
        out.append(chunk)
        i = j
    return "".join(out), count


def _callout(m: re.Match[str]) -> str:
    """A callout's first line as a quote of its title, the marker kept in an HTML
    comment after it (OKF Markdown shows a plain quote; the type and fold state stay)."""
    title = m.group(3).rstrip()
    return f"{m.group(1)}{title}{' ' if title else ''}<!-- {m.group(2)} -->"


def display_marks(text: str) -> dict[tuple[str, str], int]:
    """How many of each Obsidian display mark a note's text holds: ``("callout",
    "tip-")`` (type, fold state), ``("size", "100")`` (an embed's size), and
    ``("comment", text)`` for each comment, an Obsidian ``%%text%%`` or an HTML
    comment as :func:`comment` writes one (its text read back with ``uncomment``, runs
    of white space as one), so a comment whose text the export changes differs."""
    counts: dict[tuple[str, str], int] = {}
    for m in _MARK.finditer(text):
        if m.group("type") is not None:
            key = ("callout", m.group("type").lower() + m.group("fold"))
        else:
            key = ("size", m.group("size") or m.group("kept"))
        counts[key] = counts.get(key, 0) + 1
    hidden = [m.group(1) for m in _COMMENT.finditer(text)]
    hidden += [t for t in uncomment(text) if not _KEPT_MARK.fullmatch(t)]
    for t in hidden:
        key = ("comment", " ".join(t.split()))
        counts[key] = counts.get(key, 0) + 1
    return counts


_KEPT_MARK = re.compile(r"\[![^\]\n]+\][+-]?|size:\d+(?:x\d+)?")
"""An HTML comment :func:`obsidian_to_okf` writes to keep a display mark, not a comment
of the note's own."""


def comment(text: str) -> str:
    """An Obsidian ``%%comment%%`` as an HTML comment that reads as no text, escaped
    reversibly as the Org export escapes its comments
    (:func:`cairn.export.org_markdown.html_comment`; ``uncomment`` gives the text back
    byte for byte)."""
    inner = text[2:-2] if text.startswith("%%") and text.endswith("%%") else text
    return html_comment(inner)


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


def md_href(path: str, anchor: str | None = None) -> str:
    """The destination of a Markdown link to an exported file: ``/path`` (encoded),
    ``#heading-slug``."""
    return f"{_href(path)}{'#' + _slug(anchor) if anchor else ''}"


def md_anchor(anchor: str) -> str:
    """The destination of a Markdown link to a heading of the note it stands in:
    ``#heading-slug``, encoded as :func:`md_href` encodes an anchor."""
    return "#" + _slug(anchor)


def md_link(label: str, path: str, anchor: str | None = None) -> str:
    """A Markdown link to an exported file (``/path``, ``#heading-slug``) whose label
    CommonMark shows as ``label`` (one line, special characters escaped)."""
    shown = _LABEL_SPECIAL.sub(r"\\\1", " ".join(label.split()))
    return f"[{shown}]({md_href(path, anchor)})"
