"""What one index run counts (:class:`Tally`) and its times: the pipeline's
bookkeeping, apart from the pipeline itself."""

from __future__ import annotations

import calendar
import time
from typing import Any

from cairn.model import Diagnostic, Failure, Run
from cairn.model.core import RUN_COUNTS


class _Count:
    """One of :data:`RUN_COUNTS` on a :class:`Tally`, kept in its ``counts``."""

    name: str

    def __set_name__(self, owner: type[Tally], name: str) -> None:
        if name not in RUN_COUNTS:
            raise TypeError(f"{name}: not a count of Run")
        self.name = name

    def __get__(self, tally: Tally, owner: type[Tally] | None = None) -> int:
        return tally.counts[self.name]

    def __set__(self, tally: Tally, value: int) -> None:
        tally.counts[self.name] = value


class Tally:
    """The counts, failures and warnings of one run as the pipeline adds them: what
    the :class:`~cairn.model.Run` it records will hold. Each count is an attribute
    named as :class:`~cairn.model.Run`'s field (``tally.seen += 1``) and kept in
    ``counts``, keyed by those names; :meth:`record` makes the run."""

    # every name of RUN_COUNTS, once (unpacking fails at import if one is missing)
    seen, added, changed, removed, unchanged, failed, skipped = (_Count() for _ in RUN_COUNTS)

    def __init__(self) -> None:
        self.counts: dict[str, int] = dict.fromkeys(RUN_COUNTS, 0)
        self.failures: list[Failure] = []
        self.warnings: list[Diagnostic] = []

    def record(self, *, id: str, started: str, finished: str | None, config_hash: str,
               seconds: float, failures: tuple[Failure, ...],
               warnings: tuple[Diagnostic, ...]) -> Run:
        """The run with these counts; ``failures`` and ``warnings`` as the caller made
        them of :attr:`failures` and :attr:`warnings` (scrubbed, relative paths)."""
        counts: dict[str, Any] = self.counts  # Run's int fields, by name
        return Run(id, started, finished, config_hash, **counts, failures=failures,
                   warnings=warnings, seconds=seconds)


def epoch(iso: str) -> float:
    """POSIX seconds of a run's ISO 8601 UTC time (``0``: unreadable)."""
    try:
        return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return 0.0


def now_iso() -> str:
    """Now, as a run records it (ISO 8601 UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
