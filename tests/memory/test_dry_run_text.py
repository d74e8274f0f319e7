"""``--dry-run`` diffs print file content verbatim: text such as ``[bold]`` or
``[red]`` in a memory is shown as written, not taken as Rich markup and dropped."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cairn.interfaces.cli import app

TEXT = "The [bold]cache[/bold] key uses list[int] and [red] tuples for the cache key"


def _run(tmp_path: Path, *args: str) -> str:
    res = CliRunner().invoke(app, ["--db", str(tmp_path / "i.db"), *args])
    assert res.exit_code == 0, res.output
    return res.output


def test_memory_consolidate_dry_run_shows_brackets_as_written(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    _run(tmp_path, "memory", "remember", TEXT, "-b", str(bundle))
    _run(tmp_path, "memory", "remember", TEXT + " again", "-b", str(bundle))
    out = _run(tmp_path, "memory", "consolidate", "-b", str(bundle), "--no-llm", "--dry-run")
    assert "+++" in out  # a diff was printed
    assert "[bold]cache[/bold]" in out and "list[int]" in out and "[red] tuples" in out
