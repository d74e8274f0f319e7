"""What one index run counts (:class:`Tally`) and its times: the pipeline's
bookkeeping, apart from the pipeline itself."""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass, field

from cairn.model import Diagnostic, Failure


@dataclass
class Tally:
    """Counts, failures and warnings of one run, as the pipeline adds them."""

    seen: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[Failure] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)


def epoch(iso: str) -> float:
    """POSIX seconds of a run's ISO 8601 UTC time (``0``: unreadable)."""
    try:
        return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return 0.0


def now_iso() -> str:
    """Now, as a run records it (ISO 8601 UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
