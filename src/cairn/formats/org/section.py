"""One Org section → its body text, links, timestamps, properties, drawers and code
blocks (what a unit holds besides its headline)."""

from __future__ import annotations

import re
from typing import Any

from cairn.formats.org import elements as E
from cairn.formats.org.objects import (
    find_targets,
    find_timestamps,
    scan_text,
)
from cairn.formats.org.options import (
    OrgOptions,
)
from cairn.model import Diagnostic, Link, Timestamp

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
_BLANKS_RE = re.compile(r"\n{3,}")



class SectionResult:
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



def put_prop(
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


class SectionReader:
    """Reads one section (its scanned elements) into a :class:`SectionResult`."""

    def __init__(self, relpath: str, options: OrgOptions) -> None:
        self.relpath = relpath
        self.opts = options

    def read(
        self,
        lines: list[str],
        scan: E.SectionScan,
        first_line: int,
        zeroth: bool,
        warnings: list[Diagnostic],
    ) -> SectionResult:
        """Read one section: ``lines`` are its lines (no terminators), ``scan`` their
        elements, ``first_line`` the 1-based file line of ``lines[0]``; ``zeroth`` for the
        text before the first heading. Problems are appended to ``warnings``."""
        out = SectionResult()
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
                    put_prop(out.properties, m.group(1), value, accumulate=True)
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
        out: SectionResult,
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
        if name == "verse":  # its contents are objects only (org-syntax *Blocks*)
            ts = scan_text(inner, first_line + el.start + 1)
            parts.append(ts.text)
            links.extend(ts.links)
            stamps.extend(ts.timestamps)
            return
        # a greater or dynamic block holds elements: read as a section's are, so its
        # keywords, comments and nested block lines are no text (org-syntax *Greater
        # Blocks*, *Dynamic Blocks*)
        rows = lines[el.start + 1 : el.end - 1]
        sub = self.read(rows, E.scan_block(rows), first_line + el.start + 1,
                        False, out.warnings)
        parts.append(sub.body)
        links.extend(sub.links)
        stamps.extend(sub.timestamps)
        out.code.extend(sub.code)
        for key in ("drawers", "logbook", "clocks", "targets", "radio_targets"):
            if key in sub.extra:
                value = sub.extra[key]
                have = out.extra.get(key)
                if isinstance(value, dict):
                    out.extra[key] = {**value, **(have or {})}
                else:
                    out.extra[key] = [*(have or []), *value]


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
