"""Org plain links and verbatim objects are found from their marker characters (a colon,
``=``/``~``) rather than by a regex tried at every position: the same spans as the
org-syntax regexes written the plain way, on hand-made and generated text."""

from __future__ import annotations

import re
from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.formats.org import objects
from cairn.formats.org.objects import link_spans, verbatim_spans

# the reference forms: each tried at every position of the text
_PLAIN_CHARS = r"[^\s\[\]<>()]"
PLAIN = re.compile(
    r"(?<![\w+.-])([A-Za-z][A-Za-z0-9+.-]*+):("
    rf"(?:{_PLAIN_CHARS}++|\((?:{_PLAIN_CHARS}++|\({_PLAIN_CHARS}*+\))*+\))++"
    r")"
)
VERB_OPEN = re.compile(r"(?:^|(?<=[\s\-({'\"]))([=~])(?=\S)", re.M)
VERB_CLOSE = re.compile(r"(?<=\S)([=~])(?=[\s\-.,;:!?')}\[\"\\]|$)", re.M)


def reference_verbatim(text: str) -> list[tuple[int, int]]:
    closers: dict[str, list[int]] = {}
    for m in VERB_CLOSE.finditer(text):
        closers.setdefault(m.group(1), []).append(m.start())
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in VERB_OPEN.finditer(text):
        i = m.start(1)
        if i < pos:
            continue
        ends = closers.get(m.group(1), [])
        k = bisect_right(ends, i + 1)
        if k < len(ends) and text.count("\n", i, ends[k]) <= 1:
            pos = ends[k] + 1
            spans.append((i, pos))
    return spans


def plain_spans(text: str, start: int, end: int) -> list[tuple[int, int, str, str]]:
    return [
        (m.start(), m.end(), m.group(1), m.group(2))
        for m in objects._plain_matches(text, start, end)
    ]


def reference_plain(text: str, start: int, end: int) -> list[tuple[int, int, str, str]]:
    return [(m.start(), m.end(), m.group(1), m.group(2)) for m in PLAIN.finditer(text, start, end)]


CASES = [
    "see https://orgmode.org/manual and mailto:a@b.c.",
    "x:y 9abc:def é:x _a:b a_b:c -http://x +ftp:y .file:z",
    "https://a.b/(c(d)e)f) then http://q:r:s/t and a:b:c",
    "[[https://x.y][desc]]http://z.w after a link; http:",
    "=code= ~verb~ a=b= (=x=) '~y~' \"=z=\" -=w=- ==a== =~mixed=~",
    "=open\nclose= =a\nb\nc= x =y=.\u00a0=nbsp= \u2003~em~",
    "=\n= ~ x~ ~x ~ =x=y= =x==",
    "",
    ":::: a: :b http://",
]

TEXT = st.text(
    alphabet=st.sampled_from(list("ab9:/._-+()[]<>=~ \n\t'\"é\u00a0hpt")), max_size=60
)


@pytest.mark.parametrize("text", CASES)
def test_plain_links_and_verbatim_match_the_reference_scans(text: str) -> None:
    assert plain_spans(text, 0, len(text)) == reference_plain(text, 0, len(text))
    assert verbatim_spans(text) == reference_verbatim(text)


@settings(max_examples=400, deadline=None)
@given(TEXT, st.integers(0, 60), st.integers(0, 60))
def test_generated_text_scans_as_the_reference_does(text: str, a: int, b: int) -> None:
    start, end = min(a, b, len(text)), min(max(a, b), len(text))
    assert plain_spans(text, start, end) == reference_plain(text, start, end)
    assert verbatim_spans(text) == reference_verbatim(text)


def test_links_inside_verbatim_and_after_bracket_links_are_read_as_before() -> None:
    spans = link_spans("=http://in.verbatim= [[id:x][X]]https://after.link/ ok")
    assert [(s, e) for s, e, _, _ in spans] == [(21, 32), (32, 51)]
