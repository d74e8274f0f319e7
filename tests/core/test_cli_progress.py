"""``cairn index`` with its output in a log or a pipe: plain progress lines (count,
rate, ETA) for each phase, and a summary with each phase's time."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.interfaces.cli._progress import PlainProgress, duration

SAMPLE = Path(__file__).resolve().parents[2] / "sample"


def test_index_to_a_pipe_prints_progress_lines_and_phase_times(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    shutil.copytree(SAMPLE, tmp_path / "sample")
    env = {"CAIRN_EMBED": "static", "COLUMNS": None}  # output to a pipe, not a terminal
    res = cli("index", str(tmp_path / "sample"), "--db", str(tmp_path / "i.db"), env=env)
    lines = res.stderr.splitlines()
    files = [ln for ln in lines if ln.startswith("index: ")]
    assert files and re.fullmatch(
        r"index: 12/12 files \(100%\), [\d.]+ files/s, \d+ s elapsed, done", files[-1]
    ), lines
    phases = {ln.split(":")[0] for ln in lines if re.match(r"(index|chunk|embed): \d+/\d+", ln)}
    if "embedded in" in res.stdout:  # the static model is there: both phases report
        assert {"index", "chunk", "embed"} <= phases, lines
    assert re.search(r"12 files: 12 added, .* in [\d.]+ s\n", res.stdout)
    assert re.search(
        r"total [\d.]+ s: files [\d.]+ s, graph [\d.]+ s, embedding [\d.]+ s", res.stdout
    ), res.stdout
    quiet = cli("index", "--quiet", "--db", str(tmp_path / "i.db"), env=env)
    assert not re.search(r"^(index|chunk|embed): ", quiet.stderr, re.M)


def test_a_line_every_interval_with_rate_and_eta() -> None:
    now = [100.0]
    lines: list[str] = []
    p = PlainProgress(interval=5.0, write=lines.append, clock=lambda: now[0])
    for i in range(1, 101):  # 100 files, 1/8 s each
        now[0] += 0.125
        p.files(i, 100, f"f{i}.org")
    assert len(lines) == 3  # at 5 s, at 10 s, done
    assert lines[0] == "index: 40/100 files (40%), 8.0 files/s, 5 s elapsed, ETA 8 s"
    assert lines[-1] == "index: 100/100 files (100%), 8.0 files/s, 12 s elapsed, done"
    for i in range(200, 4001, 200):  # the embedding phase counts from its first call
        now[0] += 1.0
        p.embedding(i, 4000, "embed")
    assert lines[3].startswith("embed: 1200/4000 texts (30%), 200.0 texts/s, 5 s elapsed")
    assert lines[3].endswith("ETA 14 s")
    assert p.seconds("index") == 12.5 and p.seconds("chunk") is None
    assert duration(812) == "13 min 32 s" and duration(7500) == "2 h 5 min"


def test_the_line_gives_a_range_while_the_rate_changes_then_one_figure() -> None:
    now = [0.0]
    lines: list[str] = []
    p = PlainProgress(interval=5.0, write=lines.append, clock=lambda: now[0])
    done = 0
    for _ in range(40):  # 20 texts/s for 40 s
        now[0] += 1.0
        done += 20
        p.embedding(done, 4000, "embed")
    assert re.search(r"ETA 2 min 40 s$", lines[-1]), lines[-1]  # 3200 left at 20/s
    for _ in range(10):  # the texts get longer: 5 texts/s
        now[0] += 1.0
        done += 5
        p.embedding(done, 4000, "embed")
    assert re.search(r", ETA \d+ min \d+ s to \d+ min \d+ s$", lines[-1]), lines[-1]
    for _ in range(40):  # the window now holds only the slow rate
        now[0] += 1.0
        done += 5
        p.embedding(done, 4000, "embed")
    assert re.search(r", 5\.0 texts/s, .* ETA 9 min 50 s$", lines[-1]), lines[-1]


def test_the_eta_of_texts_weighed_by_length_sees_the_long_ones_coming() -> None:
    """The embedding pass sends short texts first; given their characters, the ETA is
    the time the remaining characters take, not the remaining count at today's rate."""
    now = [0.0]
    lines: list[str] = []
    p = PlainProgress(interval=5.0, write=lines.append, clock=lambda: now[0])
    chars = [100 + i for i in range(2000)]  # text i has 100 + i characters
    total, done_chars = sum(chars), 0
    for i in range(0, 1000, 50):  # 1000 characters a second, a commit every 50 texts
        part = sum(chars[i : i + 50])
        now[0] += part / 1000
        done_chars += part
        p.work(done_chars, total, "embed")
        p(i + 50, 2000, "embed")
    left = (total - done_chars) / 1000
    assert lines[-1].endswith(f"ETA {duration(left)}"), (lines[-1], duration(left))


def test_index_json_writes_progress_events_on_stderr_and_the_same_result(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    shutil.copytree(SAMPLE, tmp_path / "sample")
    env = {"CAIRN_EMBED": "static"}
    res = cli("index", str(tmp_path / "sample"), "--db", str(tmp_path / "a.db"), "--json",
              env=env)
    events = [json.loads(ln) for ln in res.stderr.splitlines() if ln.startswith("{")]
    assert events, res.stderr
    keys = {"event", "phase", "unit", "done", "total", "elapsed_s", "rate", "eta_s",
            "eta_low_s", "eta_high_s"}
    for e in events:
        assert set(e) == keys and e["event"] == "progress", e
        assert 0 <= e["done"] <= e["total"]
        for k in ("eta_s", "eta_low_s", "eta_high_s"):
            assert e[k] is None or e[k] >= 0
    assert events[0]["phase"] == "index" and events[0]["done"] == 12
    page = (SAMPLE.parent / "docs" / "reference" / "json.md").read_text(encoding="utf-8")
    table = page.split("## Progress events (standard error)")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `(\w+)`(?:, `(\w+)`)?", table, re.M)
    assert {k for row in rows for k in row if k} == keys, "docs/reference/json.md lists them"
    phases = [e["phase"] for e in events]
    if res.json()["embedding"]["embedded"]:  # the static model is there: both phases
        assert phases[-1] == "embed" and "chunk" in phases, phases
    quiet = cli("index", str(tmp_path / "sample"), "--db", str(tmp_path / "b.db"), "--json",
                "--quiet", env=env)
    assert not quiet.stderr.strip()
    assert set(res.json()) == set(quiet.json())  # standard output is the result alone
    assert res.json()["added"] == quiet.json()["added"] == 12
