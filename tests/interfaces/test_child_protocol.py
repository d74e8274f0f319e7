"""The one protocol of the server's child processes (``cairn.serving.child``), with real
``python -m`` children: answers and typed errors travel, a child that dies is named with
its exit status and the last lines it wrote, and a child that will not stop is killed
after a bounded wait."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import ChildUnavailable, NotFound
from cairn.serving.child import Child
from cairn.serving.index_worker import IndexWorker, attach

SRC = Path(__file__).resolve().parents[2] / "src"

ECHO = '''
import sys, time
from cairn.errors import NotFound
from cairn.serving.child import receive, reply, start_in_child

out, inp, first = start_in_child()
if first == "mute":  # never reads its input again: only a kill stops it
    while True:
        time.sleep(1)
while True:
    try:
        request = receive(inp)
    except EOFError:
        sys.exit(0)
    if request == "die":
        print("giving up: the disk is on fire", file=sys.stderr, flush=True)
        sys.exit(7)

    def work(request=request):
        if request == "missing":
            raise NotFound("no such note: compost.md")
        return (first, request)

    reply(out, work)
'''


@pytest.fixture
def echo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module name of a small child that speaks the protocol."""
    (tmp_path / "echo_child.py").write_text(ECHO, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(SRC)]))
    return "echo_child"


def test_answers_and_typed_errors_travel_and_stop_is_clean(echo: str) -> None:
    child = Child(echo, "hello", name="the echo process")
    assert child.call("ping") == ("hello", "ping")
    with pytest.raises(NotFound, match=r"compost\.md"):
        child.call("missing")
    assert child.call("again") == ("hello", "again")  # an error is an answer, not a death
    assert child.stop() == 0  # its input ended: it left on its own


def test_a_child_that_dies_is_named_with_its_exit_status_and_last_words(echo: str) -> None:
    child = Child(echo, "hello", name="the echo process")
    with pytest.raises(ChildUnavailable) as caught:
        child.call("die", doing="during the test")
    message = str(caught.value)
    assert "the echo process ended unexpectedly during the test (exit status 7)" in message
    assert "giving up: the disk is on fire" in message


def test_a_child_that_ignores_the_end_of_its_input_is_killed(echo: str) -> None:
    child = Child(echo, "mute", name="the mute process")
    started = time.monotonic()
    code = child.stop(timeout=0.5)
    assert code < 0  # killed, not exited
    assert time.monotonic() - started < 30  # the bound, far above the 0.5 s asked for


def test_an_index_process_that_cannot_open_the_index_says_why(tmp_path: Path) -> None:
    """The child opens its own ``Cairn``; when that fails there (here the index path is a
    folder), the run's error names the child's own error, not only its exit status."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Compost\n\nGreens and browns.\n", encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as cairn:
        cairn.index([folder])
        attach(cairn)
        bad = IndexWorker(load_config(db=tmp_path), nice=0)  # a folder, not an index
        try:
            with pytest.raises(ChildUnavailable) as caught:
                bad.index()
        finally:
            bad.close()
        assert "the index process ended unexpectedly" in str(caught.value)
        assert "it said:" in str(caught.value)
        assert str(tmp_path) in str(caught.value)
        assert cairn.background.run().unchanged == 1  # the attached child is a good one
