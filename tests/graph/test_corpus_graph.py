"""The graph on the shared corpus (Markdown, Org and OKF parts).

* every wikilink, embed, Markdown and Org link (every non-URL row of ``links``) is in
  exactly one declared edge, at the target its resolution names;
* re-indexing creates no duplicate edges, and the incremental update gives exactly the
  graph a rebuild from scratch gives;
* deleting a note removes its outgoing edges and turns links into it into unresolved
  ones; renaming a note with an org ``ID`` keeps every ``id:`` edge resolved;
* backlink counts of a few obsidian-help notes match an independent count made here
  with regular expressions over the files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")

from cairn.app import Cairn
from cairn.export.graph import render
from cairn.graph.service import GraphService

pytestmark = pytest.mark.corpus

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
HELP = CORPUS / "markdown" / "obsidian-help-NO-LICENCE"
BRAINDUMP = CORPUS / "org" / "braindump-NO-LICENCE" / "org" / "reference"


@pytest.fixture(scope="module")
def corpus_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cairn, GraphService]]:
    db = tmp_path_factory.mktemp("corpus") / "index.db"
    c = Cairn.open(db=db)
    c.index([CORPUS / "markdown", CORPUS / "org", CORPUS / "okf"])
    g = GraphService(c.store, renderer=render)
    g.update()
    yield c, g
    c.close()


def _snapshot(c: Cairn) -> dict[str, tuple[Any, ...]]:
    return {
        r[0]: tuple(r[1:])
        for r in c.store.db.execute(
            "SELECT id, source, target, relation, origin, weight, count, links, evidence "
            "FROM edges")
    }


def test_every_link_is_in_exactly_one_declared_edge(corpus_graph: Any) -> None:
    c, _g = corpus_graph
    db = c.store.db
    links = db.execute(
        "SELECT l.unit_id, l.raw, l.line, l.kind, l.resolved_document_id, l.resolved_unit_id, "
        "l.unresolved_reason, (SELECT id FROM units f WHERE f.document_id = "
        "l.resolved_document_id AND f.ordinal = 0) AS first FROM links l WHERE l.kind != 'url'"
    ).fetchall()
    assert len(links) > 5000
    kinds = Counter(r["kind"] for r in links)
    assert kinds["wikilink"] > 1000 and kinds["org-id"] > 500 and kinds["org-file"] > 100
    # (source unit, raw, line) of every link occurrence, from the links table …
    want = Counter((r["unit_id"], r["raw"], r["line"]) for r in links)
    # … and from the evidence of the declared edges, with the edge it sits in
    got: Counter[tuple[str, str, int]] = Counter()
    where: dict[tuple[str, str, int], str] = {}

    total_links = truncated = 0
    for eid, src, tgt, rel, n_links, evidence in db.execute(
        "SELECT id, source, target, relation, links, evidence FROM edges "
        "WHERE origin='declared'"
    ):
        ev = [e for e in json.loads(evidence) if e.get("via") == "link"]
        total_links += n_links
        if n_links <= 50:  # evidence keeps 50 items
            assert len(ev) == n_links, eid
        else:
            truncated += 1
        for e in ev:
            key = (src, e["raw"], e["line"])
            got[key] += 1
            where[key] = tgt if rel != "unresolved" else "stub"
    assert total_links == len(links)
    assert truncated == 0  # no edge merges more than 50 links here, so evidence is whole
    assert got == want
    # the edge sits at the target the link resolves to (its unit, or the note's first)
    for r in links:
        key = (r["unit_id"], r["raw"], r["line"])
        if r["resolved_document_id"]:
            assert where[key] == (r["resolved_unit_id"] or r["first"]), key
        elif not (r["unresolved_reason"] or "").startswith("attachment"):
            assert where[key] == "stub", key


def _independent_backlinks(name: str) -> set[str]:
    """Files of the obsidian-help vault linking to note ``name`` (wikilinks, embeds and
    Markdown links outside code; any folder prefix; not the note itself; no URLs)."""
    out: set[str] = set()
    for p in HELP.rglob("*.md"):
        if p.stem.casefold() == name:
            continue
        text = p.read_text(encoding="utf-8")
        text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
        text = re.sub(r"`[^`\n]*`", "", text)
        targets = [m.group(1) for m in re.finditer(r"!?\[\[([^\]|#\n]*)[^\]\n]*\]\]", text)]
        targets += [unquote(m.group(1)).split("#")[0]
                    for m in re.finditer(r"\]\(<?([^)\s>]+)>?\)", text)
                    if "://" not in m.group(1)]
        for t in targets:
            if t.strip().casefold().removesuffix(".md").split("/")[-1] == name:
                out.add(p.relative_to(HELP.parent).as_posix())
    return out


@pytest.mark.parametrize("rel", [
    "en/Plugins/Command palette.md",
    "en/Plugins/Core plugins.md",
    "en/Plugins/Graph view.md",
    "en/User interface/Settings.md",
])
def test_obsidian_help_backlink_counts(corpus_graph: Any, rel: str) -> None:
    _c, g = corpus_graph
    name = Path(rel).stem.casefold()
    assert len(list(HELP.rglob(Path(rel).name))) == 1  # the name is unique in the vault
    bl = g.backlinks(str(HELP / rel))
    sources = {b["source"]["path"] for b in bl["backlinks"]}
    expected = _independent_backlinks(name)
    assert len(expected) >= 10
    assert sources == expected
    assert bl["sources"] == len(expected)


def test_reindex_creates_no_duplicates_and_matches_a_rebuild(corpus_graph: Any) -> None:
    c, g = corpus_graph
    before = _snapshot(c)
    run = c.index()
    assert run.added == run.changed == run.removed == 0
    rep = g.update()
    assert rep.written.get("declared", 0) == 0 and rep.deleted.get("declared", 0) == 0
    assert _snapshot(c) == before
    g.rebuild()
    assert _snapshot(c) == before


@pytest.fixture
def braindump(tmp_path: Path) -> Iterator[tuple[Path, Cairn, GraphService]]:
    root = tmp_path / "reference"
    shutil.copytree(BRAINDUMP, root)
    for p in [root, *root.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    c = Cairn.open(db=tmp_path / "index.db")
    c.index([root])
    g = GraphService(c.store, renderer=render)
    g.update()
    yield root, c, g
    c.close()


def _id_edges(c: Cairn) -> dict[tuple[str, str, str, int], tuple[str, str]]:
    """``(source path, source title, raw, line) -> (relation, target unit)`` for every
    id: link occurrence (keyed by path, not unit id: a renamed file's units get new
    path-based ids)."""

    out: dict[tuple[str, str, str, int], tuple[str, str]] = {}
    for path, title, rel, tgt, ev in c.store.db.execute(
        "SELECT d.path, u.title, e.relation, e.target, e.evidence FROM edges e "
        "JOIN units u ON u.id = e.source JOIN documents d ON d.id = u.document_id "
        "WHERE e.origin='declared'"
    ):
        for e in json.loads(ev):
            if e.get("kind") == "org-id":
                out[(path, title, e["raw"], e["line"])] = (rel, tgt)
    return out


def test_deleting_a_note(braindump: Any) -> None:
    root, c, g = braindump
    victim = "spiking_neurons_lit_review.org"
    (doc,) = c.store.documents_at(c.roots()[0].id, victim)
    db = c.store.db
    out_before = db.execute("SELECT count(*) FROM edges WHERE origin='declared' AND "
                            "source_document_id=?", (doc.id,)).fetchone()[0]
    assert out_before > 0
    incoming = {b["source"]["id"] for b in g.backlinks(victim)["backlinks"]}
    assert len(incoming) >= 10
    (root / victim).unlink()
    c.index([root])
    g.update()
    assert db.execute("SELECT count(*) FROM edges WHERE source_document_id=? OR "
                      "target_document_id=?", (doc.id, doc.id)).fetchone()[0] == 0
    # every former backlink now points at a stub, with the reason
    stubs = {
        src: (tgt, json_reason)
        for src, tgt, json_reason in db.execute(
            "SELECT source, target, evidence FROM edges WHERE relation='unresolved'")
    }
    for src in incoming:
        assert src in stubs
        assert stubs[src][0].startswith("stub:")
        assert "no heading or file has ID" in stubs[src][1]
    stub_ids = {stubs[s][0] for s in incoming}
    wanting = {b["source"]["id"] for s in stub_ids for b in g.backlinks(s)["backlinks"]}
    assert incoming <= wanting


def test_renaming_a_note_with_an_org_id_keeps_id_edges_resolved(braindump: Any) -> None:
    root, c, g = braindump
    old = "reinforcement_learning.org"
    before = _id_edges(c)
    unresolved_before = {k for k, (rel, _t) in before.items() if rel == "unresolved"}
    linked = [k for k, (rel, t) in before.items() if rel != "unresolved"
              and c.store.unit(t) is not None
              and c.store.document(c.store.unit(t).document_id).path == old]  # type: ignore[union-attr]
    assert len(linked) >= 10
    (root / old).rename(root / "rl_renamed.org")
    run = c.index([root])
    assert (run.added, run.removed) == (1, 1)
    g.update()
    after = _id_edges(c)
    moved = {("rl_renamed.org" if k[0] == old else k[0], *k[1:]): v for k, v in before.items()}
    assert set(after) == set(moved)
    unresolved_before = {k for k in moved if moved[k][0] == "unresolved"}
    linked = [("rl_renamed.org" if k[0] == old else k[0], *k[1:]) for k in linked]
    assert {k for k, (rel, _t) in after.items() if rel == "unresolved"} == unresolved_before
    for k in linked:
        rel, tgt = after[k]
        assert rel != "unresolved"
        unit = c.store.unit(tgt)
        assert c.store.document(unit.document_id).path == "rl_renamed.org"
        link_id = re.match(r"\[\[id:([^\]]+)\]", k[2]).group(1)  # type: ignore[union-attr]
        doc = c.store.document(unit.document_id)
        assert link_id in (unit.org_id, doc.declared_id)
