"""An Org-agenda-style view over the index: deadlines, scheduled items, plain active
timestamps and what is overdue, repeaters expanded, day by day.

The rules follow Org's agenda (``org-agenda-list``) on its defaults:

* a timestamp is shown on every day of the window it occurs on — its date and, with
  a repeater (``+1w``, ``++1m``, ``.+1d``), every repeat (:mod:`cairn.model.dates`);
  ``SCHEDULED`` with a delay (``-2d``) is shown from that many days after its date;
* on *today* (when it is in the window) also: an open ``DEADLINE`` whose day is
  coming within its warning delay (``-3d``, else 14 days) — ``warning``; one gone by —
  ``overdue`` (a repeating deadline is overdue by its date as written, as in Org,
  since marking it done is what moves it on); an open item ``SCHEDULED`` earlier —
  ``scheduled-past``;
* done items (``DONE`` …) appear only on their own days, never as warnings or
  overdue; diary sexps and inactive timestamps (``[…]``, ``CLOSED``) are not shown.

Only Org files are read (``format:org``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from pathlib import Path

from cairn.errors import QueryError
from cairn.model import Filter, HitUnit, TextQuery, Timestamp
from cairn.model.agenda import Agenda, AgendaDay, AgendaItem
from cairn.model.dates import occurrences, parse_date, parse_step, warning_days
from cairn.store import Store

MAX_DAYS = 366
"""The longest agenda asked for, in days."""
MAX_UNITS = 100_000
_ORDER = {"overdue": 0, "scheduled-past": 1, "warning": 2, "deadline": 3, "scheduled": 4}


def _time(start: str) -> str | None:
    return start[11:16] if len(start) >= 16 and start[10] == "T" else None


def build_agenda(
    store: Store,
    *,
    days: int,
    start: _dt.date,
    today: _dt.date,
    filters: Sequence[Filter] = (),
    keep: Callable[[str, str], bool] | None = None,
) -> Agenda:
    """The agenda of ``days`` days from ``start`` (see the module).

    ``filters`` narrow the headings as in a search (``tag:`` …); ``keep(path,
    abs_path)``, when given, keeps only the files it accepts.

    Raises:
        QueryError: ``days`` is below 1 or above :data:`MAX_DAYS`.
    """
    if not 1 <= days <= MAX_DAYS:
        raise QueryError(f"days must be 1 to {MAX_DAYS}, not {days}")
    end = start + _dt.timedelta(days=days)
    rng = f"..{end.isoformat()}"
    query = TextQuery(
        (), (Filter("format", "org"), Filter("ts", rng, key=today.isoformat()), *filters)
    )
    ids = [u for u, _ in store.search_text(query, limit=MAX_UNITS, weights={})]
    facts = store.hit_units(ids)
    show_today = start <= today < end
    by_day: dict[_dt.date, list[AgendaItem]] = {}
    for uid in ids:
        unit, hu = store.unit(uid), facts.get(uid)
        if unit is None or hu is None:
            continue
        abs_path = (Path(hu.root_path) / hu.path).as_posix()
        if keep is not None and not keep(hu.path, abs_path):
            continue
        is_open = unit.todo_state != "done"

        def add(
            day: _dt.date,
            kind: str,
            due: _dt.date,
            t: Timestamp,
            gap: int = 0,
            *,
            hu: HitUnit = hu,
            uid: str = uid,
            abs_path: str = abs_path,
        ) -> None:
            by_day.setdefault(day, []).append(
                AgendaItem(
                    day=day.isoformat(),
                    kind=kind,
                    time=_time(t.start),
                    days=gap,
                    due=due.isoformat(),
                    title=hu.title,
                    todo=hu.todo,
                    priority=hu.priority,
                    tags=hu.tags,
                    outline_path=hu.outline_path,
                    path=hu.path,
                    abs_path=abs_path,
                    line=hu.line_start,
                    timestamp=t.raw,
                    repeater=t.repeater,
                    unit_id=uid,
                    document_id=hu.document_id,
                )
            )

        for t in unit.timestamps:
            if not t.active or t.diary or t.role == "closed":
                continue
            base = parse_date(t.start)
            if base is None:
                continue
            kind = {"deadline": "deadline", "scheduled": "scheduled"}.get(t.role, "timestamp")
            shift = 0
            if kind == "scheduled" and parse_step(t.warning) is not None:
                shift = warning_days(t.warning, 0)  # a delay: shown from date + N
            lo = start - _dt.timedelta(days=shift)
            for occ in occurrences(base, t.repeater, lo, end - _dt.timedelta(days=shift)):
                add(occ + _dt.timedelta(days=shift), kind, occ, t)
            if not (show_today and is_open and unit.todo):
                continue
            if kind == "deadline":
                gap = (base - today).days
                if gap < 0:
                    add(today, "overdue", base, t, gap)
                elif 0 < gap <= warning_days(t.warning):
                    add(today, "warning", base, t, gap)
            elif kind == "scheduled" and base + _dt.timedelta(days=shift) < today:
                add(today, "scheduled-past", base, t, (base - today).days)
    out: list[AgendaDay] = []
    for i in range(days):
        day = start + _dt.timedelta(days=i)
        items = sorted(
            by_day.get(day, []),
            key=lambda x: (x.time is None, x.time or "", _ORDER.get(x.kind, 5), x.path, x.line),
        )
        out.append(AgendaDay(day.isoformat(), day.strftime("%A"), day == today, tuple(items)))
    return Agenda(start.isoformat(), days, today.isoformat(), tuple(out))
