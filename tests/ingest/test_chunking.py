"""Chunking: boundaries (paragraph, list item, sentence, word), overlap, profiles."""

from __future__ import annotations

import itertools
import re

from cairn.ingest.chunking import (
    ChunkConfig,
    Profile,
    chunk_text,
    content_hash,
    count_tokens,
    metadata_prefix,
)


def _para(p: int, n: int = 6) -> str:
    return " ".join(f"Paragraph {p} sentence {i} talks about topic{p}x{i}." for i in range(n))


def test_short_unit_is_one_chunk_text_equals_window() -> None:
    body = "  A short note about compost.\n"
    chunks = chunk_text("u1", body, Profile(target=50, overlap=10))
    assert len(chunks) == 1
    c = chunks[0]
    assert c.text == c.window == "A short note about compost."
    assert body[c.start : c.end] == c.text
    assert c.unit_id == "u1" and c.ordinal == 0


def test_blank_body_has_no_chunk() -> None:
    assert chunk_text("u", " \n\n ", Profile(50, 10)) == []


def test_count_tokens_words_and_punctuation() -> None:
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("state-of-the-art") == 7


def test_paragraph_boundaries_and_no_text_lost() -> None:
    paras = [_para(p, 3) for p in range(6)]  # each paragraph ~ 27 tokens
    body = "\n\n".join(paras)
    prof = Profile(target=60, overlap=8)
    chunks = chunk_text("u", body, prof)
    assert len(chunks) >= 3
    for c in chunks:
        assert c.tokens <= prof.target
        assert body[c.start : c.end] == c.text
        # paragraphs fit the budget, so no chunk starts or ends inside one
        assert c.text.startswith("Paragraph ") and c.text.endswith(".")
        assert any(c.text.startswith(p) for p in paras)
        assert any(c.text.endswith(p) for p in paras)
    # chunks are in order, do not overlap, and together hold every token of the body
    for a, b in itertools.pairwise(chunks):
        assert a.end <= b.start
    joined = " ".join(c.text for c in chunks)
    assert re.findall(r"\w+", joined) == re.findall(r"\w+", body)


def test_overlap_window_reaches_into_neighbours() -> None:
    body = "\n\n".join(_para(p, 3) for p in range(6))
    prof = Profile(target=60, overlap=8)
    chunks = chunk_text("u", body, prof)
    for i, c in enumerate(chunks):
        assert c.window_start <= c.start and c.window_end >= c.end
        assert c.text in c.window
        before = body[c.window_start : c.start]
        after = body[c.end : c.window_end]
        assert count_tokens(before) <= prof.overlap
        assert count_tokens(after) <= prof.overlap
        if i > 0:
            assert count_tokens(before) > 0  # context from the previous chunk
            assert c.window_start < chunks[i - 1].end
        if i + 1 < len(chunks):
            assert count_tokens(after) > 0
            assert c.window_end > chunks[i + 1].start
    assert chunks[0].window_start == chunks[0].start
    assert chunks[-1].window_end == chunks[-1].end


def test_long_paragraph_splits_at_sentence_ends() -> None:
    body = _para(1, 20)  # one paragraph of ~180 tokens
    chunks = chunk_text("u", body, Profile(target=50, overlap=0))
    assert len(chunks) >= 4
    for c in chunks:
        assert c.text.startswith("Paragraph 1 sentence ")
        assert c.text.endswith(".")
        assert c.window == c.text  # no overlap asked for


def test_list_items_are_boundaries() -> None:
    items = [f"- item {i}: " + " ".join(f"word{i}_{j}" for j in range(12)) for i in range(10)]
    body = "Shopping list:\n" + "\n".join(items)
    chunks = chunk_text("u", body, Profile(target=40, overlap=0))
    assert len(chunks) >= 3
    for c in chunks[1:]:
        assert c.text.startswith("- item ")
    for c in chunks:
        # every item is whole: it appears in exactly one chunk
        assert all((it in c.text) or (it not in body[c.start : c.end]) for it in items)
    assert sum(c.text.count("- item ") for c in chunks) == 10


def test_run_on_text_splits_at_words() -> None:
    body = " ".join(f"w{i}" for i in range(300))  # no sentence end at all
    chunks = chunk_text("u", body, Profile(target=64, overlap=0))
    assert [c.tokens for c in chunks][:-1] == [64] * (len(chunks) - 1)
    assert " ".join(c.text for c in chunks).split() == body.split()


def test_fenced_code_block_is_not_split_at_blank_lines() -> None:
    code = "```python\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n```"
    body = _para(1, 4) + "\n\n" + code + "\n\n" + _para(2, 4)
    chunks = chunk_text("u", body, Profile(target=45, overlap=0))
    holders = [c for c in chunks if "def f" in c.text]
    assert len(holders) == 1 and "def g" in holders[0].text


def test_profiles_by_type_and_signature() -> None:
    cfg = ChunkConfig(type_profiles={"person": "short", "paper": Profile(500, 50)})
    assert cfg.profile_for("person") == ("short", cfg.profiles["short"])
    assert cfg.profile_for("Paper")[1] == Profile(500, 50)
    assert cfg.profile_for(None)[0] == "medium"
    assert cfg.profile_for("unknown")[0] == "medium"
    assert ChunkConfig().signature() == ChunkConfig().signature()
    assert cfg.signature() != ChunkConfig().signature()
    small = ChunkConfig(profiles={"medium": Profile(20, 2)})
    body = _para(3, 6)
    assert len(chunk_text("u", body, small.profile_for(None)[1])) > 1


def test_profiles_from_types_yaml_registry() -> None:
    from cairn.formats.types import parse_types

    reg = parse_types("types:\n  person:\n    chunk_profile: short\n    aliases: [people]\n")
    cfg = ChunkConfig().with_types(reg)
    _name, prof = cfg.profile_for("people")
    assert prof == Profile(128, 16)  # types.yaml's "short" profile
    assert cfg.signature() != ChunkConfig().signature()


def test_metadata_prefix_and_hash() -> None:
    assert metadata_prefix("Garden", ["Garden", "Compost"], ["home", "#diy"]) == (
        "Garden › Compost (#home #diy)\n"
    )
    assert metadata_prefix("", [], []) == ""
    assert metadata_prefix(None, [], ["x"]) == "#x\n"
    assert content_hash("a") != content_hash("b")
    assert len(content_hash("a")) == 32


def _extend_back_full_scan(text: str, start: int, floor: int, budget: int) -> int:
    """The context extension as first written: every token from ``floor`` scanned."""
    from cairn.ingest.chunking import _SENTENCE_END, _TOKEN

    if budget <= 0 or start <= floor:
        return start
    toks = list(_TOKEN.finditer(text, floor, start))
    if not toks:
        return start
    keep = toks[-budget:]
    words = [t for t in keep if t.group()[0].isalnum() or t.group()[0] == "_"]
    first = (words or keep)[0].start()
    for m in _SENTENCE_END.finditer(text, first, start):
        if m.end() < start:
            return m.end()
    return first


def test_context_window_scan_is_bounded_and_unchanged() -> None:
    """The backwards context scan reads a growing window, not the unit from its start,
    and finds the very same place (long words, long blank runs, punctuation)."""
    import random

    from cairn.ingest.chunking import _extend_back

    rng = random.Random(7)
    pieces = ["word", "Satz.", "x" * 300, " " * 500, "\n\n", "…", "a_b", "!?", "é", "  "]
    for _ in range(300):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 120)))
        start = rng.randint(0, len(text))
        floor = rng.randint(0, start)
        budget = rng.choice([0, 1, 3, 24, 48])
        assert _extend_back(text, start, floor, budget) == _extend_back_full_scan(
            text, start, floor, budget
        ), (text, start, floor, budget)
