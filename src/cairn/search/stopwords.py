"""English function words, and query terms without them."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.model import Term

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "did",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)
"""English function words dropped from OR-ed queries that also hold a content word."""


def _is_stopword(t: Term) -> bool:
    return not t.cjk and len(t.tokens) == 1 and t.tokens[0].casefold() in STOPWORDS


def content_terms(terms: Sequence[Term]) -> tuple[Term, ...]:
    """``terms`` without single-word English function words (:data:`STOPWORDS`) when
    another term is not one: OR-ing ``the`` or ``to`` matches nearly every unit, costs
    time in proportion, and adds almost nothing to BM25 (their IDF is near zero), nor
    should it be highlighted. Phrases keep every word (``"state of the art"``)."""
    if any(not _is_stopword(t) for t in terms):
        return tuple(t for t in terms if not _is_stopword(t))
    return tuple(terms)
