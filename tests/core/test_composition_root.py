"""``Cairn`` is a composition root: no base class, the services as attributes, and an
index run whose one ``Run`` carries what every step did (no side channel to read)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.ingest.limits import MassDelete

SRC = Path(__file__).resolve().parents[2] / "src" / "cairn"


def _notes(folder: Path, n: int = 6) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"n{i}.md").write_text(
            f"# Note {i}\n\nCompost heaps and worm bins, part {i}.\n", encoding="utf-8"
        )
    return folder


def test_cairn_has_no_base_class_and_app_is_a_few_files() -> None:
    assert Cairn.__mro__ == (Cairn, object)
    modules = sorted(p.name for p in (SRC / "app").glob("*.py"))
    assert len(modules) <= 5, modules


@pytest.mark.embed
def test_an_index_run_carries_its_embedding_step_in_its_result(tmp_path: Path) -> None:
    from cairn.embed.static import StaticEmbedder

    folder = _notes(tmp_path / "n")
    config = load_config(db=tmp_path / "i.db")
    with Cairn(config, embedder=StaticEmbedder()) as c:
        run = c.index([folder])
        assert run.added == 6
        assert run.embedding is not None and run.embedding.chunks_added >= 6
        assert run.graph is not None
        again = c.index()
        assert again.unchanged == 6 and again.embedding is None  # nothing to embed
        assert not hasattr(c, "last_embed") and not hasattr(c, "_last_indexer")


@pytest.mark.embed
def test_cli_index_json_reports_the_runs_own_embedding_step(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    folder = _notes(tmp_path / "n")
    out = cli("index", str(folder), "--json", "--quiet", "--db", str(tmp_path / "i.db"),
              env={"CAIRN_EMBED": "fast", "CAIRN_NO_WARM": "1"}).json()
    assert out["added"] == 6
    assert out["embedding"]["chunks_added"] >= 6
    out = cli("index", "--json", "--quiet", "--db", str(tmp_path / "i.db"),
              env={"CAIRN_EMBED": "fast", "CAIRN_NO_WARM": "1"}).json()
    assert out["unchanged"] == 6 and out["embedding"] is None


def test_a_run_the_deletion_guard_stops_is_recorded_as_stopped(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 10)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        first = c.index([folder], embed=False)
        for p in list(folder.glob("n[0-8].md")):
            p.unlink()
        with pytest.raises(MassDelete):
            c.index(embed=False)
        last = c.store.last_run()
        assert last is not None and last.id != first.id
        assert last.finished is None
        assert last.failures and last.failures[0].reason.startswith("run stopped:")
        # the files the guard protected are still indexed
        assert c.stats().documents == 10


def test_a_watcher_batch_goes_through_the_same_run(tmp_path: Path) -> None:
    folder = _notes(tmp_path / "n", 3)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([folder], embed=False)
        (folder / "n3.md").write_text("# Note 3\n\nA fourth note.\n", encoding="utf-8")
        done = c.runs.apply_changes([str(folder / "n3.md")], embed=False)
        assert done is not None and done.run.added == 1 and not done.full
        assert c.runs.apply_changes([str(tmp_path / "elsewhere.md")]) is None
