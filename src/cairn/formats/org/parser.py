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
  of ``[[*…]]`` may compare against either). Links in titles are extracted.
* LOGBOOK drawers go to ``extra["logbook"]`` (their lines) and ``extra["clocks"]``;
  other drawers to ``extra["drawers"]`` (name → text) — neither is body text. Links and
  timestamps inside non-LOGBOOK drawers are still extracted.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from cairn.errors import ParseError
from cairn.formats.org import elements as E
from cairn.formats.org.objects import (
    date_of,
    find_targets,
    find_timestamps,
    scan_text,
    statistics_cookies,
)
from cairn.formats.org.options import (
    ORG_INHERITED_PROPERTIES,
    OrgOptions,
    TodoKeywords,
    parse_todo_sequences,
)
from cairn.formats.org.tree import Headline, OrgTree, parse_headline, parse_tree
from cairn.model import CODE, HEADING, PREAMBLE, Diagnostic, Document, Link, Timestamp, Unit

# Affiliated keywords (org-syntax *Affiliated Keywords*) belong to the next element, not
# to the document's in-buffer settings.
_AFFILIATED = frozenset({"name", "caption", "header", "results", "plot", "data", "tblname", "tblfm",
                         "srcname", "label", "source", "resname", "headers", "call"})
_VERBATIM_BLOCKS = frozenset({"example", "export"})
_COMMA_RE = re.compile(r"^([ \t]*),(\*|#\+)", re.MULTILINE)
_PROP_RE = re.compile(r"[ \t]*:(\S+):(?:[ \t]+(.*))?$")
_PLANNING_KW_RE = re.compile(r"(SCHEDULED|DEADLINE|CLOSED):[ \t]*")
_CLOCK_RE = re.compile(
    r"[ \t]*CLOCK:[ \t]*(\[[^\]\n]*\])(?:--(\[[^\]\n]*\]))?(?:[ \t]*=>[ \t]*(\d+:\d\d))?",
    re.IGNORECASE,
)
_QUOTED_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')
_BLANKS_RE = re.compile(r"\n{3,}")

_OPTIONS = OrgOptions()


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
        ParseError: only for an internal failure, with ``relpath`` and the reason.
    """
    try:
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


class _Section:
    """What one section yields: body, links, timestamps, properties, extra, code."""

    __slots__ = ("body", "code", "extra", "links", "properties", "timestamps", "warnings")

    def __init__(self) -> None:
        self.body = ""
        self.links: list[Link] = []
        self.timestamps: list[Timestamp] = []
        self.properties: dict[str, str] = {}
        self.extra: dict[str, Any] = {}
        self.code: list[dict[str, Any]] = []
        self.warnings: list[Diagnostic] = []


class _Builder:
    def __init__(self, text: str, relpath: str, options: OrgOptions) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        self.relpath = relpath
        self.opts = options
        self.tree: OrgTree = parse_tree(text)
        # line contents (no terminators), split once: line k is self.lines[k - 1]
        self.lines = text.split("\n")
        if "\r" in text:
            self.lines = [x[:-1] if x.endswith("\r") else x for x in self.lines]

    # -- document level -----------------------------------------------------------------
    def build(self) -> Document:
        tree = self.tree
        all_lines = self.lines
        zc = all_lines[: len(tree.zeroth.lines)]
        zscan = E.scan_section(zc, True)
        hcs = [all_lines[h.line_no : h.line_no + len(h.section.lines)] for h in tree.headings]
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
            self._put_prop(file_defaults, name, val.strip())
        if "category" in raw_kw and _get(file_defaults, "CATEGORY") is None:
            file_defaults["CATEGORY"] = raw_kw["category"][-1]

        warnings: list[Diagnostic] = []
        units: list[Unit] = []
        zsec = self._section(zc, zscan, tree.zeroth.first_line, True, warnings)
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

        zlines = len(tree.zeroth.lines)
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
        for i, h in enumerate(tree.headings):
            hl: Headline = parse_headline(all_lines[h.line_no - 1], kwset)
            sec = self._section(hcs[i], hscans[i], h.line_no + 1, False, warnings)
            # title: links, timestamps
            title = hl.title
            t_links: list[Link] = []
            t_stamps: list[Timestamp] = []
            extra = sec.extra
            if title and ("[" in title or "<" in title or ":" in title):
                ts = scan_text(title, h.line_no)
                t_links, t_stamps = ts.links, ts.timestamps
                if ts.text != title:
                    extra["title_raw"] = title
                    title = ts.text.strip()
            cookies = statistics_cookies(title)
            if cookies:
                extra["statistics"] = cookies
            if hl.commented:
                extra["comment"] = True
            if "ARCHIVE" in hl.tags:
                extra["archived"] = True
            if title == "Footnotes":
                extra["footnote_section"] = True
            p = h.parent
            path = ((*paths[p], title) if p is not None else (title,))
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
            line_end = h.line_no + len(h.section.lines)
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
                    line_start=h.line_no,
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
    def _planning_first(
        sec_stamps: list[Timestamp], title_stamps: list[Timestamp]
    ) -> list[Timestamp]:
        planning = [t for t in sec_stamps if t.role in ("scheduled", "deadline", "closed")]
        rest = [t for t in sec_stamps if t.role not in ("scheduled", "deadline", "closed")]
        return planning + title_stamps + rest

    @staticmethod
    def _put_prop(
        props: dict[str, str], name: str, value: str, accumulate: bool = False
    ) -> None:
        """Store a property; ``NAME+`` appends to ``NAME`` with a space (org-syntax *Node
        Properties*; Org manual *Property Syntax*). With ``accumulate`` (inside one
        drawer, as ``org-entry-get`` reads it) a repeated ``NAME`` appends too; without
        it (``#+PROPERTY`` lines) a plain ``NAME`` replaces the earlier value."""
        plus = name.endswith("+") and len(name) > 1
        base = name[:-1] if plus else name
        for k in props:
            if k.upper() == base.upper():
                if plus or accumulate:
                    props[k] = (props[k] + " " + value) if props[k] else value
                else:
                    props[k] = value
                return
        props[base] = value

    def _code_units(
        self,
        units: list[Unit],
        sec: _Section,
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

    # -- one section --------------------------------------------------------------------
    def _section(
        self,
        lines: list[str],
        scan: E.SectionScan,
        first_line: int,
        zeroth: bool,
        warnings: list[Diagnostic],
    ) -> _Section:
        out = _Section()
        parts: list[str] = []
        links = out.links
        stamps = out.timestamps
        extra = out.extra
        targets: list[str] = []
        radios: list[str] = []
        els = scan.elements
        for k, el in enumerate(els):
            kind = el.kind
            if kind == E.TEXT:
                chunk = "\n".join(lines[el.start : el.end])
                ts = scan_text(chunk, first_line + el.start)
                parts.append(ts.text)
                links.extend(ts.links)
                stamps.extend(ts.timestamps)
                if "<<" in chunk:
                    t, r = find_targets(chunk)
                    targets.extend(t)
                    radios.extend(r)
            elif kind == E.BLANK:
                parts.append("")
            elif kind == E.TABLE:
                self._table(lines, el, first_line, parts, links, stamps)
            elif kind == E.BLOCK:
                self._block(lines, els, k, el, first_line, parts, links, stamps, out)
            elif kind == E.PROPERTY_DRAWER:
                for j in range(el.start + 1, el.end - 1):
                    m = _PROP_RE.match(lines[j])
                    if m is None:
                        continue
                    value = (m.group(2) or "").strip()
                    self._put_prop(out.properties, m.group(1), value, accumulate=True)
                    if value:
                        ts = scan_text(value, first_line + j, reduce=False)
                        links.extend(ts.links)
                        stamps.extend(
                            Timestamp(t.raw, t.active, t.start, t.end, t.repeater,
                                      t.warning, "property", t.diary)
                            for t in ts.timestamps
                        )
            elif kind == E.PLANNING:
                line = lines[el.start]
                for m in _PLANNING_KW_RE.finditer(line):
                    found = find_timestamps(line[m.end() :], m.group(1).lower())
                    if found and line.startswith(found[0].raw, m.end()):
                        stamps.append(found[0])
            elif kind == E.DRAWER:
                name = el.name
                inner = lines[el.start + 1 : el.end - 1]
                if name.upper() == "LOGBOOK":
                    entries = [x.strip() for x in inner if x.strip()]
                    extra.setdefault("logbook", []).extend(entries)
                    for x in inner:
                        self._clock(x, extra)
                else:
                    if name.upper() == "PROPERTIES":
                        warnings.append(
                            Diagnostic(
                                self.relpath,
                                "PROPERTIES drawer not accepted as a property drawer (not"
                                " right after the heading/planning line, or holding a line"
                                " that is not a node property): kept as an ordinary drawer",
                                first_line + el.start,
                            )
                        )
                    text = "\n".join(inner)
                    drawers = extra.setdefault("drawers", {})
                    drawers[name] = (drawers[name] + "\n" + text) if name in drawers else text
                    if text.strip():
                        ts = scan_text(text, first_line + el.start + 1, reduce=False)
                        links.extend(ts.links)
                        stamps.extend(ts.timestamps)
            elif kind == E.FIXED:
                for j in range(el.start, el.end):
                    s = lines[j].lstrip(" \t")
                    parts.append(s[2:] if len(s) > 1 else "")
            elif kind == E.CLOCK:
                self._clock(lines[el.start], extra)
            elif kind == E.DIARY:
                line = lines[el.start]
                sexp, rest = _split_sexp(line)
                stamps.append(Timestamp(line.strip(), True, sexp, role="body", diary=True))
                if rest.strip():
                    parts.append(rest.strip())
            # KEYWORD, COMMENT, RULE: not body text
        if targets:
            extra["targets"] = targets
        if radios:
            extra["radio_targets"] = radios
        boxes = scan.checkboxes
        if boxes["checked"] or boxes["unchecked"] or boxes["partial"]:
            extra["checkboxes"] = {k: v for k, v in boxes.items() if v}
        if scan.footnotes:
            extra["footnotes"] = scan.footnotes
        body = "\n".join(parts)
        if "\n\n\n" in body:
            body = _BLANKS_RE.sub("\n\n", body)
        out.body = body.strip("\n")
        return out

    @staticmethod
    def _clock(line: str, extra: dict[str, Any]) -> None:
        m = _CLOCK_RE.match(line)
        if m is None:
            return
        entry: dict[str, str] = {"start": m.group(1)}
        if m.group(2):
            entry["end"] = m.group(2)
        if m.group(3):
            entry["duration"] = m.group(3)
        extra.setdefault("clocks", []).append(entry)

    @staticmethod
    def _table(
        lines: list[str],
        el: E.Element,
        first_line: int,
        parts: list[str],
        links: list[Link],
        stamps: list[Timestamp],
    ) -> None:
        """Table cell text (org-syntax *Tables*, *Table Rows*, *Table Cells*): rule rows
        dropped, cells stripped and joined by single spaces, one row per line."""
        rows = lines[el.start : el.end]
        chunk = "\n".join(rows)
        ts = scan_text(chunk, first_line + el.start)
        links.extend(ts.links)
        stamps.extend(ts.timestamps)
        for row in ts.text.split("\n"):
            s = row.strip(" \t")
            if s.startswith(("|-", "+")):
                continue
            cells = [c.strip() for c in s.strip("|").split("|")]
            text = " ".join(c for c in cells if c)
            if text:
                parts.append(text)

    def _block(
        self,
        lines: list[str],
        els: list[E.Element],
        k: int,
        el: E.Element,
        first_line: int,
        parts: list[str],
        links: list[Link],
        stamps: list[Timestamp],
        out: _Section,
    ) -> None:
        """Blocks (org-syntax *Blocks*, *Greater Blocks*, *Dynamic Blocks*)."""
        name = el.name
        inner = "\n".join(lines[el.start + 1 : el.end - 1])
        if name == "comment":
            return
        if name == "src":
            if not self.opts.code_units:
                return
            words = el.value.split(None, 1)
            lang = words[0] if words else ""
            params = words[1] if len(words) > 1 else ""
            aff_name = None
            j = k - 1
            while j >= 0 and els[j].kind == E.KEYWORD and els[j].end == els[j + 1].start:
                key = els[j].name.lower()
                if key in ("name", "srcname", "tblname") and aff_name is None:
                    aff_name = els[j].value.strip() or None
                elif key not in _AFFILIATED and not key.startswith("attr_"):
                    break
                j -= 1
            code = _COMMA_RE.sub(r"\1\2", inner) if "," in inner else inner
            out.code.append(
                {
                    "language": lang.strip() or None,
                    "parameters": params.strip(),
                    "name": aff_name,
                    "code": code,
                    "start": first_line + el.start,
                    "end": first_line + el.end - 1,
                }
            )
            return
        if name in _VERBATIM_BLOCKS:
            text = _COMMA_RE.sub(r"\1\2", inner) if "," in inner else inner
            parts.append(text)
            return
        ts = scan_text(inner, first_line + el.start + 1)
        parts.append(ts.text)
        links.extend(ts.links)
        stamps.extend(ts.timestamps)


def _split_sexp(line: str) -> tuple[str, str]:
    """Split a diary sexp line ``%%(…) rest`` into the balanced sexp and the rest."""
    s = line.lstrip(" \t")[2:]
    depth = 0
    in_str = False
    for i, ch in enumerate(s):
        if in_str:
            if ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return s[: i + 1], s[i + 1 :]
    return s, ""
