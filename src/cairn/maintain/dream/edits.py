"""The text edits behind each fix kind: pure functions ``text -> new text`` that change
only the lines they must (every other byte stays as it was). They raise
:class:`EditRefused` with a reason when the file no longer looks as the finding said."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any

from cairn.errors import CairnError
from cairn.formats.org import tree as org_tree

ID_NAMESPACE = uuid.UUID("8c5e5a43-2f0e-4d7a-9b1e-3f0c2d9a7e61")


class EditRefused(CairnError):
    """A fix cannot be made to the file as it is now (nothing is changed)."""


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def retarget_link(text: str, params: Mapping[str, Any]) -> str:
    """Replace the link text ``old`` by ``new`` on line ``line`` (else: its one
    occurrence in the file)."""
    old, new, line = str(params["old"]), str(params["new"]), params.get("line")
    lines = _lines(text)
    if isinstance(line, int) and 1 <= line <= len(lines):
        # on its line, or in the few lines below (a front-matter list under its key)
        for i in range(line - 1, min(len(lines), line + 20)):
            if old in lines[i]:
                lines[i] = lines[i].replace(old, new, 1)
                return "".join(lines)
    if text.count(old) == 1:
        return text.replace(old, new, 1)
    raise EditRefused(f"the link {old} is no longer where it was (line {line})")


def new_org_id(path: str, line: int, title: str) -> str:
    """A deterministic UUID for a heading (the same in ``--dry-run`` and ``--apply``)."""
    return str(uuid.uuid5(ID_NAMESPACE, f"{path}\0{line}\0{title}"))


_COOKIE = re.compile(r"-\*-.*-\*-")


def file_drawer_blocked(text: str) -> str | None:
    """Why no file-level property drawer can be added to Org ``text`` without harm, or
    ``None``.

    Org reads a file drawer only after leading blank lines and comments; Emacs reads
    ``-*- … -*-`` file variables only on line 1 (line 2 after ``#!``). When such a line
    is not an Org comment, a drawer above it breaks the variables (and a ``#!`` line)
    and a drawer below it is not a file drawer for Org, so neither place is right.
    """
    tree = org_tree.parse_tree(text)
    contents = tree.zeroth.contents()
    if org_tree.property_drawer_span(contents, True) is not None:
        return None
    head = _lines(text)[:2]
    if not head:
        return None
    first = head[0].lstrip("\ufeff")
    bare = not (first.strip() == "#" or first.lstrip(" \t").startswith(("# ", "#\t")))
    if first.startswith("#!"):
        return "line 1 is a #! line, which must stay first"
    if bare and _COOKIE.search(first):
        return ("line 1 holds Emacs file variables (-*- … -*-) and is not an Org "
                "comment: a file drawer above it would break them, below it Org "
                "would not read it")
    return None


def add_org_id(text: str, params: Mapping[str, Any], *, path: str) -> str:
    """Add an ``:ID:`` property to the heading at ``line`` (``0``: the file level; with
    ``title``, only when that heading still has it), creating the property drawer if
    needed (:func:`cairn.formats.org.tree.set_property`).

    Raises:
        EditRefused: the heading is gone or changed, it already has an ``:ID:``, or a
            file drawer cannot go in without harm (:func:`file_drawer_blocked`).
    """
    tree = org_tree.parse_tree(text)
    line = int(params.get("line") or 0)
    index: int | None = None
    title = ""
    if line:
        index = org_tree.heading_at(tree, line)
        if index is None:
            raise EditRefused(f"no heading at line {line} any more")
        title = org_tree.content(tree.headings[index].line)
        want = str(params.get("title") or "")
        if want and want not in title:
            raise EditRefused(f"the heading at line {line} is no longer {want!r}")
        sec = tree.headings[index].section
        span = org_tree.property_drawer_span(sec.contents(), False)
    else:
        span = org_tree.property_drawer_span(tree.zeroth.contents(), True)
        sec = tree.zeroth
        blocked = file_drawer_blocked(text)
        if blocked:
            raise EditRefused(blocked)
    if span is not None:
        for c in sec.contents()[span[0] + 1 : span[1]]:
            if c.strip().upper().startswith(":ID:"):
                raise EditRefused("it already has an :ID:")
    new = org_tree.set_property(tree, index, "ID", new_org_id(path, line, title))
    return org_tree.serialize(new)


def mark_status(text: str, params: Mapping[str, Any]) -> str:
    """Set ``status: <status>`` in the YAML front matter (the one line; a new line
    before the closing ``---`` when there is none)."""
    status = str(params["status"])
    lines = _lines(text)
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r\n ") != "---":
        raise EditRefused("no YAML front matter at the top of the file")
    eol = "\r\n" if lines[0].endswith("\r\n") else "\n"
    for i in range(1, len(lines)):
        s = lines[i].rstrip("\r\n")
        if s.rstrip() in ("---", "..."):
            lines.insert(i, f"status: {status}{eol}")
            return "".join(lines)
        m = re.match(r"status:([ \t]*)(.*?)([ \t]*#.*)?$", s)
        if m:
            ending = lines[i][len(s):]
            lines[i] = f"status:{m.group(1) or ' '}{status}{m.group(3) or ''}{ending}"
            return "".join(lines)
    raise EditRefused("the front matter is not closed")


_FENCE = re.compile(r"^\s*(```|~~~)")


_CODE_SPAN = re.compile(r"(`+).+?\1")


def _rename_inline(body: str, inline: re.Pattern[str], old: str, new: str) -> str:
    """``body`` with inline ``#old`` tags renamed, outside code spans; a line that also
    writes the tag another way is left as it is (prose comparing the spellings, such
    as "#tag and #TAG are the same", would lose its point)."""
    variants = re.findall(r"(?<![\w&#\\])#(" + re.escape(old) + r")(?![\w/-])",
                          _CODE_SPAN.sub("", body), flags=re.IGNORECASE)
    if any(v != old for v in variants):
        return body
    out: list[str] = []
    at = 0
    for m in _CODE_SPAN.finditer(body):
        out.append(inline.sub("#" + new, body[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(inline.sub("#" + new, body[at:]))
    return "".join(out)


def normalise_tag(text: str, params: Mapping[str, Any]) -> str:
    """Rename tag ``old`` to ``new``: Org heading tag groups and ``#+filetags:``;
    Markdown front-matter ``tags`` values and inline ``#tags`` outside code (fences,
    code spans), not escaped (``\\#tag``), on lines that do not also write the tag
    another way.

    Raises:
        EditRefused: the tag is not found as a tag in the file.
    """
    old, new, fmt = str(params["old"]), str(params["new"]), str(params.get("format", ""))
    lines = _lines(text)
    changed = False
    if fmt == "org":
        group = re.compile(r"(:)" + re.escape(old) + r"(?=:)")
        for i, raw in enumerate(lines):
            if raw.startswith("*") or raw.lower().startswith("#+filetags:"):
                body = raw.rstrip("\r\n")
                m = re.search(r"\s(:[\w@#%:]+:)\s*$", body) if raw.startswith("*") else \
                    re.search(r"(\S.*)$", body[len("#+filetags:"):])
                if not m:
                    continue
                start = m.start(1) + (0 if raw.startswith("*") else len("#+filetags:"))
                seg = body[start:]
                seg2 = group.sub(r"\1" + new.replace("\\", "\\\\"), seg)
                if seg2 != seg:
                    lines[i] = body[:start] + seg2 + raw[len(body):]
                    changed = True
    else:
        word = re.compile(r"(?<![\w/-])" + re.escape(old) + r"(?![\w/-])")
        inline = re.compile(r"(?<![\w&#\\])#" + re.escape(old) + r"(?![\w/-])")
        in_front = bool(lines) and lines[0].rstrip("\r\n") == "---"
        in_tags = False
        fence = False
        for i, raw in enumerate(lines):
            body = raw.rstrip("\r\n")
            if in_front and i > 0:
                if body.rstrip() in ("---", "..."):
                    in_front = False
                    continue
                key = re.match(r"([A-Za-z_][\w-]*):(.*)$", body)
                if key:
                    in_tags = key.group(1).lower() in ("tags", "tag")
                    if in_tags and key.group(2).strip():
                        rest = word.sub(new, key.group(2))
                        if rest != key.group(2):
                            lines[i] = body[: key.start(2)] + rest + raw[len(body):]
                            changed = True
                elif in_tags and re.match(r"\s*-\s", body):
                    rest = word.sub(new, body)
                    if rest != body:
                        lines[i] = rest + raw[len(body):]
                        changed = True
                continue
            if i == 0 and in_front:
                continue
            if _FENCE.match(body):
                fence = not fence
                continue
            if fence:
                continue
            rest = _rename_inline(body, inline, old, new)
            if rest != body:
                lines[i] = rest + raw[len(body):]
                changed = True
    if not changed:
        raise EditRefused(f"tag {old!r} not found as a tag in the file")
    return "".join(lines)


def entity_note(params: Mapping[str, Any]) -> str:
    """The text of a new entity note (Org or Markdown), listing where it is mentioned."""
    title = str(params["title"])
    rel = str(params.get("relpath", ""))
    depth = rel.count("/")
    up = "../" * depth
    mentions = [str(m) for m in params.get("mentions", ())]
    if params.get("format") == "org":
        out = [f"#+title: {title}", "", "Mentioned in:", ""]
        out += [f"- [[file:{up}{m}][{m}]]" for m in mentions]
    else:
        out = [f"# {title}", "", "Mentioned in:", ""]
        out += [f"- [{m}](<{up}{m}>)" for m in mentions]
    return "\n".join(out) + "\n"
