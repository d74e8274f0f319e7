"""The linear paragraph rules (:mod:`cairn.formats.markdown.paragraphs`) give exactly
the tokens of markdown-it's own ``paragraph`` and ``lheading`` rules: on the shared
corpus, on Markdown made of every block construct, and on random text; and a paragraph
of many lines takes time linear in its length."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.rules_block import lheading, paragraph

from cairn.formats.markdown.syntax import _markdown_it

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"

SAMPLE = """# Title
Setext heading
===
para line
second line
- a list item
para again
> quote
para
---
para
1. one
para
```
code
```
para
<div>html</div>
para
## heading
para [^1]
[^1]: a note
para %% comment %%
%% block
comment %%
| a | b |
| - | - |
| 1 | 2 |
lazy | line
text
-- not hr
* * *
    indented continuation
tail
"""


def _original(obsidian: bool) -> MarkdownIt:
    md: MarkdownIt = _markdown_it.__wrapped__(obsidian)  # type: ignore[attr-defined]
    md.block.ruler.at("paragraph", paragraph)
    md.block.ruler.at("lheading", lheading)
    return md


def _tokens(md: MarkdownIt, text: str) -> list[Any]:
    def flat(tokens: Any) -> list[Any]:
        out = []
        for t in tokens or []:
            out.append((t.type, t.tag, t.map, t.content, t.markup, t.nesting, t.info))
            out.extend(flat(t.children))
        return out

    return flat(md.parse(text))


ORIGINAL = {ob: _original(ob) for ob in (True, False)}


@pytest.mark.parametrize("obsidian", [True, False])
def test_the_same_tokens_as_markdown_it_on_every_block_construct(obsidian: bool) -> None:
    fast = _markdown_it(obsidian)
    assert fast.block.ruler.__rules__[-1].fn.__module__.endswith("paragraphs")
    for text in (SAMPLE, SAMPLE.replace("\n", "\n\n"), "> " + SAMPLE.replace("\n", "\n> ")):
        assert _tokens(fast, text) == _tokens(ORIGINAL[obsidian], text)


@pytest.mark.corpus
@pytest.mark.parametrize("obsidian", [True, False])
def test_the_same_tokens_on_the_corpus(obsidian: bool) -> None:
    files = sorted(CORPUS.rglob("*.md"))
    if not files:
        pytest.skip("the shared corpus is not beside this clone")
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        assert _tokens(_markdown_it(obsidian), text) == _tokens(ORIGINAL[obsidian], text), path


_LINE = st.sampled_from(
    ["text", "- item", "1. one", "> q", "---", "===", "# h", "```", "~~~", "<div>", "[^a]: n",
     "%% c %%", "%%", "| a |", "|-|", ":-", "    code", "", "* * *", "+ x", "$$", "_ _ _"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=14), st.booleans())
def test_the_same_tokens_on_random_lines(lines: list[str], obsidian: bool) -> None:
    text = "\n".join(lines)
    assert _tokens(_markdown_it(obsidian), text) == _tokens(ORIGINAL[obsidian], text)


def test_one_long_paragraph_gives_the_same_tokens() -> None:
    """A paragraph of 80,000 lines; how its parse time grows is measured by
    ``bench/bigfiles.py --only md-plain-paragraph --ratios``."""
    text = "# Big\n\n" + "lorem ipsum dolor sit amet\n" * 80_000
    assert _tokens(_markdown_it(True), text) == _tokens(ORIGINAL[True], text)
