"""Date values of the query language: ``scheduled:``, ``deadline:``, ``closed:``,
``ts:``, ``ts-inactive:``, ``created:`` and ``modified:``.

A value is resolved against *today* into a half-open range of days ``[lo, hi)`` —
written ``lo..hi`` in the :class:`cairn.model.Filter` handed to the store, either end
may be empty:

* a date ``2024``, ``2024-03``, ``2024-03-05`` — that year, month or day; also spelled
  ``2024/03/05`` or with the month's English name (``"March 2024"``, ``"12 Mar 2024"``,
  ``mar-2024``); a day and month both in digits in another order is not read;
* a range ``2024-03..2024-04`` (both ends inclusive, as written: March and April),
  open ends ``2024-03..`` / ``..2024-04``;
* a comparison ``<2024-06-01``, ``<=2024-06``, ``>2024-06-01``, ``>=2024-06-01``;
* a relative form: ``today``, ``tomorrow``, ``yesterday``; ``+7d`` (today through 7
  days ahead), ``-2w`` (2 weeks ago through today; units ``d w m y``);
  ``this-week`` / ``next-week`` / ``last-week`` (Monday to Sunday), the same for
  ``month`` and ``year``; ``overdue`` / ``past`` (before today; ``overdue`` leaves out
  done tasks, :mod:`cairn.search.query`), ``future`` (after
  today);
* ``soon`` (``deadline:`` and ``scheduled:``): due within its warning delay — a
  ``-3d`` cookie, else :data:`cairn.model.dates.DEFAULT_WARNING_DAYS` — or overdue.

A repeating timestamp (``<2024-01-05 Fri +1w>``) matches a range when any of its
repeats falls in it. ``=`` before the value (``ts:=2024-03``, ``scheduled:=2024-01-05``)
asks for the date as written only: the timestamp then matches by its own date, repeats
not counted (the store's filter value starts with :data:`WRITTEN`).

*Today* is the ``today`` argument of the search, else ``$CAIRN_TODAY``
(``YYYY-MM-DD``), else the local date (:func:`today`).
"""

from __future__ import annotations

import datetime as _dt
import os
import re

from cairn.model.dates import add_step

DATE_FIELDS = frozenset(
    {"scheduled", "deadline", "closed", "ts", "ts-inactive", "created", "modified"}
)
"""Filter fields that take a date value (resolved by :func:`resolve`)."""
WRITTEN_FIELDS = frozenset({"scheduled", "deadline", "closed", "ts", "ts-inactive"})
"""The date fields over Org timestamps, which may repeat: ``=`` asks for the written date."""
WRITTEN = "="
"""Starts a timestamp filter's ``lo..hi`` when repeats do not count."""
TODAY_ENV = "CAIRN_TODAY"

_REL = re.compile(r"^([+-])(\d+)([dwmy])$")
_CMP = re.compile(r"^(<=|>=|<|>)(.+)$")
_PERIOD = re.compile(r"^(this|next|last)-(week|month|year)$")


def today(value: _dt.date | str | None = None) -> _dt.date:
    """The day relative dates count from: ``value`` (a date or ``YYYY-MM-DD``), else
    ``$CAIRN_TODAY``, else the local date.

    Raises:
        ValueError: ``value`` or ``$CAIRN_TODAY`` is not a ``YYYY-MM-DD`` date.
    """
    if isinstance(value, _dt.date):
        return value
    text = value or os.environ.get(TODAY_ENV, "")
    if text:
        try:
            return _dt.date.fromisoformat(text.strip()[:10])
        except ValueError as exc:
            raise ValueError(f"not a date (YYYY-MM-DD): {text!r}") from exc
    return _dt.date.today()


_MONTH_NAMES = {
    m: i + 1
    for i, names in enumerate([
        ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
        ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
        ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
        ("december", "dec"),
    ])
    for m in names
}  # fmt: skip


def _spelled(text: str) -> str:
    """``YYYY/MM/DD``, ``YYYY.MM``, ``March 2024``, ``12 Mar 2024``, ``mar-2024`` as
    ``YYYY-MM[-DD]``; other text as it is."""
    parts = [p for p in re.split(r"[-/.,\s]+", text.strip().casefold()) if p]
    if not parts or not any(p.isdigit() and len(p) == 4 for p in parts):
        return text
    if parts[0].isdigit() and len(parts[0]) == 4:  # year first: 2024/03/05, 2024 mar
        parts = [parts[0], *(str(_MONTH_NAMES.get(p, p)) for p in parts[1:2]), *parts[2:]]
        return "-".join(parts) if all(p.isdigit() for p in parts) else text
    named = [p for p in parts if p in _MONTH_NAMES]
    if len(named) != 1 or not parts[-1].isdigit() or len(parts[-1]) != 4:
        return text  # a month must be named: 03/04/2024 is March or April
    month = _MONTH_NAMES[named[0]]
    days = [p for p in parts[:-1] if p not in _MONTH_NAMES]
    if len(days) > 1 or (days and not days[0].isdigit()):
        return text
    return f"{parts[-1]}-{month:02d}" + (f"-{int(days[0]):02d}" if days else "")


def _span(text: str) -> tuple[_dt.date, _dt.date] | None:
    """``[first day, day after the last)`` of ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``
    (also spelled ``2024/03/05``, ``March 2024``, ``12 March 2024``)."""
    parts = _spelled(text).split("-")
    try:
        if len(parts) == 1 and len(parts[0]) == 4:
            y = int(parts[0])
            return _dt.date(y, 1, 1), _dt.date(y + 1, 1, 1)
        if len(parts) == 2 and len(parts[0]) == 4:
            first = _dt.date(int(parts[0]), int(parts[1]), 1)
            return first, add_step(first, 1, "m")
        if len(parts) == 3 and len(parts[0]) == 4:
            d = _dt.date(int(parts[0]), int(parts[1]), int(parts[2][:2]))
            return d, d + _dt.timedelta(days=1)
    except ValueError:
        return None
    return None


def _point(text: str, now: _dt.date) -> tuple[_dt.date, _dt.date] | None:
    """A single value (not a range or comparison) as ``[lo, hi)``; ``None`` when it is
    none, or beyond the calendar (``+99999999d``, ``9999-12-31``)."""
    try:
        return _point_of(text, now)
    except (ValueError, OverflowError):
        return None


def _point_of(text: str, now: _dt.date) -> tuple[_dt.date, _dt.date] | None:
    one = _dt.timedelta(days=1)
    t = text.casefold()
    if t == "today":
        return now, now + one
    if t == "tomorrow":
        return now + one, now + 2 * one
    if t == "yesterday":
        return now - one, now
    m = _REL.match(t)
    if m:
        n = int(m.group(2)) * (1 if m.group(1) == "+" else -1)
        other = add_step(now, n, m.group(3))
        return (now, other + one) if n >= 0 else (other, now + one)
    m = _PERIOD.match(t)
    if m:
        shift = {"this": 0, "next": 1, "last": -1}[m.group(1)]
        if m.group(2) == "week":
            first = now - _dt.timedelta(days=now.weekday()) + _dt.timedelta(weeks=shift)
            return first, first + _dt.timedelta(weeks=1)
        if m.group(2) == "month":
            first = add_step(now.replace(day=1), shift, "m")
            return first, add_step(first, 1, "m")
        first = _dt.date(now.year + shift, 1, 1)
        return first, _dt.date(first.year + 1, 1, 1)
    return _span(text)


def resolve(value: str, now: _dt.date) -> str | None:
    """A date value (see the module) as the store's ``lo..hi`` (ISO days, ``hi``
    exclusive, either may be empty), ``soon`` as is; ``None`` when it is not a date
    form."""
    v = value.strip()
    low = v.casefold()
    if low == "soon":
        return "soon"
    if low in ("overdue", "past"):
        return f"..{now.isoformat()}"
    if low == "future":
        return f"{(now + _dt.timedelta(days=1)).isoformat()}.."
    m = _CMP.match(v)
    if m:
        span = _point(m.group(2), now)
        if span is None:
            return None
        op, (lo, hi) = m.group(1), span
        return {
            "<": f"..{lo.isoformat()}",
            "<=": f"..{hi.isoformat()}",
            ">": f"{hi.isoformat()}..",
            ">=": f"{lo.isoformat()}..",
        }[op]
    if ".." in v:
        a, _, b = v.partition("..")
        lo_s = _point(a, now) if a else None
        hi_s = _point(b, now) if b else None
        if (a and lo_s is None) or (b and hi_s is None) or not (a or b):
            return None
        first = lo_s[0].isoformat() if lo_s else ""
        last = hi_s[1].isoformat() if hi_s else ""
        return f"{first}..{last}"
    span = _point(v, now)
    if span is None:
        return None
    return f"{span[0].isoformat()}..{span[1].isoformat()}"
