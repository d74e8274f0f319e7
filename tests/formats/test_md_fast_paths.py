"""The big-file shortcuts of the Markdown parser change nothing it produces:
bulk line tables and paragraph stop lines (``blockstate``), rule dispatch on the
character (``dispatch``), and inline content cut into plain runs and parsed parts
(``inline``). Each is compared with stock markdown-it (``syntax.build(fast=False)``):
the block tokens, and the whole :class:`Document` :func:`parse` gives, on the shared
corpus, on every construct across line ends, and on random text."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import cairn.formats.markdown as markdown
from cairn.formats.markdown import inline
from cairn.formats.markdown.syntax import _markdown_it, build
from cairn.model import Document

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
BENCH = Path(__file__).resolve().parents[2] / "bench" / "bigfiles.py"
STOCK = {ob: build(ob, fast=False) for ob in (True, False)}


def _block_tokens(md: MarkdownIt, text: str) -> list[tuple[Any, ...]]:
    return [
        (t.type, t.tag, t.map, t.content, t.markup, t.nesting, t.info, t.level, t.meta.get("id"))
        for t in md.parse(text)
    ]


def _stock_parse(monkeypatch: pytest.MonkeyPatch, text: str, rel: str) -> Document:
    with monkeypatch.context() as m:
        m.setattr(markdown, "_markdown_it", lambda ob: STOCK[ob])
        return markdown.parse(text, rel)


def _stock_plain(monkeypatch: pytest.MonkeyPatch, text: str) -> list[Any]:
    with monkeypatch.context() as m:
        m.setattr(markdown, "_markdown_it", lambda ob: STOCK[ob])
        return markdown.analyse(text, "x.md", obsidian=False).sections


def _same(monkeypatch: pytest.MonkeyPatch, text: str, rel: str = "note.md") -> None:
    for ob in (True, False):
        assert _block_tokens(_markdown_it(ob), text) == _block_tokens(STOCK[ob], text)
    assert markdown.parse(text, rel) == _stock_parse(monkeypatch, text, rel)
    fast = markdown.analyse(text, "x.md", obsidian=False).sections
    assert fast == _stock_plain(monkeypatch, text)


ACROSS_LINES = """# Title
para *starts
plain line
ends* here and [a link
plain
](target.md) then `code
plain` and $x
plain$ and <span
class="x">html</span>
- item [[Note]] #tag
  lazy plain line
plain lazy
- item two ![[pic.png|300]] and [[Other#Part|alias]] ^block-1
plain
See [text](dest
"title") and [ref]
and ==mark
plain== and %%comment
plain%% and ~~strike
plain~~ and \\
hard break{SP}
two spaces and [^1] and ^[inline
note] www.example.com plain http://x.org mail@example.com &amp; &#35;
[text](
next-line.md)
a [ref](
plain words after an open parenthesis
and [ref] (
plain again
$5 at a line start after [ref] and *x
[ref]: https://example.org
[^1]: a footnote
> quote [[Q]] #qtag
> lazy *em
plain* in quote
$5 and $6
\\$not math
| a | b |
|---|---|
| [[T\\|x]] | y |
""".replace("{SP}", "  ")


CUTS = [
    "[ref](\nplain words\n\n[ref]: /u\n",  # "(" ends the part: no tail
    "![ref](  \nplain words\n\n[ref]: /u\n",
    "a [link\nplain\n](t.md)\n",  # brackets are not closed
    "[[N]] [x\nplain\n](t.md)\n",
    "[[N]] x\n$a$ 5\n",  # no cut before "$" (dollar math reads src[-1] at 0)
    "[[N]] x\n\\$a$ 5\n",
    "$a$ b\nplain 5\n",  # nor a tail after a part that starts with "$"
    "*a\nplain\nb*\n",
    "[[N]] *a\nplain\nb*\n",
    "`a\nplain\nb`\n",
    "<span\nplain\nclass='x'>t</span>\n",
    "<!-- a\nplain\n-->\n",
    "%%a\nplain\nb%%\n",
    "==a\nplain\nb==\n",
    "~~a\nplain\nb~~\n",
    "$a\nplain\nb$ c\n",
    "[[a]] x  \nplain\n",  # a hard break after a closed line
    "[[a]] x \nplain\n",
    "[[a]] x\\\nplain\n",
    "^[a\nplain\nb]\n",
    "x ^[[a]]\nplain\nb]\n",
    "[[a]](\nurl)\n",  # a link, not a wikilink, where there is no wikilink rule
    "[[a]][\nb]\n\n[b]: /u\n",
    "[[ ]] x\nplain\n](u)\n",
    "#tag x\nplain @ing\nwww.x.org and http://y.org\nplain\n",
    "a&amp;\nplain\n&#35;b\n",
]


@pytest.mark.parametrize("case", CUTS)
def test_no_cut_changes_what_is_parsed(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in (case, "- " + case.replace("\n", "\n  ", 1), "plain first\n" + case):
        _same(monkeypatch, text)


def test_every_construct_across_line_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    quoted = "> " + ACROSS_LINES.replace("\n", "\n> ")
    for text in (ACROSS_LINES, ACROSS_LINES.replace("\n", "\n\n"), quoted):
        _same(monkeypatch, text)


@pytest.mark.corpus
def test_the_shared_corpus_parses_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(CORPUS.rglob("*.md"))
    if not files:
        pytest.skip("the shared corpus is not beside this clone")
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        _same(monkeypatch, text, path.name)


def test_the_generated_big_files_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("bigfiles", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bigfiles", bench)
    spec.loader.exec_module(bench)
    for text in (bench.markdown_note(0.2), bench.frontmatter_block(0.05)):
        assert markdown.parse(text, "big.md") == _stock_parse(monkeypatch, text, "big.md")


_PIECE = st.sampled_from(
    ["word", " ", "  ", "\t", "\n", "\n\n", "[[Note]]", "![[a.png|20]]", "[[ ]]", "#tag", "#1",
     "[x](y.md)", "[x](", ")", "](", "[", "]", "*", "_", "**", "~~", "`", "$", "$$", "\\",
     "==", "%%", "<b>", "<", ">", "&amp;", "http://a.b", "www.c.d", "e@f.gh", "^b1", "^[",
     "[^1]", "- ", "1. ", "> ", "# ", "---", "=", "(", '"', "x", "xmpp", "mailto:a@b.c"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECE, max_size=30))
def test_random_text_parses_the_same(pieces: list[str]) -> None:
    text = "".join(pieces)
    with pytest.MonkeyPatch.context() as mp:
        _same(mp, text)
        _same(mp, "[^1]: n\n[x]: /u\n\n" + text)  # with a reference and a footnote defined


# --- the pieces of inline.py ------------------------------------------------------------

_TAIL = re.compile(inline.NOT_PLAIN.pattern + r"|[)>]")
_ALPHA = st.sampled_from(
    ["a", " ", "\n", "=", "==", "%", "%%", "x", "xmpp", "xmp", "w", "www.", "h", "http", "htt",
     "m", "mailto", "mailt", "[", "#", "@", ")", ">", "&", "`"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHA, max_size=40), st.integers(0, 60), st.sampled_from([1 << 16, 8, 7]))
def test_markup_search_is_not_plain_search(parts: list[str], lo: int, window: int) -> None:
    text = "".join(parts)
    found = inline._Markup(text)
    pos = 0
    while True:
        m = inline.NOT_PLAIN.search(text, pos)
        assert found.search(pos) == (m.start() if m else -1)
        if m is None:
            break
        pos = m.start() + 1
    lo = min(lo, len(text))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(inline, "_WINDOW", window)
        got = inline._last_tail_stop(text, lo)
    later = deque(_TAIL.finditer(text, lo), maxlen=1)
    want = later[0].start() if later else -1
    assert (got < 0) == (want < 0)
    if got >= 0:
        assert got >= lo and text.count("\n", 0, got) == text.count("\n", 0, want)


_SIMPLE = st.sampled_from(
    ["a", "b c", " ", "  ", "\t", "\n", "[[x]]", "![[y|z]]", "!", "#t", "=", "%", ":", "w", "-",
     "+", "(", ")", ">", "{", "é", "[[a#b|c]]"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SIMPLE, min_size=1, max_size=16))
@example(["a", "  ", "\n", "b"])  # a hard break
@example(["[[x]]", "  ", "\n", "  ", "b"])
@example(["a", " ", "\n", "\t", "![[y|z]]", " ", "\n"])
@example(["[[x]]", "  ", "\n"])
def test_simple_tokens_are_markdown_its(parts: list[str]) -> None:
    text = "".join(parts).lstrip(" \t\n")
    if not text or not inline._simple(text, True):
        return
    md = STOCK[True]

    def flat(tokens: list[Any]) -> list[tuple[Any, ...]]:
        return [(t.type, t.tag, t.content, t.markup, t.nesting, t.meta, t.level) for t in tokens]

    assert flat(inline.simple_tokens(text)) == flat(md.inline.parse(text, md, {}, []))


def test_the_fast_parser_is_installed() -> None:
    md = _markdown_it(True)
    assert type(md.inline).__name__ == "DispatchingInline"
    assert type(md.block).__name__ == "DispatchingBlock"
    tokens = md.parse("- a [[N]] #t\nplain\nplain\n\nSee [x](y) `c`\n")
    kinds = [c.type for t in tokens if t.type == "inline" for c in t.children or []]
    assert inline.PLAIN_RUN in kinds  # the plain lines of the list item were not parsed
