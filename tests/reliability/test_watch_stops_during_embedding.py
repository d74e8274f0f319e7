"""``cairn watch`` stopped (Ctrl-C or SIGTERM) while its first run embeds many notes
stops after the embedder call in progress — not after the whole step — keeps the
vectors made before the signal, and a restart embeds only the rest."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from _served import CLI, Served, cli_env, wait_for

pytestmark = pytest.mark.faults
pytest.importorskip("watchfiles")
pytest.importorskip("onnxruntime")

BATCH = 16
"""``[embed] batch_size``: texts per embedder call."""
HELD = 16
"""Embedder calls whose vectors may wait for one commit
(:func:`cairn.ingest.embedding.embed_missing` commits every ``16 × batch_size`` texts)."""
WORDS = ("river", "stone", "cloud", "paper", "garden", "window", "engine", "music",
         "winter", "summer", "light", "shadow", "harbour", "lantern", "meadow", "orchard")


def _notes(folder: Path, n: int) -> None:
    folder.mkdir()
    for i in range(n):
        body = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(60))
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\n{body} {i}\n\n## Part\n\n{i} {body}\n",
                                         encoding="utf-8")


def _counts(db: Path) -> tuple[int, int]:
    """``(vectors, distinct chunk texts still without one)`` read from the index file."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    except sqlite3.OperationalError:  # no index file yet
        return 0, -1
    try:
        vectors = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        missing = con.execute(
            "SELECT count(DISTINCT hash) FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash)").fetchone()[0]
        return int(vectors), int(missing)
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0, -1
    finally:
        con.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_during_embedding_stops_the_watcher_after_the_call_in_progress(
    tmp_path: Path, sig: int
) -> None:
    folder = tmp_path / "notes"
    _notes(folder, 1500)  # 3,000 chunks: many embedder calls
    db = tmp_path / "i.db"
    config = tmp_path / "cairn.toml"
    config.write_text(f"[embed]\nbatch_size = {BATCH}\n", encoding="utf-8")
    env = {**cli_env(db, CAIRN_CONFIG=str(config)), "CAIRN_EMBED": "minilm-onnx"}
    w = Served(db, "watch", str(folder), "-q", env=env)
    try:
        wait_for("the first committed vectors", lambda: _counts(db)[0] > 0, 200)
        at_signal = _counts(db)[0]
        code = w.stop(sig, timeout=60)  # a hang guard: the bound is on vectors below
    finally:
        w.kill_all()
    assert code == 0, w.log[-3000:]
    assert "stopped" in w.log
    after, missing = _counts(db)
    # what was embedded before the signal was kept; after it, at most the call that
    # was in progress (its vectors are dropped, not committed)
    assert at_signal <= after <= at_signal + (HELD + 1) * BATCH, (at_signal, after)
    assert missing > 0  # the step did not run to its end
    # a restart embeds only the rest, and the index converges
    done = subprocess.run([*CLI, "index", "-q"], env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    assert _counts(db) == (after + missing, 0)
