"""OKF: concept parsing, trust and staleness, bundle detection, validation."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from cairn.formats import okf
from cairn.model import CONCEPT, MARKDOWN_LINK, PREAMBLE, URL

SHARED = Path(__file__).resolve().parents[3] / "shared"
OKF_CORPUS = SHARED / "corpus" / "okf"
BUNDLES = [
    *(
        sorted((OKF_CORPUS / "knowledge-catalog" / "okf" / "bundles").iterdir())
        if OKF_CORPUS.is_dir()
        else []
    ),
    OKF_CORPUS / "okf-starter" / "wiki",
    OKF_CORPUS / "okf-mesh" / "examples" / "warehouse" / "knowledge",
]

CONCEPT_TEXT = """---
type: Concept
title: Hybrid retrieval
description: Combining BM25 and dense-vector rankings.
tags: [search, ranking]
status: stable
generated: { by: human:ana, at: 2026-09-01T10:15:00+02:00 }
verified:
  - { by: process:nightly, at: 2026-09-02T08:00:00Z }
  - { by: human:ana, at: 2026-09-03T08:00:00Z }
stale_after: 2027-03-01T00:00:00Z
sources:
  - id: rrf-paper
    resource: https://example.org/rrf.pdf
  - id: sibling
    resource: ../playbooks/reindex.md
x_custom: { keep: me }
relations:
  - { target: /concepts/active/other.md, type: depends_on, confidence: 0.8 }
---

Lead paragraph.[^rrf-paper]

# Related

See [reindex](/playbooks/reindex.md), [near](./near.md), [up](../index.md),
[web](https://example.org) and [outside](../../elsewhere.md).

[^rrf-paper]: Cormack et al.
"""


def test_concept_document() -> None:
    doc = okf.parse(CONCEPT_TEXT, "concepts/hybrid-retrieval.md")
    assert doc.format == "okf" and doc.type == "Concept"
    assert doc.title == "Hybrid retrieval" and doc.tags == ("search", "ranking")
    assert doc.metadata["concept_id"] == "concepts/hybrid-retrieval"
    assert doc.metadata["x_custom"] == {"keep": "me"}
    assert doc.metadata["generated"]["at"] == "2026-09-01T10:15:00+02:00"
    assert doc.modified == "2026-09-01T10:15:00+02:00"
    json.dumps(doc.metadata)
    first = doc.units[0]
    assert first.kind == CONCEPT and first.title == "Hybrid retrieval"
    assert first.body.startswith("Combining BM25") and "Lead paragraph." in first.body
    info = first.extra["okf"]
    assert info["trust_tier"] == okf.TRUST_HUMAN and info["status"] == "stable"
    assert info["stale_after"] == "2027-03-01T00:00:00Z"
    assert info["source_ids"] == ["rrf-paper", "sibling"]
    rels = first.extra["relations"]
    assert {
        "target": "concepts/active/other.md",
        "type": "depends_on",
        "confidence": 0.8,
        "field": "relations",
    } in rels
    assert any(r["type"] == "derived_from" and r["target"] == "playbooks/reindex.md" for r in rels)
    related = doc.units[1]
    assert related.title == "Related"
    found = [(link.kind, link.target) for link in related.links]
    assert found == [
        (MARKDOWN_LINK, "playbooks/reindex.md"),
        (MARKDOWN_LINK, "concepts/near.md"),
        (MARKDOWN_LINK, "index.md"),
        (URL, "https://example.org"),
        (MARKDOWN_LINK, "../../elsewhere.md"),
    ]


def test_no_wikilinks_in_okf() -> None:
    doc = okf.parse("---\ntype: T\n---\nText [[not a link]] #nottag\n", "a.md")
    assert not doc.units[0].links and doc.tags == ()
    assert "[[not a link]]" in doc.units[0].body


def test_front_matter_wikilinks_are_links() -> None:
    """A wikilink written as a front matter value is a link to its target (as Obsidian
    and the Markdown parser read it), so a vault exported as OKF keeps its category
    links; the body's wikilinks stay text."""
    doc = okf.parse(
        '---\ntype: T\ncategories:\n  - "[[Meetings]]"\nwith:\n  people: ["[[Steph Ango|Steph]]"]\n'
        'up: "[[Parent#Part]]"\n---\nSee [[not a link]].\n',
        "notes/a.md",
    )
    links = [(x.kind, x.target, x.alias, x.anchor, x.line) for x in doc.units[0].links]
    assert links == [
        ("wikilink", "Meetings", None, None, 4),  # the list item's own line
        ("wikilink", "Steph Ango", "Steph", None, 6),
        ("wikilink", "Parent", None, "Part", 7),
    ]
    assert "[[not a link]]" in doc.units[0].body


def test_missing_type_is_a_warning_not_a_failure() -> None:
    doc = okf.parse("# Just markdown\n", "loose.md")
    assert doc.type is None and doc.warnings
    assert doc.title == "loose" and doc.metadata["concept_id"] == "loose"


def test_reserved_files() -> None:
    index = okf.parse(
        "---\nokf_version: '0.2'\n---\n# Tables\n\n* [Orders](tables/orders.md) - x\n", "index.md"
    )
    assert index.type == "okf-index" and index.units[0].kind == PREAMBLE
    assert "concept_id" not in index.metadata
    assert index.units[1].links[0].target == "tables/orders.md"
    log = okf.parse("# Log\n\n## 2026-05-22\n* **Update**: x\n\n## 2026-05-01\n* y\n", "sub/log.md")
    assert log.type == "okf-log"
    assert [u.title for u in log.units[1:]] == ["Log", "2026-05-22", "2026-05-01"]


@pytest.mark.parametrize(
    ("verified", "tier"),
    [
        (None, okf.TRUST_UNVERIFIED),
        ({"by": "process:x", "at": "2026-01-01T00:00:00Z"}, okf.TRUST_MACHINE),
        ({"by": "human:ann"}, okf.TRUST_HUMAN),
        ([{"by": "agent/1"}, {"by": "human:bo"}], okf.TRUST_HUMAN),
        ([{"by": "agent/1"}, "junk"], okf.TRUST_MACHINE),
        ([], okf.TRUST_UNVERIFIED),
    ],
)
def test_trust_tier(verified: object, tier: str) -> None:
    assert okf.trust_tier(verified) == tier


def test_bare_verified_mapping_is_a_list() -> None:
    assert okf.normalise_verified({"by": "human:a"}) == [{"by": "human:a"}]


def test_is_stale() -> None:
    now = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    assert okf.is_stale("2026-06-15T00:00:00Z", now) is True
    assert okf.is_stale("2026-12-31T00:00:00+01:00", now) is False
    assert okf.is_stale("2026-06-15", now) is None
    assert okf.is_stale("2026-06-15T00:00:00", now) is None


def test_normalise_link_target() -> None:
    assert okf.normalise_link_target("/a/b.md", "x/y.md") == "a/b.md"
    assert okf.normalise_link_target("./c.md", "x/y.md") == "x/c.md"
    assert okf.normalise_link_target("../c.md", "x/y.md") == "c.md"
    assert okf.normalise_link_target("../../c.md", "x/y.md") == "../../c.md"
    assert okf.normalise_link_target("sub/", "y.md") == "sub/"
    assert okf.normalise_link_target("https://e.org/a", "y.md") == "https://e.org/a"


# --- corpus bundles --------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("root", BUNDLES, ids=[p.name for p in BUNDLES])
def test_corpus_bundles_are_bundles_and_conform(root: Path) -> None:
    assert okf.is_bundle(root)
    diags = okf.validate_bundle(root)
    errors = [d for d in diags if d.severity == "error"]
    assert errors == []
    for path in root.rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        doc = okf.parse(path.read_text(encoding="utf-8"), rel)
        json.dumps(doc.metadata)
        if path.name not in okf.RESERVED:
            assert doc.type, rel
            assert doc.metadata["concept_id"] == rel[:-3]


@pytest.mark.corpus
def test_vaults_are_not_bundles() -> None:
    md = SHARED / "corpus" / "markdown"
    for root in (
        md / "foam" / "docs",
        md / "kepano-obsidian",
        md / "obsidian-help-NO-LICENCE" / "en",
    ):
        assert not okf.is_bundle(root), root


@pytest.mark.corpus
def test_corpus_v02_fields() -> None:
    root = OKF_CORPUS / "knowledge-catalog" / "okf" / "bundles" / "acme_retail"
    rel = "metrics/gross-margin.md"
    doc = okf.parse((root / rel).read_text(encoding="utf-8"), rel)
    assert doc.type == "Metric"
    assert doc.metadata["not"][0]["term"] == "revenue minus product cost only"  # unknown key
    info = doc.units[0].extra["okf"]
    assert info["trust_tier"] == okf.TRUST_HUMAN
    assert info["stale_after"] == "2026-12-31T00:00:00Z"
    assert info["generated_at"] == "2026-06-30T14:00:00Z"


def _codes(diags: list, path: str) -> set[str]:
    return {d.message.split(":")[0] for d in diags if d.path == path}


@pytest.mark.corpus
def test_broken_copy_reports_each_rule(tmp_path: Path) -> None:
    src = OKF_CORPUS / "okf-starter" / "wiki"
    root = tmp_path / "wiki"
    shutil.copytree(src, root)
    assert not [d for d in okf.validate_bundle(root) if d.severity == "error"]

    def edit(rel: str, old: str, new: str) -> None:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    # E1: a concept without front matter, and one with broken YAML
    (root / "tables" / "no-frontmatter.md").write_text("# Plain\n\nNo front matter.\n")
    edit("tables/customers.md", "title:", "title: [unclosed\nx:")
    # E2: empty type; a non-string type
    edit("metrics/weekly-active-users.md", "type: Metric", "type: ''")
    edit("playbooks/incident-response.md", "type: Playbook", "type: [Playbook]")
    # E3: front matter in a sub-directory index.md
    edit(
        "tables/index.md",
        "# ",
        "---\nokf_version: '0.2'\n---\n# ",
    )
    # E4: a log heading that is not a date
    edit("log.md", "## 2026-06-15", "## June 15th 2026")
    # warnings: broken link, bad status, generated without by, timestamp without offset,
    # footnote without a source, sources entry without resource, root index extra key
    edit("tables/orders.md", "[customers](customers.md)", "[customers](missing.md)")
    edit(
        "tables/orders.md",
        "timestamp: 2026-06-15T00:00:00Z",
        "status: final\ngenerated: { at: 2026-06-15 }\nsources:\n  - title: no resource\n"
        "  - id: s1\n    resource: https://e.org",
    )
    edit("tables/orders.md", "# Joins", "Claim.[^nope]\n\n[^nope]: x\n\n# Joins")
    edit("index.md", 'okf_version: "0.1"', 'okf_version: "0.1"\nowner: me')

    diags = okf.validate_bundle(root)
    assert "E1" in _codes(diags, "tables/no-frontmatter.md")
    assert "E1" in _codes(diags, "tables/customers.md")
    assert "E2" in _codes(diags, "metrics/weekly-active-users.md")
    assert "E2" in _codes(diags, "playbooks/incident-response.md")
    assert "E3" in _codes(diags, "tables/index.md")
    assert "E4" in _codes(diags, "log.md")
    orders = _codes(diags, "tables/orders.md")
    assert {"W-link", "W-status", "W-generated", "W-offset", "W-footnote", "W-source"} <= orders
    assert "W-root-index-keys" in _codes(diags, "index.md")
    e4 = next(d for d in diags if d.path == "log.md" and d.message.startswith("E4"))
    assert e4.line == 3 and e4.severity == "error"
    link = next(d for d in diags if d.path == "tables/orders.md" and d.message.startswith("W-link"))
    assert link.severity == "warning" and link.line is not None
    # nothing the spec says to tolerate is an error
    tolerated = {"W-link", "W-title", "W-description", "I-no-index", "W-root-index-keys"}
    assert not any(d.severity == "error" for d in diags if d.message.split(":")[0] in tolerated)
    # every error names a conformance rule
    assert {d.message.split(":")[0] for d in diags if d.severity == "error"} == {
        "E1",
        "E2",
        "E3",
        "E4",
    }


def test_tolerated_things_are_not_errors(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ntype: Weird New Type\nzzz: 1\n---\n[x](/nope.md)\n")
    diags = okf.validate_bundle(tmp_path)
    assert not [d for d in diags if d.severity == "error"]
    codes = {d.message.split(":")[0] for d in diags}
    assert {"I-no-index", "W-link", "W-title", "W-description"} <= codes
