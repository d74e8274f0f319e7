"""Obsidian-flavoured Markdown → :class:`cairn.model.Document`.

Block structure comes from markdown-it-py (CommonMark + GFM tables and strikethrough,
footnotes, ``$``/``$$`` math, GFM autolinks), never from regular expressions over the
raw file. Obsidian syntax is added as markdown-it rules, so code spans, fenced and
indented code never yield links, tags or comments:

* ``[[Note]]``, ``[[Note|alias]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``,
  ``[[#Heading]]`` (same note: ``target == ""``) → :data:`cairn.model.WIKILINK`; inside a
  table the alias pipe may be escaped (``\\|``) or not — a table row is not split inside
  ``[[…]]``;
* ``![[…]]`` → :data:`cairn.model.EMBED`; for an attachment (a target with a non-``.md``
  extension) ``|300`` / ``|300x200`` is a display size, not an alias (it is dropped);
* ``[text](other%20note.md#Part)`` → :data:`cairn.model.MARKDOWN_LINK` with the target
  URL-decoded (``other note.md``) and anchor ``Part``; ``http(s):``, ``mailto:`` and other
  schemes → :data:`cairn.model.URL`; a local image ``![alt](pic.png)`` → ``EMBED``;
* ``%%comments%%`` (inline or as a block of lines) are dropped from the body;
* ``==highlight==`` keeps its text; ``> [!type]± title`` callouts are recorded in the
  unit's ``extra["callouts"]`` (``{"type", "title", "fold", "line"}``) and their text stays
  searchable;
* inline tags ``#tag`` / ``#area/topic`` are read from text tokens only (not code, links,
  URLs or headings); a tag must follow whitespace or a line start and contain a
  non-digit (``#123`` is not a tag);
* block ids `` ^id`` at the end of a line are recorded in ``extra["block_ids"]`` and
  removed from the body;
* the languages of a section's fenced code blocks (the info string's first word,
  lower-cased) are recorded in ``extra["code_languages"]`` (the ``lang:`` filter).

``Link.target`` is the note reference as written, without ``#anchor``; ``.md`` is only
present when the source wrote it. ``Link.anchor`` is ``Heading``, ``H1#H2`` or
``^block``. ``Link.line`` is the 1-based file line.

Units: ordinal 0 is the preamble (kind ``preamble``, level 0, title = document title,
empty outline path, text before the first heading, front matter excluded); then one unit
per top-level ATX or setext heading holding only its own section. Headings nested in
block quotes or lists stay body text. Front matter (see :mod:`cairn.formats.frontmatter`)
becomes ``Document.metadata``; it is also exposed as string ``properties`` of the preamble
unit, and front matter tags are every unit's ``inherited_tags``. When a closed front
matter block cannot be read, a warning is recorded, metadata is empty and the block's
text is kept (rendered as plain text) at the start of the preamble body. Wikilinks in
front matter string values (``up: "[[Parent]]"``) are links of the preamble unit, on the
line of their key, as Obsidian counts them.

Big and hostile notes take time linear in their size: the GFM autolink rules see a window
up to the next space, unclosed ``[[`` and ``==`` are bounded, inline text without markup
is not inline-parsed (:mod:`~cairn.formats.markdown.inline`), line tables are built in
bulk and a paragraph looks only at the lines that may end it
(:mod:`~cairn.formats.markdown.blockstate`), and rules are tried only where they can
start (:mod:`~cairn.formats.markdown.dispatch`) — all giving stock markdown-it's tokens;
text that is not text is refused (:mod:`cairn.formats.guard`).

Fields: ``title`` (front matter ``title``, else a level-1 heading that is the first
content of the body, else the file stem — as Obsidian, which names a note by its file:
a ``# Part 2`` after other content is a section, not the title), ``tags``/``tag``
(list or string; a string is split on commas and whitespace as Obsidian does; leading
``#`` stripped), ``aliases``/``alias`` (list, or a string split on commas), ``id`` →
``declared_id``, ``type``, ``created`` (or ``date``),
``modified``/``updated``, ``visibility``; keys are matched case-insensitively.
"""

from __future__ import annotations

from cairn.formats import frontmatter as fm_mod
from cairn.formats.guard import check_text, gc_paused
from cairn.formats.markdown.fields import (
    _lookup,
    _scalar_text,
    date_field,
    frontmatter_links,
    normalise_aliases,
    normalise_tags,
    property_text,
    split_wikilink,
    stem,
    type_names,
)
from cairn.formats.markdown.sections import Analysis, Section, _normalise_text, build_units
from cairn.formats.markdown.syntax import _markdown_it
from cairn.formats.markdown.walker import _Walker
from cairn.model import PREAMBLE, Diagnostic, Document

__all__ = [
    "Analysis",
    "Section",
    "analyse",
    "block_ranges",
    "build_units",
    "date_field",
    "frontmatter_links",
    "normalise_aliases",
    "normalise_tags",
    "parse",
    "property_text",
    "split_wikilink",
    "stem",
]


def analyse(text: str, relpath: str, *, obsidian: bool = True, allow_toml: bool = True) -> Analysis:
    """Parse ``text`` into front matter and sections.

    Args:
        text: the file's text (BOM and ``\\r`` tolerated).
        relpath: the file's path relative to its root (for diagnostics).
        obsidian: read Obsidian syntax (wikilinks, embeds, tags, block ids, comments,
            highlights); ``False`` gives plain CommonMark + GFM (used for OKF).
        allow_toml: accept ``+++`` TOML front matter.
    """
    text = _normalise_text(text)
    front = fm_mod.split(text, relpath, allow_toml=allow_toml)
    warnings = list(front.diagnostics)
    total_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    total_lines = max(total_lines, 1)
    offset = front.body_line - 1
    md = _markdown_it(obsidian)
    tokens = md.parse(front.body)
    walker = _Walker(obsidian, offset, relpath)
    sections, leading_h1 = walker.build_sections(tokens, total_lines, front.body_line)
    if front.failed and front.raw.strip():
        # The block was not front matter we can read: keep its text searchable at the
        # top of the preamble (no structure, links or tags taken from it).
        if len(front.raw) > fm_mod.MAX_CHARS:  # too large to load: kept as written
            sections[0].body.insert(0, front.raw.strip())
        else:
            plain = _Walker(False, 1, relpath)
            raw_tokens = _markdown_it(False).parse(front.raw)
            sections[0].body.insert(0, plain.plain_text(raw_tokens))
        sections[0].line_start = 1
    walker.walk(tokens, sections)
    return Analysis(front, sections, leading_h1, list(walker.all_tags), warnings, total_lines)


def parse(text: str, relpath: str) -> Document:
    """Parse one Obsidian-style Markdown note.

    Args:
        text: the file's text, decoded (BOM and ``\\r`` tolerated).
        relpath: path relative to the source root, POSIX separators.

    Returns:
        A :class:`Document` with ``format == "markdown"``; problems (front matter that
        is unclosed, invalid or not a mapping; unparseable dates) are in ``warnings``.

    Raises:
        cairn.errors.ParseError: text that is not text (a binary file named ``.md``,
            NUL characters, lone surrogates: :func:`cairn.formats.guard.check_text`), or
            nesting too deep for markdown-it.
    """
    from cairn.errors import ParseError

    check_text(text, relpath)
    try:
        with gc_paused(len(text)):
            analysis = analyse(text, relpath, obsidian=True, allow_toml=True)
    except RecursionError as exc:  # pragma: no cover - pathological nesting
        raise ParseError("nesting too deep to parse", path=relpath) from exc
    front = analysis.front
    meta = front.data
    warnings = list(analysis.warnings)
    title = _scalar_text(_lookup(meta, "title")) or analysis.leading_h1 or stem(relpath)
    fm_tags = normalise_tags(_lookup(meta, "tags", "tag"))
    tags = list(dict.fromkeys([*fm_tags, *analysis.inline_tags]))
    aliases = normalise_aliases(_lookup(meta, "aliases", "alias"))
    created = date_field(front, "created", "date")
    modified = date_field(front, "modified", "updated", "last_modified", "lastmod")
    for names, value in ((("created", "date"), created), (("modified", "updated"), modified)):
        raw = next((v for v in (_lookup(meta, n) for n in names) if v is not None), None)
        if raw is not None and value is None and _scalar_text(raw):
            warnings.append(
                Diagnostic(
                    relpath,
                    f"front matter {names[0]!r} value {_scalar_text(raw)!r} is not a date",
                    front.start_line,
                    severity="info",
                )
            )
    properties = {k: property_text(v) for k, v in meta.items()}
    fm_links = frontmatter_links(front)
    if fm_links:
        analysis.sections[0].links[:0] = fm_links
    units = build_units(analysis, title, PREAMBLE, fm_tags, properties)
    return Document(
        path=relpath,
        format="markdown",
        title=title,
        units=units,
        metadata=meta,
        tags=tuple(tags),
        aliases=tuple(aliases),
        created=created,
        modified=modified,
        visibility=_scalar_text(_lookup(meta, "visibility")),
        type=next(iter(type_names(_lookup(meta, "type"))), None),
        declared_id=_scalar_text(_lookup(meta, "id")),
        warnings=tuple(warnings),
    )


_RANGE_KINDS = {
    "fence": "code",
    "code_block": "code",
    "math_block": "code",
    "math_block_label": "code",
    "math_block_eqno": "code",
    "html_block": "code",
    "obsidian_comment_block": "comment",
}


def block_ranges(body: str) -> list[tuple[int, int, str]]:
    """The lines of ``body`` (a note's text after its front matter) that this parser
    reads as code or as a comment block, where Obsidian syntax must not be looked for:
    ``(first line, end line exclusive, kind)``, 0-based, kind ``code`` (fenced,
    indented, math and HTML blocks, also inside block quotes and lists) or
    ``comment`` (a ``%%`` block); in file order, never overlapping. Used by the OKF
    export to rewrite Obsidian syntax exactly where this parser reads it."""
    tokens = _markdown_it(True).parse(_normalise_text(body))
    out: list[tuple[int, int, str]] = []
    for tok in tokens:
        kind = _RANGE_KINDS.get(tok.type)
        if kind is not None and tok.map:
            out.append((tok.map[0], tok.map[1], kind))
    return out
