"""Times in chat exports: epoch seconds and ISO 8601 strings, normalised to ISO 8601
UTC with ``Z`` (milliseconds kept when not zero)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any


def _fmt(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    ms = dt.microsecond // 1000
    if dt.year >= 1000:  # an f-string is much cheaper than strftime, same text here
        base = (
            f"{dt.year}-{dt.month:02d}-{dt.day:02d}T"
            f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
        )
    else:  # strftime writes such a year without padding; keep its text
        base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{ms:03d}Z" if ms else f"{base}Z"


_LAST_SECOND = 253402300799.0  # 9999-12-31T23:59:59Z, the last time datetime can hold


def epoch_seconds(value: Any) -> float | None:
    """Epoch seconds of an export's time (int, float or numeric string; values above
    1e11 are taken as milliseconds), or ``None`` when it is no usable time: not a number,
    NaN, infinite, zero or negative, or past the year 9999. Such a time is *unknown*: it
    never decides the order of messages or which branch is the latest."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str) and len(value) > 40:
        return None  # a 100,000-digit string is no time (and int() of it would raise)
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if seconds != seconds or seconds <= 0:  # NaN, zero, negative
        return None
    if seconds > 1e11:
        seconds /= 1000.0
    return seconds if seconds <= _LAST_SECOND else None


def iso_from_epoch(value: Any) -> str | None:
    """Epoch seconds (see :func:`epoch_seconds`) → ISO 8601 UTC with ``Z``.

    Milliseconds are kept when not zero (``2023-11-14T22:13:21.500Z``); a value that is
    no usable time gives ``None``.
    """
    seconds = epoch_seconds(value)
    if seconds is None:
        return None
    try:
        return _fmt(datetime.fromtimestamp(seconds, tz=UTC))
    except (OverflowError, OSError, ValueError):
        return None


_ISO_FRACTION = re.compile(r"(\.\d+)")


def iso_from_text(value: Any) -> str | None:
    """An ISO 8601 string (any offset, ``Z``, or none = UTC) → ISO 8601 UTC with ``Z``.

    ``2024-06-01T10:00:00.000000Z`` → ``2024-06-01T10:00:00Z``;
    ``2024-03-02T09:15:00.123Z`` → ``2024-03-02T09:15:00.123Z``; numbers are read as
    epoch seconds; anything unreadable gives ``None``.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return iso_from_epoch(value)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python 3.11 accepts up to 6 fraction digits; trim longer ones (nanoseconds).
    m = _ISO_FRACTION.search(text)
    if m and len(m.group(1)) > 7:
        text = text[: m.start(1)] + m.group(1)[:7] + text[m.end(1) :]
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return _fmt(dt)
