"""Note fields read from front matter and wikilinks: tags, aliases, dates, property strings,
and the links written in front matter values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from cairn.formats import frontmatter as fm_mod
from cairn.formats.written_dates import declared_date
from cairn.model import (
    EMBED,
    WIKILINK,
    Link,
)

# --- public helpers --------------------------------------------------------------------


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """Split the text between ``[[`` and ``]]`` into ``(target, anchor, alias)``.

    The alias follows the first unescaped ``|`` (``\\|`` counts as the pipe, as in an
    Obsidian table); the anchor follows the first ``#``. Whitespace is trimmed. A target
    of ``""`` means the note itself (``[[#Heading]]``).
    """
    alias: str | None = None
    m = re.search(r"\\?\|", inner)
    if m:
        alias = inner[m.end() :].strip()
        inner = inner[: m.start()]
    target, sep, anchor = inner.partition("#")
    return target.strip(), (anchor.strip() if sep else None) or None, alias


def normalise_tags(value: Any) -> list[str]:
    """Front matter ``tags`` as Obsidian reads them: always a list of strings.

    A string is split on commas and whitespace; list items are taken whole (nested
    lists flattened); a leading ``#`` is stripped; empty items and ``None`` dropped;
    order kept, duplicates removed.
    """
    items: list[str] = []
    if value is None:
        return items
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, list):
                items.extend(normalise_tags(v))
            elif isinstance(v, str):
                items.extend(re.split(r"\s*,\s*", v.strip()))
            elif v is not None and not isinstance(v, dict):
                items.append(str(v).lower() if isinstance(v, bool) else str(v))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        items = [str(value)]
    out: dict[str, None] = {}
    for item in items:
        tag = item.strip().lstrip("#").strip()
        if tag:
            out[tag] = None
    return list(out)


def normalise_aliases(value: Any) -> list[str]:
    """Front matter ``aliases``: a list of strings (a string is split on commas)."""
    items: list[str] = []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = [str(v) for v in value if v is not None and not isinstance(v, dict | list)]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        items = [str(value)]
    out: dict[str, None] = {}
    for item in items:
        item = item.strip()
        if item:
            out[item] = None
    return list(out)


# --- documents -------------------------------------------------------------------------


def _lookup(meta: Mapping[str, Any], *names: str) -> Any:
    lower = {k.lower(): k for k in meta}
    for name in names:
        key = lower.get(name)
        if key is not None:
            return meta[key]
    return None


def _scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip()
    return text or None


_LINKED = re.compile(r"^\s*!?\[\[([^\]|#]*)(?:[#|][^\]]*)?\]\]\s*$")


def type_names(value: Any) -> tuple[str, ...]:
    """The note type names a front matter ``type`` value holds: a name (``Authors``), a
    wikilink to the type's note (``"[[Authors]]"``, ``"[[Types/Authors|a]]"`` →
    ``Authors``) or a list of either (kepano's vault writes ``type: ["[[Authors]]"]``;
    an unquoted ``[[Authors]]`` is a list in a list); empty items dropped, order kept,
    no repeats."""
    items = value if isinstance(value, list) else [value]
    # an unquoted [[Authors]] is YAML for a list in a list
    items = [x for i in items for x in (i if isinstance(i, list) else [i])]
    out: list[str] = []
    for item in items:
        text = _scalar_text(item)
        if text is None:
            continue
        m = _LINKED.match(text)
        if m:
            text = PurePosixPath(m.group(1).strip()).name.removesuffix(".md").strip()
        if text and text not in out:
            out.append(text)
    return tuple(out)


def property_text(value: Any) -> str:
    """A front matter value as the string stored in ``Unit.properties``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
    ):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def date_field(front: fm_mod.FrontMatter, *names: str) -> str | None:
    """The normalised ISO date of the first present key among ``names``
    (case-insensitive), read by :func:`cairn.formats.written_dates.declared_date` (epoch
    milliseconds, ``12 March 2024`` … as well as ISO)."""
    lower = {k.lower(): k for k in front.data}
    for name in names:
        key = lower.get(name)
        if key is None:
            continue
        if key in front.dates:
            return front.dates[key]
        raw = front.data[key]
        return declared_date(raw if isinstance(raw, int | float) else _scalar_text(raw))
    return None


def stem(relpath: str) -> str:
    """The file name without its extension."""
    return PurePosixPath(relpath).stem or relpath


_FM_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")


def frontmatter_links(front: fm_mod.FrontMatter) -> list[Link]:
    """Wikilinks written in front matter string values (``up: "[[Parent]]"``).

    Obsidian counts these as links of the note (its "frontmatter links"). Each is a
    :data:`cairn.model.WIKILINK` on the line it is written on: a list item's own line
    (``related:`` then ``  - "[[X]]"``), found in the key's lines of the block; the
    line of its top-level key when the text is not found there as written (an escaped
    or folded string).
    """
    links: list[Link] = []
    rows = front.raw.split("\n")
    first = (front.start_line or 0) + 1  # the file line of rows[0]
    starts = sorted(front.key_lines.values())
    used: dict[tuple[int, str], int] = {}

    def where(raw: str, line: int | None) -> int | None:
        if line is None or not front.start_line:
            return line
        stop = next((n for n in starts if n > line), first + len(rows))
        for n in range(line, stop):
            i = n - first
            if 0 <= i < len(rows) and rows[i].count(raw) > used.get((n, raw), 0):
                used[(n, raw)] = used.get((n, raw), 0) + 1
                return n
        return line

    def visit(value: Any, line: int | None) -> None:
        if isinstance(value, str):
            if "[[" in value:
                for m in _FM_WIKILINK.finditer(value):
                    target, anchor, alias = split_wikilink(m.group(2))
                    links.append(
                        Link(
                            kind=EMBED if m.group(1) else WIKILINK,
                            target=target,
                            alias=alias or None,
                            anchor=anchor,
                            line=where(m.group(0), line),
                            raw=m.group(0),
                        )
                    )
        elif isinstance(value, list):
            for v in value:
                visit(v, line)
        elif isinstance(value, dict):
            for v in value.values():
                visit(v, line)

    for key, value in front.data.items():
        visit(value, front.key_lines.get(key, front.start_line))
    return links
