"""Searchable first, embedded next: a partly embedded index answers hybrid queries and
says how many units still wait; an interrupted (Ctrl-C) or killed (SIGKILL) embedding
pass keeps its committed batches and the next pass embeds only the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.embed.base import Embedder
from cairn.ingest.chunking import content_hash

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SRC = Path(__file__).resolve().parents[2] / "src"

TOPICS = [
    "compost heaps need greens and browns",
    "sourdough starter feeding schedule",
    "quarterly budget review and travel costs",
    "bicycle chain lubrication in winter",
    "tomato seedlings under grow lights",
    "kafka consumer group rebalancing",
    "watercolour wet on wet technique",
    "marathon training long slow runs",
]


def _vault(root: Path, n: int = 40) -> Path:
    """``n`` notes of two sections each, every one on a distinct topic line."""
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        p = root / f"note{i:03}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(
            f"# Note {i}\n\nAbout {topic}, entry number {i}.\n\n"
            f"## Details {i}\n\nMore on {topic}: observation {i * 7} of the series.\n",
            encoding="utf-8",
        )
    return root


class Counting:
    """Wraps an embedder: counts the texts it is asked to embed and, after ``stop_after``
    calls, raises ``KeyboardInterrupt`` as Ctrl-C arriving during a model call would."""

    def __init__(self, inner: Embedder, stop_after: int | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.fingerprint = inner.fingerprint
        self.texts: list[str] = []
        self.calls = 0
        self.stop_after = stop_after

    def embed(self, texts: Sequence[str]) -> Any:
        if self.stop_after is not None and self.calls >= self.stop_after:
            raise KeyboardInterrupt
        self.calls += 1
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder()


def _config(db: Path) -> Config:
    return Config(db_path=db, embed={"provider": "static", "batch_size": 4})


def test_interrupted_pass_keeps_batches_and_hybrid_uses_what_exists(
    tmp_path: Path, static: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cairn.ingest.embedding as embedding

    monkeypatch.setattr(embedding, "COMMIT_SECONDS", 0.0)  # commit after every call
    root = _vault(tmp_path / "vault")
    stopping = Counting(static, stop_after=5)
    with Cairn(_config(tmp_path / "i.db"), embedder=stopping) as cairn:
        run = cairn.index([root])
        step = run.embedding
        assert step is not None and step.interrupted
        stopping.stop_after = None  # queries are embedded by it too
        vs = cairn.store.vectors
        total = vs.counts()["chunks"]
        stored = vs.counts()["vectors"]
        assert stored == len(stopping.texts) == 5 * 4  # every finished call committed
        done_hashes = {content_hash(t) for t in stopping.texts}
        assert step.pending == total - stored > 0
        assert any("embedding interrupted" in w.message for w in run.warnings)
        # every file is searchable by keyword at once
        assert len(cairn.search("observation", mode="keyword", limit=100).hits) == 40

        # hybrid over the partly embedded index: vectors that exist, keywords for the
        # rest, and a note with the number of units still waiting
        res = cairn.search("kafka rebalancing", mode="hybrid", limit=10)
        assert res.hits and "kafka" in res.hits[0].snippet.lower()
        waiting = vs.waiting_units(static.fingerprint)
        assert waiting > 0
        assert any(f"{waiting} units are still waiting" in n for n in res.notes)
        assert not any("waiting" in n for n in cairn.search("kafka", mode="keyword").notes)

        # resume: only the chunks without a vector reach the model
        resume = Counting(static)
        cairn.semantic._embedder = resume  # the same space, counted
        again = cairn.embedding.run()
        assert not again.interrupted and again.pending == 0
        assert again.embedded == len(resume.texts) == total - stored
        assert not done_hashes & {content_hash(t) for t in resume.texts}
        assert vs.counts()["vectors"] == total and vs.waiting_units(static.fingerprint) == 0
        # nothing left: a second `cairn embed` embeds nothing
        assert cairn.embedding.run().embedded == 0 and len(resume.texts) == total - stored
        res = cairn.search("kafka rebalancing", mode="hybrid", limit=10)
        assert not any("waiting" in n for n in res.notes)


SLOW_INDEX = textwrap.dedent(
    """
    import sys, time
    import cairn.ingest.embedding as embedding
    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.embed.static import StaticEmbedder

    embedding.COMMIT_SECONDS = 0.0
    inner = StaticEmbedder()

    class Slow:
        name, dim, fingerprint = inner.name, inner.dim, inner.fingerprint

        def embed(self, texts):
            time.sleep(0.15)
            return inner.embed(texts)

    from pathlib import Path
    config = Config(db_path=Path(sys.argv[1]), embed={"provider": "static", "batch_size": 4})
    with Cairn(config, embedder=Slow()) as cairn:
        cairn.index([sys.argv[2]])
    """
)


def test_killed_embed_pass_resumes_without_re_embedding(
    tmp_path: Path, static: Embedder
) -> None:
    root = _vault(tmp_path / "vault", n=60)
    db = tmp_path / "i.db"
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_INDEX, str(db), str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stored = 0
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                with Cairn(_config(db), embedder=static, create=False) as peek:
                    stored = peek.store.vectors.counts()["vectors"]
                if stored >= 16:
                    break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    counting = Counting(static)
    with Cairn(_config(db), embedder=counting) as cairn:
        vs = cairn.store.vectors
        before = vs.counts()["vectors"]
        assert before >= stored >= 16
        # keyword search works on the killed run's files
        assert cairn.search("observation", mode="keyword", limit=200).hits
        # exactly the chunks the killed pass had not finished reach the model
        missing = {c.hash for c, _u in vs.chunks_missing_vectors(static.fingerprint)}
        assert missing and len(missing) == vs.missing_vectors(static.fingerprint)
        run = cairn.index()  # no file changed: the next index run resumes embedding
        step = run.embedding
        assert step is not None and not step.interrupted
        total = vs.counts()["chunks"]
        assert vs.counts()["vectors"] == total > before
        assert len(counting.texts) == step.embedded == total - before
        assert {content_hash(t) for t in counting.texts} == missing


@pytest.mark.slow
def test_cli_embed_json_and_interrupt_status(
    tmp_path: Path, static: Embedder, cli: Callable[..., Any]
) -> None:
    root = _vault(tmp_path / "vault", n=6)
    db = tmp_path / "i.db"
    env = {"HF_HUB_OFFLINE": "1", "CAIRN_EMBED": "static"}
    first = cli("index", str(root), "--no-embed", "--db", str(db), "--json", env=env,
                check=False)
    assert first.code == 0, first.stderr
    res = cli("embed", "--db", str(db), "--json", env=env, check=False)
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["embedded"] > 0 and data["pending"] == 0 and data["interrupted"] is False
    assert data["space"] == static.fingerprint
    again = cli("embed", "--db", str(db), env=env, check=False)
    assert again.code == 0 and "0 embedded" in again.stdout
