"""The prompts and reply schemas of enrichment, and the text of a conversation as a
model sees it.

:data:`PROMPT_VERSION` is part of every cache key: change a prompt or a schema, bump
it, and the next run asks again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.model.enrich import INSIGHT_TYPES, LLM_RELATIONS

if TYPE_CHECKING:
    from cairn.model.enrich import Enrichment

PROMPT_VERSION = "1"

MESSAGE_MAX = 4000
"""The most characters of one message sent (a longer one is cut in the middle)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation: its unit ``id``, ``role`` and ``text``."""

    id: str
    role: str
    text: str


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = max(1, (limit - 7) // 2)
    return text[:half] + " […] " + text[-half:]


def conversation_text(title: str, messages: Sequence[Message], max_chars: int) -> str:
    """The conversation as sent: its title, then ``[n] role: text`` per message
    (``n`` from 1, the number insights cite). When longer than ``max_chars``, messages
    from the middle are left out (and a line says how many)."""
    lines = [f"[{i}] {m.role or 'message'}: {_cut(m.text.strip(), MESSAGE_MAX)}"
             for i, m in enumerate(messages, 1)]
    head = f"Title: {title}\n"
    total = len(head) + sum(len(x) + 1 for x in lines)
    if total > max_chars and len(lines) > 2:
        front: list[str] = []
        back: list[str] = []
        budget = max_chars - len(head) - 60
        i, j, from_front = 0, len(lines) - 1, True
        while i <= j:
            take = lines[i] if from_front else lines[j]
            if len(take) + 1 > budget:
                break
            budget -= len(take) + 1
            if from_front:
                front.append(take)
                i += 1
            else:
                back.insert(0, take)
                j -= 1
            from_front = not from_front
        left_out = len(lines) - len(front) - len(back)
        lines = [*front, f"[… {left_out} messages left out …]", *back]
    text = head + "\n".join(lines)
    return _cut(text, max_chars)


def sha256(text: str) -> str:
    """Hex SHA-256 of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(kind: str, model: str, content_hash: str) -> str:
    """The cache key of one request: (kind, model, :data:`PROMPT_VERSION`, content
    hash), hashed."""
    return sha256(f"{kind}\x1f{model}\x1f{PROMPT_VERSION}\x1f{content_hash}")


CONVERSATION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["summary", "insights", "tags"],
    "properties": {
        "summary": {"type": "string", "minLength": 1, "maxLength": 2000},
        "insights": {
            "type": "array",
            "minItems": 3,
            "maxItems": 10,
            "items": {
                "type": "object",
                "required": ["type", "text", "messages"],
                "properties": {
                    "type": {"type": "string", "enum": list(INSIGHT_TYPES)},
                    "text": {"type": "string", "minLength": 1, "maxLength": 1000},
                    "messages": {"type": "array", "maxItems": 50,
                                 "items": {"type": "integer", "minimum": 1}},
                },
            },
        },
        "tags": {"type": "array", "maxItems": 8,
                 "items": {"type": "string", "minLength": 1, "maxLength": 60}},
    },
}
"""What a conversation reply must look like."""

RELATION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["relation", "confidence", "reason"],
    "properties": {
        "relation": {"type": "string", "enum": [*LLM_RELATIONS, "none"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string", "maxLength": 300},
    },
}
"""What a relation reply must look like."""

CONVERSATION_SYSTEM = (
    "You analyse a conversation between a user and an AI assistant and answer with one "
    "JSON object only, no other text:\n"
    '{"summary": "2-4 sentences", "insights": [{"type": "decision|learning|pattern|'
    'question", "text": "one self-contained sentence", "messages": [message numbers]}], '
    '"tags": ["tag", ...]}\n'
    "Give 3 to 10 insights: decisions taken, things learned, recurring patterns, open "
    "questions. Each cites the numbers of the messages it comes from. Give up to 5 tags; "
    "prefer tags from the vocabulary given, propose a new one only when none fits. Text "
    "like [SECRET:kind#1] or [PII:kind#1] is a masked value: never guess it."
)

RELATION_SYSTEM = (
    "You compare two conversations, A and B, and answer with one JSON object only:\n"
    '{"relation": "references|builds_on|contradicts|implements|derived_from|prerequisite|'
    'related|none", "confidence": 0.0-1.0, "reason": "one line"}\n'
    "The relation reads \"A <relation> B\" (A builds_on B: A continues B's work; B is a "
    "prerequisite of A: use prerequisite when B must be known first). Use none when they "
    "are unrelated."
)


def conversation_prompt(text: str, vocabulary: Sequence[str]) -> str:
    """The user message of a conversation request."""
    vocab = ", ".join(vocabulary) if vocabulary else "(none yet)"
    return f"Tag vocabulary: {vocab}\n\nConversation:\n{text}"


def relation_prompt(a: tuple[str, str], b: tuple[str, str]) -> str:
    """The user message of a relation request: ``(title, summary)`` of A and of B."""
    return (
        f"A: {a[0]}\nSummary of A: {a[1]}\n\n"
        f"B: {b[0]}\nSummary of B: {b[1]}"
    )


def dumps(value: Any) -> str:
    """Canonical JSON of a validated reply (what the cache stores)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def short(text: str, n: int = 80) -> str:
    """``text`` on one line, cut to at most ``n`` characters (an ellipsis marks a cut)."""
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1].rstrip() + "…"


def as_reply(e: Enrichment, messages: Sequence[Message]) -> dict[str, Any]:
    """A stored enrichment as the model reply it came from, its message ids turned back
    into 1-based numbers of ``messages`` (ids no longer there are dropped)."""
    num = {m.id: i for i, m in enumerate(messages, 1)}
    return {
        "summary": e.summary,
        "insights": [{"type": i.type, "text": i.text,
                      "messages": [num[m] for m in i.messages if m in num]} for i in e.insights],
        "tags": [t.given for t in e.tags],
    }
