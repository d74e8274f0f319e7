"""A run's counts are declared once, on :class:`~cairn.model.Run`: the pipeline's
:class:`~cairn.ingest.tally.Tally` counts under the same names and records the run."""

from __future__ import annotations

import dataclasses

from cairn.ingest.tally import Tally
from cairn.model import Diagnostic, Failure, Run
from cairn.model.core import RUN_COUNTS


def test_run_counts_are_the_int_fields_of_run_in_order() -> None:
    ints = [f.name for f in dataclasses.fields(Run) if f.type == "int"]
    assert tuple(ints) == RUN_COUNTS


def test_a_tally_records_each_count_under_its_run_field() -> None:
    tally = Tally()
    for n, name in enumerate(RUN_COUNTS, start=1):
        for _ in range(n):
            setattr(tally, name, getattr(tally, name) + 1)
    tally.failures.append(Failure("a.md", "unreadable"))
    tally.warnings.append(Diagnostic("b.md", "hidden", None, "info"))
    run = tally.record(id="r1", started="2026-01-01T00:00:00Z", finished=None,
                       config_hash="h", seconds=1.5, failures=tuple(tally.failures),
                       warnings=tuple(tally.warnings))
    assert [getattr(run, name) for name in RUN_COUNTS] == list(range(1, len(RUN_COUNTS) + 1))
    assert (run.id, run.finished, run.seconds) == ("r1", None, 1.5)
    assert run.failures == (Failure("a.md", "unreadable"),)
    assert run.graph is None and run.embedding is None


def test_merged_runs_sum_every_count() -> None:
    one = Run("a", "s1", "f1", "h", *range(1, 8), seconds=1.0)
    two = Run("b", "s2", "f2", "h", *range(10, 17), seconds=2.0,
              failures=(Failure("x", "y"),))
    both = Run.merged((one, two))
    assert [getattr(both, k) for k in RUN_COUNTS] == [a + b for a, b in zip(
        range(1, 8), range(10, 17), strict=True)]
    assert (both.id, both.started, both.finished, both.seconds) == ("a", "s1", "f2", 3.0)
    assert both.failures == (Failure("x", "y"),)
