"""The link cases of ``../shared/cases`` (012, 023, 025, 026, 027) as graph tests.

Each case's notes are copied to a temp folder (``expected.md``/``source.md`` left out),
indexed with the real pipeline and turned into a graph; the assertions follow each
case's ``expected.md``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")

from cairn.app import Cairn
from cairn.export.graph import render
from cairn.graph.service import GraphService

pytestmark = pytest.mark.corpus

CASES = Path(__file__).resolve().parents[3] / "shared" / "cases"


class Case:
    """One case, indexed, with helpers naming nodes ``path#Heading``."""

    def __init__(self, name: str, tmp_path: Path) -> None:
        self.root = tmp_path / "in"
        shutil.copytree(CASES / name, self.root,
                        ignore=shutil.ignore_patterns("expected.md", "source.md"))
        for p in [self.root, *self.root.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        self.cairn = Cairn.open(db=tmp_path / "index.db")
        self.cairn.index([self.root])
        self.graph = GraphService(self.cairn.store, renderer=render)
        self.graph.update()

    def label(self, node: str) -> str:
        es = self.cairn.store.edges
        n = es.nodes([node])[node]
        if n.type == "stub":
            return f"stub:{n.title}"
        return f"{n.path}#{n.title if es.unit_shapes([node])[node].ordinal else ''}"

    def declared(self) -> list[tuple[str, str, str, int]]:
        return sorted(
            (self.label(e.source), e.relation, self.label(e.target), e.count)
            for e in self.cairn.store.edges.all_edges(origins=["declared"])
        )

    def backlink_sources(self, ref: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for b in self.graph.backlinks(ref).backlinks:
            path = str(b.source.path)
            out[path] = out.get(path, 0) + b.count
        return out

    def stub_ids(self) -> list[str]:
        return [i for i in self.cairn.store.edges.node_ids() if i.startswith("stub:")]

    def stubs(self) -> list[tuple[str, str]]:
        nodes = self.cairn.store.edges.nodes(self.stub_ids())
        return sorted((n.kind, n.title) for n in nodes.values())


@pytest.fixture
def case(tmp_path: Path) -> Any:
    made: list[Case] = []

    def make(name: str) -> Case:
        c = Case(name, tmp_path)
        made.append(c)
        return c

    yield make
    for c in made:
        c.cairn.close()


def test_012_links_in_property_drawer(case: Any) -> None:
    c = case("012-org-links-in-property-drawer")
    # Editor manual: the :TOPIC: id link and the body id link are one edge (2 links);
    # :SEEALSO: file link to the heading Keyboards; the :LINK: URL makes no edge.
    assert c.declared() == [
        ("bookmarks.org#Editor manual", "references", "topics.org#Editors", 2),
        ("bookmarks.org#Editor manual", "references", "topics.org#Keyboards", 1),
    ]
    editors = c.graph.backlinks("topics.org:3")  # the heading Editors
    assert [c.label(b.source.id) for b in editors.backlinks] == [
        "bookmarks.org#Editor manual"]
    assert c.backlink_sources("topics.org") == {"bookmarks.org": 3}
    assert c.stubs() == []


def test_023_wikilink_alias_in_table(case: Any) -> None:
    c = case("023-md-wikilink-alias-in-table")
    edges = c.declared()
    assert ("people.md#People", "references", "people/alex-ng.md#", 1) in edges  # table
    assert ("people.md#Contacts", "references", "people/alex-ng.md#", 1) in edges  # prose
    assert ("people.md#People", "references", "people.md#Contacts", 1) in edges  # [[#Contacts\|…]]
    assert c.backlink_sources("people/alex-ng.md") == {"people.md": 2}
    for _kind, label in c.stubs():
        assert "[[" not in label and "]]" not in label and "|" not in label
        assert not label.endswith("\\")
    for _s, _rel, t, _n in edges:
        assert "]]" not in t and "|" not in t


def test_025_wikilink_in_code_ignored(case: Any) -> None:
    c = case("025-md-wikilink-in-code-ignored")
    assert c.declared() == [("shell-tips.md#Shell tips", "references", "Bash Basics.md#", 1)]
    assert c.stubs() == []
    assert c.backlink_sources("Bash Basics.md") == {"shell-tips.md": 1}


def test_026_case_insensitive_and_missing_target(case: Any) -> None:
    c = case("026-md-wikilink-case-and-missing-target")
    assert c.declared() == [
        ("weekly.md#Weekly", "references", "project plan.md#", 2),
        ("weekly.md#Weekly", "unresolved", "stub:Nonexistent Idea", 1),
    ]
    assert c.backlink_sources("project plan.md") == {"weekly.md": 2}
    assert c.graph.backlinks("project plan.md").sources == 1
    (stub,) = c.stub_ids()
    assert c.backlink_sources(stub) == {"weekly.md": 1}
    # the missing note appears: the link resolves without touching weekly.md
    (c.root / "Nonexistent Idea.md").write_text("# Nonexistent Idea\n\nNow it exists.\n")
    run = c.cairn.index([c.root])
    assert (run.added, run.changed) == (1, 0)
    c.graph.update()
    assert c.declared() == [
        ("weekly.md#Weekly", "references", "Nonexistent Idea.md#", 1),
        ("weekly.md#Weekly", "references", "project plan.md#", 2),
    ]
    assert c.stubs() == []
    assert c.backlink_sources("Nonexistent Idea.md") == {"weekly.md": 1}


def test_027_embed_counts_as_link(case: Any) -> None:
    c = case("027-md-embed-counts-as-link")
    assert c.declared() == [
        ("gallery.md#Gallery", "embeds", "Trip Summary.md#", 1),
        ("gallery.md#Gallery", "embeds", "Trip Summary.md#Day 2", 1),
        ("gallery.md#Gallery", "references", "Trip Summary.md#", 1),
        # both embeds of the missing image: one stub, two occurrences
        ("gallery.md#Gallery", "unresolved", "stub:harbour.png", 2),
    ]
    assert c.stubs() == [("attachment", "harbour.png")]
    assert c.backlink_sources("Trip Summary.md") == {"gallery.md": 3}
    (unresolved,) = c.cairn.store.edges.all_edges(relations=["unresolved"])
    assert unresolved.evidence[0]["as"] == "embeds"
