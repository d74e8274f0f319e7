"""The PostgreSQL backend against the SQLite one: the same files indexed into both give
the same documents, units, links and edges, and the same answers.

Every test runs against a real PostgreSQL server (see ``conftest.py``) and a real
SQLite file; nothing is mocked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config, load_config
from cairn.errors import ConfigError
from cairn.store import open_store, open_url

pytestmark = pytest.mark.postgres

ORG = """\
#+TITLE: Projects
#+FILETAGS: :work:

* TODO [#A] Write the budget report :finance:
  DEADLINE: <2024-06-01 Sat>
  :PROPERTIES:
  :ID: 0b6a1d3e-2f0c-4c38-9a54-5b1f6c1b2a01
  :OWNER: Alice
  :END:
  The budget covers hardware and travel. See [[id:0b6a1d3e-2f0c-4c38-9a54-5b1f6c1b2a02][Travel]].
* DONE Travel :trip:
  CLOSED: [2024-05-02 Thu 10:00]
  :PROPERTIES:
  :ID: 0b6a1d3e-2f0c-4c38-9a54-5b1f6c1b2a02
  :END:
  Flights to Lisbon, 100% refundable; the café near the venue.
** Clocking Work Time
   Time spent on the trip, clocked per day.
"""

MD_A = """\
---
title: Gardening
tags: [plants, home]
author: "[[Bob]]"
---
# Gardening

Tomatoes need sun. See [[Watering#Mornings]] and [[Missing note]].

## Soil
Loam with compost; pH 6.5.
"""

MD_B = """\
# Watering

## Mornings
Water the tomatoes early. #plants

![[Gardening]]
"""

MD_C = """\
# 東京の庭

CSSはHTMLと一緒に使う。庭の手入れ。
"""


def _notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "vault").mkdir(parents=True)
    (root / "org").mkdir()
    (root / "org" / "projects.org").write_text(ORG, encoding="utf-8")
    (root / "vault" / "Gardening.md").write_text(MD_A, encoding="utf-8")
    (root / "vault" / "Watering.md").write_text(MD_B, encoding="utf-8")
    (root / "vault" / "tokyo.md").write_text(MD_C, encoding="utf-8")
    return root


def _pair(tmp_path: Path, pg_url: str) -> tuple[Cairn, Cairn]:
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    return lite, pg


def _snapshot(c: Cairn) -> dict[str, Any]:
    """Everything the index holds about the files, as comparable values."""
    store = c.store
    docs: list[Any] = []
    units: list[Any] = []
    for root in sorted(store.roots(), key=lambda r: r.path):
        for d in sorted(store.documents_of_root(root.id), key=lambda d: d.path):
            docs.append((d.id, d.path, d.format, d.title, d.tags, d.content_hash))
            for u in store.units_of(d.id):
                units.append((u.id, u.kind, u.title, u.outline_path, u.body, u.tags,
                              u.todo, u.priority, u.line_start, u.line_end))
    links = sorted((lk.unit_id, lk.ordinal, lk.kind, lk.target, lk.resolved_document_id,
                    lk.resolved_unit_id, lk.unresolved_reason) for lk in store.links_from())
    edges = sorted((e.id, e.source, e.target, e.relation, e.origin, round(e.weight, 6),
                    e.count) for e in store.edges.all_edges())
    counts = {k: v for k, v in store.counts().items() if k != "formats"}
    return {"documents": docs, "units": units, "links": links, "edges": edges,
            "counts": counts}


QUERIES = [
    "budget",
    "tomatoes sun",
    '"clocking work time"',
    "refundable",
    "café",
    "tag:plants",
    "tag:work todo:TODO",
    "prop:OWNER=alice",
    "path:vault/",
    "path:*.org",
    "tomatoes -soil",
    "東京",
    "手入れ",
    "CSS",
    "format:org budget",
    "-tomatoes",
]


def test_same_index_and_same_answers(tmp_path: Path, pg_url: str) -> None:
    root = _notes(tmp_path)
    lite, pg = _pair(tmp_path, pg_url)
    try:
        run_l, run_p = lite.index([str(root)]), pg.index([str(root)])
        assert (run_l.added, run_l.failed) == (run_p.added, run_p.failed) == (4, 0)
        snap_l, snap_p = _snapshot(lite), _snapshot(pg)
        for key in snap_l:
            assert snap_p[key] == snap_l[key], key
        assert snap_l["edges"] and snap_l["links"]
        for q in QUERIES:
            hits_l = {h.unit_id for h in lite.search(q, limit=50).hits}
            hits_p = {h.unit_id for h in pg.search(q, limit=50).hits}
            assert hits_p == hits_l, q
            if q in ("budget", "tag:plants", '"clocking work time"', "東京", "prop:OWNER=alice"):
                assert hits_l, q
        # the exact heading ranks first in both (weights: title over body)
        top_l = lite.search('"clocking work time"', limit=3).hits[0].title
        top_p = pg.search('"clocking work time"', limit=3).hits[0].title
        assert top_l == top_p == "Clocking Work Time"
    finally:
        lite.close()
        pg.close()


def test_incremental_change_and_removal(tmp_path: Path, pg_url: str) -> None:
    root = _notes(tmp_path)
    lite, pg = _pair(tmp_path, pg_url)
    try:
        for c in (lite, pg):
            c.index([str(root)])
        (root / "vault" / "Watering.md").write_text(MD_B.replace("early", "at dawn"), "utf-8")
        (root / "vault" / "tokyo.md").unlink()
        (root / "vault" / "Missing note.md").write_text("# Missing note\nnow here\n", "utf-8")
        runs = [c.index([str(root)]) for c in (lite, pg)]
        assert [(r.changed, r.removed, r.added) for r in runs] == [(1, 1, 1)] * 2
        assert _snapshot(pg) == _snapshot(lite)
        assert {h.title for h in pg.search("dawn").hits} == {"Mornings"}
        assert not pg.search("early").hits
        assert pg.store.integrity_check() == []
    finally:
        lite.close()
        pg.close()


def test_vectors_and_semantic_search(tmp_path: Path, pg_url: str) -> None:
    """The shipped static model embeds into both; semantic hits are identical."""
    root = _notes(tmp_path)
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "static"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    try:
        for c in (lite, pg):
            c.index([str(root)])
        assert pg.store.vectors.counts() == lite.store.vectors.counts()
        for q in ("watering plants in the morning", "travel to Portugal"):
            for mode in ("semantic", "hybrid"):
                a = [h.unit_id for h in lite.search(q, mode=mode, limit=5).hits]
                b = [h.unit_id for h in pg.search(q, mode=mode, limit=5).hits]
                if mode == "semantic":
                    assert a == b, (q, mode)
                else:
                    assert set(a) == set(b), (q, mode)
    finally:
        lite.close()
        pg.close()


def test_hybrid_lists_side_by_side(tmp_path: Path, pg_url: str) -> None:
    """On PostgreSQL hybrid search's semantic list runs on a side thread while the
    caller runs the keyword list, with the hits of running both in the caller (all side
    threads taken); on SQLite both run in the caller."""
    import threading

    from cairn.search import rank

    root = _notes(tmp_path)
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "static"})
    lite = Cairn(cfg, store=open_store(tmp_path / "index.db"))
    pg = Cairn(cfg, store=open_url(pg_url))
    where: list[str] = []
    real = rank.Ranker._semantic

    def spy(self: Any, *args: Any) -> Any:
        where.append(threading.current_thread().name)
        return real(self, *args)

    rank.Ranker._semantic = spy  # type: ignore[method-assign]
    try:
        for c in (lite, pg):
            c.index([str(root)])
        queries = ("watering plants in the morning", "travel to Portugal", "tomato")
        side = [[(h.unit_id, h.score) for h in pg.search(q, mode="hybrid", limit=5).hits]
                for q in queries]
        assert where and all(w.startswith("cairn-side") for w in where), where
        where.clear()
        for _ in range(rank.SIDE_WORKERS):  # every side thread taken: the caller runs both
            assert rank._side_slots.acquire(blocking=False)
        try:
            inline = [[(h.unit_id, h.score) for h in pg.search(q, mode="hybrid",
                                                                limit=5).hits]
                      for q in queries]
        finally:
            for _ in range(rank.SIDE_WORKERS):
                rank._side_slots.release()
        assert inline == side and all(side)
        assert where == [threading.current_thread().name] * len(queries)
        where.clear()
        lite.search("tomato", mode="hybrid", limit=5)
        assert where == [threading.current_thread().name]
    finally:
        rank.Ranker._semantic = real  # type: ignore[method-assign]
        lite.close()
        pg.close()


def test_two_writers_never_interleave(tmp_path: Path, pg_url: str) -> None:
    """A second indexer is refused while the first holds the run lock."""
    from cairn.store.lock import IndexBusy

    root = _notes(tmp_path)
    cfg = Config(db_path=tmp_path / "index.db", embed={"provider": "none"})
    first, second = Cairn(cfg, store=open_url(pg_url)), Cairn(cfg, store=open_url(pg_url))
    try:
        with first.writer_lock.hold(), pytest.raises(IndexBusy, match="another cairn process"):
            second.writer_lock.acquire(wait=0.3)
        second.index([str(root)])  # free again
        assert second.store.counts()["documents"] == 4
    finally:
        first.close()
        second.close()


def test_config_selects_the_backend(tmp_path: Path, pg_url: str) -> None:
    toml = tmp_path / "cairn.toml"
    toml.write_text(f'[store]\nbackend = "postgres"\nurl = "{pg_url}"\n', encoding="utf-8")
    cfg = load_config(config_file=toml, env={})
    assert cfg.db_url == pg_url
    c = Cairn(cfg)
    try:
        c.index([str(_notes(tmp_path))])
        status = c.stats()
        assert status.index.startswith("postgresql://") and status.documents == 4
    finally:
        c.close()
    assert load_config(env={"CAIRN_DB_URL": pg_url}).db_url == pg_url
    assert load_config(db=str(tmp_path / "x.db"), env={"CAIRN_DB_URL": pg_url}).db_url is None
    bad = tmp_path / "bad.toml"
    bad.write_text('[store]\nbackend = "postgres"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="needs url"):
        load_config(config_file=bad, env={})


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from cairn.errors import StoreError

    shown = r"postgresql://cairn:\*\*\*@127\.0\.0\.1:1/x: cannot connect"
    with pytest.raises(StoreError, match=shown):
        open_url("postgresql://cairn:secret@127.0.0.1:1/x")


@pytest.mark.corpus
def test_parity_on_the_shared_corpus(tmp_path: Path, pg_url: str, corpus: Path) -> None:
    """The real Obsidian help vault and the org-roam manual: same index, same hits."""
    lite, pg = _pair(tmp_path, pg_url)
    roots = [str(corpus / "markdown" / "obsidian-help-NO-LICENCE"),
             str(corpus / "org" / "org-roam")]
    try:
        for c in (lite, pg):
            c.index(roots)
        assert _snapshot(pg) == _snapshot(lite)
        overlaps = []
        for q in ("canvas cards", "backlinks", "tag:#7", "graph view filters", "org-roam-node",
                  "capture template", "path:*.org", "sync settings -mobile"):
            a = [h.unit_id for h in lite.search(q, limit=10).hits]
            b = [h.unit_id for h in pg.search(q, limit=10).hits]
            overlaps.append(1.0 if not a and not b else len(set(a) & set(b)) / max(1, len(a)))
        print("top-10 overlap per query:", [round(x, 2) for x in overlaps])
        assert sum(overlaps) / len(overlaps) >= 0.5, overlaps
    finally:
        lite.close()
        pg.close()


def test_store_copy_both_ways(tmp_path: Path, pg_url: str) -> None:
    """SQLite → PostgreSQL → SQLite keeps every row, vectors included; searching the
    copies needs no re-indexing and finds the same."""
    import subprocess
    import sys

    root = _notes(tmp_path)
    cfg = Config(db_path=tmp_path / "a.db", embed={"provider": "static"})
    with Cairn(cfg, store=open_store(tmp_path / "a.db")) as a:
        a.index([str(root)])
        before = _snapshot(a)
        vec_before = a.store.vectors.counts()
        sem_before = [h.unit_id for h in a.search("morning watering", mode="semantic").hits]
    env = {**__import__("os").environ, "CAIRN_EMBED": "static"}
    done = subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(tmp_path / "a.db"),
         "store", "copy", "--to", pg_url, "--json"],
        capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    import json

    report = json.loads(done.stdout)
    assert report["rows"]["units"] == len(before["units"]) and report["rows"]["embeddings"] > 0
    assert "***" in report["target"] or "@" not in report["target"]
    with Cairn(cfg, store=open_url(pg_url)) as pg:
        assert _snapshot(pg) == before
        assert pg.store.vectors.counts() == vec_before
        sem = [h.unit_id for h in pg.search("morning watering", mode="semantic").hits]
        assert sem == sem_before
        back = tmp_path / "b.db"
        report2 = pg.storage.copy(str(back))
        assert report2.rows["units"] == len(before["units"])
        assert report2.rows["embeddings"] == report["rows"]["embeddings"]
        # copying into a non-empty index is refused
        from cairn.errors import StoreError

        with pytest.raises(StoreError, match="already holds an index"):
            pg.storage.copy(str(back))
    with Cairn(cfg, store=open_store(back)) as b:
        assert _snapshot(b) == before
        run = b.index([str(root)])  # nothing to do: every file is known unchanged
        assert (run.unchanged, run.added, run.changed) == (4, 0, 0)
        assert _snapshot(b) == before


DATED = """\
* TODO Pay rent
  SCHEDULED: <2024-06-03 Mon +1m>
* TODO File taxes
  DEADLINE: <2024-06-20 Thu -5d>
* Conference
  <2024-07-01 Mon>--<2024-07-03 Wed>
* Notes from the call
  [2024-05-12 Sun]
* DONE Old task
  CLOSED: [2023-12-30 Sat 09:00]
"""

DATE_QUERIES = [
    "deadline:2024-06", "deadline:2024-06-01..2024-06-10", "scheduled:2024-08",
    "scheduled:2024-06-03", "closed:2023", "closed:2024", "ts:2024-07-02",
    "ts:2024-07", "ts-inactive:2024-05", "-deadline:2024-06 todo:TODO", "scheduled:soon",
    "deadline:soon", "rent scheduled:2024-09",
]


def test_must_match_and_date_filters(tmp_path: Path, pg_url: str) -> None:
    """``+word`` and the date filters (repeaters, warning delays, ranges, ``soon``)
    match the same units on PostgreSQL as on SQLite."""
    root = _notes(tmp_path)
    (root / "org" / "dated.org").write_text(DATED, encoding="utf-8")
    lite, pg = _pair(tmp_path, pg_url)
    try:
        for c in (lite, pg):
            c.index([str(root)])
        for q in ("+tomatoes sun", '+"side shoots" soil', "+budget -travel"):
            assert ({h.unit_id for h in pg.search(q, limit=50).hits}
                    == {h.unit_id for h in lite.search(q, limit=50).hits}), q
        assert pg.search("+tomatoes", limit=50).hits
        matched = 0
        for q in DATE_QUERIES:
            want = {h.unit_id for h in lite.search(q, limit=50).hits}
            assert {h.unit_id for h in pg.search(q, limit=50).hits} == want, q
            matched += bool(want)
        assert matched >= 9  # the queries are not vacuous
    finally:
        lite.close()
        pg.close()


def test_connections_are_pooled_and_closed(tmp_path: Path, pg_url: str) -> None:
    """Threads borrow pooled connections and give them back when they end; ``close``
    closes them all (the server sees none left)."""
    import gc
    import threading
    import time

    import psycopg

    from cairn.errors import StoreError

    probe = "application_name <> 'cairn-test-probe'"  # this test's own connections

    def backends() -> int:
        with psycopg.connect(pg_url, autocommit=True,
                             application_name="cairn-test-probe") as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                               f"current_database() AND {probe}").fetchone()
        return int(row[0]) if row else 0

    store = open_url(pg_url)
    c = Cairn(Config(db_path=tmp_path / "x.db", embed={"provider": "none"}), store=store)
    c.index([str(_notes(tmp_path))])
    for _ in range(3):  # twelve short-lived threads, four at a time
        threads = [threading.Thread(target=lambda: store.counts()) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    gc.collect()
    assert store.open_connections() <= 6  # reused, not one per thread
    assert backends() >= 1
    c.close()
    deadline = time.monotonic() + 30  # a backend's exit is seen a moment later
    while backends() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert backends() == 0
    with pytest.raises(StoreError, match="closed"):
        store.counts()


def test_every_connection_plans_for_its_parameters(tmp_path: Path, pg_url: str) -> None:
    """Generic plans (the server's choice for a statement psycopg has prepared) are
    off on every connection the store opens, pooled or direct: a search statement's
    best plan depends on its words' list sizes."""
    import threading

    store = open_url(pg_url)
    seen: list[str] = []

    def look() -> None:
        seen.append(str(store.db.execute("SHOW plan_cache_mode").fetchone()[0]))

    look()
    t = threading.Thread(target=look)  # a second thread: a second pooled connection
    t.start()
    t.join()
    direct = store._connect()  # type: ignore[attr-defined]
    seen.append(str(direct.execute("SHOW plan_cache_mode").fetchone()[0]))
    direct.close()
    store.close()
    assert seen == ["force_custom_plan"] * 3
