"""``cairn redact scan`` progress: a line every 2 s with the time left (none for a quick
scan), a JSON event instead with ``--json``; never a path (a path may be a secret)."""

from __future__ import annotations

import json

from cairn.interfaces.cli.redact import _Progress


def _run(p: _Progress, now: list[float], step: float, total: int) -> None:
    for i in range(1, total + 1):
        now[0] += step
        p(i, total, f"secret-{i}.md")


def test_a_slow_scan_prints_the_time_left_and_a_quick_one_nothing() -> None:
    now, lines = [0.0], []
    _run(_Progress(clock=lambda: now[0], write=lines.append), now, 0.5, 40)  # 2 files/s
    assert lines[0] == "scan: 4/40 files, 2 s, ETA 18 s"
    assert lines[-1] == "scan: 40/40 files, 20 s, ETA 0 s"
    assert not any("secret-" in x for x in lines)
    now, quick = [0.0], []
    _run(_Progress(clock=lambda: now[0], write=quick.append), now, 0.01, 40)
    assert quick == []


def test_with_json_each_line_is_a_progress_event() -> None:
    now, lines = [0.0], []
    _run(_Progress(as_json=True, clock=lambda: now[0], write=lines.append), now, 0.5, 40)
    events = [json.loads(x) for x in lines]
    assert events[0] == {
        "event": "progress", "phase": "scan", "unit": "files", "done": 4, "total": 40,
        "elapsed_s": 2.0, "rate": 2.0, "eta_s": 18.0, "eta_low_s": 18.0, "eta_high_s": 18.0,
    }
    assert events[-1]["done"] == 40 and events[-1]["eta_s"] == 0.0
