"""Org text → :class:`cairn.model.Document` with one unit per heading.

Built on the lossless tree (:mod:`cairn.formats.org.tree`) and the element scanner
(:mod:`cairn.formats.org.elements`). Choices where the brief left one open:

* The preamble unit (ordinal 0) always exists. Its span is line 1 to the line before the
  first heading; when the zeroth section is empty (empty file, or a heading on line 1) it
  is ``1..1``. It carries the file-level property drawer as ``properties`` and the
  file-level ``ID`` as ``org_id``/``declared_id``; its own ``tags`` are the FILETAGS.
* A source block becomes a ``code`` unit placed right after the unit that contains it.
  Its ``parent`` is that unit's ordinal (``0`` for a block in the zeroth section), its
  ``level`` the containing unit's level, its title the block's ``#+NAME:`` or
  ``"<lang> code block"`` (``"code block"`` without a language), its body the code with
  Org's comma quoting removed, and its ``inherited_tags`` the containing unit's own and
  inherited tags. Switches and header arguments go to ``extra["parameters"]``.
* Heading titles (and so outline paths) show links as their description (or target), as
  Org displays them: ``* [[id:x][Robot Grasping]]`` has title ``Robot Grasping``; the
  title as written is kept in ``extra["title_raw"]`` when the two differ (link resolution
  of ``[[*…]]`` may compare against either). Links in titles are extracted, and
  ``<<targets>>`` in titles are recorded in ``extra["targets"]`` (a fuzzy ``[[target]]``
  finds them) and shown as their text.
* Outline paths are capped at :data:`MAX_OUTLINE_DEPTH` titles: a heading nested deeper
  keeps its top-level ancestor's title, then the nearest ones ending with its own (a
  10,000-deep file would otherwise store 50 million titles).
* LOGBOOK drawers go to ``extra["logbook"]`` (their lines) and ``extra["clocks"]``;
  other drawers to ``extra["drawers"]`` (name → text) — neither is body text. Links and
  timestamps inside non-LOGBOOK drawers are still extracted.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from cairn.errors import ParseError
from cairn.formats.guard import check_text, gc_paused
from cairn.formats.org import elements as E
from cairn.formats.org.objects import (
    date_of,
    find_targets,
    scan_text,
    statistics_cookies,
    strip_targets,
)
from cairn.formats.org.options import (
    ORG_INHERITED_PROPERTIES,
    OrgOptions,
    TodoKeywords,
    parse_todo_sequences,
)
from cairn.formats.org.section import _AFFILIATED, SectionReader, SectionResult, put_prop
from cairn.formats.org.tree import Headline, heading_starts, parse_headline
from cairn.model import CODE, HEADING, PREAMBLE, Diagnostic, Document, Link, Timestamp, Unit

_QUOTED_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')

_OPTIONS = OrgOptions()

MAX_OUTLINE_DEPTH = 64
"""Most titles one ``outline_path`` holds: deeper headings keep the top-level title and
the nearest ancestors (so a 10,000-deep nesting costs linear, not quadratic, memory)."""


def parse(text: str, relpath: str, options: OrgOptions | None = None) -> Document:
    """Parse Org ``text`` into a :class:`cairn.model.Document`.

    Args:
        text: the file's text (a BOM and CRLF line ends are tolerated).
        relpath: the path relative to the source root (for the title and diagnostics).
        options: :class:`OrgOptions`; Org's defaults when ``None``.

    Returns:
        The document: ``units[0]`` is the preamble, then one ``heading`` unit per heading
        in document order, each followed by the ``code`` units of its section.

    Raises:
        ParseError: text that is not text (see :func:`cairn.formats.guard.check_text`),
            or an internal failure, with ``relpath`` and the reason.
    """
    check_text(text, relpath)
    try:
        with gc_paused(len(text)):
            return _Builder(text, relpath, options or _OPTIONS).build()
    except ParseError:
        raise
    except Exception as exc:  # a parser bug must not escape as anything but ParseError
        raise ParseError(f"cannot parse Org file: {exc!r}", path=relpath) from exc


def split_aliases(value: str) -> list[str]:
    """Split a ``ROAM_ALIASES`` value Emacs-style: words, ``"quoted phrases"``."""
    out: list[str] = []
    for m in _QUOTED_RE.finditer(value):
        if m.group(1) is not None:
            out.append(re.sub(r"\\(.)", r"\1", m.group(1)))
        else:
            out.append(m.group(2))
    return [a for a in out if a]


def _get(props: dict[str, str], key: str) -> str | None:
    if key in props:
        return props[key]
    up = key.upper()
    for k, v in props.items():
        if k.upper() == up:
            return v
    return None


class _Builder:
    def __init__(self, text: str, relpath: str, options: OrgOptions) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        self.relpath = relpath
        self.opts = options
        self.reader = SectionReader(relpath, options)
        # line contents (no terminators), split once: line k is self.lines[k - 1]
        self.lines = text.split("\n")
        # the lines parse_tree's sections hold (a final newline ends a line)
        self.line_count = len(self.lines) if self.lines[-1] else len(self.lines) - 1
        # (0-based line, level, parent) of each heading, as parse_tree finds them
        self.heads = heading_starts(text)
        if "\r" in text:
            self.lines = [x[:-1] if x.endswith("\r") else x for x in self.lines]

    # -- document level -----------------------------------------------------------------
    def build(self) -> Document:
        all_lines = self.lines
        heads = self.heads
        # each heading's section: from the line after it to the next heading or the end
        ends = [i for i, _, _ in heads[1:]]
        if heads:
            ends.append(self.line_count)
        zlines = heads[0][0] if heads else self.line_count
        zc = all_lines[:zlines]
        zscan = E.scan_section(zc, True)
        hcs = [all_lines[i + 1 : end] for (i, _, _), end in zip(heads, ends, strict=True)]
        hscans = [E.scan_section(c, False) for c in hcs]

        meta: dict[str, Any] = {}
        raw_kw: dict[str, list[str]] = {}
        seqs: list[str] = []  # TODO sequences in document order
        for scan in (zscan, *hscans):
            for el in scan.keywords:
                key = el.name.lower()
                if key in _AFFILIATED or key.startswith("attr_"):
                    continue
                raw_kw.setdefault(key, []).append(el.value.strip())
                if key in ("todo", "seq_todo", "typ_todo"):
                    seqs.append(el.value)
        for key, vals in raw_kw.items():
            meta[key] = vals[0] if len(vals) == 1 else vals

        todo = parse_todo_sequences(seqs)
        if not todo.all():
            todo = parse_todo_sequences(self.opts.todo_keywords)
        self.todo: TodoKeywords = todo
        kwset = todo.all()

        titles = raw_kw.get("title")
        doc_title = " ".join(t for t in titles if t) if titles else ""
        if not doc_title:
            doc_title = PurePosixPath(self.relpath).stem or self.relpath
        filetags: list[str] = []
        for v in raw_kw.get("filetags", []):
            for word in v.split():
                for t in word.split(":"):
                    if t and t not in filetags:
                        filetags.append(t)
        excl = self.opts.tags_exclude_from_inheritance
        inheritable_filetags = [t for t in filetags if t not in excl]

        # #+PROPERTY file defaults (NAME VALUE, NAME+ VALUE accumulates)
        file_defaults: dict[str, str] = {}
        for v in raw_kw.get("property", []):
            name, _, val = v.strip().partition(" ")
            if not name:
                continue
            put_prop(file_defaults, name, val.strip())
        if "category" in raw_kw and _get(file_defaults, "CATEGORY") is None:
            file_defaults["CATEGORY"] = raw_kw["category"][-1]

        warnings: list[Diagnostic] = []
        units: list[Unit] = []
        zsec = self.reader.read(zc, zscan, 1, True, warnings)
        file_props = zsec.properties
        meta["properties"] = dict(file_props)
        meta["todo_keywords"] = {"open": list(todo.open), "done": list(todo.done)}
        file_id = _get(file_props, "ID")
        aliases: list[str] = []
        for v in [_get(file_props, "ROAM_ALIASES") or "", *raw_kw.get("roam_alias", [])]:
            for a in split_aliases(v):
                if a not in aliases:
                    aliases.append(a)

        inherit_keys = {k.upper() for k in ORG_INHERITED_PROPERTIES}
        inherit_keys.update(k.upper() for k in self.opts.inherited_property_keys)
        inherit_keys.update(k.upper().rstrip("+") for k in file_defaults)
        inherit_all = "*" in self.opts.inherited_property_keys

        units.append(
            Unit(
                ordinal=0,
                level=0,
                kind=PREAMBLE,
                title=doc_title,
                outline_path=(),
                body=zsec.body,
                tags=tuple(filetags),
                properties=file_props,
                timestamps=tuple(zsec.timestamps),
                org_id=file_id,
                custom_id=_get(file_props, "CUSTOM_ID"),
                declared_id=file_id,
                line_start=1,
                line_end=max(1, zlines),
                links=tuple(zsec.links),
                extra=zsec.extra,
            )
        )
        self._code_units(units, zsec, 0, 0, (), tuple(filetags))

        heading_ordinal: list[int] = []
        paths: list[tuple[str, ...]] = []
        chains: list[list[str]] = []  # tags available for inheritance below heading i
        # inheritable values visible below heading i: upper key -> (key, value)
        avail: list[dict[str, tuple[str, str]]] = []
        base: dict[str, tuple[str, str]] = {}
        for src in (file_defaults, file_props):
            for k, v in src.items():
                if inherit_all or k.upper() in inherit_keys:
                    base[k.upper()] = (k, v)
        for i, (at, _level, parent) in enumerate(heads):
            line_no = at + 1
            hl: Headline = parse_headline(all_lines[at], kwset)
            sec = self.reader.read(hcs[i], hscans[i], line_no + 1, False, warnings)
            # title: links, timestamps
            title = hl.title
            t_links: list[Link] = []
            t_stamps: list[Timestamp] = []
            extra = sec.extra
            if title and ("[" in title or "<" in title or ":" in title):
                ts = scan_text(title, line_no)
                t_links, t_stamps = ts.links, ts.timestamps
                shown = ts.text
                if "<<" in shown:
                    shown = self._title_targets(title, shown, extra)
                if shown != title:
                    extra["title_raw"] = title
                    title = shown.strip()
            cookies = statistics_cookies(title)
            if cookies:
                extra["statistics"] = cookies
            if hl.commented:
                extra["comment"] = True
            if "ARCHIVE" in hl.tags:
                extra["archived"] = True
            if title == "Footnotes":
                extra["footnote_section"] = True
            p = parent
            path = (*paths[p], title) if p is not None else (title,)
            if len(path) > MAX_OUTLINE_DEPTH:  # the root, then the nearest ancestors
                path = (path[0], *path[len(path) - MAX_OUTLINE_DEPTH + 1 :])
            paths.append(path)
            parent_chain = chains[p] if p is not None else []
            own = hl.tags
            new_tags = [t for t in own if t not in excl and t not in parent_chain]
            chains.append(parent_chain + new_tags if new_tags else parent_chain)
            inherited = list(dict.fromkeys(parent_chain + inheritable_filetags))
            inherited_tags = tuple(t for t in inherited if t not in own)
            props = sec.properties
            above = avail[p] if p is not None else base
            own_up = {k.upper() for k in props}
            inh_props = {k: v for uk, (k, v) in above.items() if uk not in own_up and v != "nil"}
            if inh_props:
                extra["inherited_properties"] = inh_props
            mine = [(k.upper(), (k, v)) for k, v in props.items()
                    if inherit_all or k.upper() in inherit_keys]
            avail.append({**above, **dict(mine)} if mine else above)
            ra = _get(props, "ROAM_ALIASES")
            if ra:
                extra["aliases"] = split_aliases(ra)
            org_id = _get(props, "ID")
            ordinal = len(units)
            heading_ordinal.append(ordinal)
            line_end = ends[i]
            units.append(
                Unit(
                    ordinal=ordinal,
                    level=hl.level,
                    kind=HEADING,
                    title=title,
                    outline_path=path,
                    body=sec.body,
                    parent=heading_ordinal[p] if p is not None else None,
                    tags=own,
                    inherited_tags=inherited_tags,
                    properties=props,
                    todo=hl.todo,
                    todo_state=todo.state(hl.todo) if hl.todo else None,
                    priority=hl.priority,
                    timestamps=(*self._planning_first(sec.timestamps, t_stamps),),
                    org_id=org_id,
                    custom_id=_get(props, "CUSTOM_ID"),
                    declared_id=org_id,
                    line_start=line_no,
                    line_end=line_end,
                    links=(*t_links, *sec.links),
                    extra=extra,
                )
            )
            self._code_units(
                units, sec, ordinal, hl.level, path, tuple(dict.fromkeys((*own, *inherited_tags)))
            )

        created = date_of(str(raw_kw["date"][0])) if raw_kw.get("date") else None
        typ = meta.get("type")
        vis = meta.get("visibility")
        return Document(
            path=self.relpath,
            format="org",
            title=doc_title,
            units=tuple(units),
            metadata=meta,
            tags=tuple(filetags),
            aliases=tuple(aliases),
            created=created,
            type=typ if isinstance(typ, str) else None,
            visibility=vis if isinstance(vis, str) else None,
            declared_id=file_id,
            warnings=tuple(warnings),
        )

    @staticmethod
    def _title_targets(raw: str, shown: str, extra: dict[str, Any]) -> str:
        """Record the ``<<targets>>`` and ``<<<radio targets>>>`` of a heading title
        ``raw`` (org-syntax allows both in a title) in ``extra`` ahead of the section's
        own, and return the title text ``shown`` as Org displays it: each target's text
        without its brackets."""
        targets, radios = find_targets(raw)
        if targets:
            extra["targets"] = [*targets, *extra.get("targets", [])]
        if radios:
            extra["radio_targets"] = [*radios, *extra.get("radio_targets", [])]
        return strip_targets(shown)

    @staticmethod
    def _planning_first(
        sec_stamps: list[Timestamp], title_stamps: list[Timestamp]
    ) -> list[Timestamp]:
        planning = [t for t in sec_stamps if t.role in ("scheduled", "deadline", "closed")]
        rest = [t for t in sec_stamps if t.role not in ("scheduled", "deadline", "closed")]
        return planning + title_stamps + rest

    def _code_units(
        self,
        units: list[Unit],
        sec: SectionResult,
        parent: int,
        level: int,
        path: tuple[str, ...],
        tags: tuple[str, ...],
    ) -> None:
        for cb in sec.code:
            lang = cb["language"]
            title = cb["name"] or (f"{lang} code block" if lang else "code block")
            extra: dict[str, Any] = {}
            if cb["parameters"]:
                extra["parameters"] = cb["parameters"]
            if cb["name"]:
                extra["name"] = cb["name"]
            units.append(
                Unit(
                    ordinal=len(units),
                    level=level,
                    kind=CODE,
                    title=title,
                    outline_path=path,
                    body=cb["code"],
                    parent=parent,
                    inherited_tags=tags,
                    line_start=cb["start"],
                    line_end=cb["end"],
                    language=lang,
                    extra=extra,
                )
            )
