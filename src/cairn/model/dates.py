"""Calendar arithmetic on Org timestamps: repeaters, warning delays and occurrences.

Pure functions over :class:`datetime.date` (no I/O), shared by the store's date filters,
sorting and the agenda. Org's syntax (``org-syntax.org``, *Timestamps*): a repeater is
``+N``, ``++N`` or ``.+N`` followed by a unit ``h d w m y``; a warning delay is ``-N``
or ``--N`` with a unit. For finding a task by date all three repeater kinds mean the
same: the timestamp occurs on its date and every ``N`` units after it; the occurrence
that is *due* is the first on or after today (:func:`due_date`).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterator

_STEP = re.compile(r"^(?:\.\+|\+\+|\+|--|-)(\d+)([hdwmy])$")
MAX_OCCURRENCES = 5000
"""Occurrences of one repeating timestamp looked at, at most (a ``+1d`` over 13 years)."""
DEFAULT_WARNING_DAYS = 14
"""Days before a deadline it counts as due soon when it has no ``-Nd`` cookie (Org's
``org-deadline-warning-days``)."""


def parse_date(value: str | None) -> _dt.date | None:
    """The calendar date of an ISO date or datetime string (``2024-03-05``,
    ``2024-03-05T10:00``); ``None`` when it is not one (a diary sexp, ``None``)."""
    if not value or len(value) < 10:
        return None
    try:
        return _dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def parse_step(cookie: str | None) -> tuple[int, str] | None:
    """``(count, unit)`` of a repeater or warning cookie (``+1w`` → ``(1, "w")``,
    ``.+2d``, ``++1m``, ``-3d``); ``None`` when absent, zero or not one."""
    m = _STEP.match(cookie or "")
    if not m or int(m.group(1)) == 0:
        return None
    return int(m.group(1)), m.group(2)


def add_step(day: _dt.date, count: int, unit: str) -> _dt.date:
    """``day`` moved by ``count`` units (``d w m y``; ``h`` counts as no move of the
    date; a month end is clamped: Jan 31 + 1m = Feb 28/29; past the calendar's ends,
    :attr:`datetime.date.max` / ``min``)."""
    edge = _dt.date.max if count >= 0 else _dt.date.min
    try:
        if unit == "d":
            return day + _dt.timedelta(days=count)
        if unit == "w":
            return day + _dt.timedelta(weeks=count)
    except OverflowError:
        return edge
    if unit in ("m", "y"):
        months = day.month - 1 + (count if unit == "m" else 12 * count)
        year, month = day.year + months // 12, months % 12 + 1
        if not _dt.MINYEAR <= year <= _dt.MAXYEAR:
            return edge
        for d in (day.day, 30, 29, 28):
            try:
                return _dt.date(year, month, d)
            except ValueError:
                continue
    return day


def occurrences(
    start: _dt.date, repeater: str | None, lo: _dt.date | None, hi: _dt.date | None
) -> Iterator[_dt.date]:
    """The dates in ``[lo, hi)`` (either end open: ``None``) on which a timestamp
    starting on ``start`` with ``repeater`` occurs, in order; without a repeater, its
    date alone. Bounded by :data:`MAX_OCCURRENCES`; an open ``hi`` with a repeater
    gives only the first occurrence in range."""
    step = parse_step(repeater)
    if step is None or step[1] == "h":
        if (lo is None or start >= lo) and (hi is None or start < hi):
            yield start
        return
    count, unit = step
    day, k = start, 0
    if lo is not None and unit in ("d", "w") and day < lo:  # jump close to lo
        span = count * (7 if unit == "w" else 1)
        k = (lo - day).days // span
        day = day + _dt.timedelta(days=k * span)
    n = 0
    while n < MAX_OCCURRENCES and (hi is None or day < hi):
        if lo is None or day >= lo:
            yield day
            if hi is None:
                return
        n += 1
        k += 1
        step_day = add_step(start, count * k, unit)
        if step_day <= day or step_day == _dt.date.max:  # the end of the calendar
            return
        day = step_day


def due_date(start: _dt.date, repeater: str | None, today: _dt.date) -> _dt.date:
    """The occurrence that is due: ``start`` when it has no repeater or is not yet
    past, else the first repeat on or after ``today``."""
    if start >= today or parse_step(repeater) is None:
        return start
    return next(occurrences(start, repeater, today, None), start)


def warning_days(warning: str | None, default: int = DEFAULT_WARNING_DAYS) -> int:
    """Days of a warning delay cookie (``-3d`` → 3, ``-1w`` → 7, ``-1m`` → 30);
    ``default`` without one."""
    step = parse_step(warning)
    if step is None:
        return default
    count, unit = step
    return count * {"h": 0, "d": 1, "w": 7, "m": 30, "y": 365}[unit]
