"""What a round trip must keep (:meth:`cairn.export.service.ExportService.compare`): the units,
links, footnotes and declared edges of a root and of the index of its export, keyed by
document title (ids differ between two indexes).

Markdown and OKF notes are read by the same parser on both sides, so their text is
compared whitespace-normalised. An Org note is read back by another parser from the
Markdown it was converted to (:mod:`cairn.export.org_markdown`), so its text is
compared as what a reader sees, not its markup: the words of a heading and of an outline
path in order, and a section's body as the multiset of its words (letters and digits;
``*``, ``/``, ``=``, list bullets, table bars, ``[fn:1]`` references are markup). A
multiset, because two things move by design: Org keeps a source block as a unit of its
own where Markdown keeps fenced code in its section (the code's words are counted in the
section they stand in), and a Markdown footnote's text is read at the end of its
section. A lost, added or changed word is a difference either way.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import unquote

from cairn.export.files import attachment_of
from cairn.export.notes import RESERVED_TYPES, Units, _description
from cairn.export.tasks import plain_unit
from cairn.model import Document, Edge, StoredLink, StoredUnit

_WORD = re.compile(r"[^\W_]+")
_FOOTNOTE_REF = re.compile(r"\[fn:[\w-]*:?")
_VERT = re.compile(r"\\vert(?:\{\}|(?![A-Za-z]))")
"""Org's ``\\vert`` entity: a ``|`` to a reader (an export writes one in a table)."""
_BULLET = re.compile(r"^[ \t]*(?:[-+][ \t]+)?[*/_=~+]?\d+[.)](?=[ \t]|$)", re.M)
"""An ordered-list bullet: the Org body keeps it in its text, Markdown's does not (a
line of code that starts like one is left out on both sides alike)."""


def org_words(text: str, org: bool = False) -> list[str]:
    """The words of Org or Markdown text as a reader sees them: runs of letters and
    digits, footnote reference markers ``[fn:L]`` and the ``\\vert`` entity left out,
    and with ``org`` (a section's body, either side) line-leading ordered-list bullets
    too, also after an unordered bullet (Org's ``- 2. text`` is one item whose text
    Markdown's reading gives as ``2. text``)."""
    text = _VERT.sub(" ", _FOOTNOTE_REF.sub(" ", text))
    if org:  # math delimiters out first: Markdown's reading drops them (``1$.`` → ``1.``)
        text = _BULLET.sub(" ", text.replace("$", ""))
    return _WORD.findall(text)


_ANONYMOUS = "inline"
"""The label both sides give an anonymous inline footnote (``[fn::def]``; the export
names it ``fn-<line>-<n>``, a line number the other side does not share)."""
_EXPORT_ANONYMOUS = re.compile(r"fn-\d+-\d+")


def _by_unit(units: Sequence[StoredUnit], refs: Sequence[tuple[int, str]]) -> list[set[str]]:
    """Each unit's footnote labels: a reference ``(line, label)`` belongs to the last
    unit that starts at or before its line."""
    order = sorted(range(len(units)), key=lambda k: units[k].line_start)
    starts = [units[k].line_start for k in order]
    out: list[set[str]] = [set() for _ in units]
    for line, label in refs:
        k = bisect_right(starts, line) - 1
        if k >= 0:
            out[order[k]].add(label or _ANONYMOUS)
    return out


def _without(words: list[str], lead: list[str]) -> list[str]:
    """``words`` without every leading repetition of ``lead`` (an OKF description the
    parser may or may not have put before a body that opens with the same words)."""
    while lead and words[: len(lead)] == lead:
        words = words[len(lead) :]
    return words


def _okf_description(doc: Document) -> str:
    """A document's ``description`` (front matter or OKF), which the comparison strips
    from the start of its first unit's body on both sides of a round trip alike: the
    OKF parser puts it before a concept's body unless the body already opens with it,
    where a Markdown note keeps it as a property only, so after stripping, the two
    readings of one note give the same text whichever way the parser decided."""
    value = doc.metadata.get("description") if isinstance(doc.metadata, Mapping) else None
    return value.strip() if isinstance(value, str) else ""


def signature(
    docs: Iterable[Document],
    edges: Iterable[Edge],
    units: Units,
    links: Mapping[str, Sequence[StoredLink]],
    *,
    exact: bool = False,
    keywords: Iterable[str] = (),
    okf: bool = False,
    org: Iterable[str] = (),
    footnotes: Mapping[str, Sequence[tuple[int, str]]] | None = None,
) -> dict[str, set[tuple[str, ...]]]:
    """What a round trip must keep, by document title (ids differ between two
    indexes): ``units`` (document, outline path, title, whitespace-normalised body; an
    first unit's body without the ``description`` it starts with; an empty preamble is
    no unit), ``links`` (document, unit title, ``=<target title>``, ``@<attachment path>``
    for an existing non-note file, or ``?`` when it does not resolve, and how many such
    links the unit holds — every unit's, the empty preamble's front matter links too)
    and declared ``edges`` (source title, relation, target title) between these
    documents. ``links``: unit id → its stored links.
    ``exact``: an attachment counts only when the link's path names it (an OKF
    export's ``/pic.png`` that cairn finds at ``Attachments/pic.png`` by its name is
    broken for any other OKF reader: ``?``). Headings are compared without a task
    keyword (of ``keywords``), priority or trailing ``#tags``, bodies without their
    ``key:: value`` lines (an Org heading's planning and properties as an Obsidian
    export writes them; the ``tasks`` aspect compares those):
    :func:`cairn.export.tasks.plain_unit`. ``okf``: these are the documents an OKF
    export is made of (an Org note's first unit loses the ``description`` the export
    writes for it, as its concept does). ``org``: titles of the documents that are Org
    notes in the root, compared by their words (module docstring). ``footnotes``: an
    Org document's id → the footnote references of its file that a Markdown reading
    keeps (:func:`cairn.export.org_markdown.org_footnotes`); with those of the Markdown
    documents (each unit's ``footnotes``), compared as ``footnotes`` (document, unit
    title, ``[^label]``; an anonymous inline one is ``[^inline]``).

    Returns:
        ``{"units", "links", "edges", "footnotes"}``: each a set of tuples.
    """
    footnotes = footnotes or {}
    keys = frozenset(keywords)
    org_titles = frozenset(org)
    title_of: dict[str, str] = {}
    out_units: set[tuple[str, ...]] = set()
    counted: Counter[tuple[str, str, str]] = Counter()
    out_notes: set[tuple[str, ...]] = set()
    for d in docs:
        if d.type in RESERVED_TYPES:
            continue
        title_of[d.id] = d.title
        # an Org note's OKF concept gets the description the export makes of its text
        desc = " ".join((_okf_description(d) or (
            _description(d, units) if d.format == "org" and okf else "")).split())
        words = d.title in org_titles
        code: dict[str, list[str]] = {}
        if words:  # a source block's words count in the section it stands in
            for u in units.get(d.id, ()):
                if u.kind == "code" and u.parent_id:
                    code.setdefault(u.parent_id, []).extend(org_words(u.body, True))
        own = [u for u in units.get(d.id, ())
               if not (words and u.kind == "code" and u.parent_id)]
        if d.format == "org":  # where the file's text says (footnotes), in line order
            notes = _by_unit(own, footnotes.get(d.id, ()))
        else:  # a Markdown reading: the footnotes each section references
            notes = [{_ANONYMOUS if _EXPORT_ANONYMOUS.fullmatch(x) else x
                      for x in _labels(u.extra)} for u in own]
        for u, referenced in zip(own, notes, strict=True):
            head, path, text = plain_unit(u, keys)
            if words:
                head, path = " ".join(org_words(head)), " ".join(org_words(path))
            out_notes.update((d.title, head, "[^" + x + "]") for x in referenced)
            for link in links.get(u.id, ()):
                target = link.resolved_document_id
                found = attachment_of(link.unresolved_reason)
                if exact and found is not None and unquote(link.target).lstrip("/") != found:
                    found = None
                key = "=" + target if target else ("@" + found if found else "?")
                counted[(d.title, head, key)] += 1
            body = " ".join(text.split())
            if words:
                seen = _without(org_words(text, True),
                                org_words(desc, True) if u.level == 0 else [])
                body = " ".join(sorted(seen + code.get(u.id, [])))
            elif u.level == 0 and desc and body.startswith(desc):
                body = body[len(desc) :].lstrip()
            if u.level == 0 and not body:
                continue
            out_units.add((d.title, path, head, body))
    out_edges: set[tuple[str, ...]] = set()
    for e in edges:
        s, t = title_of.get(e.source_document_id), title_of.get(e.target_document_id or "")
        if s is not None and t is not None and s != t and e.origin == "declared":
            out_edges.add((s, e.relation, t))
    by_title: Counter[tuple[str, str, str]] = Counter()
    for (a, b, c), n in counted.items():
        by_title[(a, b, ("=" + title_of.get(c[1:], "?")) if c.startswith("=") else c)] += n
    out_links: set[tuple[str, ...]] = {(a, b, c, str(n)) for (a, b, c), n in by_title.items()}
    return {"units": out_units, "links": out_links, "edges": out_edges,
            "footnotes": out_notes}


def _labels(extra: Mapping[str, object]) -> list[str]:
    """The footnote labels a Markdown unit references (its ``footnotes`` extra)."""
    value = extra.get("footnotes") if isinstance(extra, Mapping) else None
    return [str(x) for x in value] if isinstance(value, list) else []
