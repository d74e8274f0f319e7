"""Plain progress lines for ``cairn index`` when standard error is not a terminal.

A run whose output goes to a log or a pipe gets no progress bar; instead it prints one
line every few seconds per phase — files, then chunking and embedding — with the count,
the rate and the time left::

    index: 1200/5335 files (22%), 85.3 files/s, 14 s elapsed, ETA 48 s
    embed: 3000/25000 texts (12%), 27.1 texts/s, 1 min 51 s elapsed, ETA 13 min 32 s

and a last line when a phase ends. :class:`PlainProgress` gives the callbacks
:meth:`cairn.app.Cairn.index` takes and the phases' wall times for the summary.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

INTERVAL = 5.0
"""Seconds between two progress lines of a phase."""

_NOUNS = {
    "index": "files",
    "chunk": "units",
    "embed": "texts",
    "teacher": "chunks",
    "train": "epochs",
}


def duration(seconds: float) -> str:
    """``"48 s"``, ``"13 min 32 s"``, ``"2 h 5 min"``."""
    s = round(max(seconds, 0.0))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


@dataclass
class _Phase:
    started: float
    last_line: float = 0.0
    base: int = 0
    """Items done when the phase was first seen (the rate counts from there)."""
    done: int = 0
    total: int = 0
    finished: float | None = None


@dataclass
class PlainProgress:
    """Progress lines on ``write`` (default: standard error) at most every
    ``interval`` seconds per phase, and when a phase completes.

    Args:
        interval: seconds between lines of one phase.
        write: where a line goes (``write(line)``, without the newline).
        clock: seconds, monotonic (tests may pass their own).
    """

    interval: float = INTERVAL
    write: Callable[[str], None] = field(
        default=lambda line: print(line, file=sys.stderr, flush=True)
    )
    clock: Callable[[], float] = time.monotonic
    phases: dict[str, _Phase] = field(default_factory=dict)
    created: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.created < 0:
            self.created = self.clock()

    def files(self, done: int, total: int, rel: str) -> None:
        """The ``progress`` callback of :meth:`Cairn.index`: after each file."""
        self._step("index", done, total)

    def embedding(self, done: int, total: int, phase: str) -> None:
        """The ``embed_progress`` callback: ``phase`` is ``chunk`` or ``embed``."""
        self._step(phase, done, total)

    def training(self, phase: str, done: int, total: int) -> None:
        """The ``progress`` callback of ``Cairn.training.train``: ``phase`` is
        ``teacher`` (chunks) or ``train`` (epochs)."""
        self._step(phase, done, total)

    def seconds(self, phase: str) -> float | None:
        """Wall seconds of a phase (``index``, ``chunk``, ``embed``) until its last
        callback, or ``None`` if it did not run."""
        p = self.phases.get(phase)
        if p is None:
            return None
        return (p.finished if p.finished is not None else self.clock()) - p.started

    def _step(self, name: str, done: int, total: int) -> None:
        now = self.clock()
        p = self.phases.get(name)
        if p is None:
            # the first phase starts when this reporter was made (just before the
            # run); a later one at its first callback, counting from what it had done
            # then (the graph step runs between files and chunks)
            first = not self.phases
            start = self.created if first else now
            p = self.phases[name] = _Phase(start, start, base=0 if first else done)
        p.done, p.total = done, total
        complete = total > 0 and done >= total
        if complete and p.finished is None:
            p.finished = now
            self.write(self._line(name, p, now))
        elif not complete and now - p.last_line >= self.interval:
            p.last_line = now
            self.write(self._line(name, p, now))

    def _line(self, name: str, p: _Phase, now: float) -> str:
        elapsed = now - p.started
        noun = _NOUNS.get(name, "items")
        rate = (p.done - p.base) / elapsed if elapsed > 0 and p.done > p.base else None
        pct = f" ({100 * p.done // p.total}%)" if p.total else ""
        line = f"{name}: {p.done}/{p.total} {noun}{pct}"
        if rate is not None:  # none yet when the first callback is the last
            line += f", {rate:.1f} {noun}/s"
        line += f", {duration(elapsed)} elapsed"
        if p.done < p.total:
            eta = f"ETA {duration((p.total - p.done) / rate)}" if rate else "ETA unknown"
            line += f", {eta}"
        else:
            line += ", done"
        return line
