"""The filters of the query language: a ``key:value`` word → a :class:`cairn.model.Filter`
(comma-separated alternatives, dates and ranges, heading levels, properties, types
written as links, ``source:`` folders resolved). The syntax is described in
:mod:`cairn.search.query`."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import replace
from pathlib import Path

from cairn.model import Filter
from cairn.search.dates import DATE_FIELDS, WRITTEN, WRITTEN_FIELDS, resolve

FILTER_FIELDS = frozenset(
    {
        "tag",
        "type",
        "todo",
        "priority",
        "path",
        "source",
        "format",
        "prop",
        "before",
        "after",
        "role",
        "kind",
        "id",
        "file",
        "heading",
        "section",
        "level",
        "lang",
        *DATE_FIELDS,
    }
)
"""The keys a ``key:value`` word may name as a filter."""

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2}(T[\d:]+Z?)?)?)?$")


def open_only(key: str, raw: str, negate: bool) -> bool:
    """Whether ``deadline:`` / ``scheduled:`` asks for what is still to do: ``soon`` or
    ``overdue`` (every alternative), so a task in a done state (``DONE``, or a keyword
    after ``|`` in the file's ``#+TODO:``) is left out, as Org's agenda leaves it out."""
    parts = _split(raw)
    return (key in ("deadline", "scheduled") and not negate and bool(parts)
            and all(p.strip().casefold() in ("soon", "overdue") for p in parts))


def _valid_date(value: str) -> bool:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (optionally with a time) naming a real date."""
    if not _DATE.match(value):
        return False
    parts = value[:10].split("-")
    try:
        year = int(parts[0])
        month = int(parts[1]) if len(parts) > 1 else 1
        day = int(parts[2]) if len(parts) > 2 else 1
        _dt.date(year, month, day)
    except ValueError:
        return False
    return True


_COMMA = re.compile(r',(?=(?:[^"]*"[^"]*")*[^"]*$)')
_LEVEL = re.compile(r"^(<=|>=|<|>)?(\d{1,2})(?:\.\.(\d{1,2})?)?$")


def _split(value: str) -> list[str]:
    """A filter value's comma-separated alternatives (quotes kept out), without empties."""
    return [p.replace('"', "") for p in _COMMA.split(value) if p.replace('"', "")]


def parse_filter(key: str, raw: str, negate: bool, notes: list[str], now: _dt.date
                 ) -> Filter | None:
    """One filter of ``key`` (one of :data:`FILTER_FIELDS`) with every comma-separated
    alternative of ``raw``; ``None`` when no alternative is valid (each invalid one
    appends a note to ``notes``). Relative dates count from ``now``."""
    prefix = ""
    if key == "prop":
        k, sep, v = raw.partition("=")
        if not sep:
            return _filter(key, raw.replace('"', ""), negate, notes, now)
        prefix = k.replace('"', "") + "="
        raw = v
    parts = _split(raw) or [""]
    if key == "type":  # a type is written as a name or as a link to its note: find both
        names = dict.fromkeys(n for p in parts for n in _type_name(p))
        parts = [f for n in names for f in (n, f"[[{n}]]")] or parts
    made = [_filter(key, prefix + p, negate, notes, now) for p in parts]
    kept = [f for f in made if f is not None]
    if not kept:
        return None
    return replace(kept[0], any_of=tuple(f.value for f in kept[1:]))


_LINKED = re.compile(r"^!?\[\[([^\]|#]*)(?:[#|][^\]]*)?\]\]$")


def _type_name(value: str) -> list[str]:
    """A ``type:`` value as the type's name: ``[[Authors]]`` (or ``[[Types/Authors|a]]``)
    is ``Authors``, as the Markdown parser reads a ``type`` front matter value."""
    m = _LINKED.match(value.strip())
    name = m.group(1).strip().rsplit("/", 1)[-1].removesuffix(".md") if m else value.strip()
    return [name] if name else []


def _filter(key: str, value: str, negate: bool, notes: list[str], now: _dt.date) -> Filter | None:
    if key in DATE_FIELDS:
        # "=" first: the date as written, a repeating timestamp not expanded
        written = value.startswith("=") and key in WRITTEN_FIELDS
        value = value[1:] if written else value
        rng = resolve(value, now)
        if rng is None:
            notes.append(
                f"ignored {key}: filter, not a date, range, comparison or relative date: {value!r}"
            )
            return None
        start, _, end = rng.partition("..")
        if start and end and start >= end:  # written backwards (2024-05..2024-03): read forwards
            first, _, last = value.partition("..")
            rng = resolve(f"{last}..{first}", now) or rng
            notes.append(f"{key}:{value} runs backwards; read as {key}:{last}..{first}")
        if written and rng == "soon":
            notes.append(f"{key}:=soon reads as {key}:soon (a due date is always expanded)")
            written = False
        return Filter(key, WRITTEN + rng if written else rng, key=now.isoformat(), negate=negate)
    if key == "level":
        m = _LEVEL.match(value)
        if not m:
            notes.append(f"ignored level: filter, not a heading depth (2, <=2, 1..3): {value!r}")
            return None
        op, a, b = m.group(1), int(m.group(2)), m.group(3)
        lo, hi = {
            None: (a, int(b) if b else (99 if ".." in value else a)),
            "<": (0, a - 1),
            "<=": (0, a),
            ">": (a + 1, 99),
            ">=": (a, 99),
        }[op]
        if lo > hi and op is None:  # level:9..1: read forwards
            lo, hi = hi, lo
            notes.append(f"level:{value} runs backwards; read as level:{lo}..{hi}")
        elif lo > hi:
            notes.append(f"level:{value} matches no heading depth (they run from 0 to 99)")
        return Filter("level", f"{lo}..{hi}", negate=negate)
    if key == "prop":
        k, sep, v = value.partition("=")
        if not k:
            notes.append(f"ignored prop filter without a key: {value!r}")
            return None
        return Filter("prop", v if sep else "", key=k, negate=negate)
    if key == "source":
        value = resolve_source(value)
    if key in ("before", "after") and not _valid_date(value):
        notes.append(f"ignored {key}: filter, not a valid date (YYYY[-MM[-DD]]): {value!r}")
        return None
    return Filter(key, value, negate=negate)


def resolve_source(value: str) -> str:
    """A ``source:`` value naming a folder as the absolute, symlink-free path a root is
    registered under (``~/notes``, ``./notes``, ``/link/to/notes``); other values (a
    format, a provider, a folder name) as given."""
    if not (value.startswith(("~", "/", "./", "../")) or value in (".", "..")):
        return value
    p = Path(value).expanduser()
    try:
        return p.resolve().as_posix() if p.exists() else p.absolute().as_posix()
    except (OSError, RuntimeError):
        return value

