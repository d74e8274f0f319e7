"""The controlled tag vocabulary: the user's own tags first, then ``[enrich]
tag_aliases`` mapped onto them; anything else a model gives is a proposal, kept apart
from the user's tags (never written to a file)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from cairn.model.enrich import EnrichTag

_SPACES = re.compile(r"[\s_]+")


def normalise(tag: str) -> str:
    """A tag as compared: no leading ``#``, case-folded, runs of spaces and
    underscores as one ``-``."""
    return _SPACES.sub("-", tag.strip().lstrip("#").strip()).casefold()


def classify(
    given: Iterable[str],
    vocabulary: Iterable[str],
    aliases: Mapping[str, str],
) -> tuple[EnrichTag, ...]:
    """The model's tags against the vocabulary, each once, in the order given.

    Args:
        given: what the model wrote.
        vocabulary: the user's tags as spelled in their files.
        aliases: ``{alias: tag}`` (``[enrich] tag_aliases``).
    """
    known = {normalise(t): t for t in vocabulary}
    alias = {normalise(k): v for k, v in aliases.items()}
    out: list[EnrichTag] = []
    seen: set[str] = set()
    for g in given:
        n = normalise(g)
        if not n:
            continue
        if n in known:
            tag, status = known[n], "existing"
        elif n in alias:
            tag, status = alias[n], "alias"
        else:
            tag, status = n, "proposed"
        if normalise(tag) in seen:
            continue
        seen.add(normalise(tag))
        out.append(EnrichTag(tag, status, g))  # type: ignore[arg-type]
    return tuple(out)
