"""Losslessness of the Org tree and robustness of the parser.

* Every ``.org`` file of ../shared/corpus/org round-trips byte for byte (read as bytes,
  decoded with ``surrogateescape``) and parses without raising.
* Any string round-trips (Hypothesis), including CRLF, lone CR, a BOM, NULs, tabs and no
  final newline.
* Hostile inputs (a 10,000-heading file, one 5 MB paragraph, thousands of unclosed
  blocks, drawers, links and timestamps) parse in bounded time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.errors import ParseError
from cairn.formats.guard import check_text
from cairn.formats.org import MAX_OUTLINE_DEPTH, parse, parse_tree, serialize
from cairn.model import HEADING

ORG_CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "org"


def _corpus_files() -> list[Path]:
    return sorted(ORG_CORPUS.rglob("*.org")) if ORG_CORPUS.is_dir() else []


@pytest.mark.corpus
def test_corpus_round_trip_and_parse() -> None:
    files = _corpus_files()
    assert len(files) > 1000
    mismatched: list[str] = []
    for path in files:
        raw = path.read_bytes()
        text = raw.decode("utf-8", errors="surrogateescape")
        if serialize(parse_tree(text)).encode("utf-8", errors="surrogateescape") != raw:
            mismatched.append(str(path))
        doc = parse(text, str(path.relative_to(ORG_CORPUS)))
        assert doc.units[0].kind == "preamble"
        assert [u.ordinal for u in doc.units] == list(range(len(doc.units)))
        starts = [u.line_start for u in doc.units[1:]]
        assert starts == sorted(starts), path
    assert mismatched == []


_ORGISH = st.text(
    alphabet=st.sampled_from(
        [*"* :#+-|[]<>%\t\r\n\x00\ufeffabcTODOEND_0123456789", "\udcff", "é", "日"]
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(_ORGISH)
def test_any_string_round_trips_and_parses(text: str) -> None:
    """The tree takes any string; the parser any string that is text (else it raises
    the guard's ParseError, nothing else)."""
    assert serialize(parse_tree(text)) == text
    try:
        check_text(text, "x.org")
    except ParseError:
        with pytest.raises(ParseError):
            parse(text, "x.org")
        return
    doc = parse(text, "x.org")
    assert [u.ordinal for u in doc.units] == list(range(len(doc.units)))
    for u in doc.units:
        assert u.line_start <= u.line_end or u.kind == "preamble"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "no newline",
        "* h",
        "\ufeff* h\r\n:PROPERTIES:\r\n:ID: x\r\n:END:\r\n",
        "a\rb\r\n\t* x\n",
        "\r\n\r\n",
        "*\n**\n* \n",
    ],
)
def test_edge_strings_round_trip(text: str) -> None:
    assert serialize(parse_tree(text)) == text
    parse(text, "edge.org")


def test_crlf_bom_tabs() -> None:
    text = "\ufeff#+TITLE: T\r\n* TODO Task\t:a:b:\r\n\tSome\ttext.\r\n"
    doc = parse(text, "x.org")
    assert doc.title == "T"
    (h,) = [u for u in doc.units if u.kind == HEADING]
    assert (h.todo, h.title, h.tags) == ("TODO", "Task", ("a", "b"))
    assert h.body == "\tSome\ttext."
    assert "\r" not in h.body + h.title


def test_bold_at_line_start_and_empty_title() -> None:
    doc = parse("*bold* text\n* \n** child\n*\n", "x.org")
    hs = [u for u in doc.units if u.kind == HEADING]
    assert [(h.level, h.title) for h in hs] == [(1, ""), (2, "child")]
    assert doc.units[0].body == "*bold* text"
    assert hs[1].body == "*"


def _parses_and_round_trips(text: str) -> None:
    """``text`` parses and its tree serializes back to it. How the time grows with such
    inputs is measured by ``bench/bigfiles.py --ratios``; here the suite's timeout
    guards against a parse that never ends."""
    parse(text, "big.org")
    assert serialize(parse_tree(text)) == text


@pytest.mark.slow  # a large generated input: 10,000 headings parsed and round-tripped
def test_ten_thousand_headings() -> None:
    parts = []
    for i in range(10_000):
        level = 1 + i % 5
        parts.append("*" * level + f" TODO Heading {i} :t{i % 7}:\n")
        parts.append(f"Body {i} with [[id:x{i}][link]] <2024-01-0{1 + i % 9} Mon>.\n")
    text = "".join(parts)
    doc = parse(text, "big.org")
    hs = [u for u in doc.units if u.kind == HEADING]
    assert len(hs) == 10_000
    assert hs[-1].outline_path[-1] == "Heading 9999" and len(hs[-1].outline_path) == 5
    _parses_and_round_trips(text)


@pytest.mark.slow  # a large generated input: a 5 MB paragraph parsed and round-tripped
def test_five_megabyte_paragraph() -> None:
    word = "lorem ipsum [[dolor *sit* amet <2024 consectetur https://x.y/z "
    text = "* One\n" + word * (5_000_000 // len(word))
    doc = parse(text, "big.org")
    assert len(doc.units[1].body) > 4_000_000
    _parses_and_round_trips(text)


@pytest.mark.parametrize(
    "unit",
    [
        "#+begin_src x\n",
        ":DRAWER:\n",
        "[[",
        "[[a][",
        "<2024-01-01 ",
        "[2024-01-01 Mon 10:00-",
        "https://a(b(c(",
        ":PROPERTIES:\n:A: b\n",
        "#+TODO: A B | C\n",
        "<<",
        "%%(",
        "| a | b\n",
        "- [ ] \n",
        "a-",
        "<https://a.b> https://c.d ",
        "<2024-01-01 Mon> <%%(x)> ",
        "[[a\\]",
    ],
)
def test_pathological_repetition_parses_and_round_trips(unit: str) -> None:
    text = "* H\n" + unit * (400_000 // len(unit))
    _parses_and_round_trips(text)


def test_long_heading_lines_parse_and_round_trip() -> None:
    spaces = "* a" + " " * 300_000 + "x:\n"
    tags = "* a " + ":t" * 150_000 + " x\n"
    many = "* " + "w :t: " * 60_000 + "\n"
    for text in (spaces, tags, many):
        _parses_and_round_trips(text * 3)


def test_deep_nesting_is_not_recursive() -> None:
    depth = 3000
    text = "".join("*" * d + f" L{d} :t{d % 3}:\n:PROPERTIES:\n:CATEGORY: c{d}\n:END:\n"
                   for d in range(1, depth + 1))
    doc = parse(text, "deep.org")  # a recursive parser would overflow the stack here
    last = doc.units[-1]
    assert last.level == depth and len(last.outline_path) == MAX_OUTLINE_DEPTH
    assert last.outline_path[0] == "L1" and last.outline_path[-1] == f"L{depth}"
    assert last.parent == depth - 1
    assert set(last.inherited_tags) == {"t0", "t1", "t2"} - set(last.tags)
    assert last.extra.get("inherited_properties") is None  # own CATEGORY wins
