"""Exact top-k BM25 on PostgreSQL (``store/postgres/topk.py``): for word queries,
phrases, ``-word``, filters and column weights other than the frozen ones, the pruned
search returns exactly the units and scores of scoring every matching unit, and it
reads fewer postings than the lists hold.

Every test runs against a real PostgreSQL server (see ``conftest.py``); nothing is mocked.
"""

from __future__ import annotations

import contextlib
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.search.query import parse_query
from cairn.store import open_url
from cairn.store.postgres import overlap, topk

pytestmark = pytest.mark.postgres

_WORDS = ("basil", "thyme", "sorrel", "fennel", "garden", "soil", "water", "seed",
          "tomato", "leaf", "root", "bloom")
_WEIGHTS = {"title": 10.0, "outline_path": 4.0, "tags": 3.0, "body": 1.0}


def _corpus(root: Path, n: int) -> None:
    """``n`` notes of Zipf-like word mixes (a word's postings are long) and filler words
    (lengths, so impacts, differ)."""
    rng = random.Random(5)
    root.mkdir(parents=True)
    for i in range(n):
        words = rng.choices(_WORDS, weights=[12, 9, 7, 6, 5, 4, 3, 3, 2, 2, 1, 1],
                            k=rng.randint(3, 40))
        words += [f"filler{rng.randint(0, 3000)}" for _ in range(rng.randint(0, 60))]
        rng.shuffle(words)
        title = " ".join(rng.sample(_WORDS, 2))
        tag = "herb" if i % 3 else "veg"
        folder = "a" if i % 2 else "b"
        (root / folder).mkdir(exist_ok=True)
        (root / folder / f"n{i}.md").write_text(
            f"---\ntags: [{tag}]\n---\n# {title}\n\n{' '.join(words)}.\n", encoding="utf-8")


def _full(store: Any, query: str, limit: int, weights: dict[str, float]) -> list[Any]:
    """The search with top-k and overlap-first switched off: every matching unit scored."""
    saved = topk.MAX_POSTINGS, overlap.MAX_TERMS
    topk.MAX_POSTINGS, overlap.MAX_TERMS = -1, 1
    try:
        return _search(store, query, limit, weights, full=True)
    finally:
        topk.MAX_POSTINGS, overlap.MAX_TERMS = saved


def _search(store: Any, query: str, limit: int, weights: dict[str, float], *,
            full: bool = False) -> list[Any]:
    hits = store.search_text(parse_query(query).for_store(), limit=limit, weights=weights)
    return [(u, round(s, 9)) for u, s in hits]


@contextlib.contextmanager
def _indexed(server_url: str, root: Path, tmp: Path, prefix: str) -> Iterator[Cairn]:
    """``root`` indexed (no embeddings) into a database of its own on the server,
    dropped after."""
    import psycopg
    from tests.store.conftest import _with_db

    name = f"cairn_{prefix}_" + uuid.uuid4().hex[:8]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    cfg = Config(db_path=tmp / "unused.db", embed={"provider": "none"})
    try:
        with Cairn(cfg, store=open_url(_with_db(server_url, name))) as c:
            c.index([str(root)])
            yield c
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="module")
def pg_cairn(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str) -> Any:
    """One index of 400 notes for the module (its own database, dropped after)."""
    tmp = tmp_path_factory.mktemp("topk")
    _corpus(tmp / "notes", 400)
    with _indexed(pg_server_url, tmp / "notes", tmp, "topk") as c:
        yield c


@pytest.fixture(params=["server", "client"])
def where(request: pytest.FixtureRequest) -> Any:
    """Top-k as the server function (``topk_sql``) and as the client loop (``topk``)."""
    from cairn.store.postgres import search

    saved = search.TOPK_SERVER
    search.TOPK_SERVER = request.param == "server"
    yield request.param
    search.TOPK_SERVER = saved


@pytest.mark.parametrize("query", [
    "basil", "bloom", "basil thyme", "garden soil water", "root bloom leaf",
    '"basil thyme"', "basil -thyme", "fennel tag:herb", "seed path:a/",
    "tomato OR leaf", "(basil sorrel OR -water soil)", "basil +thyme",
    "basil thyme sorrel fennel garden soil",  # more lexemes than top-k takes
])
@pytest.mark.parametrize("limit", [1, 5, 20])
def test_top_k_is_the_full_ranking(pg_cairn: Any, query: str, limit: int, where: str) -> None:
    store = pg_cairn.store
    assert _search(store, query, limit, _WEIGHTS) == _full(store, query, limit, _WEIGHTS)


@pytest.mark.parametrize("weights", [
    {"title": 30.0, "outline_path": 4.0, "tags": 3.0, "body": 1.0},  # R = 3
    {"title": 1.0, "outline_path": 1.0, "tags": 1.0, "body": 5.0},
    {"title": 0.0, "outline_path": 0.0, "tags": 0.0, "body": 1.0},
])
def test_other_weights_stay_exact(pg_cairn: Any, weights: dict[str, float],
                                  where: str) -> None:
    store = pg_cairn.store
    for query in ("basil", "garden soil", "bloom leaf root"):
        assert _search(store, query, 10, weights) == _full(store, query, 10, weights)


def test_top_k_reads_part_of_the_lists(pg_cairn: Any) -> None:
    """A one-word query stops long before the end of its list (client loop)."""
    from cairn.store.postgres import search

    store = pg_cairn.store
    read: list[int] = []
    real = store.db.execute

    def counting(sql: str, params: Any = ()) -> Any:
        cur = real(sql, params)
        if "fts_postings" in sql:
            read.append(cur.rowcount)
        return cur

    df = int(store.db.execute("SELECT df FROM fts_lex WHERE lex = 'basil'").fetchone()[0])
    store.db.execute = counting
    saved = search.TOPK_SERVER
    search.TOPK_SERVER = False
    try:
        hits = store.search_text(parse_query("basil").for_store(), limit=5, weights=_WEIGHTS)
    finally:
        del store.db.execute
        search.TOPK_SERVER = saved
    assert len(hits) == 5
    assert read and read[0] == topk.FIRST_BLOCK
    assert sum(read) < df / 2, (read, df)


def test_the_server_function_reads_part_of_the_lists(pg_cairn: Any) -> None:
    """The server function reads the same first block and stops as early, in one
    statement, with the client loop's result."""
    from cairn.store.postgres import search

    store = pg_cairn.store
    df = int(store.db.execute("SELECT df FROM fts_lex WHERE lex = 'basil'").fetchone()[0])
    statements: list[str] = []
    real = store.db.execute

    def counting(sql: str, params: Any = ()) -> Any:
        statements.append(sql)
        return real(sql, params)

    store.db.execute = counting
    try:
        hits = store.search_text(parse_query("basil").for_store(), limit=5, weights=_WEIGHTS)
    finally:
        del store.db.execute
    assert search.TOPK_SERVER
    assert not [s for s in statements if "fts_postings" in s]  # none from the client
    read, first = store.db.topk_read
    assert len(hits) == 5 and first == topk.FIRST_BLOCK and read < df / 2, (read, first, df)
    saved = search.TOPK_SERVER
    search.TOPK_SERVER = False
    try:
        assert store.search_text(parse_query("basil").for_store(), limit=5,
                                 weights=_WEIGHTS) == hits
    finally:
        search.TOPK_SERVER = saved


def test_bound_factor() -> None:
    frozen = (10.0, 4.0, 3.0, 1.0)
    assert topk.bound_factor(frozen, frozen, 50.0, 50.0) == pytest.approx(1.0)
    assert topk.bound_factor((20.0, 4.0, 3.0, 1.0), frozen, 50.0, 50.0) == pytest.approx(2.0)
    assert topk.bound_factor(frozen, frozen, 55.0, 50.0) == pytest.approx(1.1)
    assert topk.bound_factor(frozen, frozen, 45.0, 50.0) == pytest.approx(1.0)
    assert topk.bound_factor((1.0, 1.0, 1.0, 1.0), (0.0, 1.0, 1.0, 1.0), 1, 1) == float("inf")


def test_siblings_in_one_statement(tmp_path: Path, pg_url: str) -> None:
    """``siblings_many`` on PostgreSQL (one statement) gives what ``siblings`` gives
    one unit at a time on SQLite, for every heading of the parity corpus."""
    from tests.store.test_postgres_parity import _notes, _pair

    root = _notes(tmp_path)
    lite, pg = _pair(tmp_path, pg_url)
    try:
        for c in (lite, pg):
            c.index([str(root)])
        rows = lite.store.db.execute(
            "SELECT document_id, parent_id, id FROM units WHERE kind = 'heading'").fetchall()
        keys = [(str(d), None if p is None else str(p), str(u)) for d, p, u in rows]
        assert any(len(lite.store.siblings(*k)) > 0 for k in keys)
        want = {k[2]: lite.store.siblings(*k) for k in keys}
        assert pg.store.siblings_many(keys) == want == lite.store.siblings_many(keys)
        assert pg.store.siblings_many([]) == {}
    finally:
        lite.close()
        pg.close()


@pytest.mark.parametrize("query", ["basil", "garden soil water", "seed path:a/",
                                   "basil -thyme", '"basil thyme"'])
def test_summed_impacts_are_the_exact_scores(pg_cairn: Any, query: str) -> None:
    """The whole-list sum of stored impacts (long queries) ranks and scores as top-k."""
    from cairn.store.postgres import search

    store = pg_cairn.store
    saved = search.TOPK_TERMS, overlap.MAX_TERMS
    search.TOPK_TERMS, overlap.MAX_TERMS = 0, 1
    try:
        summed = _search(store, query, 10, _WEIGHTS)
    finally:
        search.TOPK_TERMS, overlap.MAX_TERMS = saved
    assert summed == _search(store, query, 10, _WEIGHTS)


def _answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records, per call of the overlap-first search, whether it answered (not None)."""
    seen: list[bool] = []
    real = overlap.top_k_overlap

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(overlap, "top_k_overlap", spy)
    return seen


@pytest.mark.parametrize("limit", [1, 5, 20, 200])
def test_overlap_first_is_the_full_ranking(pg_cairn: Any, limit: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries of 2–6 words (common, rare and filler words mixed) give the units and
    scores of scoring every match, and the overlap-first search answers most of them."""
    store = pg_cairn.store
    fillers = [str(r[0]) for r in store.db.execute(
        "SELECT lex FROM fts_lex WHERE lex LIKE 'filler%' ORDER BY lex LIMIT 40")]
    rng = random.Random(limit)
    queries = [" ".join(rng.sample([*_WORDS, *fillers], rng.randint(2, 6))) for _ in range(30)]
    queries += ["basil thyme", "tomato bloom", "basil filler1 filler2"]
    answered = _answered(monkeypatch)
    for q in queries:
        assert _search(store, q, limit, _WEIGHTS) == _full(store, q, limit, _WEIGHTS), q
    assert len(answered) >= len(queries) and sum(answered) >= len(queries) // 2, answered


def test_overlap_first_with_tied_impacts(tmp_path: Path, pg_server_url: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes of the same few words tie in impact by the hundred: the order among ties
    (rowid ascending) is the full read's, whichever way the lists are cut."""

    root = tmp_path / "ties"
    root.mkdir()
    texts = ["alpha gamma", "beta gamma", "alpha", "beta", "alpha beta", "gamma delta"]
    for i in range(240):
        (root / f"t{i:03}.md").write_text(texts[i % len(texts)] + "\n", encoding="utf-8")
    with _indexed(pg_server_url, root, tmp_path, "ties") as c:
            settled: list[bool] = []
            real = overlap._settle

            def spy(*args: Any) -> Any:
                out = real(*args)
                settled.append(out is not None)
                return out

            monkeypatch.setattr(overlap, "_settle", spy)
            for q in ("alpha beta", "alpha gamma", "beta delta", "alpha beta gamma delta"):
                for limit in (1, 3, 10, 50, 100):
                    got = _search(c.store, q, limit, _WEIGHTS)
                    assert got == _full(c.store, q, limit, _WEIGHTS), (q, limit)
                    assert len(got) == limit
            assert any(settled) and not all(settled)  # some cuts fell inside a tie


@pytest.mark.parametrize("limit", [1, 10, 100])
def test_overlap_with_a_common_word(pg_cairn: Any, limit: int) -> None:
    """A word in most units beside rare ones: its list is read at the head only and its
    share added to the few units that could still rank (the statement with ``thr``);
    the result is the full read's. With the candidate cap at 0 the common list is read
    too, with the same result, and the statement that found too many candidates scored
    none of them (no vector read for an answer it then throws away)."""
    store = pg_cairn.store
    rows = store.db.execute(
        "SELECT lex, df FROM fts_lex WHERE lex LIKE 'filler%' AND df BETWEEN 2 AND 6 "
        "ORDER BY lex LIMIT 12").fetchall()
    fillers = [str(r[0]) for r in rows]
    basil = int(store.db.execute("SELECT df FROM fts_lex WHERE lex = 'basil'").fetchone()[0])
    assert basil > overlap.COMMON * 3 * 6  # basil is common beside any two fillers
    queries = [f"basil {a} {b}" for a, b in zip(fillers[::2], fillers[1::2], strict=True)]
    capped: list[list[Any]] = []  # the rows of each common-word statement
    real = store.db.execute

    class Rows:
        def __init__(self, rows: list[Any]) -> None:
            self.rows = rows

        def fetchall(self) -> list[Any]:
            return self.rows

    def spy(sql: str, params: Any = ()) -> Any:
        if "thr AS" not in sql:
            return real(sql, params)
        rows = real(sql, params).fetchall()
        capped.append(rows)
        return Rows(rows)

    store.db.execute = spy
    try:
        for q in queries:
            assert _search(store, q, limit, _WEIGHTS) == _full(store, q, limit, _WEIGHTS), q
        common = len(capped)
        assert any(int(r[0]) == 0 for rows in capped for r in rows)  # scored under the cap
        capped.clear()
        saved = overlap.MAX_CANDIDATES
        overlap.MAX_CANDIDATES = 0
        try:
            for q in queries:
                assert _search(store, q, limit, _WEIGHTS) == _full(store, q, limit, _WEIGHTS)
        finally:
            overlap.MAX_CANDIDATES = saved
    finally:
        del store.db.execute
    assert common >= len(queries) == 6
    assert len(capped) >= len(queries)
    for rows in capped:  # over the cap: counted (the -1 row), none scored (list 0)
        assert any(int(r[0]) == -1 and int(r[1]) > 0 for r in rows)
        assert not any(int(r[0]) == 0 for r in rows)


def test_a_common_word_lifts_units_past_the_cut(tmp_path: Path, pg_server_url: str) -> None:
    """Units holding a rare word once, longer ones (so lower on it) with more of a
    common word: the common word's share lifts long units above shorter ones, past
    the ``n``-th best on the rare word alone, and they are found."""

    root = tmp_path / "lift"
    root.mkdir()
    for i in range(40):
        extra = " ".join(f"w{i}x{j}" for j in range(20 + i // 8))
        zeta = " ".join(["zeta"] * (1 + i))
        (root / f"r{i:02}.md").write_text(f"rho {zeta} {extra}\n", encoding="utf-8")
    for i in range(400):
        (root / f"z{i:03}.md").write_text(("zeta " if i % 5 else "") + f"plain{i}\n",
                                          encoding="utf-8")
    with _indexed(pg_server_url, root, tmp_path, "lift") as c:
            for limit in (1, 3, 10):
                got = _search(c.store, "rho zeta", limit, _WEIGHTS)
                assert got == _full(c.store, "rho zeta", limit, _WEIGHTS), limit


def test_overlap_literal_quotes_every_lexeme(pg_cairn: Any) -> None:
    """Lexemes holding tsquery syntax (quotes, backslashes, operators, spaces) are
    matched as themselves: two of them or more, never one."""
    odd = ["o'neil", "a\\b", "x & y", "é!|(", ":*"]
    lit = overlap.ts_literal(odd)
    db = pg_cairn.store.db
    for have, want in ((odd[:2], True), (odd[2:4], True), (odd[4:], False), ([], False),
                       (["o", "neil", "a", "b"], False)):
        row = db.execute("SELECT array_to_tsvector(?::text[]) @@ ?::tsquery",
                         (have, lit)).fetchone()
        assert bool(row[0]) is want, (have, lit)
    with pytest.raises(ValueError):
        overlap.ts_literal(["one"])


def test_overlap_settles_only_when_nothing_unread_can_enter() -> None:
    """The stop rule: a list cut at the answer's score (a tie) or an overlap cut
    before the answer's last unit is not exact; read lists and lower cuts are."""
    n = 3
    # (list, rowid, unit id, score, passes, in the overlap)
    overlap_rows = [(0, 7, "u7", 9.0, True, True), (0, 8, "u8", 8.0, True, True)]
    head = [(1, 1, "u1", 5.0, True, False), (1, 2, "u2", 4.0, True, False),
            (1, 3, "u3", 3.0, True, False)]
    assert overlap._settle(overlap_rows + head, 1, n, 2) == [("u7", 9.0), ("u8", 8.0)]
    # a list cut at 8.0: an unread posting may tie the second answer with a lower rowid
    tie = [(1, 1, "u1", 8.0, True, False), (1, 2, "u2", 8.0, True, False),
           (1, 3, "u3", 8.0, True, False)]
    assert overlap._settle(overlap_rows + tie, 1, n, 3) is None
    # the same list read whole (fewer rows than asked): exact
    assert overlap._settle(overlap_rows + tie[:2], 1, n, 3) == [
        ("u7", 9.0), ("u1", 8.0), ("u2", 8.0)]
    # an overlap cut at its 3rd row: an answer reaching past it is not exact, one
    # ending on it is (unread overlap units come after it)
    cut = [*overlap_rows, (0, 9, "u9", 7.0, True, True)]
    low = [(1, 1, "u1", 0.5, True, False)]
    assert overlap._settle(cut + low, 1, n, 4) is None
    assert overlap._settle(cut + low, 1, n, 3) == [("u7", 9.0), ("u8", 8.0), ("u9", 7.0)]
    # a unit failing the check (an alternate) is left out; one in the overlap counts once
    rows = [*overlap_rows, (1, 7, "u7", 2.0, True, True), (1, 5, "u5", 6.0, False, False)]
    assert overlap._settle(rows, 1, n, 3) == [("u7", 9.0), ("u8", 8.0)]
