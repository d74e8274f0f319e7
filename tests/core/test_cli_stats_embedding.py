"""Plain ``cairn stats`` says when an embedding step did not finish (Ctrl-C, a crash,
``--no-embed``): how many units semantic search cannot find yet, and the command that
finishes them; ``--json`` has the count as ``units_waiting``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config


class _CtrlCAfter:
    """An embedder that raises ``KeyboardInterrupt`` (Ctrl-C in a model call) once it
    has been called ``calls`` times."""

    def __init__(self, inner: Any, calls: int) -> None:
        self.inner, self.calls = inner, calls
        self.name, self.dim, self.fingerprint = inner.name, inner.dim, inner.fingerprint

    def embed(self, texts: Sequence[str]) -> Any:
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        return self.inner.embed(texts)


def test_stats_shows_an_interrupted_embedding_step_until_embed_finishes_it(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    root = tmp_path / "notes"
    root.mkdir()
    for i in range(30):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nAbout topic {i}.\n", encoding="utf-8")
    db = tmp_path / "i.db"
    config = Config(db_path=db, embed={"provider": "static", "batch_size": 4})
    with Cairn(config, embedder=_CtrlCAfter(StaticEmbedder(), calls=2)) as cairn:
        step = cairn.index([root]).embedding
        assert step is not None and step.interrupted
    env = {"CAIRN_EMBED": "static", "CAIRN_NO_WARM": "1"}

    plain = cli("--db", str(db), "stats", env=env)
    waiting = cli("--db", str(db), "stats", "--json", env=env).json()["units_waiting"]
    assert waiting > 0
    assert f"{waiting} units not embedded yet" in plain.stdout
    assert "run `cairn embed` to finish" in plain.stdout

    cli("--db", str(db), "embed", env=env)  # the command stats names
    assert cli("--db", str(db), "stats", "--json", env=env).json()["units_waiting"] == 0
    assert "not embedded yet" not in cli("--db", str(db), "stats", env=env).stdout


def test_stats_of_an_index_without_vectors_says_nothing_of_embedding(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\ntext\n")
    db = tmp_path / "i.db"
    env = {"CAIRN_EMBED": "none", "CAIRN_NO_WARM": "1"}
    cli("--db", str(db), "index", str(tmp_path / "notes"), env=env)
    assert cli("--db", str(db), "stats", "--json", env=env).json()["units_waiting"] is None
    assert "embedded" not in cli("--db", str(db), "stats", env=env).stdout


def test_stats_counts_what_a_no_embed_first_run_left_until_embed_finishes_it(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    pytest.importorskip("model2vec")
    (tmp_path / "notes").mkdir()
    for i in range(3):
        (tmp_path / "notes" / f"n{i}.md").write_text(f"# Note {i}\n\ntext {i}\n")
    db = tmp_path / "i.db"
    env = {"CAIRN_EMBED": "static", "CAIRN_NO_WARM": "1"}
    run = cli("--db", str(db), "index", str(tmp_path / "notes"), "--no-embed", env=env)
    assert "until `cairn embed`" in run.stdout  # the command stats names
    assert cli("--db", str(db), "stats", "--json", env=env).json()["units_waiting"] == 3
    assert "3 units not embedded yet" in cli("--db", str(db), "stats", env=env).stdout
    cli("--db", str(db), "embed", env=env)
    assert cli("--db", str(db), "stats", "--json", env=env).json()["units_waiting"] == 0


def test_stats_and_search_count_waiting_units_in_the_configured_models_space(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """Embedded with one model, another configured: both count every unit as waiting
    (the configured model has no vector), both name `cairn embed`, one unit singular."""
    pytest.importorskip("model2vec")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Alpha\n\nevergreen trees\n")
    db = tmp_path / "i.db"
    cli("--db", str(db), "index", str(tmp_path / "notes"),
        env={"CAIRN_EMBED": "static", "CAIRN_NO_WARM": "1"})
    other = {"CAIRN_EMBED": "minilm-onnx", "CAIRN_NO_WARM": "1"}
    found = cli("--db", str(db), "search", "evergreen", "--mode", "semantic", "--json",
                env=other).json()
    if any("no embedding model is available" in n for n in found["notes"]):
        pytest.skip("the MiniLM ONNX model is not installed here")
    assert cli("--db", str(db), "stats", "--json", env=other).json()["units_waiting"] == 1
    assert "1 unit not embedded yet" in cli("--db", str(db), "stats", env=other).stdout
    waiting = [n for n in found["notes"] if "still waiting" in n]
    assert waiting and waiting[0].startswith("1 unit is still waiting")
    assert "`cairn embed`" in waiting[0]
