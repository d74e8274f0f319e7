"""Link resolution and the graph, built a few documents at a time, equal the one-pass
build: every link's resolution, every edge (weight, counts, evidence), stub, recorded
name, want, feature and built state.

``resolve_links`` and ``GraphService`` read a chunk of documents at a time so that the
memory of a first build does not grow with the documents (a chat export of 20,000
conversations); here a chunk of a few documents is compared with one chunk holding
everything, on the shared corpus, on a generated ChatGPT export, and through
incremental edits of a vault whose notes share tags and property values.
"""

from __future__ import annotations

import functools
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from _corpus_index import FORMATS, CorpusIndexes
from cairn.app import Cairn
from cairn.graph.resolve import resolve_links
from cairn.graph.service import GraphService
from cairn.ingest import pipeline
from cairn.model import LinkResolution

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
ONE_PASS = 10**9

TABLES = {
    "links": "unit_id, ordinal, kind, target, resolved_document_id, resolved_unit_id, "
    "unresolved_reason",
    "edges": "id, source, target, relation, origin, weight, count, links, evidence, "
    "source_document_id, target_document_id",
    "graph_stubs": "id, kind, label, target, reason",
    "graph_names": "document_id, key",
    "graph_wants": "document_id, source, key",
    "graph_features": "document_id, unit_id, feature",
    "graph_docs": "document_id, content_hash",
}


def _dump(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the tables link resolution and the graph write, sorted."""
    conn = sqlite3.connect(db)
    try:
        return {t: sorted(conn.execute(f"SELECT {cols} FROM {t}").fetchall(), key=repr)
                for t, cols in TABLES.items()}
    finally:
        conn.close()


def _copy(db: Path, to: Path) -> Path:
    shutil.copyfile(db, to)
    return to


def _build(db: Path, chunk: int, *, cold_incremental: bool) -> dict[str, list[tuple[object, ...]]]:
    """Resolve every link and build the graph of ``db`` again, ``chunk`` documents at a
    time: as a first index run does (every document changed, an empty edge table) or
    as ``resolve_all`` and ``graph rebuild`` do."""
    with Cairn.open(db=db) as c:
        store = c.store
        graph = GraphService(store, chunk=chunk)
        with store.transaction():
            if cold_incremental:
                # forget what the index run resolved and built: everything is new
                store.edges.clear()
                store.edges.set_names({d: () for d in store.edges.named_documents()})
                store.set_link_resolutions(
                    [LinkResolution(lk.unit_id, lk.ordinal, None, None, "not yet")
                     for lk in store.links_from(None)])
                resolve_links(store, store.edges.document_ids(), [], chunk=chunk)
            else:
                resolve_links(store, None, None, chunk=chunk)
        if cold_incremental:
            graph.update()
        else:
            graph.rebuild()
    return _dump(db)


def _assert_same(a: dict[str, list[tuple[object, ...]]],
                 b: dict[str, list[tuple[object, ...]]]) -> None:
    for table in TABLES:
        assert a[table] == b[table], table


@pytest.fixture(scope="module")
def corpus_db(corpus_indexes: CorpusIndexes, tmp_path_factory: pytest.TempPathFactory
              ) -> Path:
    """A copy of the session's index of a copy of the whole corpus, the one
    ``tests/maintain/test_dream_fix_properties.py`` fixes."""
    built = corpus_indexes.copy_of(FORMATS, embed=False)
    return built.copy(tmp_path_factory.mktemp("chunked") / "corpus.db")


@pytest.mark.corpus
@pytest.mark.parametrize("cold_incremental", [True, False], ids=["first-run", "rebuild"])
def test_corpus_graph_and_links_are_the_same_built_in_small_chunks(
    corpus_db: Path, tmp_path: Path, cold_incremental: bool
) -> None:
    indexed = _dump(corpus_db)
    assert len(indexed["links"]) > 10_000 and len(indexed["edges"]) > 5_000
    assert any(r[4] for r in indexed["links"]) and indexed["graph_features"]
    one = _build(_copy(corpus_db, tmp_path / "one.db"), ONE_PASS,
                 cold_incremental=cold_incremental)
    small = _build(_copy(corpus_db, tmp_path / "small.db"), 7,
                   cold_incremental=cold_incremental)
    _assert_same(one, small)
    _assert_same(one, indexed)  # and the index run's own build


def test_generated_export_graph_is_the_same_built_in_small_chunks(tmp_path: Path) -> None:
    from gen_chats import write_export

    folder = tmp_path / "export"
    folder.mkdir()
    write_export(folder / "conversations.json", 120)
    db = tmp_path / "chats.db"
    with Cairn.open(db=db) as c:
        c.index([folder], embed=False)
        assert c.stats().documents == 120
    indexed = _dump(db)
    for cold in (True, False):
        one = _build(_copy(db, tmp_path / "one.db"), ONE_PASS, cold_incremental=cold)
        small = _build(_copy(db, tmp_path / "small.db"), 5, cold_incremental=cold)
        _assert_same(one, small)
        _assert_same(one, indexed)


def _note(i: int, *, project: str, extra: str = "") -> str:
    return (f"---\nproject: {project}\ntags: [t{i % 3}, shared]\nrelated: [n{(i + 1) % 9}]\n"
            f"---\n# Note {i}\n\nSee [[n{(i + 2) % 9}]] and [[n{i}#Part]].\n\n## Part\n\n"
            f"Body {i} #inline{i % 2} {extra}\n")


def test_incremental_edits_built_in_small_chunks_equal_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(9):
        (vault / f"n{i}.md").write_text(_note(i, project="p" + str(i % 2)), encoding="utf-8")
    # the index run's own resolution and graph update, two documents at a time
    monkeypatch.setattr(pipeline, "resolve_links", functools.partial(resolve_links, chunk=2))
    with Cairn.open(db=tmp_path / "chunked.db") as c:
        c.graph_service = GraphService(c.store, chunk=2)
        c.index([vault], embed=False)
        # edits: a note changes its project and tags, one goes, one comes, one is renamed
        (vault / "n3.md").write_text(_note(3, project="p0", extra="#t2"), encoding="utf-8")
        (vault / "n5.md").unlink()
        (vault / "n9.md").write_text(_note(9, project="p1"), encoding="utf-8")
        (vault / "n7.md").rename(vault / "n5.md")
        run = c.index([vault], embed=False)
        assert run.graph is not None and run.graph.changed_documents >= 3
    monkeypatch.undo()
    with Cairn.open(db=tmp_path / "fresh.db") as c:
        c.index([vault], embed=False)
    got, want = _dump(tmp_path / "chunked.db"), _dump(tmp_path / "fresh.db")
    assert want["graph_features"] and any(r[4] == "implicit" for r in want["edges"])
    assert any(r[4] == "declared" and r[10] for r in want["edges"])
    _assert_same(got, want)
