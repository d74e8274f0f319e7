"""Unit tests of the Org parser's API beyond the golden files."""

from __future__ import annotations

import pytest

from cairn.errors import ParseError
from cairn.formats import by_name, detect
from cairn.formats.org import (
    OrgOptions,
    parse,
    parse_headline,
    parse_todo_sequences,
    todo_keywords,
)
from cairn.formats.org.objects import classify_link, find_timestamps, scan_text
from cairn.formats.org.tree import heading_starts, parse_tree
from cairn.model import CODE, ORG_FILE, ORG_HEADING, ORG_ID, URL


def test_registry_finds_the_org_parser() -> None:
    fmt = detect("notes/a.org")
    assert fmt is not None and fmt.name == "org"
    doc = by_name("org").text_parser()("* H\n", "a.org")  # type: ignore[union-attr]
    assert doc.format == "org" and doc.units[1].title == "H"


def test_inherit_every_property_with_star() -> None:
    text = "* A\n:PROPERTIES:\n:X: 1\n:Y: 2\n:END:\n** B\n:PROPERTIES:\n:Y: 3\n:END:\n"
    doc = parse(text, "a.org", OrgOptions(inherited_property_keys=("*",)))
    assert doc.units[2].extra["inherited_properties"] == {"X": "1"}
    assert "inherited_properties" not in parse(text, "a.org").units[2].extra


def test_code_units_can_be_turned_off() -> None:
    text = "* H\n#+begin_src python\nx = 1\n#+end_src\n"
    assert [u.kind for u in parse(text, "a.org").units] == ["preamble", "heading", CODE]
    units = parse(text, "a.org", OrgOptions(code_units=False)).units
    assert [u.kind for u in units] == ["preamble", "heading"]
    assert "x = 1" not in units[1].body


def test_todo_sequences() -> None:
    kw = parse_todo_sequences(["A(a) B(b@/!) | C(c!)", "D E", ""])
    assert kw.open == ("A", "B", "D") and kw.done == ("C", "E")
    assert kw.state("B") == "open" and kw.state("E") == "done" and kw.state("Z") is None
    assert todo_keywords("#+TYP_TODO: X Y\n* X t\n").all() == {"X", "Y"}


def test_headline_parts_and_offsets() -> None:
    line = "** TODO [#B] COMMENT Fix it [1/2] :a:b:"
    hl = parse_headline(line, {"TODO"})
    assert (hl.level, hl.todo, hl.priority, hl.commented) == (2, "TODO", "B", True)
    assert hl.title == "Fix it [1/2]" and hl.tags == ("a", "b")
    assert hl.todo_span is not None and line[slice(*hl.todo_span)] == "TODO"
    assert hl.tags_span is not None and line[slice(*hl.tags_span)] == ":a:b:"
    with pytest.raises(ParseError):
        parse_headline("*bold*", {"TODO"})


@pytest.mark.parametrize(
    ("path", "kind", "target", "anchor"),
    [
        ("id:123", ORG_ID, "123", None),
        ("file:a.org::*H", ORG_FILE, "a.org", "*H"),
        ("file+sys:/x", ORG_FILE, "/x", None),
        ("../b.org::#cid", ORG_FILE, "../b.org", "#cid"),
        ("*Some  heading", ORG_HEADING, "*Some heading", None),
        ("#cid", ORG_HEADING, "#cid", None),
        ("some text", ORG_HEADING, "some text", None),
        ("https://x.y/a\\]b", URL, "https://x.y/a]b", None),
        ("doom-module::lang org", URL, "doom-module::lang org", None),
    ],
)
def test_classify_link(path: str, kind: str, target: str, anchor: str | None) -> None:
    lk = classify_link(path, None, f"[[{path}]]", 3)
    assert lk is not None
    assert (lk.kind, lk.target, lk.anchor, lk.line) == (kind, target, anchor, 3)


def test_scan_text_reduces_links_and_counts_lines() -> None:
    ts = scan_text("a [[x][y]]\nb <https://q.r/s>\nc [[*T]] d", 10)
    assert ts.text == "a y\nb https://q.r/s\nc T d"
    assert [(lk.target, lk.line) for lk in ts.links] == [
        ("x", 10),
        ("https://q.r/s", 11),
        ("*T", 12),
    ]


def test_timestamp_forms() -> None:
    got = find_timestamps("<2024-01-02 Tue 8:00--9:30 +1d -2h> [2024-01-03]--[2024-01-04]", "body")
    assert [(t.start, t.end, t.repeater, t.warning, t.active) for t in got] == [
        ("2024-01-02T08:00", "2024-01-02T09:30", "+1d", "-2h", True),
        ("2024-01-03", "2024-01-04", None, None, False),
    ]


def test_warnings_name_the_file_and_line() -> None:
    doc = parse("* H\ntext\n:PROPERTIES:\n:A: 1\n:END:\n", "dir/a.org")
    (w,) = doc.warnings
    assert (w.path, w.line) == ("dir/a.org", 3)
    assert doc.units[1].properties == {}


@pytest.mark.parametrize(
    ("value", "iso"),
    [
        ("<2023-12-24 Sun>", "2023-12-24"),
        ("[2023-12-24 Sun 9:30]", "2023-12-24T09:30"),
        ("2017/10/14", "2017-10-14"),
        ("March 2024", None),
        ("2024-13-01", None),
    ],
)
def test_created_from_date_keyword(value: str, iso: str | None) -> None:
    assert parse(f"#+DATE: {value}\n", "a.org").created == iso


def test_a_dynamic_block_and_a_greater_block_hold_elements_not_raw_lines() -> None:
    # org-syntax *Dynamic Blocks*, *Greater Blocks*: their contents are elements, so
    # an affiliated keyword, a table formula or a nested block's delimiters are no text
    text = (
        "* Report\n"
        "#+BEGIN: clocktable :scope subtree\n"
        "#+CAPTION: Clock summary at [2019-09-22 Sun 11:21]\n"
        "| Headline | Time |\n"
        "| Tables   | 4:10 |\n"
        "#+TBLFM: $3=$2*150\n"
        "#+END:\n"
        "#+begin_center\n"
        "Centred [[https://example.org/c][text]].\n"
        "#+begin_src python\nx = 1\n#+end_src\n"
        "# a comment line\n"
        "#+end_center\n"
        "#+begin_verse\nA =verse= line\n#+end_verse\n"
    )
    doc = parse(text, "a.org")
    body = doc.units[1].body
    for gone in ("CAPTION", "TBLFM", "begin_src", "end_src", "a comment line"):
        assert gone not in body, gone
    assert "Headline Time" in body and "Centred text." in body and "A =verse= line" in body
    assert [lk.target for lk in doc.units[1].links] == ["https://example.org/c"]
    code = [u for u in doc.units if u.kind == CODE]
    assert [(u.body, u.line_start) for u in code] == [("x = 1", 10)]


def test_a_properties_drawer_inside_a_block_is_no_property_drawer() -> None:
    text = "* H\n#+begin_quote\n:PROPERTIES:\n:X: 1\n:END:\nquoted\n#+end_quote\n"
    unit = parse(text, "a.org").units[1]
    assert unit.properties == {} and unit.body == "quoted"


@pytest.mark.parametrize(
    ("text", "targets"),
    [
        ("see =[[https://a.org]]= and [[https://b.org]]", ["https://b.org"]),
        ("~https://a.org~ but https://b.org", ["https://b.org"]),
        ("=two\nlines [[https://a.org]] here= [[https://b.org]]", ["https://b.org"]),
        # a link that starts first holds a marker inside it
        ("[[https://a.org][a =b]] c= [[https://b.org]]", ["https://a.org", "https://b.org"]),
        ("[[https://a.org?x=1][d]] =v=", ["https://a.org?x=1"]),
        ("a=b [[https://a.org]] c=d", ["https://a.org"]),  # no verbatim: no PRE/POST
    ],
)
def test_no_link_is_read_inside_verbatim_or_code(text: str, targets: list[str]) -> None:
    # org-syntax *Emphasis Markers*: nothing inside =verbatim= or ~code~ is an object
    assert [lk.target for lk in scan_text(text, 1).links] == targets


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no heading\n",
        "* a\n** b\ntext\n*** c\n* d",
        "\ufeff* bom heading\nbody\n",
        "pre\r\n* crlf\r\n** deeper\r\nlast",
        "*not a heading\n * nor this\n*\n* yes\n",
        "* a\n\n",
        "* a\n** b\n* c\n*** skips\n** back\n",
    ],
)
def test_headings_found_without_the_tree_are_the_trees(text: str) -> None:
    tree = parse_tree(text)
    want = [(h.line_no - 1, h.level, h.parent) for h in tree.headings]
    assert heading_starts(text) == want
    doc = parse(text, "t.org")
    heads = [u for u in doc.units if u.kind == "heading"]
    assert [u.line_start for u in heads] == [h.line_no for h in tree.headings]
    assert [u.line_end for u in heads] == [
        h.line_no + len(h.section.lines) for h in tree.headings
    ]
    assert doc.units[0].line_end == max(1, len(tree.zeroth.lines))
