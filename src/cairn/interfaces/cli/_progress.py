"""Progress of a long step as plain lines or JSON events, with an honest ETA.

A run whose output goes to a log or a pipe gets no progress bar; instead it prints one
line every few seconds per phase — files, then chunking and embedding — with the count,
the recent rate and the time left, a range while the recent rate is unstable
(:class:`cairn.model.eta.EtaEstimator`)::

    index: 1200/5335 files (22%), 85.3 files/s, 14 s elapsed, ETA 48 s
    embed: 3000/25000 texts (12%), 27.1 texts/s, 1 min 51 s elapsed, ETA 11 min 2 s to 14 min 40 s

and a last line when a phase ends (with the phase's mean rate). With ``--json`` the
same moments are JSON objects on one line each (:func:`event`), so standard output
keeps only the command's result. :class:`PlainProgress` gives the callbacks
:meth:`cairn.app.Cairn.index` takes and the phases' wall times for the summary.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cairn.model.eta import Estimate, EtaEstimator

INTERVAL = 5.0
"""Seconds between two progress lines of a phase."""

NOUNS = {
    "index": "files",
    "chunk": "units",
    "embed": "texts",
    "teacher": "chunks",
    "train": "epochs",
    "enrich": "conversations",
    "pairs": "pairs",
    "scan": "files",
}
"""What each phase counts (``items`` for a phase not listed)."""


def duration(seconds: float) -> str:
    """``"48 s"``, ``"13 min 32 s"``, ``"2 h 5 min"``."""
    s = round(max(seconds, 0.0))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def eta_text(e: Estimate) -> str:
    """``"ETA 48 s"`` when the rate is stable, ``"ETA 40 s to 1 min 5 s"`` while it is
    not, ``"ETA at least 40 s"`` during a stall, ``"ETA unknown"`` before a rate."""
    if e.eta_s is None or e.eta_low_s is None:
        return "ETA unknown"
    if e.stable:
        return f"ETA {duration(e.eta_s)}"
    if e.eta_high_s is None:
        return f"ETA at least {duration(e.eta_low_s)}"
    low, high = duration(e.eta_low_s), duration(e.eta_high_s)
    return f"ETA {low}" if low == high else f"ETA {low} to {high}"


def event(phase: str, e: Estimate, elapsed: float, rate: float | None) -> dict[str, Any]:
    """The ``--json`` progress event of ``phase``: ``{"event": "progress", "phase",
    "unit", "done", "total", "elapsed_s", "rate", "eta_s", "eta_low_s",
    "eta_high_s"}`` (``rate`` in ``unit`` per second; each ``eta`` in seconds or
    ``null`` when unknown — ``eta_high_s`` also during a stall)."""

    def r(x: float | None, digits: int = 1) -> float | None:
        return None if x is None else round(x, digits)

    return {
        "event": "progress", "phase": phase, "unit": NOUNS.get(phase, "items"),
        "done": e.done, "total": e.total, "elapsed_s": r(elapsed), "rate": r(rate, 2),
        "eta_s": r(e.eta_s), "eta_low_s": r(e.eta_low_s), "eta_high_s": r(e.eta_high_s),
    }


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass
class _Phase:
    started: float
    base: int = 0
    """Items done when the phase was first seen (the mean rate counts from there)."""
    last_line: float = 0.0
    done: int = 0
    total: int = 0
    finished: float | None = None
    eta: EtaEstimator = field(default_factory=EtaEstimator)
    work: tuple[float, float] | None = None
    """Cost done and in all, when the step weighs its items (``work``)."""


@dataclass
class PlainProgress:
    """Progress lines (or, with ``as_json``, JSON events) on ``write`` (default:
    standard error) at most every ``interval`` seconds per phase, and when a phase
    completes.

    The object itself is an embedding ``progress(done, total, phase)`` callback that
    also takes the cost of the work (:class:`cairn.model.eta.WeighsWork`).

    Args:
        interval: seconds between lines of one phase.
        write: where a line goes (``write(line)``, without the newline).
        clock: seconds, monotonic (tests may pass their own).
        as_json: one JSON object per line (:func:`event`) instead of text.
    """

    interval: float = INTERVAL
    write: Callable[[str], None] = _stderr
    clock: Callable[[], float] = time.monotonic
    as_json: bool = False
    phases: dict[str, _Phase] = field(default_factory=dict)
    created: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.created < 0:
            self.created = self.clock()

    def __call__(self, done: int, total: int, phase: str) -> None:
        """The ``embed_progress`` callback (as :meth:`embedding`)."""
        self._step(phase, done, total)

    def work(self, done: float, total: float, phase: str) -> None:
        """The cost of ``phase`` done so far and in all (before its next callback)."""
        self._phase(phase, self.clock(), None).work = (done, total)

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

    def step(self, phase: str, done: int, total: int) -> None:
        """Any other step's callback: ``done`` of ``total`` items of ``phase``."""
        self._step(phase, done, total)

    def seconds(self, phase: str) -> float | None:
        """Wall seconds of a phase (``index``, ``chunk``, ``embed``) until its last
        callback, or ``None`` if it did not run."""
        p = self.phases.get(phase)
        if p is None:
            return None
        return (p.finished if p.finished is not None else self.clock()) - p.started

    def _phase(self, name: str, now: float, done: int | None) -> _Phase:
        p = self.phases.get(name)
        if p is None:
            # the first phase's time counts from when this reporter was made (just
            # before the run, with nothing done); a later one's from its first callback,
            # its mean rate from what it had done then (the graph step runs between files
            # and chunks). The estimator starts at the first callback either way: the
            # scan before the first file says nothing about the rate of the files.
            first = not self.phases
            start = self.created if first else now
            base = 0 if first or done is None else done
            p = self.phases[name] = _Phase(start, base, last_line=start)
        return p

    def _step(self, name: str, done: int, total: int) -> None:
        now = self.clock()
        p = self._phase(name, now, done)
        p.done, p.total = done, total
        if p.work is None:
            p.eta.update(now, done, total)
        else:
            p.eta.update(now, done, total, *p.work)
        complete = total > 0 and done >= total
        if complete and p.finished is None:
            p.finished = now
            self.write(self._line(name, p, now))
        elif not complete and now - p.last_line >= self.interval:
            p.last_line = now
            self.write(self._line(name, p, now))

    def _line(self, name: str, p: _Phase, now: float) -> str:
        elapsed = now - p.started
        e = p.eta.estimate(now)
        rate = e.rate
        if p.finished is not None:  # the phase's own mean rate, now that it is over
            rate = (p.done - p.base) / elapsed if elapsed > 0 and p.done > p.base else None
        if self.as_json:
            return json.dumps(event(name, e, elapsed, rate))
        noun = NOUNS.get(name, "items")
        pct = f" ({100 * p.done // p.total}%)" if p.total else ""
        line = f"{name}: {p.done}/{p.total} {noun}{pct}"
        if rate is not None:  # none yet when the first callback is the last
            line += f", {rate:.1f} {noun}/s"
        line += f", {duration(elapsed)} elapsed"
        return line + (", done" if p.finished is not None else f", {eta_text(e)}")
