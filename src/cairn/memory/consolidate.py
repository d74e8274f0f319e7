"""Consolidation: layer-1 memories grouped into layer-2 concepts, new or existing.

:func:`consolidate` clusters the memories waiting in ``memories/active/`` by the rules
here (:func:`cluster`: shared tags and similar text, :func:`similarity`), or checks a
proposer's clusters by the same rules (:func:`merge_evidence`,
:func:`cairn.memory.similarity.checked_proposal`), then writes each cluster as a concept
and moves its memories to ``memories/subsumed/``. It takes a :class:`MemoryBundle`
whose lock the caller holds; indexing what changed is the caller's job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from cairn.memory.bundle import MemoryBundle, now_iso, render_file
from cairn.memory.files import link_label
from cairn.memory.layout import CONCEPT_TYPE, NODE_TYPES, PRODUCER, Entry
from cairn.memory.similarity import (
    Cluster,
    EmbedFn,
    Proposer,
    centroid,
    checked_proposal,
    cosine,
    entry_vectors,
    text_similarity,
    vector_lookup,
)
from cairn.writeback import sha256_bytes

NODE_OF_MEMORY = {
    "FACT": "Fact",
    "INSIGHT": "Insight",
    "AXIOM": "Constraint",
    "CONJECTURE": "OpenQuestion",
}
"""The concept ``node_type`` a memory type becomes (the majority of a cluster wins)."""



_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "with",
        "this",
        "from",
        "have",
        "has",
        "was",
        "were",
        "are",
        "not",
        "but",
        "you",
        "your",
        "they",
        "them",
        "their",
        "what",
        "when",
        "where",
        "which",
        "will",
        "would",
        "there",
        "been",
        "into",
        "about",
        "than",
        "then",
        "also",
    ]
)


def shingles(text: str) -> frozenset[str]:
    """The similarity features of a text: lower-cased words of 3+ letters (no stop
    words) and their adjacent pairs."""
    words = [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP]
    return frozenset(words) | frozenset(f"{a} {b}" for a, b in pairwise(words))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0.0 for two empty sets)."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def similarity(
    a_tags: Sequence[str],
    a_sh: frozenset[str],
    b_tags: Sequence[str],
    b_sh: frozenset[str],
    cos: float | None = None,
) -> float:
    """How much two memories (or a memory and a concept) are about the same thing, in
    [0, 1]: half tag overlap (Jaccard of the lower-cased tag sets), half text
    similarity (Jaccard of :func:`shingles`, or with embeddings the larger of it and
    the rescaled cosine ``cos``: :func:`cairn.memory.similarity.text_similarity`); with
    no tags on either side, text similarity alone."""
    ta = frozenset(t.lower() for t in a_tags)
    tb = frozenset(t.lower() for t in b_tags)
    text = text_similarity(jaccard(a_sh, b_sh), cos)
    if not ta and not tb:
        return text
    return 0.5 * jaccard(ta, tb) + 0.5 * text


def content_similarity(
    a_sh: frozenset[str], b_sh: frozenset[str], cos: float | None = None
) -> float:
    """How similar two texts are, tags aside, in [0, 1]: the Jaccard of their
    :func:`shingles`, or with embeddings the larger of it and the rescaled cosine."""
    return text_similarity(jaccard(a_sh, b_sh), cos)


@dataclass(frozen=True, slots=True)
class ConceptSources:
    """A concept and the memories it was built from in one consolidation.

    Attributes:
        concept: the concept's path; ``new``: created now (else merged into).
        memories: the memories' paths (their new place, ``memories/subsumed/…``).
        by: ``model`` (the proposer's cluster, kept by the rules) or ``rules``.
    """

    concept: str
    memories: tuple[str, ...]
    new: bool
    by: str


@dataclass(frozen=True)
class Consolidated:
    """What consolidation did: ``created`` and ``merged`` concept paths, ``subsumed``
    memory paths (their new place), ``clusters``: for each concept, the memories it
    was built from, ``proposer``: who proposed (``None``: the rules alone),
    ``problems``: what the rules refused of the proposal, one line each."""

    created: tuple[str, ...]
    merged: tuple[str, ...]
    subsumed: tuple[str, ...]
    clusters: tuple[ConceptSources, ...]
    proposer: str | None = None
    problems: tuple[str, ...] = ()


def cluster(
    memories: Sequence[Entry],
    concepts: Sequence[Entry],
    threshold: float = 0.35,
    vectors: Mapping[str, list[float]] | None = None,
) -> list[Cluster]:
    """Group memories deterministically (oldest first): each joins the most similar
    existing concept or new cluster when :func:`similarity` ≥ ``threshold`` and the
    texts alone are similar too (:func:`content_similarity` ≥ ``threshold`` / 2:
    shared tags are never enough, four unrelated memories tagged ``team`` stay four),
    else starts a cluster of its own. Ties go to the earlier candidate. ``vectors``:
    rel → embedding (a concept compares by its own, a new cluster by its members'
    mean)."""
    vec = vector_lookup(vectors)
    groups: list[Cluster] = []
    for c in concepts:
        v = vec(c.rel)
        groups.append(Cluster([], c, c.tags, shingles(f"{c.title}\n{c.body}"),
                              [v] if v is not None else []))
    for m in sorted(memories, key=lambda e: (str(e.meta.get("timestamp", "")), e.rel)):
        feats = shingles(f"{m.title}\n{m.body}")
        mv = vec(m.rel)
        best, best_sim = None, threshold
        for g in groups:
            cos = cosine(mv, centroid(g.vectors)) if mv is not None and g.vectors else None
            if content_similarity(feats, g.features, cos) < threshold / 2:
                continue
            s = similarity(m.tags, feats, g.tags, g.features, cos)
            if s >= best_sim and (best is None or s > best_sim):
                best, best_sim = g, s
        if best is None:
            best = Cluster([], None, list(m.tags), frozenset())
            groups.append(best)
        best.members.append(m)
        best.tags = list(dict.fromkeys([*best.tags, *m.tags]))
        best.features = best.features | feats
        if mv is not None and best.concept is None:
            best.vectors.append(mv)
    return [g for g in groups if g.members]


def central(
    members: Sequence[Entry], vectors: Mapping[str, list[float]] | None = None
) -> Entry:
    """The most central memory of a cluster: the highest mean similarity to the others
    (the oldest on ties)."""
    if len(members) == 1:
        return members[0]
    vec = vector_lookup(vectors)
    feats = [shingles(f"{m.title}\n{m.body}") for m in members]
    best, best_score = members[0], -1.0
    for i, m in enumerate(members):
        score = sum(
            similarity(m.tags, feats[i], o.tags, feats[j], cosine(vec(m.rel), vec(o.rel)))
            for j, o in enumerate(members)
            if j != i
        )
        if score > best_score:
            best, best_score = m, score
    return best


def consolidate(
    bundle: MemoryBundle,
    *,
    threshold: float = 0.35,
    embed: EmbedFn | None = None,
    proposer: Proposer | None = None,
) -> Consolidated:
    """Turn every memory in ``memories/active/`` into (part of) a layer-2 concept and
    move it to ``memories/subsumed/``.

    Without a ``proposer``, the deterministic clustering (:func:`cluster`: tags, and
    shingle overlap or — with ``embed``, the configured embedder's ``embed`` — embedding
    similarity; the title comes from the most central memory). With one (an LLM:
    :mod:`cairn.memory.propose`), its proposal is checked by the same rules
    (:func:`cairn.memory.similarity.checked_proposal`) and what it leaves out is
    clustered deterministically.

    Raises:
        WriteConflict: a file changed while this ran (the caller retries).
    """
    problems: list[str] = []
    memories = bundle.entries("memories/active", problems)
    concepts = [
        c
        for c in bundle.entries("concepts/active", problems)
        if c.meta.get("status", "active") == "active"
    ]
    vectors = entry_vectors(embed, [*memories, *concepts]) if embed and memories else None
    groups: list[Cluster] = []
    rest: Sequence[Entry] = memories
    issues: list[str] = []
    if proposer is not None and memories:
        proposed = proposer.propose(memories, concepts)
        issues += [str(p) for p in getattr(proposer, "problems", ())]
        groups, rest, refused = checked_proposal(proposed, memories, concepts)
        issues += refused
        groups, weak = merge_evidence(groups, vectors)
        issues += [f"{m.rel}: nothing shared with {c.rel} (left to the rules)" for m, c in weak]
        rest = [*rest, *(m for m, _ in weak)]
    by_model = {id(g) for g in groups}
    groups += cluster(rest, concepts, threshold, vectors)
    by_concept: dict[str, Cluster] = {}  # one write per concept, whoever proposed it
    for g in list(groups):
        if g.concept is None:
            continue
        first = by_concept.setdefault(g.concept.rel, g)
        if first is not g:
            first.members += g.members
            first.tags = list(dict.fromkeys([*first.tags, *g.tags]))
            groups.remove(g)
    created: list[str] = []
    merged: list[str] = []
    subsumed: list[str] = []
    report: list[ConceptSources] = []
    for g in groups:
        moved: list[tuple[Entry, str]] = []
        for m in g.members:
            moved.append((m, f"memories/subsumed/{m.rel.rsplit('/', 1)[1]}"))
        stamp = now_iso()
        new_sources = [
            {"id": str(m.meta.get("hash") or ""), "resource": "/" + dest, "title": m.title}
            for m, dest in moved
        ]
        lines = "".join(f"- {link_label(m.title)} ([memory](/{dest}))\n" for m, dest in moved)
        if g.concept is None:
            head = central(g.members, vectors)
            votes = [NODE_OF_MEMORY.get(str(m.meta.get("memory_type")), "Fact") for m in g.members]
            node_type = max(NODE_TYPES, key=lambda t: (votes.count(t), -NODE_TYPES.index(t)))
            cid = sha256_bytes(str(head.meta.get("hash") or head.rel).encode())[:8]
            rel = f"concepts/active/concept-{cid}.md"
            meta: dict[str, Any] = {
                "type": CONCEPT_TYPE,
                "title": g.title or head.title,
                "description": str(head.meta.get("description") or head.title),
                "tags": g.tags,
                "timestamp": stamp,
                "generated": {"by": PRODUCER, "at": stamp},
                "node_type": node_type,
                "sources": new_sources,
                "confidence": 1.0,
                "retrieval_count": 0,
                "pinned": False,
                "status": "active",
                "relations": [],
            }
            body = f"# Details\n\n{head.body.strip()}\n\n# Memories\n\n{lines}"
            bundle.create(rel, render_file(meta, body))
            created.append(rel)
            bundle.note(
                f"**Creation**: [{link_label(g.title or head.title)}](/{rel}) "
                f"from {len(moved)} memories"
            )
        else:
            c = g.concept
            rel = c.rel
            meta = dict(c.meta)
            old = meta.get("sources") if isinstance(meta.get("sources"), list) else []
            meta["sources"] = [*old, *new_sources]  # type: ignore[misc]
            meta["tags"] = list(dict.fromkeys([*c.tags, *g.tags]))
            meta["timestamp"] = stamp
            meta["generated"] = {"by": PRODUCER, "at": stamp}
            body = c.body.rstrip("\n") + "\n"
            if "# Memories" not in body:
                body += "\n# Memories\n\n"
            body += lines
            bundle.update(c, meta, body, "memory: consolidate")
            merged.append(rel)
            bundle.note(
                f"**Update**: merged {len(moved)} memories into [{link_label(c.title)}](/{rel})"
            )
        for m, dest in moved:
            bundle.move(m, "memories/subsumed")
            subsumed.append(dest)
        report.append(ConceptSources(rel, tuple(d for _, d in moved), g.concept is None,
                                     "model" if id(g) in by_model else "rules"))
    bundle.flush_log()
    return Consolidated(
        tuple(created), tuple(merged), tuple(subsumed), tuple(report),
        proposer=type(proposer).__name__ if proposer is not None else None,
        problems=tuple(issues),
    )


def merge_evidence(
    groups: Sequence[Cluster], vectors: Mapping[str, list[float]] | None = None
) -> tuple[list[Cluster], list[tuple[Entry, Entry]]]:
    """The rule a proposed merge must pass: each memory shares something with the
    concept it joins (a tag, words, or an embedding cosine above the floor:
    :func:`similarity` > 0). Returns the groups with only such members (a merge left
    empty is dropped) and the ``(memory, concept)`` pairs refused."""
    vec = vector_lookup(vectors)
    kept: list[Cluster] = []
    refused: list[tuple[Entry, Entry]] = []
    for g in groups:
        c = g.concept
        if c is None:
            kept.append(g)
            continue
        cf = shingles(f"{c.title}\n{c.body}")
        ok: list[Entry] = []
        for m in g.members:
            cos = cosine(vec(m.rel), vec(c.rel))
            if similarity(m.tags, shingles(f"{m.title}\n{m.body}"), c.tags, cf, cos) > 0:
                ok.append(m)
            else:
                refused.append((m, c))
        if ok:
            g.members = ok
            kept.append(g)
    return kept, refused
