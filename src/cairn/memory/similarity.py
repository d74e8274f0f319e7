"""What consolidation compares memories with: embedding vectors (the configured
embedder; none ⇒ word overlap only), and the hook where a proposer (an LLM,
:mod:`cairn.memory.propose`) suggests the clusters that the same rules then check.

- :func:`entry_vectors`: one unit-length vector per memory or concept (title and body),
  from any ``embed(texts) -> rows`` callable (an :class:`cairn.embed.Embedder`'s
  ``embed``), batched;
- :func:`text_similarity`: the text half of :func:`cairn.memory.consolidate.similarity`: the
  shingle Jaccard, or — with vectors — the larger of it and the cosine rescaled from
  ``[COSINE_FLOOR, 1]`` to ``[0, 1]`` (below the floor two texts are unrelated for the
  small models cairn ships: unrelated sentences reach cosines of about 0.5 with the
  static model, paraphrases 0.6–0.9);
- :class:`Cluster`: memories that become (or join) one concept, what both the
  deterministic clustering (:func:`cairn.memory.consolidate.cluster`) and a proposer return;
- :class:`Proposer`: ``propose(memories, concepts) -> clusters``; its answer is checked
  by :func:`checked_proposal` (every memory pending and used once, every concept
  active); what it leaves out or gets wrong goes through the deterministic clustering.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cairn.memory.layout import Entry

COSINE_FLOOR = 0.45
"""Cosines at or below this count as no similarity (see the module docstring)."""
BATCH = 256
"""Texts embedded per call."""

Vector = Sequence[float]
EmbedFn = Callable[[Sequence[str]], Any]
"""``embed(texts)`` → rows of unit-length floats (a NumPy array or lists)."""


def entry_text(e: Entry) -> str:
    """What is embedded for a memory or concept: its title, then its body."""
    return f"{e.title}\n{e.body}".strip()


def entry_vectors(embed: EmbedFn, entries: Sequence[Entry]) -> dict[str, list[float]]:
    """``rel → vector`` for ``entries`` (embedded in batches of :data:`BATCH`); a zero
    row (a text without an embedding) is left out."""
    out: dict[str, list[float]] = {}
    for i in range(0, len(entries), BATCH):
        part = entries[i : i + BATCH]
        rows = embed([entry_text(e) for e in part])
        for e, row in zip(part, rows, strict=True):
            vec = [float(x) for x in row]
            if any(vec):
                out[e.rel] = vec
    return out


def cosine(a: Vector | None, b: Vector | None) -> float | None:
    """The cosine of two vectors, ``None`` when either is missing or zero."""
    if a is None or b is None:
        return None
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0 or nb == 0:
        return None
    return dot / (na * nb)


def centroid(vectors: Sequence[Vector]) -> list[float] | None:
    """The mean of ``vectors`` (``None`` for none)."""
    if not vectors:
        return None
    n = len(vectors[0])
    return [sum(v[i] for v in vectors) / len(vectors) for i in range(n)]


def text_similarity(jaccard: float, cos: float | None) -> float:
    """The text half of the similarity (module docstring), in [0, 1]."""
    if cos is None:
        return jaccard
    scaled = (cos - COSINE_FLOOR) / (1.0 - COSINE_FLOOR)
    return max(jaccard, min(1.0, max(0.0, scaled)))


@dataclass
class Cluster:
    """Memories that become (or join) one concept; ``concept`` is the existing concept
    they merge into, ``None`` for a new one."""

    members: list[Entry] = field(default_factory=list)
    concept: Entry | None = None
    tags: list[str] = field(default_factory=list)
    features: frozenset[str] = frozenset()
    vectors: list[Sequence[float]] = field(default_factory=list)
    title: str | None = None
    """A new concept's title as proposed (``None``: the most central memory's)."""


class Proposer(Protocol):
    """Suggests how new memories group into concepts (an LLM, say); cairn checks the
    answer with the same rules as its own clustering."""

    def propose(self, memories: Sequence[Entry], concepts: Sequence[Entry]) -> list[Cluster]:
        """Clusters of ``memories``, each new (``concept=None``) or merged into one of
        ``concepts``."""
        ...


def checked_proposal(
    proposed: Sequence[Cluster], memories: Sequence[Entry], concepts: Sequence[Entry]
) -> tuple[list[Cluster], list[Entry], list[str]]:
    """Keep what a proposal gets right: each memory pending and used once, each
    merge target an active concept (by path).

    Returns:
        ``(clusters kept, memories left for the deterministic clustering, problems)``.
    """
    pending = {m.rel: m for m in memories}
    active = {c.rel: c for c in concepts}
    used: set[str] = set()
    kept: list[Cluster] = []
    problems: list[str] = []
    for g in proposed:
        if g.concept is not None and g.concept.rel not in active:
            problems.append(f"{g.concept.rel}: not an active concept (proposal ignored)")
            continue
        members = []
        for m in g.members:
            if m.rel not in pending or m.rel in used:
                problems.append(f"{m.rel}: not a pending memory, or proposed twice")
                continue
            used.add(m.rel)
            members.append(pending[m.rel])
        if members:
            concept = active[g.concept.rel] if g.concept is not None else None
            tags = list(dict.fromkeys([*(concept.tags if concept else []),
                                       *(t for m in members for t in m.tags)]))
            kept.append(Cluster(members, concept, tags, title=g.title if concept is None else None))
    left = [m for m in memories if m.rel not in used]
    return kept, left, problems


def vector_lookup(vectors: Mapping[str, list[float]] | None) -> Callable[[str], Vector | None]:
    """``rel → vector or None`` over an optional mapping."""
    if not vectors:
        return lambda _rel: None
    return vectors.get
