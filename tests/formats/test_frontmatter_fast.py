"""The simple-YAML reader (:mod:`cairn.formats.yaml_simple`) gives ruamel.yaml's result
for every front matter block it accepts, and declines what it cannot read exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.formats import frontmatter as fm
from cairn.formats.yaml_safe import load_with_ruamel, load_yaml
from cairn.formats.yaml_simple import simple_mapping

ACCEPTED = [
    "title: Hello\n",
    "country: NO\nswitch: on\ntime: 12:30\nyes_bool: true\nno: False\n",
    "a: 1\nb: -2\nc: 0o17\nd: 0x1F\ne: 1_000\nf: 017\ng: +5\n",
    "a: 1.5\nb: .5\nc: 1e3\nd: .inf\ne: -.Inf\nf: .nan\ng: 1.\nh: 6.02e+23\n",
    "a: ~\nb: null\nc: Null\nd:\ne: NULL\n",
    "created: 2024-01-05\nat: 2024-01-05 09:30\nts: 2001-12-14t21:59:43.10-05:00\n",
    "when: 2024-1-5 9:30:00\nday: 5 May 2023\nlast: 2023/05/01\n",
    "s: 'it''s'\nd: \"two  spaces\"\ne: ''\nf: \"\"\ng: '# not a comment'\n",
    "tags: [a, b]\nempty: []\nsp: [ a , b c ]\nq: [\"x y\", 'z']\nn: [1, true, ~]\n",
    "tags:\n  - one\n  - two\nnext: x\n",
    "tags:\n- one\n-\n- 'q'\n- [a, b]\nnext: x\n",
    "url: https://example.com/a?b=c#frag\nk: a:b\nlang: C#\n",
    "description: All transactions, with inputs,\n  outputs and\n   fees.\nnext: 1\n",
    "Date created: 2023-05-01\nΤίτλος: Καλημέρα\nキー: 値\n",
    "a: x  y\nb: trailing   \nc:   lead\n",
    "a: '[[Note]]'\nb: \"[[Other|alias]]\"\nc:\n  - \"[[People]]\"\n",
    "ver: 1.2.3\nneg: -foo\ndots: ...\nmid: a - b\nq: what?\n",
    "a: 12:30:45\nb: 190:20:30\nc: 0b101\nd: 1_2.5\n",
    "\n\na: 1\n\n\nb:\n\n  - x\n\n  - y\n\nc: 2\n",
    "e: yes\nf: Y\ng: off\n",
    "created: {{date}}\nlast: {{date}}  \nl:\n  - {{title}}\n",
]

DECLINED = [
    "a: =\n",
    "a: <<\n",
    "c#: C sharp\n",
    "a: 1 # comment\n",
    "# comment\na: 1\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "<<: {a: 1}\n",
    "a: {b: 1}\n",
    "created: {{date: x}}\n",
    "created: {{date}} x\n",
    "created: {{ date }}\n",
    "a:\n  b: 1\n",
    "a: |\n  text\n",
    "a: >\n  text\n",
    "a: 'multi\n  line'\n",
    "a: \"esc\\n\"\n",
    "a: 1\na: 2\n",
    "a:\tb\n",
    "a: b: c\n",
    "a: b:\n",
    "- a\n- b\n",
    "just text\n",
    "  a: 1\n  b: 2\n",
    "a:\n  - x\n   - y\n",
    "a:\n  - x\n    more\n",
    "a: [x, [y]]\n",
    "a: [x,]\n",
    "a: [x: 1]\n",
    "a: [\"x, y\"]\n",
    "a: \"x\" y\n",
    "%YAML 1.1\n---\na: yes\n",
    "a: x\u2028y\n",
    "a: \x85\n",
    "a: \ufeffx\n",
    "a: \x07\n",
    "? a\n: b\n",
    "\"a\": 1\n",
    "a: - b\n",
    "a: @x\n",
    "a: `x`\n",
    "a: x\n  - y\n",
]


@pytest.mark.parametrize("raw", ACCEPTED)
def test_simple_blocks_read_fast_give_ruamels_result(raw: str) -> None:
    assert simple_mapping(raw) is not None
    fast_lines: dict[str, int] = {}
    slow_lines: dict[str, int] = {}
    fast = load_yaml(raw, "n.md", 2, key_lines=fast_lines)
    slow = load_with_ruamel(raw, "n.md", 2, key_lines=slow_lines)
    assert fast == slow
    assert list(fast[0]) == list(slow[0])  # key order too
    assert fast_lines == slow_lines


@pytest.mark.parametrize("raw", DECLINED)
def test_blocks_beyond_the_simple_shape_are_left_to_ruamel(raw: str) -> None:
    assert simple_mapping(raw) is None
    assert load_yaml(raw, "n.md", 2) == load_with_ruamel(raw, "n.md", 2)


@pytest.mark.corpus
def test_every_corpus_front_matter_block_reads_as_ruamel_reads_it(corpus: Path) -> None:
    if not corpus.is_dir():
        pytest.skip("../shared/corpus is absent")
    blocks = 0
    fast = 0
    for path in sorted(corpus.rglob("*.md")):
        text = path.read_bytes().decode("utf-8", "replace")
        front = fm.split(text, path.name)
        if front.kind != "yaml" or len(front.raw) > fm.MAX_CHARS:
            continue
        blocks += 1
        fast += simple_mapping(front.raw.replace("\r", "")) is not None
        got_lines: dict[str, int] = {}
        want_lines: dict[str, int] = {}
        got = load_yaml(front.raw, path.name, 2, key_lines=got_lines)
        want = load_with_ruamel(front.raw, path.name, 2, key_lines=want_lines)
        assert got == want, path
        assert list(got[0]) == list(want[0]), path
        assert got_lines == want_lines, path
    assert blocks > 500
    assert fast * 2 > blocks  # the fast path is the common case, not a rarity


_SAFE = st.text(alphabet=st.sampled_from(list("aZnNtTyY019 .-_/:,\u00a0é")), max_size=10)
_WORD = st.one_of(
    _SAFE,
    _SAFE,
    _SAFE,
    st.sampled_from(["true", "No", "~", "null", "1.5e3", "0x1F", "-3", ".inf", "2024-01-05",
                     "2024-01-05 09:30", "'q''s'", '"d q"', "{{date}}", "12:30", "+1", "1_0"]),
    st.text(alphabet=st.sampled_from(list("aZ09 .-_:/#,[]{}'\"~!&*|>?@%`=<+\u00a0é")),
            max_size=12),
)
_NAME = st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9 _.-]{0,6}[a-z]", fullmatch=True)
_KEY = st.one_of(_NAME, _NAME, _NAME, _WORD)
_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", _KEY, _WORD),
    st.builds(lambda k: f"{k}:", _KEY),
    st.builds(lambda v: f"  - {v}", _WORD),
    st.builds(lambda v: f"- {v}", _WORD),
    st.builds(lambda v: f"   {v}", _WORD),
    st.builds(lambda v: f"k: [{v}]", _WORD),
    st.just(""),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=8))
def test_generated_blocks_the_fast_reader_accepts_read_as_ruamel_reads_them(
    lines: list[str],
) -> None:
    raw = "\n".join(lines) + "\n"
    if not raw.strip() or simple_mapping(raw) is None:
        return
    fast_lines: dict[str, int] = {}
    slow_lines: dict[str, int] = {}
    fast = load_yaml(raw, "n.md", 2, key_lines=fast_lines)
    slow = load_with_ruamel(raw, "n.md", 2, key_lines=slow_lines)
    assert fast == slow
    assert list(fast[0]) == list(slow[0])
    assert fast_lines == slow_lines
