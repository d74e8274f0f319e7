"""The ETA estimator on synthetic progress: timestamps passed in, no clock, no sleep."""

from __future__ import annotations

import pytest

from cairn.model.eta import EtaEstimator


def feed(est: EtaEstimator, points: list[tuple[float, int]], total: int) -> None:
    for t, done in points:
        est.update(t, done, total)


def test_unknown_before_there_is_a_rate() -> None:
    est = EtaEstimator()
    assert est.estimate(0.0).eta_s is None
    est.update(0.0, 0, 100)
    e = est.estimate(0.0)
    assert e.eta_s is None and e.rate is None and not e.stable
    est.update(2.0, 0, 100)  # time passes, nothing done yet (a model loading)
    assert est.estimate(2.0).eta_s is None


def test_a_steady_rate_gives_one_figure() -> None:
    est = EtaEstimator()
    feed(est, [(float(t), 10 * t) for t in range(0, 21)], 1000)  # 10 items/s for 20 s
    e = est.estimate(20.0)
    assert e.stable and e.rate == pytest.approx(10.0)
    assert e.eta_s == e.eta_low_s == e.eta_high_s == pytest.approx(80.0)


def test_a_rate_that_halves_is_seen_within_the_window() -> None:
    est = EtaEstimator(window=30.0)
    points = [(float(t), 10 * t) for t in range(0, 61)]  # 10/s for a minute: 600 done
    points += [(60.0 + t, 600 + 5 * t) for t in range(1, 61)]  # then 5/s: 900 at 120 s
    total = 2000
    for t, done in points[:75]:  # 14 s after the change: the window holds both rates
        est.update(t, done, total)
    mid = est.estimate(74.0)
    assert not mid.stable
    assert mid.eta_low_s is not None and mid.eta_high_s is not None
    left = total - 670
    assert mid.eta_low_s == pytest.approx(left / 10, rel=0.05)  # the old, fast rate
    assert mid.eta_high_s == pytest.approx(left / 5, rel=0.05)  # the new, slow one
    for t, done in points[75:]:
        est.update(t, done, total)
    end = est.estimate(120.0)  # 60 s after: only the new rate is in the window
    assert end.stable and end.eta_s == pytest.approx((total - 900) / 5, rel=0.02)
    # the mean rate from the start (900 / 120 s = 7.5/s) would still say 147 s, not 220
    assert end.eta_s > (total - 900) / 7.5 * 1.4


def test_a_stall_raises_the_eta_and_leaves_no_upper_bound() -> None:
    est = EtaEstimator(window=30.0)
    feed(est, [(float(t), 10 * t) for t in range(0, 31)], 1000)  # 300 done at 30 s
    assert est.estimate(30.0).stable
    between = est.estimate(30.5)  # half a second later: counts down, not a stall
    assert between.eta_s == pytest.approx(70.0 - 0.5)
    stalled = est.estimate(45.0)  # 15 s without a callback
    assert stalled.eta_s is not None and stalled.eta_s > 70.0 * 1.4
    assert stalled.eta_high_s is None  # the last part of the window did nothing
    assert not stalled.stable
    est.update(45.0, 300, 1000)
    feed(est, [(45.0 + t, 300 + 10 * t) for t in range(1, 61)], 1000)  # back to 10/s
    assert est.estimate(105.0).stable


def test_a_burst_is_a_range_then_settles() -> None:
    est = EtaEstimator(window=30.0)
    feed(est, [(float(t), 2 * t) for t in range(0, 31)], 1000)  # 2/s: 60 at 30 s
    est.update(31.0, 160, 1000)  # a burst: 100 cached items in one second
    e = est.estimate(31.0)
    assert not e.stable
    assert e.eta_low_s is not None and e.eta_high_s is not None
    assert e.eta_low_s < e.eta_s < e.eta_high_s
    feed(est, [(31.0 + t, 160 + 2 * t) for t in range(1, 61)], 1000)
    settled = est.estimate(91.0)
    assert settled.stable and settled.eta_s == pytest.approx((1000 - 280) / 2, rel=0.02)


def test_weighted_work_sees_longer_items_coming() -> None:
    """Items sorted short to long, each costing its length: a count rate promises too
    early an end; the work rate (length per second) does not."""
    lengths = [10 + i for i in range(1000)]  # item i costs 10 + i
    total_work = float(sum(lengths))
    est, by_count = EtaEstimator(), EtaEstimator()
    t, work = 0.0, 0.0
    for i, n in enumerate(lengths[:300], start=1):
        t += n / 1000.0  # the model does 1000 cost units per second
        work += n
        est.update(t, i, 1000, work, total_work)
        by_count.update(t, i, 1000)
    truth = (total_work - work) / 1000.0
    assert est.estimate(t).eta_s == pytest.approx(truth, rel=0.02)
    count_eta = by_count.estimate(t).eta_s
    assert count_eta is not None and count_eta < truth * 0.6


def test_done_means_zero_and_memory_stays_bounded() -> None:
    est = EtaEstimator(window=30.0)
    for i in range(100_000):  # 100,000 callbacks in 100 s
        est.update(i / 1000.0, i, 100_000)
    assert len(est._samples) <= 110
    est.update(100.0, 100_000, 100_000)
    e = est.estimate(100.0)
    assert e.eta_s == e.eta_low_s == e.eta_high_s == 0.0


def test_a_slow_first_call_is_left_out_and_one_interval_is_not_enough() -> None:
    """The embedding phase reports 0 before the model loads; the load (60 s here) ends
    inside the first call and is not the rate of the texts."""
    est = EtaEstimator()
    est.update(0.0, 0, 1000)
    est.update(61.0, 10, 1000)  # the model loaded, then 10 texts in 1 s
    assert est.estimate(61.0).eta_s is None
    est.update(62.0, 20, 1000)  # one interval: no way to tell a stable rate yet
    e = est.estimate(62.0)
    assert e.eta_s is None and e.rate == pytest.approx(10.0)
    est.update(63.0, 30, 1000)
    e = est.estimate(63.0)
    assert e.stable and e.eta_s == pytest.approx(97.0)  # not (970 / 30 × 63) s
