"""The compact index: structural edges derived from the units (never stored), the FTS5
table without a copy of the units' text, and the in-place upgrade of an index built by
the previous schema.

``data/v3-small.db`` is an index of :data:`FILES` built by cairn at commit d20c05c
(schema version 3, graph component version 2: structural edges stored, FTS5 with its
own content table); ``data/v3-small-answers.json`` holds that cairn's answers to
:func:`answers` on it. Both were made by ``python tests/store/test_compact_index.py
OUT_DIR`` with that commit's ``src`` on ``PYTHONPATH``. The answers to four searches
(``apollo``, ``beta text``, ``opening note``, ``東京``) were recorded again when a
title-only preamble's place and score went to its document's best other unit (keyword
ranking independent of ``limit``): the same hits, higher scores where a heading took
its preamble's score — the same answers a fresh index of :data:`FILES` gives. Those to
``apollo`` and ``beta text`` were recorded again when query understanding came
(:mod:`cairn.search.understand`): the same hits in the same order, higher scores where a
unit carries a property the query names (``project: Apollo``, ``depends_on: [[Beta]]``);
and again when that boost became the whole best score (``BOOST`` 1.0): higher scores,
and for ``beta text`` the two sections of ``alpha.md``, which carry ``depends_on:
[[Beta]]``, now above the preamble of ``tasks.org``, which only says "text".
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
OLD_ROOT = "/tmp/cairn-v3-fixture/vault"
"""Where the fixture's files were when it was indexed (its root path)."""

FILES: dict[str, str] = {
    "alpha.md": "---\ntags: [garden, rare]\ndepends_on: \"[[Beta]]\"\nrelated: [gamma, Nowhere]\n"
    "project: Apollo\naliases: [First Letter]\ndescription: The opening note\n---\n"
    "# Alpha\n\nSee [[Beta]] and [[beta|again]].\nAlso ![[Gamma#Part two]] and "
    "[[Missing Note]] and [delta](sub/delta.md).\n\n## Section A\n\nBack to [[Gamma]]. "
    "A picture: ![[pic.png]]\n\n## Section B\n\nNothing here, in C++ or C#.\n",
    "beta.md": "---\ntags: [garden]\nproject: apollo\ntype: project\n---\n# Beta\n\nBeta text.\n",
    "gamma.md": "# Gamma\n\n## Part one\n\nOne.\n\n## Part two\n\nTwo.\n\n"
    "```python\nprint('hi')\n```\n",
    "sub/delta.md": "# Delta\n\nLonely, links nowhere. ﬁle ｆｕｌｌ width.\n",
    "cjk.md": "# 東京都の天気\n\nCSSはHTMLと一緒に使う。東京都に住んでいます。\n",
    "tasks.org": "#+title: Tasks\n#+filetags: :rare:\n\nIntro text before the headings.\n\n"
    "* TODO Plan\n:PROPERTIES:\n:ID:       11111111-aaaa-4bbb-8ccc-000000000001\n"
    ":PROJECT:  Apollo\n:END:\n** Step one\nRefers to "
    "[[id:11111111-aaaa-4bbb-8ccc-000000000001][the plan]] and [[*Other]].\n"
    "** Step two\nMore.\n* Other\nLinks [[file:alpha.md][alpha]].\n",
}
QUERIES = ("alpha", "beta text", "東京", "html", "full width", "file", "Cplusplus", "C++",
           "first letter", "opening note", "apollo", "python", "plan -other", "tag:garden",
           "todo:open")


def answers(cairn: Any, root: str) -> dict[str, Any]:
    """What the index answers (graph and keyword search), with ``root`` written as
    ``<root>`` (JSON-ready)."""
    from cairn.model.serialize import to_data

    g = cairn.graph.service
    es = cairn.store.edges
    out: dict[str, Any] = {}
    units = [n for n in es.node_ids() if not n.startswith("stub:")]
    for n in units:
        out[f"neighbors {n}"] = to_data(g.neighbors(n, hops=2))
        out[f"backlinks {n}"] = to_data(g.backlinks(n))
        sub = g.subgraph(n)  # as export data, the shape the stored answers hold
        out[f"subgraph {n}"] = {"directed": True, "nodes": sub.nodes, "edges": sub.edges}
    for a, b in zip(units, units[3:] + units[:3], strict=True):
        out[f"path {a} {b}"] = to_data(g.path(a, b))
    out["stats"] = to_data(g.stats())
    out["orphans"] = to_data(g.orphans())
    out["export"] = json.loads(g.export("json"))
    for q in QUERIES:
        r = to_data(cairn.search(q, mode="keyword", limit=20, explain=True, expand=True))
        r.pop("took_ms", None)
        out[f"search {q}"] = r
    text = json.dumps(out, sort_keys=True, ensure_ascii=False, default=str)
    return dict(json.loads(text.replace(root, "<root>")))


def _tables(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    finally:
        con.close()


def test_an_index_built_by_the_previous_schema_upgrades_in_place_and_answers_the_same(
    tmp_path: Path,
) -> None:
    from cairn.app import Cairn
    from cairn.config import Config

    db = tmp_path / "index.db"
    shutil.copy(DATA / "v3-small.db", db)
    assert "units_fts_content" in _tables(db)  # the old layout: FTS5 kept its own copy
    expected = json.loads((DATA / "v3-small-answers.json").read_text("utf-8"))
    with Cairn(Config(db_path=db)) as c:
        got = answers(c, OLD_ROOT)
        assert c.store.schema_version >= 4
        assert c.store.integrity_check() == []
        n_stored = c.store.db.execute(
            "SELECT count(*) FROM edges WHERE origin = 'structural'").fetchone()[0]
    assert n_stored == 0
    assert "units_fts_content" not in _tables(db)
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        assert _as_recorded(got[key], value) == value, key


def _as_recorded(got: Any, recorded: Any) -> Any:
    """``got`` without the fields added to results since the answers were recorded
    (a new field at its default: ``None``, ``[]``, ``{}``, ``False``), so the comparison is of
    what both have."""
    if isinstance(got, dict) and isinstance(recorded, dict):
        return {k: _as_recorded(v, recorded.get(k)) for k, v in got.items()
                if k in recorded or v not in (None, [], {}, False)}
    if isinstance(got, list) and isinstance(recorded, list) and len(got) == len(recorded):
        return [_as_recorded(g, r) for g, r in zip(got, recorded, strict=True)]
    return got


def test_the_upgraded_index_keeps_working(tmp_path: Path) -> None:
    """After the upgrade a changed file is indexed again: the FTS rows the upgrade
    rebuilt are deleted through the view (no stale word stays findable) and the graph
    follows."""
    from cairn.app import Cairn
    from cairn.config import Config

    db = tmp_path / "index.db"
    shutil.copy(DATA / "v3-small.db", db)
    root = tmp_path / "vault"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    con = sqlite3.connect(db)  # the fixture's root, moved here
    con.execute("UPDATE roots SET path = ?", (str(root),))
    con.commit()
    con.close()
    with Cairn(Config(db_path=db)) as c:
        # the parsers changed since the fixture was made (config.fingerprint's parse
        # version): every file is read again, once; then the same bytes cost nothing
        assert c.index(embed=False).changed == len(FILES)
        assert c.index(embed=False).changed == 0
        assert {h.path for h in c.search('"beta text"', mode="keyword").hits} == {"beta.md"}
        (root / "beta.md").write_text("# Beta\n\nQuokka facts.\n## Later\n\nMore.\n", "utf-8")
        assert c.index(embed=False).changed == 1
        assert c.store.integrity_check() == []
        assert {h.path for h in c.search("quokka", mode="keyword").hits} == {"beta.md"}
        assert not c.search('"beta text"', mode="keyword").hits
        beta = c.graph.resolve(str(root / "beta.md"))
        later = [n for n in c.graph.neighbors(beta.ids[0], hops=2).neighbors
                 if n.node.title == "Later"]
        assert [n.via.relation for n in later] == ["parent"]


def test_derived_structural_edges_are_what_the_builder_makes(tmp_path: Path) -> None:
    from cairn.app import Cairn
    from cairn.config import Config
    from cairn.graph.structural import build_structural, structural_count

    root = tmp_path / "vault"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        es = c.store.edges
        _docs, units = es.graph_sources(None)
        def key(e: Any) -> tuple[Any, ...]:
            return (e.id, e.source, e.target, e.relation, e.source_document_id,
                    e.target_document_id, e.weight, e.count, e.links,
                    json.dumps(list(e.evidence)))

        built = {key(e) for e in build_structural(units)}
        derived = {key(e) for e in es.all_edges(origins=["structural"])}
        assert derived == built and len(built) == structural_count(units) > 10
        stored = c.store.db.execute("SELECT count(*) FROM edges WHERE origin='structural'")
        assert stored.fetchone()[0] == 0
        counts = es.counts()
        assert counts.by_origin["structural"] == len(built)
        assert es.size()[0] == sum(counts.by_relation.values())
        ids = sorted(e[0] for e in built)
        assert set(es.edges_by_ids(ids)) == set(ids)  # ids never met: found all the same


def _make_fixture(out: Path) -> None:
    """Build ``v3-small.db`` and its answers with whatever cairn is importable."""
    from cairn.app import Cairn
    from cairn.config import Config

    root = Path(OLD_ROOT)
    shutil.rmtree(root.parent, ignore_errors=True)
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    db = out / "v3-small.db"
    db.unlink(missing_ok=True)
    with Cairn(Config(db_path=db)) as c:
        c.index([root], embed=False)
        got = answers(c, OLD_ROOT)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("VACUUM")
    con.close()
    (out / "v3-small-answers.json").write_text(
        json.dumps(got, sort_keys=True, ensure_ascii=False, separators=(",", ":")), "utf-8")


if __name__ == "__main__":
    _make_fixture(Path(sys.argv[1]))
