"""The matching behind the date filters: :func:`ts_match` over a unit's stored
timestamps (JSON), with repeaters and warning delays (:mod:`cairn.model.dates`).
SQLite calls it as the SQL function ``cairn_ts_match(timestamps, field, range, today)``
(:func:`cairn.store.sqlite.connect.register_functions`); PostgreSQL runs it over the
units its server picks out (:mod:`cairn.store.postgres.search`)."""

from __future__ import annotations

import datetime as _dt
import json

from cairn.model.dates import due_date, occurrences, parse_date, parse_step, warning_days

TS_FIELDS = ("scheduled", "deadline", "closed", "ts", "ts-inactive")


def _bounds(rng: str) -> tuple[_dt.date | None, _dt.date | None]:
    lo, _, hi = rng.partition("..")
    return parse_date(lo), parse_date(hi)


def _wants(field: str, t: dict[str, object]) -> bool:
    if t.get("diary"):
        return False
    if field == "ts":
        return bool(t.get("active"))
    if field == "ts-inactive":
        return not t.get("active")
    return t.get("role") == field


def ts_match(timestamps: str | None, field: str, rng: str, today_iso: str | None) -> int:
    """:func:`_ts_match`, 0 for anything beyond the calendar (never raises into SQL)."""
    try:
        return _ts_match(timestamps, field, rng, today_iso)
    except (ValueError, OverflowError, TypeError):
        return 0


def _ts_match(timestamps: str | None, field: str, rng: str, today_iso: str | None) -> int:
    """1 when one of the unit's timestamps of kind ``field`` occurs in ``rng``
    (``lo..hi``: a repeat counts, unless written ``=lo..hi``: the date as written only;
    a date range ``<a>--<b>`` counts when it overlaps), or, for ``rng == "soon"``, is
    due within its warning delay (a deadline) or has come (scheduled, after its ``-Nd``
    delay) — overdue included; else 0."""
    try:
        stamps = json.loads(timestamps or "[]")
    except ValueError:
        return 0
    now = parse_date(today_iso) or _dt.date.today()
    written = rng.startswith("=")
    rng = rng.removeprefix("=")
    lo, hi = (None, None) if rng == "soon" else _bounds(rng)
    for t in stamps:
        if not isinstance(t, dict) or not _wants(field, t):
            continue
        start = parse_date(str(t.get("start") or ""))
        if start is None:
            continue
        rep = t.get("repeater") if isinstance(t.get("repeater"), str) else None
        if written:
            rep = None
        if rng == "soon":
            due = due_date(start, rep, now)
            warn = t.get("warning") if isinstance(t.get("warning"), str) else None
            if t.get("role") == "deadline" or field == "deadline":
                if due <= now + _dt.timedelta(days=warning_days(warn)):
                    return 1
            elif due + _dt.timedelta(days=warning_days(warn, 0)) <= now:
                return 1
            continue
        end = parse_date(str(t.get("end") or ""))
        if end is not None and end > start and parse_step(rep) is None:
            if (hi is None or start < hi) and (lo is None or end >= lo):
                return 1
            continue
        if next(occurrences(start, rep, lo, hi), None) is not None:
            return 1
    return 0

