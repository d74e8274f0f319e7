"""The semantic list of a filtered query asks the best units about the filter in
growing batches (``DenseIndex.search_where``) and finds exactly the hits of a search
over every unit the filter passes; a selective filter is handed back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.embed.base import Embedder
from cairn.ingest.embedding import embed_pass
from cairn.model import Filter, TextQuery
from cairn.search.dense import DenseIndex, encode_query

WORDS = ["compost", "bread", "tram", "ocean", "garden", "kettle", "lantern", "river"]


@pytest.fixture(scope="module")
def static() -> Embedder:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    return StaticEmbedder()


@pytest.fixture
def cairn(tmp_path: Path, static: Embedder, monkeypatch: pytest.MonkeyPatch
          ) -> Iterator[Cairn]:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "v"
    root.mkdir()
    for i in range(60):
        a, b = WORDS[i % 8], WORDS[(i * 3) % 8]
        if i % 3:
            (root / f"m{i:02d}.md").write_text(f"# {a} {i}\n\n{a} and {b} notes {i}.\n")
        else:
            (root / f"o{i:02d}.org").write_text(f"* {a} {i}\n{a} with {b} {i}.\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        embed_pass(c.store, static)
        yield c


def passing(c: Cairn, field: str, value: str) -> set[str]:

    rows = c.store.search_text(TextQuery((), (Filter(field, value),)), limit=1 << 30,
                               weights={}, whole_documents=False)
    return {u for u, _ in rows}


def test_asked_in_batches_equals_the_whole_filter(cairn: Cairn, static: Embedder) -> None:
    dense = DenseIndex(cairn.store.vectors, static.fingerprint)
    q = encode_query(static, "compost by the river")
    for field, value in (("format", "markdown"), ("format", "org")):
        allowed = passing(cairn, field, value)
        asked: list[int] = []

        def keep(ids: list[str], f: str = field, v: str = value,
                 asked: list[int] = asked) -> set[str]:
            asked.append(len(ids))
            return set(cairn.store.filter_units(ids, TextQuery((), (Filter(f, v),))))

        for k in (1, 5, 30, 200):
            got = dense.search_where(q, k, keep)
            assert got == dense.search(q, k, allowed=allowed), (field, k)
        assert asked and max(asked) < 4 * 200 + 1


def test_a_selective_filter_is_handed_back(cairn: Cairn, static: Embedder) -> None:
    dense = DenseIndex(cairn.store.vectors, static.fingerprint)
    q = encode_query(static, "compost")
    none_pass = dense.search_where(q, 5, lambda ids: set(), widest=8)
    assert none_pass is None
    # with room to look at every unit, a filter nothing passes finds nothing
    assert dense.search_where(q, 5, lambda ids: set(), widest=10_000) == []


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
@pytest.mark.parametrize("query", ["format:org compost", "format:markdown river tram",
                                   "tag:nothing compost", "format:org -bread garden"])
def test_searches_with_a_filter_are_unchanged(cairn: Cairn, static: Embedder, mode: str,
                                              query: str, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    import cairn.search.dense as dense
    from cairn.model.serialize import to_data
    from cairn.search.service import SearchService

    def run() -> list[object]:
        service = SearchService(cairn.store, cairn.config.search, cairn.semantic.config,
                                embedder=static)
        res = service.search(query, mode=mode, limit=10, explain=True)
        return [to_data(h) for h in res.hits]

    new = run()
    monkeypatch.setattr(dense, "WHERE_WIDEST", 0)  # every filter listed whole, as before
    assert run() == new
    if not query.startswith("tag:"):
        assert new
