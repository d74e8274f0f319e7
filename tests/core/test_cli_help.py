"""``cairn --help`` (and every group's ``--help``) reads well on an 80-column terminal:
each command's summary is one short full sentence that fits its row, and no help text
loses a ``[section]`` name to Rich's markup (``[store] path`` once printed as `` path``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cairn.interfaces.cli import app

ROOT = typer.main.get_command(app)
WIDTH = 80


def _walk(cmd: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from _walk(sub, (*path, name))


COMMANDS = list(_walk(ROOT, ()))
GROUPS = [(p, c) for p, c in COMMANDS if getattr(c, "commands", None)]


def _help(path: tuple[str, ...], width: int = WIDTH) -> str:
    res = CliRunner().invoke(
        app, [*path, "--help"], env={"COLUMNS": str(width)}, terminal_width=width
    )
    assert res.exit_code == 0, res.output
    return res.output


def _command_rows(text: str) -> dict[str, list[str]]:
    """The Commands panel of a help page: each command's summary, line by line."""
    rows: dict[str, list[str]] = {}
    inside, current = False, None
    for line in text.splitlines():
        if line.startswith("╭─ Commands"):
            inside = True
        elif inside and line.startswith("╰"):
            inside = False
        elif inside:
            inner = line[1:-1]
            m = re.match(r"^ (\S+)\s+(.*\S)\s*$", inner)
            if m:
                current = m.group(1)
                rows[current] = [m.group(2)]
            elif current is not None and inner.strip():
                rows[current].append(inner.strip())
    return rows


@pytest.mark.parametrize("path", [p for p, _ in GROUPS], ids=lambda p: " ".join(("cairn", *p)))
def test_every_summary_is_one_full_sentence_on_an_80_column_terminal(
    path: tuple[str, ...],
) -> None:
    rows = _command_rows(_help(path))
    (_, group), = [(p, c) for p, c in GROUPS if p == path]
    assert set(rows) == set(group.commands), rows
    for name, lines in rows.items():
        where = " ".join(("cairn", *path, name))
        assert len(lines) == 1, f"{where}: the summary wraps: {' '.join(lines)!r}"
        assert lines[0].endswith("."), f"{where}: the summary is not a sentence: {lines[0]!r}"
        assert lines[0][0].isupper(), f"{where}: the summary is not a sentence: {lines[0]!r}"


SECTION = re.compile(r"(?<!\\)\\?\[([a-z_]+)\]")


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(("cairn", *p)))
def test_section_names_in_help_survive_the_markup(path: tuple[str, ...]) -> None:
    (cmd,) = [c for p, c in COMMANDS if p == path]
    texts = [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
    shown = " ".join(_help(path, 400).split())
    for text in texts:
        for m in SECTION.finditer(text):
            assert f"[{m.group(1)}]" in shown, f"cairn {' '.join(path)}: {m.group(0)} is lost"


def test_index_help_states_that_claude_thinking_blocks_are_left_out() -> None:
    text = " ".join(_help(("index",), width=200).split())
    assert "thinking blocks" in text and "left out" in text


def _description(text: str) -> list[str]:
    """The lines of a help page between the usage line and the first panel."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.startswith("╭─")), len(lines))
    return [line.strip() for line in lines[start:end]]


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(("cairn", *p)))
def test_help_paragraphs_wrap_to_the_terminal_not_to_the_source(path: tuple[str, ...]) -> None:
    """A docstring's own line breaks (kept in Typer's rich mode) gave ragged help: a line
    wrapped at 80 columns, then a short rest of it, then a line going on mid-sentence."""
    lines = _description(_help(path))
    for line, after in pairwise(lines):
        ragged = 0 < len(line) < 40 and after[:1].islower()
        assert not ragged, f"cairn {' '.join(path)} --help: {line!r} / {after!r} mid-sentence"
    if path == ("index",):  # the page the tester showed: "Hidden files" / "(names starting…"
        assert not any(line.endswith("Hidden files") for line in lines), lines
