"""The search service on real indexes: exact limits, paging, filter-value notes,
``source:`` paths, exclusions in filter-only queries, and embedding after a model switch."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config, SearchConfig
from cairn.embed.base import Embedder
from cairn.errors import QueryError
from cairn.ingest.embedding import embed_pass
from cairn.search.service import SearchService

os.environ.setdefault("HF_HUB_OFFLINE", "1")

N_FILES = 30


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")


@pytest.fixture
def org(tmp_path: Path) -> Iterator[tuple[Cairn, Path]]:
    """Org files whose preamble only repeats the title (shadowed by their heading)."""
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(N_FILES):
        (root / f"n{i:02}.org").write_text(
            f"#+title: Note {i}\n\n* Heading {i} :garden:\nApples and pears, note {i}.\n"
            + ("* DONE Pick the pears\n" if i % 2 else "* TODO Prune the apples\n"),
            encoding="utf-8",
        )
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        yield cairn, root


def test_limit_counts_hits_after_shadowed_preambles_are_dropped(
    org: tuple[Cairn, Path],
) -> None:
    cairn, _ = org
    every = cairn.search("format:org", limit=1000).hits
    assert len(every) == 2 * N_FILES  # two headings per file; the preambles are shadowed
    assert all(h.kind == "heading" for h in every)
    for limit in (1, 7, 25, 59, 60):  # was 25 → 18: the cut came before the drop
        res = cairn.search("format:org", limit=limit)
        assert len(res.hits) == limit
        assert [h.unit_id for h in res.hits] == [h.unit_id for h in every[:limit]]
    # filter-only queries list in rounds: each file's first heading in path order, then
    # each file's second
    paths = [h.path for h in every]
    assert paths[:N_FILES] == sorted(set(paths)) == paths[N_FILES:]
    assert [h.title.startswith("Heading") for h in every] == [True] * N_FILES + [False] * N_FILES


def _ids(res: Any) -> list[str]:
    return [h.unit_id for h in res.hits]


@pytest.mark.parametrize("query", ["format:org", "apples pears note", "tag:garden pears"])
def test_pages_do_not_overlap_and_make_one_big_page(org: tuple[Cairn, Path], query: str) -> None:
    cairn, _ = org
    big = cairn.search(query, limit=24, mode="keyword")
    assert len(big.hits) == 24
    pages = [cairn.search(query, limit=8, offset=o, mode="keyword") for o in (0, 8, 16)]
    joined = [u for p in pages for u in _ids(p)]
    assert joined == _ids(big) and len(set(joined)) == 24
    assert [h.rank for p in pages for h in p.hits] == list(range(1, 25))
    assert [p.offset for p in pages] == [0, 8, 16]
    assert cairn.search(query, limit=8, offset=10_000).hits == ()
    with pytest.raises(QueryError):
        cairn.search(query, offset=-1)


def test_pages_in_hybrid_mode(org: tuple[Cairn, Path], static: Embedder) -> None:
    cairn, _ = org
    embed_pass(cairn.store, static)
    svc = SearchService(cairn.store, SearchConfig(), embedder=static)
    big = svc.search("pears in the garden", mode="hybrid", limit=30)
    assert len(big.hits) == 30 and big.hits[0].explain == {}
    pages = [
        svc.search("pears in the garden", mode="hybrid", limit=10, offset=o) for o in (0, 10, 20)
    ]
    assert [u for p in pages for u in _ids(p)] == _ids(big)
    exp = svc.search("pears in the garden", mode="hybrid", limit=5, offset=5, explain=True)
    assert [h.rank for h in exp.hits] == [6, 7, 8, 9, 10]
    assert all(h.explain["mode"] == "hybrid" for h in exp.hits)


@pytest.fixture
def static() -> Embedder:
    from cairn.embed.registry import EmbedConfig, make_embedder

    emb = make_embedder(EmbedConfig(provider="static"))
    assert emb is not None
    return emb


def test_unknown_filter_values_get_a_note_naming_the_known_ones(
    org: tuple[Cairn, Path],
) -> None:
    cairn, _ = org
    res = cairn.search("format:pdf")
    assert res.hits == ()
    assert any("format:pdf" in n and "org" in n for n in res.notes), res.notes
    res = cairn.search("kind:nonsense apples")
    assert any("kind:nonsense" in n and "heading" in n for n in res.notes), res.notes
    res = cairn.search("todo:bogus")
    note = next(n for n in res.notes if "todo:bogus" in n)
    assert "open" in note and "done" in note and "TODO" in note and "DONE" in note
    for fine in ("format:org", "format:ORG", "kind:heading", "todo:open", "todo:DONE"):
        assert not any("matches nothing" in n for n in cairn.search(fine).notes), fine


def test_source_filter_expands_home_and_resolves_symlinks(
    org: tuple[Cairn, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cairn, root = org
    want = len(cairn.search(f"source:{root} apples", limit=100).hits)
    assert want > 0
    monkeypatch.setenv("HOME", str(tmp_path))
    assert len(cairn.search("source:~/notes apples", limit=100).hits) == want
    link = tmp_path / "link"
    link.symlink_to(root)
    assert len(cairn.search(f"source:{link} apples", limit=100).hits) == want
    assert len(cairn.search("source:notes apples", limit=100).hits) == want  # a folder name
    monkeypatch.chdir(tmp_path)
    assert len(cairn.search("source:./notes apples", limit=100).hits) == want
    assert cairn.search("source:~/elsewhere apples").hits == ()


def test_exclusions_apply_to_filter_only_queries(org: tuple[Cairn, Path]) -> None:
    cairn, _ = org
    every = cairn.search("tag:garden", limit=100).hits
    assert len(every) == N_FILES
    kept = cairn.search("tag:garden -note", limit=100).hits
    assert kept == ()  # every garden heading says "note"
    some = cairn.search("format:org -pears", limit=100).hits
    assert some and all("pears" not in h.snippet.lower() for h in some)
    assert len([h for h in some if h.kind == "heading"]) == N_FILES // 2  # the TODO ones


class _Renamed:
    """An embedder under another fingerprint: a model switch."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = "switched"
        self.fingerprint = "switched-model-space"
        self.dim = inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        return self.inner.embed(texts)


def test_after_a_model_switch_a_no_change_index_embeds_into_the_new_space(
    tmp_path: Path, static: Embedder
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Cats\n\nCats sleep on the windowsill.\n")
    (root / "b.org").write_text("* Dogs\nDogs chase balls in the park.\n")
    db = tmp_path / "i.db"
    with Cairn(Config(db_path=db), embedder=static) as c:
        first = c.index([root])
        assert first.embedding is not None and first.embedding.embedded > 0
        assert c.index().embedding is None  # nothing changed, nothing pending
    switched = _Renamed(static)
    with Cairn(Config(db_path=db), embedder=switched) as c:  # type: ignore[arg-type]
        run = c.index()
        assert run.seen == run.unchanged  # no file changed …
        assert run.embedding is not None and run.embedding.embedded > 0  # … yet it embeds
        assert c.store.vectors.missing_vectors("switched-model-space") == 0
        assert c.index().embedding is None


def test_a_keyword_only_index_gets_embeddings_from_a_later_embedding_run(
    tmp_path: Path, static: Embedder
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Cats\n\nCats sleep on the windowsill.\n")
    db = tmp_path / "i.db"
    with Cairn(Config(db_path=db), embedder=static) as c:
        c.index([root], embed=False)
        assert c.store.vectors.counts()["vectors"] == 0
        run = c.index()
        assert run.embedding is not None and run.embedding.embedded > 0
        assert c.store.vectors.missing_vectors(static.fingerprint) == 0
