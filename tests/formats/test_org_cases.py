"""The Org cases of ../shared/cases, checked at the parser level.

Each test reads the case's input and asserts what its ``expected.md`` says about
structure (titles, tags, inherited tags, TODO, properties, links, body text, line spans).
The search-level parts (queries returning sections) are the index's to test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.formats.org import parse
from cairn.model import HEADING, ORG_FILE, ORG_ID, PREAMBLE, URL, Document, Unit

CASES = Path(__file__).resolve().parents[2].parent / "shared" / "cases"

pytestmark = pytest.mark.corpus


def _doc(case: str, name: str) -> Document:
    path = CASES / case / name
    text = path.read_bytes().decode("utf-8")
    return parse(text, name)


def _headings(doc: Document) -> list[Unit]:
    return [u for u in doc.units if u.kind == HEADING]


def _by_title(doc: Document, title: str) -> Unit:
    (unit,) = [u for u in doc.units if u.kind == HEADING and u.title == title]
    return unit


def test_001_heading_requires_space() -> None:
    doc = _doc("001-org-heading-requires-space", "stars.org")
    hs = _headings(doc)
    assert [(h.level, h.title) for h in hs] == [
        (1, "First topic"),
        (1, ""),
        (2, "Child of the untitled heading"),
    ]
    first, untitled, child = hs
    assert child.parent == untitled.ordinal
    assert first.parent is None and untitled.parent is None
    assert "*Bold lead-in* at the start" in first.body
    assert "\n*\n" in first.body  # the lone star is body text
    assert "pelican" in child.body
    assert "lead-in" in first.body and "lead-in" not in child.body


def test_003_tag_characters() -> None:
    doc = _doc("003-org-tag-characters", "tags.org")
    assert _by_title(doc, "Quarterly plan").tags == ("project_x", "@office", "2024")
    assert _by_title(doc, "Cafe visit").tags == ("café", "déjà_vu")
    odd = [u for u in _headings(doc) if u.title.startswith("Odd one")]
    assert len(odd) == 1
    assert odd[0].tags == ()
    assert odd[0].title.endswith(":has-dash:") and odd[0].title == odd[0].title.rstrip()


def test_004_multiple_filetags_inheritance() -> None:
    doc = _doc("004-org-multiple-filetags-inheritance", "vendor-review.org")
    assert set(doc.tags) == {"teamA", "review", "archive"}
    assert doc.title == "Vendor review"
    kickoff = _by_title(doc, "Kickoff with the supplier")
    summary = _by_title(doc, "Summary from the lead")
    prep = _by_title(doc, "Prepare the comparison sheet")
    assert kickoff.tags == ("work",)
    assert summary.tags == ("lead", "notes")
    assert prep.tags == ("action",) and prep.todo == "TODO"
    assert set(prep.all_tags) == {
        "teamA", "review", "archive", "work", "lead", "notes", "action",
    }  # fmt: skip
    assert "action" not in prep.inherited_tags
    assert all("archive" in u.all_tags for u in (kickoff, summary, prep))
    assert "lead" in summary.all_tags and "lead" in prep.all_tags
    assert "lead" not in kickoff.all_tags


def test_005_todo_keywords_defined_late() -> None:
    doc = _doc("005-org-todo-keywords-defined-late", "tasks.org")
    rows = [(h.todo, h.todo_state, h.title) for h in _headings(doc)]
    assert rows == [
        ("NEXT", "open", "Book the venue"),
        ("WAITING", "open", "Reply from the caterer"),
        (None, None, "Review NEXT steps with the group"),
        ("CANCELLED", "done", "Old seating plan"),
        ("DONE", "done", "Send invitations"),
        (None, None, "Settings"),
        (None, None, "TODO keywords"),
    ]
    kw = doc.metadata["todo_keywords"]
    assert set(kw["open"]) | set(kw["done"]) == {"NEXT", "STARTED", "DONE", "WAITING", "CANCELLED"}
    assert not any("(" in k or ")" in k for k in kw["open"] + kw["done"])
    assert [h.title for h in _headings(doc) if h.todo_state == "open"] == [
        "Book the venue",
        "Reply from the caterer",
    ]
    assert "#+TODO" not in _by_title(doc, "TODO keywords").body


@pytest.mark.parametrize("name", ["crlf.org", "lf.org"])
def test_007_crlf_property_drawer(name: str) -> None:
    doc = _doc("007-org-crlf-property-drawer", name)
    assert doc.declared_id == "5b1f0c9e-aaaa-4bbb-8ccc-000000000001"
    assert doc.metadata["properties"]["ID"] == "5b1f0c9e-aaaa-4bbb-8ccc-000000000001"
    assert doc.title == "Line ending check"
    (h,) = _headings(doc)
    assert h.title == "Heading with properties" and h.tags == ("demo",)
    assert dict(h.properties) == {"CUSTOM_ID": "intro", "OWNER": "team-blue"}
    assert h.custom_id == "intro"
    assert "lighthouse" in h.body
    assert ":PROPERTIES:" not in h.body and "OWNER" not in h.body
    for u in doc.units:
        assert "\r" not in u.title + u.body + "".join(u.tags)
        assert all("\r" not in k + v for k, v in u.properties.items())


def test_007_crlf_equals_lf() -> None:
    a = _doc("007-org-crlf-property-drawer", "crlf.org")
    b = _doc("007-org-crlf-property-drawer", "lf.org")
    assert a.units == b.units
    assert a.title == b.title and a.declared_id == b.declared_id


def test_008_text_before_first_heading() -> None:
    doc = _doc("008-org-text-before-first-heading", "tidepool.org")
    pre = doc.units[0]
    assert pre.kind == PREAMBLE and pre.ordinal == 0
    assert "quillfeather" in pre.body
    assert "#+title" not in pre.body.lower()
    assert doc.title == "Tidepool ideas" and pre.title == "Tidepool ideas"
    first = _by_title(doc, "First heading")
    assert "marrowstone" in first.body and "quillfeather" not in first.body
    assert (pre.line_start, pre.line_end) == (1, 4)


def test_009_headings_without_body() -> None:
    outline = _doc("009-org-headings-without-body", "outline.org")
    hs = _headings(outline)
    assert [h.title for h in hs] == ["Alpha plan", "Beta plan", "Beta detail", "Gamma plan"]
    assert hs[2].parent == hs[1].ordinal
    assert all(h.body == "" for h in hs)
    empty = _doc("009-org-headings-without-body", "empty.org")
    assert len(empty.units) == 1 and empty.units[0].body == ""
    assert (empty.units[0].line_start, empty.units[0].line_end) == (1, 1)
    title_only = _doc("009-org-headings-without-body", "title-only.org")
    assert title_only.title == "Just a title"
    assert len(title_only.units) == 1 and title_only.units[0].title == "Just a title"


def test_011_indented_star_is_list_item() -> None:
    doc = _doc("011-org-indented-star-is-list-item", "garden.org")
    hs = _headings(doc)
    assert [(h.level, h.title) for h in hs] == [
        (1, "Garden"), (2, "Beds"), (3, "Tomatoes"), (2, "Compost"),
    ]  # fmt: skip
    garden, beds, tomatoes, compost = hs
    assert compost.parent == garden.ordinal and beds.parent == garden.ordinal
    assert tomatoes.parent == beds.ordinal
    assert tomatoes.extra["clocks"] == [
        {"start": "[2024-05-01 Wed 08:00]", "end": "[2024-05-01 Wed 08:30]", "duration": "0:30"}
    ]
    assert "CLOCK" not in tomatoes.body and "LOGBOOK" not in tomatoes.body
    assert "stake the vines" in tomatoes.body and "pinch the side shoots" in tomatoes.body
    assert (tomatoes.line_start, tomatoes.line_end) == (3, 8)
    # without the drawer: the same tree and body
    text = (CASES / "011-org-indented-star-is-list-item" / "garden.org").read_text("utf-8")
    lines = [ln for ln in text.split("\n") if "LOGBOOK" not in ln and "CLOCK" not in ln]
    lines = [ln for ln in lines if ln.strip() != ":END:"]
    bare = parse("\n".join(lines), "garden.org")
    assert [(u.level, u.title, u.parent) for u in bare.units] == [
        (u.level, u.title, u.parent) for u in doc.units
    ]
    assert _by_title(bare, "Tomatoes").body == tomatoes.body


def test_012_links_in_property_drawer() -> None:
    doc = _doc("012-org-links-in-property-drawer", "bookmarks.org")
    manual = _by_title(doc, "Editor manual")
    assert manual.properties["TOPIC"] == "[[id:7e7e7e7e-1234-4abc-9def-000000000777][Editors]]"
    assert manual.properties["LINK"] == "https://example.org/manual"
    kinds = [(lk.kind, lk.target, lk.anchor, lk.line) for lk in manual.links]
    assert (ORG_ID, "7e7e7e7e-1234-4abc-9def-000000000777", None, 6) in kinds  # drawer
    assert (ORG_FILE, "topics.org", "*Keyboards", None) in [(*k[:3], None) for k in kinds]
    assert (ORG_ID, "7e7e7e7e-1234-4abc-9def-000000000777", None, 9) in kinds  # body
    assert (URL, "https://example.org/manual", None, 5) in kinds
    assert manual.tags == () and manual.inherited_tags == ()
    topics = _doc("012-org-links-in-property-drawer", "topics.org")
    editors = _by_title(topics, "Editors")
    assert editors.org_id == "7e7e7e7e-1234-4abc-9def-000000000777"
    assert editors.declared_id == editors.org_id
    assert _by_title(topics, "Keyboards").title == "Keyboards"
