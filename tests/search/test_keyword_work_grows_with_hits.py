"""A keyword search's work grows no faster than FTS5's own ranking of its matches.

A generated vault where the query's words are everywhere: every note's title holds
them (so its title-only preamble ranks near the top and must be settled against its
document's other units: :mod:`cairn.search.preambles`) and so does every section. The
vault is indexed at 1x and 8x; the work of the searches is counted, not timed: SQLite
virtual-machine steps and statements on every connection the store opens, which do not
depend on the machine's load. Settling the preambles once scanned every unit holding
the words and tested each against every pending document (8x the units, each tested
about 30 times); now it ranks only the named documents' units.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.model import Filter
from cairn.search.query import parse_query
from cairn.store.sql.search import SearchBase
from cairn.store.sqlite import base as sqlite_base

_STEP = 100  # VM instructions between two progress-handler calls
_NOTES = 30  # notes per copy
_FILLER = (
    "budget", "travel", "soil", "water", "morning", "meeting", "design", "review",
    "network", "server", "latency", "cache", "index", "query", "graph", "link",
    "heading", "section", "python", "agenda", "vault", "concept",
)
# a frequent word, and two words that co-occur in every section
_QUERIES = ("garden", "garden tomato")


@dataclass
class Work:
    """SQLite work counted so far over every connection the store opened."""

    steps: int = 0  # in units of _STEP VM instructions
    statements: int = 0  # the searches' own: not those FTS5 runs for each row it reads


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    """Count VM steps and statements on every connection the store opens."""
    counted = Work()
    connect = sqlite_base.SQLiteBase._connect

    def counting(self: sqlite_base.SQLiteBase) -> sqlite3.Connection:
        conn = connect(self)

        def tick() -> int:
            counted.steps += 1
            return 0

        def statement(sql: str) -> None:
            counted.statements += not sql.startswith("-- ")

        conn.set_progress_handler(tick, _STEP)
        conn.set_trace_callback(statement)
        return conn

    monkeypatch.setattr(sqlite_base.SQLiteBase, "_connect", counting)
    yield counted


def _vault(root: Path, copies: int, tagged: bool) -> None:
    """``copies`` copies of the same notes, four sections holding ``garden tomato``
    among filler; each titled with both words (its title-only preamble ranks high) or
    ``tagged`` with both (then query understanding also ranks the words within the
    tags: ``tomato tag:garden``)."""
    for k in range(copies):
        rnd = random.Random(3)  # every copy alike, only its names differ
        d = root / f"copy{k}"
        d.mkdir(parents=True)
        for i in range(_NOTES):
            sections = "".join(
                f"## {rnd.choice(_FILLER)} {j}\n\n"
                + " ".join(rnd.choice(_FILLER) for _ in range(30))
                + " garden tomato "
                + " ".join(rnd.choice(_FILLER) for _ in range(20))
                + "\n\n"
                for j in range(4)
            )
            head = (f"tags: [garden, tomato]\n---\n# plot {k} {i}" if tagged
                    else f"title: Garden tomato plot {k} {i}\n---")
            (d / f"plot-{k}-{i}.md").write_text(f"---\n{head}\n\n{sections}", "utf-8")


def _search_work(tmp_path: Path, copies: int, work: Work, tagged: bool) -> tuple[int, int]:
    """Index ``copies`` copies, then the VM steps and statements of the searches
    (warmed once: the first search reads what every later one reuses)."""
    root = tmp_path / f"x{copies}"
    _vault(root, copies, tagged)
    config = Config(db_path=tmp_path / f"x{copies}.db", embed={"provider": "none"})
    with Cairn(config) as c:
        run = c.index([str(root)], embed=False)
        assert run.failed == 0 and run.added == copies * _NOTES
        for q in _QUERIES:
            c.search(q, mode="keyword", limit=30)
        steps, statements = work.steps, work.statements
        for q in _QUERIES:
            hits = c.search(q, mode="keyword", limit=30).hits
            assert len(hits) == 30
            # a preamble whose document has another matching unit is never listed
            assert all(h.kind != "preamble" for h in hits), [h.kind for h in hits]
        return work.steps - steps, work.statements - statements


def test_keyword_search_work_grows_with_its_hits_not_faster(
    tmp_path: Path, work: Work
) -> None:
    one = _search_work(tmp_path, 1, work, tagged=False)
    eight = _search_work(tmp_path, 8, work, tagged=False)
    # FTS5 ranks every unit holding the words (8x as many), the rest assembles thirty
    # hits; settling the preambles tested each of those units against every pending
    # document (9x the steps at 8x)
    assert eight[0] <= 3 * one[0], (one, eight)
    assert eight[1] <= 1.5 * one[1], (one, eight)


def test_words_within_a_shared_tag_are_ranked_in_one_pass(tmp_path: Path, work: Work) -> None:
    one = _search_work(tmp_path, 1, work, tagged=True)
    eight = _search_work(tmp_path, 8, work, tagged=True)
    # ``tomato tag:garden`` ranks every tagged unit holding the word (8x as many) on
    # top of the plain ranking; handed to FTS5 one tagged rowid at a time, each a new
    # MATCH counting all the word's postings, it grew with their product (6x at 8x)
    assert eight[0] <= 4 * one[0], (one, eight)
    assert eight[1] <= 1.5 * one[1], (one, eight)


def test_each_document_s_best_units_are_what_its_id_filter_lists_first(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    _vault(root, 2, tagged=True)
    config = Config(db_path=tmp_path / "v.db", embed={"provider": "none"})
    with Cairn(config) as c:
        c.index([str(root)], embed=False)
        store = c.store
        weights = c.config.search.weights
        docs = [str(r[0]) for r in store.db.execute(  # type: ignore[attr-defined]
            "SELECT id FROM documents ORDER BY path")]
        named = [*docs[::7], "no-such-document"]
        for text in ("garden", "tomato budget", "soil -water", "+garden +tomato",
                     "python tag:garden", '"garden tomato"', "section id:" + docs[0]):
            tq = parse_query(text).for_store()
            best = store.best_in_documents(tq, named, per_document=2, weights=weights)
            assert list(best) == named
            for doc in named:
                alone = replace(tq, filters=(*tq.filters, Filter("id", doc)))
                listed = [u for u, _ in store.search_text(alone, limit=2, weights=weights)]
                assert best[doc] == listed, (text, doc)
            # the backend-neutral rounds through search_text agree
            assert SearchBase.best_in_documents(
                store, tq, named, per_document=2, weights=weights) == best, text


def _todo_work(tmp_path: Path, headings: int, work: Work) -> tuple[int, list[Any]]:
    """VM steps of looking up ``todo`` in the vocabulary of ``headings`` TODO headings
    (and a few other values filed under the same key), and what it found."""
    root = tmp_path / f"t{headings}"
    root.mkdir()
    (root / "tasks.org").write_text(
        "#+TODO: TODO TODO1 | DONE\n"
        + "".join(f"* TODO task {i}\n" for i in range(headings))
        + "* TODO1 other\n:PROPERTIES:\n:todo: x\n:END:\n",
        "utf-8",
    )
    (root / "tagged.md").write_text("# note\n\ntext #todo\n", "utf-8")
    config = Config(db_path=tmp_path / f"t{headings}.db", embed={"provider": "none"})
    with Cairn(config) as c:
        c.index([str(root)], embed=False)
        before = work.steps
        found = c.store.carried_named("todo", 2)
        return work.steps - before, found


def test_the_values_under_a_key_are_found_by_seeks_not_by_reading_their_carriers(
    tmp_path: Path, work: Work
) -> None:
    few, found = _todo_work(tmp_path, 20, work)
    many, found_many = _todo_work(tmp_path, 800, work)
    kinds = [item for item, _ in found]
    assert [item for item, _ in found_many] == kinds
    assert ("todo", "", "TODO") in kinds and ("tag", "", "todo") in kinds, kinds
    assert all(len(ids) <= 2 for _, ids in found_many)
    # one seek per value: the same work for 40x the carriers (each read: 100x here)
    assert many <= 2 * few, (few, many)
