"""``cairn check`` passes after any sequence of the commands that write the index:
``index``, ``enrich`` (again, and two at once), agent ``memory`` on a bundle inside the
root (remember, recall, consolidate) and ``dream`` (the report and ``--apply``), on a
scratch copy of corpus notes plus a chat export; the model is the enrichment tests'
replaying server on loopback."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _reliability import copy_notes
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "enrich"))

from enrich_replay import ReplayServer, replay_server
from enrich_vault import CONVERSATIONS, chatgpt_export

pytestmark = pytest.mark.corpus


class _World:
    """A root (corpus notes, ``chats/``, the memory bundle ``mem/``), its index and
    ``cairn.toml`` (chats masked, the ``[enrich]`` model at the replaying server)."""

    def __init__(self, base: Path, server: ReplayServer) -> None:
        import json

        self.root = copy_notes(base / "vault")
        (self.root / "chats").mkdir()
        (self.root / "chats" / "conversations.json").write_text(
            json.dumps(chatgpt_export(CONVERSATIONS)), encoding="utf-8")
        self.bundle = self.root / "mem"
        self.db = base / "i.db"
        self.cfg = base / "cairn.toml"
        self.cfg.write_text(
            f'[enrich]\nprovider = "openai"\nurl = "{server.url}"\nmodel = "replay-1"\n'
            "timeout = 30\n", encoding="utf-8")

    def open(self) -> Cairn:
        return Cairn(load_config(db=self.db, config_file=self.cfg, env={"CAIRN_EMBED": "none"}))


def _index(w: _World, c: Cairn) -> None:
    c.index([w.root], embed=False)


def _enrich(w: _World, c: Cairn) -> None:
    assert c.enrich.run(relations=False).enriched == 3


def _enrich_two_at_once(w: _World, c: Cairn) -> None:
    errors: list[BaseException] = []

    def one() -> None:
        try:
            with w.open() as other:
                other.enrich.run(relations=False, wait=None)  # the second waits its turn
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


def _remember(w: _World, c: Cairn) -> None:
    c.memory.remember(w.bundle, "The build needs Python 3.12 on the runner", tags=["build"])
    c.memory.remember(w.bundle, "Deploys happen on Tuesdays after the release review",
                      tags=["deploy"])


def _recall(w: _World, c: Cairn) -> None:
    c.memory.recall(w.bundle, "build python")


def _consolidate(w: _World, c: Cairn) -> None:
    c.memory.consolidate(w.bundle, embed=False, llm=False)


def _dream(w: _World, c: Cairn) -> None:
    c.maintain.run()


def _dream_apply(w: _World, c: Cairn) -> None:
    c.maintain.run(apply=True)


Step = Callable[[_World, Cairn], None]
SEQUENCES: dict[str, list[Step]] = {
    "enrich again and again": [_index, _enrich, _enrich, _index, _enrich],
    "enrich two at once": [_index, _enrich_two_at_once, _enrich, _index],
    "memory then enrich": [_index, _remember, _recall, _consolidate, _enrich, _index],
    "dream around enrich": [_index, _enrich, _dream, _dream_apply, _enrich, _index],
    "everything": [_index, _remember, _enrich_two_at_once, _dream_apply, _consolidate,
                   _recall, _enrich, _dream, _index, _enrich],
}


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with replay_server("openai") as s:
        yield s


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_check_passes_after_every_step(name: str, tmp_path: Path, server: ReplayServer) -> None:
    w = _World(tmp_path, server)
    for n, step in enumerate(SEQUENCES[name]):
        with w.open() as c:
            step(w, c)
            assert c.notes.check() == [], f"after step {n} ({step.__name__})"
    res = CliRunner().invoke(app, ["--config", str(w.cfg), "check", "--db", str(w.db)])
    assert res.exit_code == 0 and "ok" in res.output, res.output
