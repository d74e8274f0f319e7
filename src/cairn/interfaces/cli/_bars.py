"""Rich progress bars whose time left is :class:`cairn.model.eta.EtaEstimator`'s.

Rich's own time-remaining column divides by a rate it averages over a few seconds of
count, blind to what an item costs and without a range; :class:`EtaColumn` shows the
estimator's figure instead (``48 s``, ``40 s to 1 min 5 s`` while the rate is unstable,
``at least 40 s`` during a stall, ``?`` before a rate). :class:`Bars` feeds one
estimator per bar from the step callbacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.progress import Progress, ProgressColumn, Task, TaskID
from rich.text import Text

from cairn.interfaces.cli._progress import eta_text
from cairn.model.eta import EtaEstimator


class EtaColumn(ProgressColumn):
    """The time left of a task whose ``eta`` field is an :class:`EtaEstimator`."""

    max_refresh = 0.5  # a figure that changes ten times a second cannot be read

    def render(self, task: Task) -> Text:
        """The ETA text, dim cyan like Rich's own column."""
        est = task.fields.get("eta")
        if not isinstance(est, EtaEstimator) or task.finished:
            return Text("")
        text = eta_text(est.estimate(task.get_time())).removeprefix("ETA ")
        return Text("?" if text == "unknown" else text, style="progress.remaining")


@dataclass
class Bars:
    """Step callbacks that move the bars of ``progress`` and their estimators.

    Each task is added with an ``eta`` field (:meth:`add`); the object is also an
    embedding ``progress(done, total, phase)`` callback that takes the cost of the work
    (:class:`cairn.model.eta.WeighsWork`) for the task ``embed_task``.
    """

    progress: Progress
    embed_task: TaskID | None = None
    labels: dict[str, str] = field(default_factory=dict)
    """Bar label per embedding phase (``chunk``, ``embed``), in the ``what`` field."""
    _work: dict[TaskID, tuple[float, float]] = field(default_factory=dict)
    _phase: dict[TaskID, str] = field(default_factory=dict)

    def add(self, **fields: Any) -> TaskID:
        """A new task (hidden when ``visible=False`` is given) with its estimator."""
        visible = bool(fields.pop("visible", True))
        return self.progress.add_task(
            "", total=None, visible=visible, eta=EtaEstimator(), **fields
        )

    def move(
        self, task: TaskID, done: int, total: int, phase: str = "", **fields: Any
    ) -> None:
        """``done`` of ``total`` items of ``task`` in ``phase`` (a new phase on the same
        bar, chunking then embedding, gets a new estimator), with other fields."""
        (shown,) = (t for t in self.progress.tasks if t.id == task)
        est = shown.fields.get("eta")
        if not isinstance(est, EtaEstimator) or self._phase.get(task, phase) != phase:
            est = EtaEstimator()
            fields["eta"] = est
        self._phase[task] = phase
        now = self.progress.get_time()
        work = self._work.get(task)
        if work is None:
            est.update(now, done, total)
        else:
            est.update(now, done, total, *work)
        self.progress.update(task, completed=done, total=total, **fields)

    def work(self, done: float, total: float, phase: str) -> None:
        """The cost of the embedding phase done so far and in all."""
        if self.embed_task is not None:
            self._work[self.embed_task] = (done, total)

    def __call__(self, done: int, total: int, phase: str) -> None:
        """The embedding callback: moves ``embed_task`` (``chunk`` then ``embed``)."""
        if self.embed_task is None:
            return
        label = self.labels.get(phase, phase)
        if phase != "embed":
            self._work.pop(self.embed_task, None)
        self.move(self.embed_task, done, total, phase, visible=True, what=label)
