"""Markdown parser: units, Obsidian syntax, the shared Markdown cases and the corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.formats import markdown
from cairn.model import EMBED, MARKDOWN_LINK, PREAMBLE, URL, WIKILINK, Document

SHARED = Path(__file__).resolve().parents[3] / "shared"
CASES = SHARED / "cases"
CORPUS = SHARED / "corpus"


def parse_case(case: str, name: str) -> Document:
    path = CASES / case / name
    return markdown.parse(path.read_text(encoding="utf-8"), name)


def all_text(doc: Document) -> str:
    parts = [doc.title]
    for u in doc.units:
        parts += [u.title, u.body, *u.outline_path]
    return "\n".join(parts)


def links(doc: Document) -> list:
    return [link for u in doc.units for link in u.links]


# --- structure -------------------------------------------------------------------------


def test_units_preamble_and_sections() -> None:
    text = "---\ntitle: T\n---\nIntro #t1\n# A\na text\n## B\nb text [[X]]\n# C\nc\n"
    doc = markdown.parse(text, "dir/note.md")
    assert [u.ordinal for u in doc.units] == [0, 1, 2, 3]
    pre, a, b, c = doc.units
    assert pre.kind == PREAMBLE and pre.level == 0 and pre.title == "T"
    assert pre.outline_path == () and pre.body == "Intro #t1" and pre.tags == ("t1",)
    assert pre.properties == {"title": "T"}
    assert (a.title, a.level, a.parent, a.outline_path) == ("A", 1, None, ("A",))
    assert (b.title, b.parent, b.outline_path) == ("B", 1, ("A", "B"))
    assert (c.parent, c.outline_path) == (None, ("C",))
    assert (a.line_start, a.line_end, b.line_start, b.line_end) == (5, 6, 7, 8)
    assert a.body == "a text" and b.body == "b text X"
    assert b.links[0].target == "X" and b.links[0].line == 8
    assert all(u.id == "" for u in doc.units)


def test_title_rules() -> None:
    # Obsidian names a note by its file; only an H1 that opens the body is its title.
    assert markdown.parse("## Two\n# One\n", "s.md").title == "s"
    assert markdown.parse("Intro.\n\n# One\n", "dir/s.md").title == "s"
    assert markdown.parse("---\na: 1\n---\n\n# Lead\n## Two\n", "s.md").title == "Lead"
    assert markdown.parse("%% note %%\n<!-- c -->\n# Lead\n", "s.md").title == "Lead"
    assert markdown.parse("## Only two\n", "folder/the stem.md").title == "the stem"
    assert markdown.parse("---\ntitle: FM\n---\n# H1\n", "x.md").title == "FM"


@pytest.mark.corpus
def test_corpus_note_with_a_later_h1_is_named_by_its_file() -> None:
    """``Kevin Kelly.md`` opens with ``## Books`` and has ``# Clippings`` further down:
    it is "Kevin Kelly" (found by that name), not "Clippings"."""
    path = CORPUS / "markdown" / "kepano-obsidian" / "References" / "Kevin Kelly.md"
    doc = markdown.parse(path.read_text(encoding="utf-8"), "References/Kevin Kelly.md")
    assert doc.title == "Kevin Kelly"
    assert doc.units[0].title == "Kevin Kelly"
    assert "Clippings" in [u.title for u in doc.units[1:]]


def test_fields_from_front_matter() -> None:
    text = (
        "---\nID: abc\nType: person\ncreated: 2024-01-02\nupdated: 2024-02-03T04:05\n"
        "visibility: public\ntags: [a, '#b']\naliases: x\n---\n"
    )
    doc = markdown.parse(text, "p.md")
    assert doc.declared_id == "abc" and doc.type == "person"
    assert doc.created == "2024-01-02" and doc.modified == "2024-02-03T04:05"
    assert doc.visibility == "public" and doc.tags == ("a", "b") and doc.aliases == ("x",)
    json.dumps(doc.metadata)


def test_tags_and_aliases_normalisation() -> None:
    assert markdown.normalise_tags("a, b  c,#d") == ["a", "b", "c", "d"]
    assert markdown.normalise_tags(["x", "#y", None, 3, ["z"]]) == ["x", "y", "3", "z"]
    assert markdown.normalise_tags(None) == []
    assert markdown.normalise_aliases("One, Two") == ["One", "Two"]
    assert markdown.normalise_aliases(["A b", None]) == ["A b"]


def test_a_tag_right_after_an_inline_html_tag_is_a_tag() -> None:
    text = 'Intro\n\n<span class="tags">#alpha #beta</span> and <b>#gamma</b>\n\nx<i>#delta</i>\n'
    doc = markdown.parse(text, "t.md")
    assert doc.tags == ("alpha", "beta", "gamma", "delta")
    assert markdown.parse("a<b>c#d</b>\n", "u.md").tags == ()


def test_split_wikilink() -> None:
    assert markdown.split_wikilink("Note#Head|Alias") == ("Note", "Head", "Alias")
    assert markdown.split_wikilink("people/x\\|Alex") == ("people/x", None, "Alex")
    assert markdown.split_wikilink("#^blk") == ("", "^blk", None)


def test_code_and_comments_yield_no_links_or_tags() -> None:
    text = "A [[Yes]] #yes\n\n```\n[[no]] #no\n```\n\n`[[no2]] #no2`\n\n%%[[no3]] #no3%%\n"
    doc = markdown.parse(text, "c.md")
    assert [link.target for link in links(doc)] == ["Yes"]
    assert doc.tags == ("yes",)
    assert "no3" not in doc.units[0].body and "[[no]] #no" in doc.units[0].body


def test_link_kinds() -> None:
    text = "[[W]] ![[E.png|20]] [m](a%20b.md#Sec) [u](https://x.org) ![i](p.png)\n"
    found = {
        (link.kind, link.target, link.anchor, link.alias)
        for link in links(markdown.parse(text, "k.md"))
    }
    assert found == {
        (WIKILINK, "W", None, None),
        (EMBED, "E.png", None, None),
        (MARKDOWN_LINK, "a b.md", "Sec", "m"),
        (URL, "https://x.org", None, "u"),
        (EMBED, "p.png", None, "i"),
    }


def test_no_bom_anywhere() -> None:
    doc = markdown.parse("\ufeff# Title\ufeff\n\ntext\n", "b.md")
    assert "\ufeff" not in all_text(doc)


# --- shared cases ---------------------------------------------------------------------


@pytest.mark.corpus
def test_case_013_first_line_single_dash() -> None:
    dash = parse_case("013-md-first-line-single-dash", "dash.md")
    two = parse_case("013-md-first-line-single-dash", "twodash.md")
    assert dash.metadata == {} and two.metadata == {}
    assert "walrus" in all_text(dash) and "narwhal" in all_text(two)
    assert "Paragraph after the list." in dash.units[0].body


@pytest.mark.corpus
def test_case_014_fence_whitespace() -> None:
    spaced = parse_case("014-md-frontmatter-delimiter-whitespace", "spaced.md")
    assert spaced.metadata == {"title": "Trailing space fence", "tags": ["alpha"]}
    assert spaced.title == "Trailing space fence"
    assert spaced.units[1].title == "Heading after" and spaced.units[1].line_start == 5
    assert "title:" not in all_text(spaced).replace("Trailing space fence", "")
    assert "heron" in spaced.units[1].body
    toml = parse_case("014-md-frontmatter-delimiter-whitespace", "toml-spaced.md")
    assert toml.metadata == {"title": "Toml with spaces"}
    assert toml.units[0].body == "Body mentions egret."


@pytest.mark.corpus
def test_case_016_toml() -> None:
    doc = parse_case("016-md-frontmatter-toml", "harbour.md")
    assert doc.metadata["title"] == "Harbour lights"
    assert doc.metadata["tags"] == ["photo", "night"]
    assert doc.metadata["date"] == "2023-05-01"
    assert doc.units[0].body == "Body text about the harbour at dusk."
    assert "night" in doc.tags and not doc.warnings


@pytest.mark.corpus
def test_case_017_bom() -> None:
    fm_doc = parse_case("017-md-utf8-bom", "bom-frontmatter.md")
    assert fm_doc.metadata == {"title": "Ledger", "tags": ["finance"], "author": "Desk Two"}
    assert [u.title for u in fm_doc.units[1:]] == ["Quarterly ledger"]
    heading = parse_case("017-md-utf8-bom", "bom-heading.md")
    assert [(u.title, u.level, u.parent) for u in heading.units[1:]] == [
        ("First heading", 1, None),
        ("Second heading", 2, 1),
    ]
    for doc in (fm_doc, heading):
        assert "\ufeff" not in all_text(doc) + json.dumps(doc.metadata)
        raw = (CASES / "017-md-utf8-bom" / doc.path).read_text(encoding="utf-8")
        assert markdown.parse(raw.lstrip("\ufeff"), doc.path) == doc


@pytest.mark.corpus
def test_case_018_invalid_yaml_keeps_body() -> None:
    case = "018-md-invalid-yaml-keeps-body"
    for name, word, title in (
        ("tabbed.md", "headlamp", "Packing list"),
        ("colon.md", "spreadsheet", "colon"),
    ):
        doc = parse_case(case, name)
        assert doc.metadata == {}
        assert word in all_text(doc)
        assert doc.title == title
        assert doc.warnings and doc.warnings[0].path == name
        assert "could not" in doc.warnings[0].message or "not valid" in doc.warnings[0].message
    ok = parse_case(case, "ok.md")
    assert "otter" in all_text(ok) and not ok.warnings


@pytest.mark.corpus
def test_case_019_leading_rule_block() -> None:
    doc = parse_case("019-md-leading-rule-block-not-yaml", "letter.md")
    assert doc.metadata == {}
    text = all_text(doc)
    assert "4471" in text and "Accounts Department" in text
    assert doc.title == "Payment reminder"


@pytest.mark.corpus
def test_case_021_only_first_block_is_front_matter() -> None:
    doc = parse_case("021-md-stacked-frontmatter-readonly", "stacked.md")
    assert doc.metadata == {"permalink": "notes/compass"}
    assert "quarterly goals" in all_text(doc)
    assert parse_case("021-md-stacked-frontmatter-readonly", "plain.md").metadata == {}


@pytest.mark.corpus
def test_case_022_tags() -> None:
    case = "022-md-tags-string-or-list"
    expected = {
        "a.md": ("typora", "basic", "export"),
        "b.md": ("Financial-advice", "source/article"),
        "c.md": ("project/alpha", "reading", "project/beta"),
        "d.md": ("one", "two"),
    }
    for name, tags in expected.items():
        doc = parse_case(case, name)
        assert doc.tags == tags
        assert all(isinstance(t, str) and len(t) > 1 for t in doc.tags)
    assert "123" not in parse_case(case, "c.md").tags


@pytest.mark.corpus
def test_case_023_wikilink_alias_in_table() -> None:
    doc = parse_case("023-md-wikilink-alias-in-table", "people.md")
    found = [(link.target, link.anchor, link.alias) for link in links(doc)]
    assert found == [
        ("people/alex-ng", None, "Alex"),
        ("people/sam-ro", None, "Sam"),
        ("", "Contacts", "Contacts section"),
        ("people/alex-ng", None, "Alex N."),
    ]
    for link in links(doc):
        assert "|" not in link.target and not link.target.endswith("\\")
        assert "[[" not in (link.alias or "") and "]]" not in link.target
    table_text = doc.units[1].body
    assert "Alex" in table_text and "Sam" in table_text


@pytest.mark.corpus
def test_case_025_code_is_not_linked_but_searchable() -> None:
    doc = parse_case("025-md-wikilink-in-code-ignored", "shell-tips.md")
    assert [(link.kind, link.target) for link in links(doc)] == [(WIKILINK, "Bash Basics")]
    body = all_text(doc)
    for text in ("tilde fence", "indented code block", "not a link", "-f file"):
        assert text in body


@pytest.mark.corpus
def test_case_026_links_as_written() -> None:
    doc = parse_case("026-md-wikilink-case-and-missing-target", "weekly.md")
    assert [(link.target, link.alias) for link in links(doc)] == [
        ("Project Plan", None),
        ("PROJECT PLAN", "the plan"),
        ("Nonexistent Idea", None),
    ]


@pytest.mark.corpus
def test_case_027_embeds() -> None:
    doc = parse_case("027-md-embed-counts-as-link", "gallery.md")
    found = [(link.kind, link.target, link.anchor, link.alias) for link in links(doc)]
    assert found == [
        (EMBED, "Trip Summary", None, None),
        (EMBED, "Trip Summary", "Day 2", None),
        (EMBED, "harbour.png", None, None),
        (EMBED, "harbour.png", None, None),
        (WIKILINK, "Trip Summary", None, None),
    ]
    assert all("!" not in link.target for link in links(doc))


@pytest.mark.corpus
def test_case_046_big_note(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    script = CASES / "046-large-file-indexing" / "make_big.py"
    subprocess.run([sys.executable, str(script), str(big)], check=True)
    text = big.read_text(encoding="utf-8")
    doc = markdown.parse(text, "big.md")  # its speed: bench/md_parse.py --big
    assert doc.title == "Big journal" and doc.tags == ("bulk",)
    assert len(doc.units) == 1201
    assert any(u.title == "Section 1199" for u in doc.units)
    last = doc.units[-1]
    assert "zanzibarquartz" in last.body
    (link,) = last.links
    assert link.target == "Small note" and link.line is not None and link.line > 63_000
    assert text.splitlines()[link.line - 1].startswith("Near the end sits the marker")


# --- corpus ---------------------------------------------------------------------------


@pytest.mark.corpus
def test_every_corpus_note_parses() -> None:
    files = sorted((CORPUS / "markdown").rglob("*.md"))
    assert len(files) > 800
    for path in files:
        rel = path.relative_to(CORPUS / "markdown").as_posix()
        text = path.read_text(encoding="utf-8")
        doc = markdown.parse(text, rel)
        assert doc.units and doc.units[0].kind == PREAMBLE
        assert [u.ordinal for u in doc.units] == list(range(len(doc.units)))
        n_lines = max(1, len(text.splitlines()))
        for u in doc.units:
            assert 1 <= u.line_start <= u.line_end <= max(n_lines, u.line_start), (rel, u)
            if u.parent is not None:
                assert u.parent < u.ordinal
            for link in u.links:
                assert link.line is None or 1 <= link.line <= n_lines, (rel, link)
        json.dumps(doc.metadata)
        assert "\ufeff" not in all_text(doc)


# --- robustness -----------------------------------------------------------------------

_ALPHABET = [*"[]!#^|%=`~-*_>\\:/ \t\naZ1.$(){}<", "[[", "]]", "%%", "==", "\n---\n", "```"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=60).map("".join))
def test_never_raises_and_stays_consistent(text: str) -> None:
    for candidate in (text, "---\n" + text, "# H\n" + text + "\n## K\n" + text):
        doc = markdown.parse(candidate, "fuzz.md")
        assert [u.ordinal for u in doc.units] == list(range(len(doc.units)))
        json.dumps(doc.metadata)
        for u in doc.units:
            assert u.line_start <= u.line_end
            for link in u.links:
                assert "\n" not in link.target


def test_a_caret_word_in_a_table_cell_is_cell_text_not_a_block_id() -> None:
    # Obsidian puts a table's block id on the line after it; "^2" in a cell is text
    text = "# H\n\n| name | tex |\n| --- | --- |\n| sup2 | ^2 |\n| sup3 | \\^3 |\n\npara ^blk\n"
    unit = markdown.parse(text, "a.md").units[1]
    assert unit.body.splitlines()[1:3] == ["sup2 | ^2", "sup3 | ^3"]
    assert [b["id"] for b in unit.extra["blocks"]] == ["blk"]


@pytest.mark.parametrize(("fence", "body"), [("~~~~ \n", ""), ("``` \t\ncode\n```\n", "code")])
def test_a_fence_whose_info_string_is_only_spaces_is_code_without_a_language(
    fence: str, body: str
) -> None:
    unit = markdown.parse("# H\n\n" + fence, "a.md").units[-1]
    assert unit.body == body
    assert "code_languages" not in unit.extra


def test_an_html_comment_holding_a_greater_than_sign_is_left_out_whole() -> None:
    # Obsidian hides the whole comment; a ">" inside it does not end it
    text = "# H\n\n<!-- a b > c d -->\n\nafter\n\n<div>x > y</div>\n\n<!-- open > to the end\n"
    assert markdown.parse(text, "a.md").units[1].body == "after\nx > y"
