"""Fields of hits as table columns (Dataview's ``TABLE``): ``cairn search --fields``,
and where a hit's words stand in its file (``--format vimgrep``)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.errors import QueryError
from cairn.formats import lined_formats
from cairn.model import Hit

if TYPE_CHECKING:
    from cairn.store import Store

_LINED = lined_formats()
"""Formats whose units are line ranges of a text file (chat exports are JSON)."""
_POSITION_MAX_BYTES = 16 * 1024 * 1024
"""A larger file is not read to find a hit's column (the hit's first line is given)."""

FIELDS = (
    "title",
    "doc_title",
    "path",
    "abs_path",
    "root",
    "line",
    "rank",
    "score",
    "kind",
    "format",
    "todo",
    "priority",
    "tags",
    "deadline",
    "scheduled",
    "closed",
)
"""Field names a column may take, besides ``prop:KEY``."""


def parse_fields(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"title,todo,prop:OWNER"`` as column names.

    Raises:
        QueryError: a name is neither one of :data:`FIELDS` nor ``prop:KEY``.
    """
    parts = text.split(",") if isinstance(text, str) else [p for s in text for p in s.split(",")]
    names = tuple(p.strip() for p in parts if p.strip())
    for n in names:
        if n.casefold() not in FIELDS and not (n.casefold().startswith("prop:") and len(n) > 5):
            raise QueryError(f"unknown field {n!r}; fields: {', '.join(FIELDS)}, prop:KEY")
    if not names:
        raise QueryError("--fields needs at least one field name")
    return names


FieldValue = str | int | float | bool | list[Any] | None
"""A column's value as JSON has it: ``line`` and ``rank`` numbers, ``score`` a float,
``tags`` a list, a property as its note gives it (a number, a list …), text else."""


def _json_value(value: Any) -> FieldValue:
    """A property value as JSON can carry it: lists, numbers, booleans and text as they
    are (inside a list too), anything else (a date …) as its text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return str(value)


def hit_fields(
    store: Store, hits: Sequence[Hit], fields: str | Sequence[str]
) -> list[dict[str, FieldValue]]:
    """One row per hit, ``{field: value}`` in the order of ``fields`` (:data:`FIELDS`,
    or ``prop:KEY``: the unit's property, else one it inherits, else its document's
    frontmatter/keyword value), each value typed as JSON has it (:data:`FieldValue`).
    ``deadline``/``scheduled``/``closed`` are the planning timestamps as written;
    ``root`` the registered folder the file is under.

    Raises:
        QueryError: an unknown field name.
    """
    names = parse_fields(fields)
    rows: list[dict[str, FieldValue]] = []
    for h in hits:
        unit = store.unit(h.unit_id) if any(":" in n for n in names) else None
        doc = store.document(h.document_id) if unit is not None else None
        row: dict[str, FieldValue] = {}
        for n in names:
            low = n.casefold()
            if low.startswith("prop:"):
                key = n[5:].casefold()
                value: Any = None
                sources: list[Any] = []
                if unit is not None:
                    sources += [unit.properties, unit.extra.get("inherited_properties") or {}]
                if doc is not None:
                    sources.append(doc.metadata)
                for src in sources:
                    hit = next((v for k, v in dict(src).items() if k.casefold() == key), None)
                    if hit is not None:
                        value = hit
                        break
                row[n] = _json_value(value)
            elif low in ("deadline", "scheduled", "closed"):
                row[n] = next((t.raw for t in h.planning if t.role == low), None)
            elif low == "line":
                row[n] = h.line_start
            else:
                row[n] = _json_value(getattr(h, low))
        rows.append(row)
    return rows


def hit_positions(hits: Sequence[Hit], query: str) -> list[tuple[int, int]]:
    """``(line, column)`` of each hit's first match of the query's words (groups'
    words too; not excluded ones), for ``--format vimgrep``: the line is 1-based in
    the file, the column 1-based in UTF-8 bytes (as ``rg --vimgrep``). The file is
    read now and searched within the unit's lines (its heading line included), so
    an edit since indexing moves nothing but the lines it changed. A hit with no
    matching word in its lines (a match by meaning or by frontmatter, a chat
    export, a file gone or unreadable) is ``(its first line, 1)``."""
    from cairn.search.query import parse_query
    from cairn.search.snippet import first_match, term_patterns
    from cairn.sources import decode, read_bytes, source_file

    patterns = term_patterns(parse_query(query).positive)
    files: dict[str, list[str] | None] = {}
    out: list[tuple[int, int]] = []
    for h in hits:
        where = (h.line_start, 1)
        if patterns and h.format in _LINED and h.line_end >= h.line_start >= 1:
            if h.abs_path not in files:
                files[h.abs_path] = None
                sf = source_file(Path(h.root), h.path)
                data = read_bytes(sf, max_bytes=_POSITION_MAX_BYTES) if sf else None
                if isinstance(data, bytes):
                    with suppress(ValueError):  # a binary file
                        files[h.abs_path] = decode(data).text.split("\n")
            lines = files[h.abs_path]
            if lines is not None:
                found = first_match(lines[h.line_start - 1 : h.line_end], patterns)
                if found is not None:
                    where = (h.line_start + found[0], found[1])
        out.append(where)
    return out
