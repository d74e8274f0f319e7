"""The dense matrix under a server: one snapshot shared by every ranker over a store
(a ranker rebuilt after an index run does not load it again), reloaded in the
background in serve mode, and query vectors cached per embedder and text."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import cairn.search.dense as dense
from cairn.app import Cairn
from cairn.config import Config
from cairn.embed.base import Embedder
from cairn.ingest.embedding import embed_pass
from cairn.search.dense import DenseIndex, encode_query


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder()


@pytest.fixture
def store(tmp_path: Path, static: Embedder, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("# Compost\n\nGreens and browns, turned weekly.\n")
    (root / "b.md").write_text("# Bread\n\nFeed the starter overnight.\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        embed_pass(c.store, static)
        yield c, root


class Counting:
    """The store's vector index, counting full matrix loads."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.loads = inner, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def matrix(self, space: str) -> Any:
        self.loads += 1
        return self.inner.matrix(space)


def test_rankers_over_one_store_share_the_snapshot(store: Any, static: Embedder) -> None:
    c, _ = store
    vectors = Counting(c.store.vectors)
    first = DenseIndex(vectors, static.fingerprint)
    n = first.size()
    assert n > 0 and vectors.loads == 1
    second = DenseIndex(vectors, static.fingerprint)  # what a rebuilt ranker makes
    assert second.size() == n and vectors.loads == 1
    assert second.snapshot() is first.snapshot()


def test_serve_mode_reloads_in_the_background(store: Any, static: Embedder) -> None:
    c, root = store
    vectors = Counting(c.store.vectors)
    idx = DenseIndex(vectors, static.fingerprint)
    before = idx.snapshot()
    (root / "c.md").write_text("# Lisbon\n\nTrams and custard tarts by the ocean.\n")
    c.index([root])
    embed_pass(c.store, static)
    dense.serve_mode()
    try:
        stale = idx.snapshot()  # answers at once with what it has, and asks for a reload
        assert stale is before
        deadline = time.monotonic() + 20
        while idx.snapshot() is before:
            assert time.monotonic() < deadline, "the background reload never came"
            time.sleep(0.02)
    finally:
        dense.serve_mode(False)
    fresh = idx.snapshot()
    assert fresh[0].generation == c.store.vectors.generation()
    assert fresh[0].matrix.shape[0] > before[0].matrix.shape[0]
    q = encode_query(static, "custard tarts")
    assert any(h.score > 0 for h in idx.search(q, 3))


class Spy:
    """An embedder that counts the texts it encodes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.calls = inner, 0
        self.fingerprint = inner.fingerprint + "-spy"

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls += len(texts)
        return self.inner.embed(texts)


def test_query_vectors_are_cached(static: Embedder) -> None:
    spy = Spy(static)
    a = encode_query(spy, "a repeated query")  # type: ignore[arg-type]
    b = encode_query(spy, "a repeated query")  # type: ignore[arg-type]
    assert spy.calls == 1 and a is b and not a.flags.writeable
    assert (a == static.embed(["a repeated query"])[0]).all()
    encode_query(spy, "another query")  # type: ignore[arg-type]
    assert spy.calls == 2
    for i in range(dense.QUERY_CACHE_SIZE + 1):  # the oldest goes first
        encode_query(spy, f"q{i}")  # type: ignore[arg-type]
    calls = spy.calls
    encode_query(spy, "a repeated query")  # type: ignore[arg-type]
    assert spy.calls == calls + 1
