"""A note's declared date (``created:``, ``modified:`` in front matter) as ISO 8601, from
the spellings vault tools and people write, when the reading is certain.

Read: ISO dates and datetimes (:func:`normalise_date`);
epoch milliseconds (13 digits, as some vault tools write ``created: 1700000000000``) and
epoch seconds (10 digits), read as UTC; ``YYYYMMDD``; ``YYYY/MM/DD`` and ``YYYY.MM.DD``;
a month written in English beside a day and a year (``12 March 2024``, ``March 12,
2024``, ``Mar 12 2024``, ``Tuesday, 12 March 2024``). Not read: day and month both as
numbers in another order (``03/04/2024`` is March or April), a month and year without a
day, anything outside 1970–2199 for an epoch value.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

_DATE_RE = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt]|[ \t]+)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"[ \t]*(Z|z|[+-]\d{1,2}(?::?\d{2})?)?)?"
)


def normalise_date(text: Any) -> str | None:
    """Normalise a written date or datetime to ISO 8601, or ``None`` if it is not one.

    Accepts ``YYYY-MM-DD`` and YAML/ISO datetimes (``T`` or spaces between date and time,
    optional seconds, fraction, ``Z`` or ``±HH[:MM]`` offset). Returns ``YYYY-MM-DD`` or
    ``YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM]`` (fractions dropped). Invalid calendar dates
    (``2023-02-30``) give ``None``.
    """
    if not isinstance(text, str):
        return None
    m = _DATE_RE.fullmatch(text.strip())
    if not m:
        return None
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        _dt.date(year, month, day)
    except ValueError:
        return None
    out = f"{year:04d}-{month:02d}-{day:02d}"
    if m.group(4) is None:
        return out
    hour, minute = int(m.group(4)), int(m.group(5))
    if hour > 23 or minute > 59:
        return None
    out += f"T{hour:02d}:{minute:02d}"
    if m.group(6) is not None:
        if int(m.group(6)) > 60:
            return None
        out += f":{int(m.group(6)):02d}"
    tz = m.group(7)
    if tz:
        if tz in ("Z", "z"):
            out += "Z"
        else:
            sign, digits = tz[0], tz[1:].replace(":", "")
            hh = digits[:-2] if len(digits) > 2 else digits
            mm = digits[-2:] if len(digits) > 2 else "00"
            out += f"{sign}{int(hh):02d}:{mm}"
    return out


MONTHS = {
    name: i + 1
    for i, names in enumerate([
        ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
        ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
        ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
        ("december", "dec"),
    ])
    for name in names
}  # fmt: skip
"""English month names and abbreviations, lower case, to the month's number."""

_WEEKDAY = r"(?:(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\.?,?\s+)?"
_DAY_MONTH = re.compile(_WEEKDAY + r"(\d{1,2})(?:st|nd|rd|th)?\.?\s+([a-z]+)\.?,?\s+(\d{4})")
_MONTH_DAY = re.compile(_WEEKDAY + r"([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_SLASHED = re.compile(r"(\d{4})[/.](\d{1,2})[/.](\d{1,2})")
_LO, _HI = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC), _dt.datetime(2200, 1, 1, tzinfo=_dt.UTC)


def declared_date(value: Any) -> str | None:
    """``value`` (a front matter scalar: text or a number) as ``YYYY-MM-DD`` or an ISO
    datetime (see the module); ``None`` when it is not certainly a date."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        value = str(int(value)) if float(value).is_integer() else str(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    iso = normalise_date(text)
    if iso is not None:
        return iso
    if text.isdigit():
        return _digits(text)
    m = _SLASHED.fullmatch(text)
    if m:
        return _day(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    low = text.casefold()
    m = _DAY_MONTH.fullmatch(low)
    if m and m.group(2) in MONTHS:
        return _day(int(m.group(3)), MONTHS[m.group(2)], int(m.group(1)))
    m = _MONTH_DAY.fullmatch(low)
    if m and m.group(1) in MONTHS:
        return _day(int(m.group(3)), MONTHS[m.group(1)], int(m.group(2)))
    return None


def _digits(text: str) -> str | None:
    if len(text) == 8:
        return _day(int(text[:4]), int(text[4:6]), int(text[6:]))
    if len(text) not in (10, 13):
        return None
    seconds = int(text) / (1000 if len(text) == 13 else 1)
    when = _dt.datetime.fromtimestamp(seconds, _dt.UTC)
    if not _LO <= when < _HI:
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _day(year: int, month: int, day: int) -> str | None:
    try:
        return _dt.date(year, month, day).isoformat()
    except ValueError:
        return None
