"""Ordering hits by a field instead of relevance: ``--sort priority,deadline``.

Keys (:data:`SORT_KEYS`), each ascending unless said otherwise, a unit without the
field after every unit with it:

* ``relevance`` — the ranked order (the default, and every sort's last tie-break);
* ``deadline`` / ``scheduled`` — the due day of the unit's ``DEADLINE`` /
  ``SCHEDULED`` timestamp, a repeater's next occurrence on or after today;
* ``priority`` — ``A`` before ``B`` before ``C`` (numbers in numeric order);
* ``modified`` — newest first: the document's declared modification date, else its
  file's modification time;
* ``title`` — the unit's title, case-insensitively.

Several keys are compared in turn; the sort is stable. A sort reorders the best
:data:`SORT_POOL` matches of the query (a filter-only query: the first that many in
path order).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any, TypeVar

from cairn.errors import QueryError
from cairn.model.dates import due_date, parse_date
from cairn.store import Store

SORT_KEYS = ("relevance", "deadline", "scheduled", "priority", "modified", "title")
SORT_POOL = 1000
"""Matches a sorted search reorders."""

T = TypeVar("T")
_LAST = (1, "")


def parse_sort(sort: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"priority,deadline"`` (or a list) as the sort keys; ``()`` for relevance only.

    Raises:
        QueryError: a key is not one of :data:`SORT_KEYS` (the message lists them).
    """
    if sort is None:
        return ()
    parts = sort.split(",") if isinstance(sort, str) else [p for s in sort for p in s.split(",")]
    keys = tuple(p.strip().casefold() for p in parts if p.strip())
    bad = [k for k in keys if k not in SORT_KEYS]
    if bad:
        raise QueryError(f"unknown sort key {bad[0]!r}; sort by one of: {', '.join(SORT_KEYS)}")
    return () if all(k == "relevance" for k in keys) else keys


def _priority(p: str | None) -> tuple[int, Any]:
    if not p:
        return _LAST
    return (0, (0, int(p), "")) if p.isdigit() else (0, (1, 0, p.upper()))


def sort_units(
    store: Store,
    items: Sequence[T],
    unit_of: Any,
    keys: Sequence[str],
    today: _dt.date,
) -> list[T]:
    """``items`` (ranked best first) in the order of ``keys`` (see the module);
    ``unit_of(item)`` gives an item's unit id."""
    if not keys:
        return list(items)
    ids = [unit_of(x) for x in items]
    units = store.hit_units(ids)
    facts = store.unit_facts(ids) if "modified" in keys else {}

    def planned(uid: str, role: str) -> tuple[int, str]:
        u = units.get(uid)
        days = [
            due_date(d, t.repeater, today)
            for t in (u.planning if u else ())
            if t.role == role and (d := parse_date(t.start)) is not None
        ]
        return (0, min(days).isoformat()) if days else _LAST

    def modified(uid: str) -> tuple[int, float]:
        f = facts.get(uid)
        if f is None:
            return (1, 0.0)
        when = parse_date(f.modified)
        if when is not None:
            stamp = _dt.datetime(when.year, when.month, when.day).timestamp()
        else:
            stamp = f.mtime
        return (0, -stamp)

    def key(pair: tuple[int, T]) -> tuple[Any, ...]:
        i, item = pair
        uid = unit_of(item)
        out: list[Any] = []
        for k in keys:
            if k == "relevance":
                out.append(i)
            elif k in ("deadline", "scheduled"):
                out.append(planned(uid, k))
            elif k == "priority":
                out.append(_priority(units[uid].priority if uid in units else None))
            elif k == "modified":
                out.append(modified(uid))
            elif k == "title":
                u = units.get(uid)
                out.append((0, u.title.casefold()) if u and u.title else _LAST)
        out.append(i)
        return tuple(out)

    return [item for _, item in sorted(enumerate(items), key=key)]
