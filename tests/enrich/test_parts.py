"""The pieces of enrichment on their own: JSON in replies, the schema validator, the
tag vocabulary, ``Retry-After``, the conversation text, ``[enrich]`` settings."""

from __future__ import annotations

import email.utils
import time

import pytest

from cairn.enrich import BadReply, EnrichSettings, Message, conversation_text, parse_json, validate
from cairn.enrich.prompts import CONVERSATION_SCHEMA, RELATION_SCHEMA, cache_key
from cairn.enrich.providers import retry_after
from cairn.enrich.tags import classify, normalise
from cairn.errors import ConfigError


def test_parse_json_finds_the_object_in_chatter_and_fences() -> None:
    assert parse_json('{"a": 1}') == {"a": 1}
    assert parse_json('Sure!\n```json\n{"a": 2}\n```\nHope it helps.') == {"a": 2}
    assert parse_json('Here: {"a": 3} done') == {"a": 3}
    for bad in ("", "no json here", '{"a": '):
        with pytest.raises(BadReply, match="not JSON"):
            parse_json(bad)


def _reply(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "summary": "s",
        "insights": [{"type": "decision", "text": "t", "messages": [1]}] * 3,
        "tags": ["x"],
    }
    base.update(over)
    return base


@pytest.mark.parametrize(("reply", "where"), [
    (_reply(summary=""), "$.summary: shorter"),
    (_reply(insights=[]), "$.insights: 0 items, at least 3"),
    (_reply(insights=[{"type": "decision", "text": "t", "messages": [1]}] * 11), "at most 10"),
    (_reply(insights=[{"type": "idea", "text": "t", "messages": [1]}] * 3), "$.insights[0].type"),
    (_reply(insights=[{"type": "decision", "text": "t", "messages": ["1"]}] * 3),
     "$.insights[0].messages[0]: expected integer"),
    (_reply(insights=[{"type": "decision", "text": "t", "messages": [0]}] * 3), "below 1"),
    (_reply(tags="x"), "$.tags: expected array"),
    ({"summary": "s", "insights": []}, "'tags' is missing"),
    ([], "$: expected object"),
])
def test_the_validator_names_the_first_violation(reply: object, where: str) -> None:
    with pytest.raises(BadReply) as exc:
        validate(reply, CONVERSATION_SCHEMA)
    assert where in str(exc.value)


def test_valid_replies_pass_and_booleans_are_not_numbers() -> None:
    validate(_reply(), CONVERSATION_SCHEMA)
    validate({"relation": "none", "confidence": 0, "reason": ""}, RELATION_SCHEMA)
    with pytest.raises(BadReply, match="expected number"):
        validate({"relation": "related", "confidence": True, "reason": ""}, RELATION_SCHEMA)
    with pytest.raises(BadReply, match="above 1"):
        validate({"relation": "related", "confidence": 1.5, "reason": ""}, RELATION_SCHEMA)


def test_tags_come_from_the_vocabulary_first() -> None:
    got = classify(["#Machine Learning", "ml", "rust", "RUST", " "],
                   ["machine-learning", "garden"], {"ml": "machine-learning"})
    assert [(t.tag, t.status, t.given) for t in got] == [
        ("machine-learning", "existing", "#Machine Learning"),
        ("rust", "proposed", "rust"),
    ]  # the alias names a tag already given; RUST is rust again
    assert classify(["ML"], [], {"ml": "machine-learning"})[0].status == "alias"
    assert normalise("  #Deep_Learning  ") == "deep-learning"


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("3") == 3.0
    assert retry_after(None) is None and retry_after("soon") is None
    now = time.time()
    later = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= (retry_after(later, now=now) or 0) <= 31
    assert retry_after(email.utils.formatdate(now - 60, usegmt=True), now=now) == 0.0


def test_conversation_text_numbers_messages_and_cuts_the_middle() -> None:
    msgs = [Message(f"m{i}", "user" if i % 2 else "assistant", f"message {i} " + "x" * 200)
            for i in range(1, 41)]
    text = conversation_text("T", msgs, 2000)
    assert text.startswith("Title: T\n[1] user: message 1")
    assert "[40] assistant: message 40" in text and "messages left out" in text
    assert len(text) <= 2000
    short = conversation_text("T", msgs[:2], 10_000)
    assert "left out" not in short and "[2] assistant: message 2" in short


def test_cache_keys_change_with_model_and_content() -> None:
    k = cache_key("conversation", "m1", "h")
    assert k != cache_key("conversation", "m2", "h") != cache_key("conversation", "m1", "h2")
    assert k == cache_key("conversation", "m1", "h")


def test_settings_are_checked() -> None:
    assert not EnrichSettings.from_mapping({}).configured
    s = EnrichSettings.from_mapping({"provider": "anthropic", "model": "claude-x"})
    assert s.url == "https://api.anthropic.com" and s.configured
    for bad, msg in [
        ({"model": "m"}, "needs provider"),
        ({"provider": "gemini", "model": "m"}, "not one of"),
        ({"provider": "openai"}, "model must"),
        ({"provider": "openai", "model": "m", "similarity": 2}, "similarity"),
        ({"provider": "openai", "model": "m", "url": "ftp://x"}, "url"),
        ({"provider": "openai", "model": "m", "tag_aliases": {"a": 1}}, "tag_aliases"),
    ]:
        with pytest.raises(ConfigError, match=msg):
            EnrichSettings.from_mapping(bad)
