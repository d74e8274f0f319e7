"""A chat export with unreadable parts: an unchanged one is an unchanged file, and
``cairn stats`` reports what the index run reported, named the same way.

A conversation that cannot be read is never stored, so it is read again whenever the
export is; what decides whether the export changed is what the run rewrote or removed,
not that a part failed again. A partly indexed export keeps one reason in the index:
the reason reading stopped (when it did), and how many other parts were not indexed."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.cli import app

ROOT = Path(__file__).resolve().parents[2]


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", ROOT / "bench" / "gen_chats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _conversations(n: int) -> list[dict[str, Any]]:
    return list(_gen().conversations(n, seed=11))


def _write_again(path: Path, text: str, step: int) -> None:
    """Write ``text`` with a later mtime (the export downloaded again), so the run
    reads it instead of trusting its size and mtime."""
    path.write_text(text, "utf-8")
    t = time.time() + 10 * step
    os.utime(path, (t, t))


def _broken_export(folder: Path) -> tuple[str, str]:
    """Five conversations: the second without its message mapping, the fourth holding
    an integer too long to read. Returns ``(the export's text, the second's id)``."""
    convs = _conversations(5)
    convs[1]["mapping"] = 5
    text = json.dumps(convs)
    marker = '"conversation_template_id": null'
    fourth = json.dumps(convs[3])
    assert marker in fourth
    text = text.replace(fourth, fourth.replace(marker, '"conversation_template_id": ' + "7" * 5000))
    return text, str(convs[1]["id"])


def test_an_unchanged_broken_conversation_leaves_the_export_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    text, broken_id = _broken_export(folder)
    export = folder / "conversations.json"
    _write_again(export, text, 0)
    with Cairn.open(db=tmp_path / "i.db") as c:
        first = c.index([folder], embed=False)
        runs = []
        for step in (1, 2):
            _write_again(export, text, step)  # the same bytes, read again
            runs.append(c.index([folder], embed=False))
        docs = c.stats().documents
    assert (first.added, first.changed) == (1, 0)
    assert docs == 3
    for run in runs:
        assert (run.added, run.changed, run.unchanged, run.failed) == (0, 0, 1, 0)
        shown = [w for w in run.warnings if "partly indexed" in w.message]
        # each unreadable part is still reported, naming the file, the conversation
        # (its id, or its place in the export) and the reason
        assert len(shown) == 2, [w.message for w in run.warnings]
        assert all(w.path == "conversations.json" for w in shown)
        assert broken_id in shown[0].message and "no message mapping" in shown[0].message
        assert "conversation #4" in shown[1].message
        assert "cannot be read" in shown[1].message


def test_an_export_that_changed_around_a_broken_conversation_is_changed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    text, _ = _broken_export(folder)
    export = folder / "conversations.json"
    _write_again(export, text, 0)
    convs = json.loads(text.replace("7" * 5000, "7"))
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder], embed=False)
        convs[0]["title"] = "Retitled by the test"
        _write_again(export, json.dumps(convs[:1] + convs[1:]), 1)
        edited = c.index([folder], embed=False)
        _write_again(export, json.dumps([convs[0], convs[1], convs[2]]), 2)
        shorter = c.index([folder], embed=False)
    assert (edited.changed, edited.unchanged) == (1, 0)  # and the fourth now read
    assert (shorter.changed, shorter.unchanged) == (1, 0)  # two conversations gone


def test_stats_names_a_cut_short_export_as_the_run_does(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    convs = _conversations(6)
    convs[1]["mapping"] = 5
    text = json.dumps(convs)
    cut = text[: text.index(json.dumps(convs[4])) + 200]  # ends inside the fifth
    _write_again(folder / "conversations.json", cut, 0)
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        run = c.index([folder], embed=False)
        failed = c.stats().failed_files
    assert (run.added, run.failed) == (1, 0)
    reported = [w.message for w in run.warnings if "partly indexed" in w.message]
    assert len(reported) == 2 and reported[1].startswith("partly indexed: truncated JSON")
    assert "(3 imported)" in reported[1]
    # the index keeps the reason reading stopped (the conversations after it are not
    # indexed), and counts the other part the run reported
    assert len(failed) == 1 and failed[0].status == "partial"
    assert failed[0].reason.startswith("truncated JSON")
    assert "(3 imported)" in failed[0].reason
    assert failed[0].reason.endswith("; and 1 other part not indexed")
    res = CliRunner().invoke(
        app, ["stats", "--db", str(db)], env={"CAIRN_EMBED": "none", "CAIRN_NO_WARM": "1"}
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "partly indexed conversations.json: truncated JSON" in out
    assert "failed conversations.json" not in out
    assert "0 failed" in out
