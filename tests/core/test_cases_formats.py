"""The Org and Markdown cases, checked through the index as a user sees them.

The parsers' own tests check each field; these check search hits, tag filters, TODO
filters, diagnostics and link resolution across files after a real ``cairn index``.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.model.serialize import to_data

pytestmark = pytest.mark.corpus

CASES = Path(__file__).resolve().parents[3] / "shared" / "cases"


@pytest.fixture(autouse=True)
def _parsers() -> None:
    pytest.importorskip("cairn.formats.org")
    pytest.importorskip("cairn.formats.markdown")


def _index(case: str, tmp_path: Path) -> tuple[Cairn, Path]:
    dst = tmp_path / "in"
    shutil.copytree(CASES / case, dst, ignore=shutil.ignore_patterns("expected.md", "source.md"))
    for p in dst.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    c = Cairn.open(db=tmp_path / "index.db")
    run = c.index([dst])
    assert run.failed == 0, run.failures
    return c, dst


def _titles(c: Cairn, q: str) -> list[str]:
    return [h.title for h in c.search(q, limit=20).hits]


def _paths(c: Cairn, q: str) -> list[str]:
    return [h.path for h in c.search(q, limit=20).hits]


def _links(c: Cairn, path: str) -> list[dict[str, object]]:
    view = to_data(c.show(path))
    return view["links"]  # type: ignore[no-any-return]


def test_001_heading_requires_space(tmp_path: Path) -> None:
    c, _ = _index("001-org-heading-requires-space", tmp_path)
    assert _titles(c, "pelican")[0] == "Child of the untitled heading"
    assert _titles(c, "lead-in")[0] == "First topic"


def test_003_tag_characters(tmp_path: Path) -> None:
    c, _ = _index("003-org-tag-characters", tmp_path)
    assert _titles(c, "tag:2024") == ["Quarterly plan"]
    assert _titles(c, "tag:café") == ["Cafe visit"]
    assert _titles(c, "tag:has-dash") == []


def test_004_filetags_inheritance(tmp_path: Path) -> None:
    c, _ = _index("004-org-multiple-filetags-inheritance", tmp_path)
    headings = {
        "Kickoff with the supplier",
        "Summary from the lead",
        "Prepare the comparison sheet",
    }
    assert headings <= set(_titles(c, "tag:archive"))
    assert set(_titles(c, "tag:lead")) == {"Summary from the lead", "Prepare the comparison sheet"}
    doc = to_data(c.show("vendor-review.org"))["document"]
    assert doc["title"] == "Vendor review"


def test_005_todo_keywords_defined_late(tmp_path: Path) -> None:
    c, _ = _index("005-org-todo-keywords-defined-late", tmp_path)
    assert set(_titles(c, "todo:open")) == {"Book the venue", "Reply from the caterer"}
    assert set(_titles(c, "todo:done")) == {"Old seating plan", "Send invitations"}
    assert _titles(c, "todo:TODO") == []


def test_007_crlf_property_drawer(tmp_path: Path) -> None:
    c, folder = _index("007-org-crlf-property-drawer", tmp_path)
    assert set(_paths(c, "lighthouse")) == {"crlf.org", "lf.org"}
    dump = c.store.db.execute(
        "SELECT group_concat(title || tags || properties || body, '') FROM units"
    ).fetchone()[0]
    assert "\r" not in dump
    (folder / "linker.org").write_text(
        "* Linker\nSee [[id:5b1f0c9e-aaaa-4bbb-8ccc-000000000001]].\n", encoding="utf-8"
    )
    c.index()
    links = [lk for lk in _links(c, "linker.org") if lk["kind"] == "org-id"]
    assert links and links[0]["resolved_document_id"] is not None


def test_008_text_before_first_heading(tmp_path: Path) -> None:
    c, _ = _index("008-org-text-before-first-heading", tmp_path)
    hit = c.search("quillfeather").hits[0]
    assert (hit.doc_title, hit.kind) == ("Tidepool ideas", "preamble")
    assert "#+title" not in hit.snippet.lower()
    assert _titles(c, "marrowstone")[0] == "First heading"


def test_009_headings_without_body(tmp_path: Path) -> None:
    c, _ = _index("009-org-headings-without-body", tmp_path)
    assert c.store.counts()["files"] == 3
    assert _titles(c, "Beta detail")[0] == "Beta detail"
    hit = c.search("Just a title").hits[0]
    assert hit.doc_title == "Just a title"


def test_011_indented_star_is_a_list_item(tmp_path: Path) -> None:
    c, _ = _index("011-org-indented-star-is-list-item", tmp_path)
    assert _titles(c, "side shoots")[0] == "Tomatoes"
    assert "CLOCK" not in c.search("side shoots").hits[0].snippet


def test_012_links_in_property_drawer(tmp_path: Path) -> None:
    c, _ = _index("012-org-links-in-property-drawer", tmp_path)
    view = to_data(c.show("bookmarks.org"))
    units = {u["id"]: u["title"] for u in to_data(c.show("topics.org"))["units"]}
    resolved = {
        (lk["kind"], units.get(str(lk["resolved_unit_id"])))
        for lk in view["links"]
        if lk["resolved_unit_id"]
    }
    assert ("org-id", "Editors") in resolved
    assert ("org-file", "Keyboards") in resolved
    topics = to_data(c.show("topics.org"))["document"]["id"]
    assert {b["source_title"] for b in to_data(c.show(topics).backlinks)} == {"Editor manual"}
    assert _titles(c, "tag:Editors") == []


def test_013_single_dash_first_line(tmp_path: Path) -> None:
    c, _ = _index("013-md-first-line-single-dash", tmp_path)
    assert _paths(c, "walrus") == ["dash.md"]
    assert _paths(c, "narwhal") == ["twodash.md"]


def test_014_fence_with_trailing_spaces(tmp_path: Path) -> None:
    c, _ = _index("014-md-frontmatter-delimiter-whitespace", tmp_path)
    hit = c.search("heron").hits[0]
    assert (hit.path, hit.doc_title) == ("spaced.md", "Trailing space fence")
    assert "title:" not in hit.snippet


def test_016_toml_frontmatter(tmp_path: Path) -> None:
    c, _ = _index("016-md-frontmatter-toml", tmp_path)
    assert "harbour.md" in _paths(c, "tag:night")
    assert "+++" not in c.search("harbour dusk").hits[0].snippet


def test_018_invalid_yaml_keeps_body(tmp_path: Path) -> None:
    c, folder = _index("018-md-invalid-yaml-keeps-body", tmp_path)
    before = {p.name: p.read_bytes() for p in folder.glob("*.md")}
    assert _paths(c, "headlamp")[0] == "tabbed.md"
    assert _paths(c, "spreadsheet")[0] == "colon.md"
    assert _paths(c, "otter")[0] == "ok.md"
    warned = {w["path"] for w in to_data(c.stats())["warnings"]}
    assert {"tabbed.md", "colon.md"} <= warned
    assert before == {p.name: p.read_bytes() for p in folder.glob("*.md")}


def test_019_leading_rule_block_is_not_yaml(tmp_path: Path) -> None:
    c, _ = _index("019-md-leading-rule-block-not-yaml", tmp_path)
    assert "letter.md" in _paths(c, "4471")
    assert "letter.md" in _paths(c, "Accounts Department")


def test_022_tags_string_or_list(tmp_path: Path) -> None:
    c, _ = _index("022-md-tags-string-or-list", tmp_path)
    assert set(_paths(c, "tag:source/article")) == {"b.md"}
    assert "c.md" in _paths(c, "tag:project")
    assert "c.md" not in _paths(c, "tag:alpha")
    assert _paths(c, "tag:123") == []


def test_023_wikilink_alias_in_table(tmp_path: Path) -> None:
    c, _ = _index("023-md-wikilink-alias-in-table", tmp_path)
    links = _links(c, "people.md")
    targets = [lk["target"] for lk in links]
    assert targets.count("people/alex-ng") == 2
    assert not any(str(t).endswith("\\") or "|" in str(t) or "]]" in str(t) for t in targets)
    alex = to_data(c.show("people/alex-ng.md"))["document"]["id"]
    assert "people.md" in {b["source_path"] for b in to_data(c.show(alex).backlinks)}
    assert "people.md" in _paths(c, "Sam")


def test_025_wikilink_in_code_ignored(tmp_path: Path) -> None:
    c, _ = _index("025-md-wikilink-in-code-ignored", tmp_path)
    note_links = [lk for lk in _links(c, "shell-tips.md") if lk["kind"] != "url"]
    assert [lk["target"] for lk in note_links] == ["Bash Basics"]
    target = to_data(c.show("Bash Basics.md"))["document"]["id"]
    assert note_links[0]["resolved_document_id"] == target
    assert "shell-tips.md" in _paths(c, "tilde fence")


def test_026_case_insensitive_and_late_target(tmp_path: Path) -> None:
    c, folder = _index("026-md-wikilink-case-and-missing-target", tmp_path)
    plan = to_data(c.show("project plan.md"))["document"]["id"]
    links = _links(c, "weekly.md")
    by_target = {str(lk["target"]).lower(): lk for lk in links}
    assert by_target["project plan"]["resolved_document_id"] == plan
    assert sum(1 for lk in links if lk["resolved_document_id"] == plan) == 2
    missing = by_target["nonexistent idea"]
    assert missing["resolved_document_id"] is None and missing["unresolved_reason"]
    assert c.store.counts()["documents"] == 2
    (folder / "Nonexistent Idea.md").write_text("# Now it exists\n", encoding="utf-8")
    later = time.time() + 2
    os.utime(folder / "Nonexistent Idea.md", (later, later))
    c.index()
    new = to_data(c.show("Nonexistent Idea.md"))["document"]["id"]
    assert {b["source_path"] for b in to_data(c.show(new).backlinks)} == {"weekly.md"}


def test_027_embed_counts_as_link(tmp_path: Path) -> None:
    c, _ = _index("027-md-embed-counts-as-link", tmp_path)
    trip = to_data(c.show("Trip Summary.md"))["document"]["id"]
    links = _links(c, "gallery.md")
    to_trip = [lk for lk in links if lk["resolved_document_id"] == trip]
    assert sorted(str(lk["kind"]) for lk in to_trip) == ["embed", "embed", "wikilink"]
    assert any(lk["anchor"] == "Day 2" for lk in to_trip)
    images = [lk for lk in links if str(lk["target"]).endswith("harbour.png")]
    assert len(images) == 2
    assert all(
        lk["target"] == "harbour.png" and lk["resolved_document_id"] is None for lk in images
    )
    assert all("attachment" in str(lk["unresolved_reason"]) for lk in images)
    assert "gallery.md" in {b["source_path"] for b in to_data(c.show(trip).backlinks)}
