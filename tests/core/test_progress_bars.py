"""The Rich bars of ``cairn index``/``cairn embed`` show the estimator's time left (a
range while the rate is unstable), each phase of the embedding bar with its own rate."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import Progress

from cairn.interfaces.cli._bars import Bars, EtaColumn


def _bars(now: list[float]) -> tuple[Progress, Bars, EtaColumn]:
    column = EtaColumn()
    bar = Progress(column, console=Console(file=io.StringIO()), auto_refresh=False,
                   get_time=lambda: now[0])
    return bar, Bars(bar, labels={"chunk": "chunking", "embed": "embedding"}), column


def test_the_eta_column_shows_unknown_then_a_range_then_one_figure() -> None:
    now = [0.0]
    bar, bars, column = _bars(now)
    task = bars.add(file="")
    bars.move(task, 0, 1000)
    assert column.render(bar.tasks[task]).plain == "?"
    done = 0
    for _ in range(30):  # 10 files/s
        now[0] += 1.0
        done += 10
        bars.move(task, done, 1000)
    assert column.render(bar.tasks[task]).plain == "1 min 10 s"
    for _ in range(10):  # then 40 files/s
        now[0] += 1.0
        done += 40
        bars.move(task, done, 1000)
    assert " to " in column.render(bar.tasks[task]).plain


def test_the_embedding_bar_measures_characters_and_each_phase_apart() -> None:
    now = [0.0]
    bar, bars, column = _bars(now)
    bars.embed_task = bars.add(visible=False)
    for i in range(1, 11):  # chunking: 1000 units/s
        now[0] += 0.1
        bars(i * 100, 1000, "chunk")
    assert bar.tasks[bars.embed_task].fields["what"] == "chunking"
    chars = [10 * (i + 1) for i in range(100)]  # 100 texts, longer and longer
    done_chars = 0
    bars.work(0, sum(chars), "embed")
    bars(0, 100, "embed")
    for i in range(0, 50, 10):  # 100 characters a second
        now[0] += sum(chars[i : i + 10]) / 100
        done_chars += sum(chars[i : i + 10])
        bars.work(done_chars, sum(chars), "embed")
        bars(i + 10, 100, "embed")
    task = bar.tasks[bars.embed_task]
    assert task.visible and task.fields["what"] == "embedding"
    left = (sum(chars) - done_chars) / 100  # 377.5 s; a count rate would say 127.5 s
    assert column.render(task).plain == f"{int(left // 60)} min {round(left % 60)} s"
