"""Time left in a long step, from the recent rate, with a range while it is unstable.

A mean rate from the start of a step cannot see the rate change: the embedding pass
sends short texts first (sorted by length, so batches pad little) and the long ones
last, a model load makes the first batch slow, a stall makes no progress at all. The
:class:`EtaEstimator` keeps the recent samples of a step (a sliding window of
:attr:`EtaEstimator.window` seconds that always holds at least
:attr:`EtaEstimator.min_samples` of them), measures the rate of *work* over that window
— work is what an item costs where the caller knows it (characters of the texts being
embedded), else the item count — and splits the window in :data:`SEGMENTS` parts: when
the parts' rates disagree by more than :attr:`EtaEstimator.tolerance` the estimate is a
range (remaining work at the fastest and at the slowest recent rate), else a single
figure. The rate starts at the first progress (the wait before it — a model loading in
the first call — says nothing about the items), and the estimate is unknown (``None``)
until :data:`MIN_SAMPLES` samples since then can be compared.

Pure logic: the caller passes every timestamp (seconds, monotonic), so the estimator is
tested on synthetic sequences without a clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

SEGMENTS = 3
"""Parts of the window whose rates are compared to decide whether the rate is stable."""

MIN_SAMPLES = 3
"""Samples (after the first progress) before there is an ETA: two intervals to compare."""


@dataclass(frozen=True)
class Estimate:
    """What an :class:`EtaEstimator` says at one moment.

    Attributes:
        done: items done (as last reported).
        total: items in the step (0 when unknown).
        rate: items per second over the recent window; ``None`` before there is a rate.
        eta_s: seconds left at the recent rate; ``None`` when unknown (no rate yet, or
            no total), ``0.0`` once ``done >= total``.
        eta_low_s: seconds left at the fastest recent rate (``== eta_s`` when stable).
        eta_high_s: seconds left at the slowest recent rate (``== eta_s`` when stable);
            ``None`` while the slowest recent part of the window made no progress (a
            stall: no upper bound) or when ``eta_s`` is unknown.
    """

    done: int
    total: int
    rate: float | None = None
    eta_s: float | None = None
    eta_low_s: float | None = None
    eta_high_s: float | None = None

    @property
    def stable(self) -> bool:
        """Whether the estimate is one figure (known, and low and high agree)."""
        return self.eta_s is not None and self.eta_low_s == self.eta_high_s


@dataclass(frozen=True)
class _Sample:
    t: float
    done: int
    work: float


@dataclass
class EtaEstimator:
    """The ETA of one step from the samples :meth:`update` is given.

    Args:
        window: seconds of recent samples the rate is measured over.
        min_samples: samples kept even when older than ``window`` (a slow step, one
            item every minute, still has a rate).
        tolerance: how far the window's parts' rates may differ (``max / min - 1``)
            for the estimate to be one figure.
        stall_factor: the time since the last sample counts as a stall (no progress)
            once it is this many times the window's mean gap between samples.
    """

    window: float = 30.0
    min_samples: int = 4
    tolerance: float = 0.25
    stall_factor: float = 3.0
    total: int = 0
    total_work: float = 0.0
    _samples: deque[_Sample] = field(default_factory=deque)

    def update(
        self, now: float, done: int, total: int, work: float | None = None,
        total_work: float | None = None,
    ) -> None:
        """Record that ``done`` of ``total`` items (``work`` of ``total_work`` cost
        units, when the caller weighs items; else the counts) are done at ``now``.

        Samples closer together than a hundredth of the window are merged (the last
        one is replaced), so memory stays bounded whatever the callback rate.
        """
        w = float(done) if work is None else float(work)
        self.total = total
        self.total_work = float(total) if total_work is None else float(total_work)
        s = self._samples
        if s and (now < s[-1].t or s[-1].work <= 0 < w):
            # a clock that went back, or the first progress after none (a model loading
            # in the first call): the rate starts from here, the wait before it says
            # nothing about the rate of the items
            s.clear()
        if len(s) >= 2 and now - s[-2].t < self.window / 100:
            s[-1] = _Sample(now, done, w)
        else:
            s.append(_Sample(now, done, w))
        while len(s) > self.min_samples and s[1].t <= now - self.window:
            s.popleft()

    def estimate(self, now: float) -> Estimate:
        """The estimate at ``now`` (not before the last :meth:`update`).

        Between two samples the figures count down from the last one; once the time
        since the last sample is a stall (see ``stall_factor``), the rate falls.
        """
        s = self._samples
        if not s:
            return Estimate(0, self.total)
        last = s[-1]
        if self.total and last.done >= self.total:
            return Estimate(last.done, self.total, self._rate(s[0], last), 0.0, 0.0, 0.0)
        first = s[0]
        span = last.t - first.t
        if len(s) < 2 or span <= 0 or last.work <= first.work:
            return Estimate(last.done, self.total, None if span <= 0 else 0.0)
        if len(s) < MIN_SAMPLES:  # one interval cannot say whether the rate is stable
            return Estimate(last.done, self.total, (last.done - first.done) / span)
        since = max(now - last.t, 0.0)
        stalled = since > self.stall_factor * span / (len(s) - 1)
        end = now if stalled else last.t
        rate_work = (last.work - first.work) / (end - first.t)
        rate = (last.done - first.done) / (end - first.t)
        if not self.total:
            return Estimate(last.done, 0, rate)
        parts = self._segment_rates(end)
        fast, slow = max(parts), min(parts)
        left = max(self.total_work - last.work, 0.0)
        lag = 0.0 if stalled else since  # count down between samples
        eta = max(left / rate_work - lag, 0.0)
        if slow > 0 and fast <= slow * (1 + self.tolerance):
            return Estimate(last.done, self.total, rate, eta, eta, eta)
        low = max(left / fast - lag, 0.0)
        high = max(left / slow - lag, 0.0) if slow > 0 else None
        return Estimate(last.done, self.total, rate, eta, min(low, eta),
                        None if high is None else max(high, eta))

    def _rate(self, a: _Sample, b: _Sample) -> float | None:
        return (b.done - a.done) / (b.t - a.t) if b.t > a.t and b.done > a.done else None

    def _segment_rates(self, end: float) -> list[float]:
        """Work per second in each of :data:`SEGMENTS` equal parts of the window,
        the work between two samples spread evenly over the time between them."""
        start = self._samples[0].t
        step = (end - start) / SEGMENTS
        marks = [self._work_at(start + i * step) for i in range(SEGMENTS + 1)]
        return [(marks[i + 1] - marks[i]) / step for i in range(SEGMENTS)]

    def _work_at(self, t: float) -> float:
        s = self._samples
        prev = s[0]
        for cur in s:
            if cur.t >= t:
                if cur.t == prev.t:
                    return cur.work
                return prev.work + (cur.work - prev.work) * (t - prev.t) / (cur.t - prev.t)
            prev = cur
        return prev.work  # after the last sample: no progress (a stall)


@runtime_checkable
class WeighsWork(Protocol):
    """A progress callback that also wants to know what the items done so far cost.

    A step that knows each item's cost (the embedding pass: the characters of each
    text) calls ``work(done, total, phase)`` with the cost done and the cost of the
    whole step just before each ``progress(done, total, phase)`` call of the same phase,
    so the ETA is measured in cost rather than items.
    """

    def work(self, done: float, total: float, phase: str) -> None:
        """Record ``done`` of ``total`` cost units of ``phase``."""
