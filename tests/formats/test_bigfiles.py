"""Big and hostile inputs parse to what they say, or are refused with a clear
:class:`ParseError`. Inputs are generated (by ``bench/bigfiles.py`` or here), never
committed. How fast they parse, and that the time grows linearly, is measured by
``bench/bigfiles.py --ratios``; here the suite's timeout guards against a parse that
never ends."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from cairn.errors import ParseError
from cairn.formats import frontmatter, markdown, okf, text, transcript
from cairn.formats.markdown.syntax import plain_inline
from cairn.formats.org import MAX_OUTLINE_DEPTH
from cairn.formats.org import parse as org_parse
from cairn.model import Document
from cairn.sources import decode

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bigfiles.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bigfiles", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bigfiles", module)
    spec.loader.exec_module(module)
    return module


def _body(doc: Document) -> str:
    return "\n".join(u.body for u in doc.units)


# --- Org ------------------------------------------------------------------------------


def test_org_nesting_10000_deep_keeps_capped_outline_paths() -> None:
    """Full outline paths of 10,000 nested headings would hold 50 million titles: a path
    keeps the root and the nearest ancestors, at most MAX_OUTLINE_DEPTH titles."""
    source = _bench().org_deep(10_000)
    doc = org_parse(source, "deep.org")
    assert len(doc.units) == 10_001
    deepest = doc.units[-1]
    assert deepest.level == 10_000
    assert len(deepest.outline_path) == MAX_OUTLINE_DEPTH
    assert deepest.outline_path[0] == "Level 1"
    assert deepest.outline_path[-2:] == ("Level 9999", "Level 10000")
    assert max(len(u.outline_path) for u in doc.units) == MAX_OUTLINE_DEPTH
    shallow = doc.units[MAX_OUTLINE_DEPTH]
    assert shallow.outline_path == tuple(f"Level {k}" for k in range(1, MAX_OUTLINE_DEPTH + 1))
    assert doc.units[MAX_OUTLINE_DEPTH + 1].outline_path[1] == "Level 3"


def test_org_many_headings_are_all_units() -> None:
    doc = org_parse(_bench().org_headings(30_000), "many.org")
    assert len(doc.units) == 30_001


def test_org_unclosed_blocks_and_drawers_stay_text() -> None:
    source = _bench().org_unclosed(2.0)
    doc = org_parse(source, "unclosed.org")
    body = _body(doc)
    assert "canyon" in body and "#+begin_src" in body
    small = "* A\n#+BEGIN_SRC python\nprint(1)\n* B\n:LOGBOOK:\nnever closed\n"
    doc = org_parse(small, "s.org")
    assert [u.title for u in doc.units] == ["s", "A", "B"]
    assert "print(1)" in doc.units[1].body and "never closed" in doc.units[2].body


# --- Markdown -------------------------------------------------------------------------


@pytest.mark.slow
def test_markdown_long_paragraph_keeps_every_tag_and_link() -> None:
    doc = markdown.parse(_bench().markdown_paragraph(12_000), "para.md")
    unit = doc.units[0]
    assert len(unit.tags) == 12_000
    urls = [link.target for link in unit.links if link.kind == "url"]
    assert "http://u.rl/7" in urls and "http://www.x7.org" in urls and "mailto:a7@b.org" in urls
    assert sum(1 for link in unit.links if link.kind == "wikilink") == 12_000


@pytest.mark.slow
def test_markdown_one_long_line_keeps_every_link() -> None:
    doc = markdown.parse(_bench().markdown_line(32_000), "line.md")
    assert sum(1 for link in doc.units[0].links if link.target == "x") == 32_000


def test_huge_front_matter_is_kept_as_text_with_a_warning() -> None:
    """A front matter block this large is not loaded as YAML (megabytes of YAML take
    minutes): it stays text, with a warning."""
    source = _bench().frontmatter_block(1.5)
    doc = markdown.parse(source, "fm.md")
    assert doc.metadata == {}
    assert any("too large" in w.message for w in doc.warnings)
    assert "tag1234" in doc.units[0].body
    assert doc.units[-1].title == "Body"
    fm = frontmatter.split("---\n" + "k: v\n" * 300_000 + "---\nbody\n")
    assert fm.failed and fm.body == "body\n" and fm.end_line == 300_002


def test_yaml_alias_bomb_is_refused() -> None:
    doc = markdown.parse(_bench().yaml_alias_bomb(12), "bomb.md")
    assert doc.metadata == {}
    assert any("alias expansion" in w.message for w in doc.warnings)


# --- not text -------------------------------------------------------------------------

PARSERS: list[Callable[[str, str], Document]] = [
    markdown.parse,
    okf.parse,
    org_parse,
    text.parse,
    transcript.parse,
]


@pytest.mark.parametrize("parse", PARSERS)
def test_nul_characters_are_refused_naming_the_line(parse: Callable[[str, str], Document]) -> None:
    with pytest.raises(ParseError, match="NUL") as info:
        parse("# Title\n\nok\nbad \x00 here\n", "n.md")
    assert info.value.line == 4 and info.value.path == "n.md"


@pytest.mark.parametrize("parse", PARSERS)
def test_lone_surrogates_are_refused(parse: Callable[[str, str], Document]) -> None:
    raw = b"# Title\n\ncaf\xe9\n".decode("utf-8", errors="surrogateescape")
    with pytest.raises(ParseError, match="invalid Unicode") as info:
        parse(raw, "s.md")
    assert info.value.line == 3


@pytest.mark.parametrize("parse", PARSERS)
def test_binary_file_named_md_is_refused(parse: Callable[[str, str], Document]) -> None:
    blob = bytes(range(1, 32)) * 300 + b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ParseError, match="binary content"):
        parse(blob.decode("latin-1"), "image.md")


def test_invalid_utf8_is_decoded_with_a_warning_and_parsed() -> None:
    decoded = decode(b"# Caf\xe9\n\nsome \xff\xfe text\n")
    assert decoded.warnings and "invalid UTF-8 at line 1" in decoded.warnings[0]
    doc = markdown.parse(decoded.text, "bad.md")
    assert doc.title == "Caf\ufffd" and "text" in doc.units[1].body


def test_control_characters_in_ordinary_text_are_fine() -> None:
    doc = markdown.parse("# Title\n\nform\x0cfeed and \x1b[1mescape\x1b[0m\n", "c.md")
    assert "feed" in doc.units[1].body


_PLAIN_CHARS = "ab xy:.,;!?'\"()/|-+=%>{}wt\t\n  "


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_PLAIN_CHARS, max_size=200))
def test_plain_inline_text_is_what_markdown_it_gives(source: str) -> None:
    """Inline tokens with no markup are not inline-parsed (half the cost of prose); the
    text plain_inline gives is the one stock markdown-it's inline rules give."""
    for tok in MarkdownIt("commonmark").parse(source):
        if tok.type == "inline":
            stock = "".join(
                "\n" if c.type in ("softbreak", "hardbreak") else c.content
                for c in tok.children or []
            )
            assert plain_inline(tok.content) == stock


def test_plain_paragraphs_keep_their_text() -> None:
    doc = markdown.parse("# T\n\nLine 1: some  \n   words\there\t \nend -- 10:30 a+b=c\n", "p.md")
    assert doc.units[1].body == "Line 1: some\nwords\there\t\nend -- 10:30 a+b=c"


def test_gc_is_paused_only_for_big_texts_and_resumed() -> None:
    import gc

    from cairn.formats.guard import GC_PAUSE_CHARS, gc_paused

    assert gc.isenabled()
    with gc_paused(GC_PAUSE_CHARS + 1):
        assert not gc.isenabled()
    assert gc.isenabled()
    with gc_paused(10):
        assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused(GC_PAUSE_CHARS + 1):
        raise ValueError
    assert gc.isenabled()
