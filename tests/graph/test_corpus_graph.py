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

from _corpus_index import CorpusIndexes

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")

from cairn.app import Cairn
from cairn.export.graph import render
from cairn.graph.service import GraphService
from cairn.redact.fingerprint import index_config_hash

pytestmark = pytest.mark.corpus

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
HELP = CORPUS / "markdown" / "obsidian-help-NO-LICENCE"
BRAINDUMP = CORPUS / "org" / "braindump-NO-LICENCE" / "org" / "reference"


@pytest.fixture(scope="module")
def corpus_graph(corpus_indexes: CorpusIndexes, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[tuple[Cairn, GraphService]]:
    built = corpus_indexes.over([CORPUS / "markdown", CORPUS / "org", CORPUS / "okf"])
    c = Cairn.open(db=built.copy(tmp_path_factory.mktemp("corpus") / "index.db"))
    g = GraphService(c.store, renderer=render)
    g.update()
    yield c, g
    c.close()


def _snapshot(c: Cairn) -> dict[str, tuple[Any, ...]]:
    return {
        e.id: (e.source, e.target, e.relation, e.origin, e.weight, e.count, e.links,
               e.evidence)
        for e in c.store.edges.all_edges()
    }


def test_every_link_is_in_exactly_one_declared_edge(corpus_graph: Any) -> None:
    c, _g = corpus_graph
    links = [lk for lk in c.store.links_from(None) if lk.kind != "url"]
    firsts = c.store.edges.first_units(None)
    assert len(links) > 5000
    kinds = Counter(r.kind for r in links)
    assert kinds["wikilink"] > 1000 and kinds["org-id"] > 500 and kinds["org-file"] > 100
    # (source unit, raw, line) of every link occurrence, from the links table …
    want = Counter((r.unit_id, r.raw, r.line) for r in links)
    # … and from the evidence of the declared edges, with the edge it sits in
    got: Counter[tuple[str, str, int]] = Counter()
    where: dict[tuple[str, str, int], str] = {}

    total_links = truncated = 0
    for edge in c.store.edges.all_edges(origins=["declared"]):
        ev = [e for e in edge.evidence if e.get("via") == "link"]
        total_links += edge.links
        if edge.links <= 50:  # evidence keeps 50 items
            assert len(ev) == edge.links, edge.id
        else:
            truncated += 1
        for e in ev:
            key = (edge.source, e["raw"], e["line"])
            got[key] += 1
            where[key] = edge.target if edge.relation != "unresolved" else "stub"
    assert total_links == len(links)
    assert truncated == 0  # no edge merges more than 50 links here, so evidence is whole
    assert got == want
    # the edge sits at the target the link resolves to (its unit, or the note's first)
    for r in links:
        key = (r.unit_id, r.raw, r.line)
        if r.resolved_document_id:
            assert where[key] == (r.resolved_unit_id or firsts[r.resolved_document_id]), key
        elif not (r.unresolved_reason or "").startswith("attachment"):
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
    sources = {b.source.path for b in bl.backlinks}
    expected = _independent_backlinks(name)
    assert len(expected) >= 10
    assert sources == expected
    assert bl.sources == len(expected)


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
    edges = c.store.edges.all_edges(origins=["declared"])
    nodes = c.store.edges.nodes({e.source for e in edges})
    for edge in edges:
        src = nodes[edge.source]
        for e in edge.evidence:
            if e.get("kind") == "org-id":
                out[(str(src.path), src.title, e["raw"], e["line"])] = (edge.relation,
                                                                        edge.target)
    return out


def test_deleting_a_note(braindump: Any) -> None:
    root, c, g = braindump
    victim = "spiking_neurons_lit_review.org"
    es = c.store.edges
    (doc,) = es.documents_at_path(c.roots()[0].id, victim)
    assert es.edges_of_origin("declared", [doc.id])
    incoming = {b.source.id for b in g.backlinks(victim).backlinks}
    assert len(incoming) >= 10
    (root / victim).unlink()
    c.index([root])
    g.update()
    assert not [e for e in es.all_edges() if doc.id in (e.source_document_id,
                                                         e.target_document_id)]
    # every former backlink now points at a stub, with the reason
    stubs = {e.source: (e.target, json.dumps(e.evidence))
             for e in es.all_edges(relations=["unresolved"])}
    for src in incoming:
        assert src in stubs
        assert stubs[src][0].startswith("stub:")
        assert "no heading or file has ID" in stubs[src][1]
    stub_ids = {stubs[s][0] for s in incoming}
    wanting = {b.source.id for s in stub_ids for b in g.backlinks(s).backlinks}
    assert incoming <= wanting


def test_renaming_a_note_with_an_org_id_keeps_id_edges_resolved(braindump: Any) -> None:
    root, c, g = braindump
    old = "reinforcement_learning.org"
    before = _id_edges(c)
    unresolved_before = {k for k, (rel, _t) in before.items() if rel == "unresolved"}
    es = c.store.edges
    linked = [k for k, (rel, t) in before.items() if rel != "unresolved"
              and t in es.nodes([t]) and es.nodes([t])[t].path == old]
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
        node = es.nodes([tgt])[tgt]
        assert node.path == "rl_renamed.org"
        link_id = re.match(r"\[\[id:([^\]]+)\]", k[2]).group(1)  # type: ignore[union-attr]
        docs, units = c.store.catalog_entries([str(node.document_id)])
        unit = next(u for u in units if u.id == tgt)
        assert link_id in (unit.org_id, docs[0].declared_id)


def _resolution_state(c: Cairn) -> tuple[dict[Any, Any], dict[str, tuple[Any, ...]]]:
    links = {(lk.unit_id, lk.ordinal): (lk.resolved_document_id, lk.resolved_unit_id,
                                        lk.unresolved_reason)
             for lk in c.store.links_from(None)}
    return links, _snapshot(c)


def test_incremental_resolution_on_the_corpus_equals_a_full_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rename, delete, add and edit notes of copies of the braindump (Org) and the
    obsidian-help English vault (Markdown), resolving and updating only what changed;
    after each step a full resolution and rebuild of the same index changes nothing."""
    from cairn.graph.resolve import resolve_all, resolve_links
    from cairn.ingest import pipeline
    from cairn.ingest.pipeline import Indexer

    org, md = tmp_path / "reference", tmp_path / "en"
    shutil.copytree(BRAINDUMP, org)
    shutil.copytree(HELP / "en", md)
    for p in [org, md, *org.rglob("*"), *md.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    c = Cairn.open(db=tmp_path / "index.db")
    c.index([org, md])
    g = GraphService(c.store)
    g.update()
    monkeypatch.setattr(pipeline, "resolve_links", lambda store, changed, removed: 0)
    store = c.store

    def step() -> None:
        Indexer(store, config_hash=index_config_hash(c.config)).run(store.roots())
        changed, removed = store.edges.changed_documents()
        assert changed or removed
        resolve_links(store, changed, removed)
        g.update(changed, removed)
        incremental = _resolution_state(c)
        resolve_all(store)
        g.rebuild()
        assert _resolution_state(c) == incremental

    (org / "reinforcement_learning.org").rename(org / "rl_renamed.org")
    step()
    (org / "spiking_neurons_lit_review.org").unlink()
    step()
    home = md / "Home.md"
    home.write_text(home.read_text(encoding="utf-8") + "\n\n[[Graph view]] [[Nowhere yet]]\n",
                    encoding="utf-8")
    (md / "Nowhere yet.md").write_text("# Nowhere yet\n\n[[Home#Welcome]]\n", encoding="utf-8")
    step()
    graph_view = next(md.rglob("Graph view.md"))
    graph_view.rename(graph_view.with_name("Graph view renamed.md"))
    step()
    c.close()


def test_derived_structural_edges_are_what_the_builder_makes(corpus_graph: Any) -> None:
    """The store derives structural edges from the units (never stores them): they are
    exactly those :func:`cairn.graph.structural.build_structural` makes."""
    from cairn.graph.structural import build_structural

    c, _g = corpus_graph
    es = c.store.edges
    _docs, units = es.graph_sources(None)
    built = {(e.id, e.source, e.target, e.relation) for e in build_structural(units)}
    derived = {(e.id, e.source, e.target, e.relation)
               for e in es.all_edges(origins=["structural"])}
    assert len(built) > 30000 and derived == built
