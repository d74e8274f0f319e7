"""Relative dates in a chat message ("yesterday", "last Saturday", "two weeks ago"),
resolved against the message's own time.

A message sent on 8 May 2023 that says "I went to a support group yesterday" talks about
7 May 2023; the date the words stand for is kept on the unit as an inactive
:class:`cairn.model.Timestamp` (``raw`` = the words as written, ``role`` = ``body``), so
``ts:2023-05-07`` and date-aware ranking find the message, and a reader sees when it
happened. Only phrases whose meaning is certain given the time are read:

* ``today``, ``tonight``, ``this morning|afternoon|evening`` → that day;
  ``yesterday``, ``last night`` → the day before; ``the day before yesterday``;
  ``tomorrow``;
* ``last <weekday>`` → the latest such day before the message's day (``last Friday``
  said on a Friday is the Friday before); ``next <weekday>`` → the next one after it;
* ``last|next week|weekend|month|year``, ``this past weekend`` → that span (``start`` and
  ``end``; weeks start on Monday, a weekend is Saturday–Sunday);
* ``N days|weeks|months|years ago`` (N in digits up to 99, or ``a``, ``an``, ``one`` …
  ``ten``, ``a couple of``, ``a few`` is too vague and left alone) → that day, month or
  year (``three months ago`` → that month).

Phrases inside a word are not read; nothing is read when the message has no time.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from cairn.model import Timestamp

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2,
}  # fmt: skip
_NUM = r"(?P<n>\d{1,2}|a couple of|couple of|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"
_PHRASE = re.compile(
    r"(?<![\w-])(?:"
    r"(?P<daybefore>the day before yesterday)"
    r"|(?P<yesterday>yesterday|last night)"
    r"|(?P<today>today|tonight|this (?:morning|afternoon|evening))"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<dir>last|next|this past) (?P<unit>"
    + "|".join(_WEEKDAYS)
    + r"|week|weekend|month|year)"
    rf"|{_NUM} (?P<span>day|week|month|year)s? ago"
    r")(?![\w-])",
    re.IGNORECASE,
)
MAX_DATES = 8
"""Relative dates kept per message (a long message rarely needs more)."""


def _month_span(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def _shift_month(d: date, months: int) -> tuple[int, int]:
    total = d.year * 12 + (d.month - 1) + months
    return total // 12, total % 12 + 1


def _resolve(m: re.Match[str], day: date) -> tuple[date, date | None] | None:
    """``(start, end or None)`` of one matched phrase said on ``day``."""
    if m.group("daybefore"):
        return day - timedelta(days=2), None
    if m.group("yesterday"):
        return day - timedelta(days=1), None
    if m.group("today"):
        return day, None
    if m.group("tomorrow"):
        return day + timedelta(days=1), None
    if m.group("dir"):
        back = m.group("dir").lower() != "next"
        unit = m.group("unit").lower()
        if unit in _WEEKDAYS:
            want = _WEEKDAYS.index(unit)
            if back:
                delta = (day.weekday() - want) % 7 or 7
                return day - timedelta(days=delta), None
            return day + timedelta(days=(want - day.weekday()) % 7 or 7), None
        if unit == "week":
            monday = day - timedelta(days=day.weekday()) + timedelta(weeks=-1 if back else 1)
            return monday, monday + timedelta(days=6)
        if unit == "weekend":
            saturday = day - timedelta(days=(day.weekday() - 5) % 7)
            if back:
                saturday = saturday if saturday < day - timedelta(days=1) else (
                    saturday - timedelta(weeks=1))
            else:
                saturday = day + timedelta(days=(5 - day.weekday()) % 7 or 7)
            return saturday, saturday + timedelta(days=1)
        if unit == "month":
            y, mo = _shift_month(day, -1 if back else 1)
            return _month_span(y, mo)
        year = day.year - 1 if back else day.year + 1
        return date(year, 1, 1), date(year, 12, 31)
    raw_n = m.group("n").lower()
    n = int(raw_n) if raw_n.isdigit() else _NUMBERS[raw_n]
    span = m.group("span").lower()
    if span == "day":
        return day - timedelta(days=n), None
    if span == "week":
        return day - timedelta(weeks=n), None
    if span == "month":
        y, mo = _shift_month(day, -n)
        return _month_span(y, mo)
    if day.year - n < 1:
        return None
    return date(day.year - n, 1, 1), date(day.year - n, 12, 31)


# Every phrase holds one of these (weekdays end in "day", "ago" follows day|week|month|
# year), so a text without any has no relative date and skips the costly scan. None
# holds an "i": under re.IGNORECASE "İ" and "ı" match "i" but do not lower to it.
_CUES = ("day", "ght", "tomorrow", "morn", "noon", "even", "week", "month", "year")


def relative_dates(
    text: str, time: str | None, lower: str | None = None
) -> tuple[Timestamp, ...]:
    """The relative dates of ``text`` resolved against ``time`` (an ISO 8601 string;
    ``None`` or unreadable: none), as inactive body timestamps, at most
    :data:`MAX_DATES`, each date once (see the module docstring). ``lower`` is
    ``text.lower()`` when the caller has it already."""
    if not time or not text:
        return ()
    low = text.lower() if lower is None else lower
    if not any(cue in low for cue in _CUES):
        return ()
    try:
        day = datetime.fromisoformat(time.replace("Z", "+00:00")).date()
    except ValueError:
        return ()
    out: list[Timestamp] = []
    seen: set[tuple[date, date | None]] = set()
    for m in _PHRASE.finditer(text):
        try:
            span = _resolve(m, day)
        except (OverflowError, ValueError):  # past year 1 or 9999
            continue
        if span is None or span in seen:
            continue
        seen.add(span)
        start, end = span
        out.append(Timestamp(raw=m.group(0), active=False, start=start.isoformat(),
                             end=end.isoformat() if end else None, role="body"))
        if len(out) >= MAX_DATES:
            break
    return tuple(out)
