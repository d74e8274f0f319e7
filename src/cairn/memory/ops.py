"""The file operations of agent memory: remember, consolidate, pin, forget, relate,
supersede and verify (maintenance is :mod:`cairn.memory.maintain`).

Each takes a :class:`MemoryBundle` whose lock the caller holds, writes through it and
returns a typed result; indexing what changed is the caller's job
(:class:`cairn.memory.service.MemoryService`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any

from cairn.memory.bundle import (
    CONCEPT_DIRS,
    CONCEPT_TYPE,
    MEMORY_TYPE,
    MEMORY_TYPES,
    NODE_TYPES,
    PRODUCER,
    RELATION_TYPES,
    SCOPES,
    Entry,
    MemoryBundle,
    MemoryError_,
    now_iso,
    one_line,
    render_file,
    seal,
)
from cairn.memory.similarity import (
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


@dataclass(frozen=True)
class Remembered:
    """A memory written: its bundle-relative ``path``, ``seal`` (SHA-256 hex),
    ``title`` and ``timestamp``."""

    path: str
    seal: str
    title: str
    timestamp: str


def make_memory(
    text: str,
    *,
    memory_type: str = "FACT",
    scope: str = "INCARNATION",
    tags: Sequence[str] = (),
    title: str | None = None,
    timestamp: str | None = None,
) -> tuple[str, bytes, Remembered]:
    """The file name, bytes and record of a new layer-1 memory (nothing written).

    Raises:
        MemoryError_: empty text, unknown memory type or scope, a ``timestamp`` that is
            not ISO 8601.
    """
    body = text.strip()
    if not body:
        raise MemoryError_("nothing to remember: the text is empty")
    mtype = memory_type.upper()
    if mtype not in MEMORY_TYPES:
        raise MemoryError_(f"memory type {memory_type!r}: use one of {', '.join(MEMORY_TYPES)}")
    sc = scope.upper()
    if sc not in SCOPES:
        raise MemoryError_(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    stamp = timestamp or now_iso()
    try:
        datetime.fromisoformat(stamp.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise MemoryError_(f"timestamp {stamp!r}: not an ISO 8601 date and time") from None
    clean_tags = list(dict.fromkeys(t.strip().lstrip("#") for t in tags if t.strip()))
    meta: dict[str, Any] = {
        "type": MEMORY_TYPE,
        "title": title or one_line(body, 80),
        "description": one_line(body, 160),
        "tags": clean_tags,
        "timestamp": stamp,
        "scope": sc,
        "memory_type": mtype,
    }
    s = seal(meta, body)
    meta["hash"] = s
    digits = re.sub(r"\D", "", stamp)[:14].ljust(14, "0")
    name = f"{digits[:8]}_{digits[8:14]}_{mtype.lower()}_{secrets.token_hex(4)}.md"
    return name, render_file(meta, body), Remembered("", s, str(meta["title"]), stamp)


def remember(bundle: MemoryBundle, text: str, **kwargs: Any) -> Remembered:
    """Write a new layer-1 memory into ``memories/active/`` and log it.

    Args:
        text: the event, in prose. kwargs: as for :func:`make_memory`.

    Raises:
        MemoryError_: see :func:`make_memory`.
    """
    for _ in range(5):  # a name clash (same second, same random id) is retried
        name, data, rec = make_memory(text, **kwargs)
        rel = f"memories/active/{name}"
        if not bundle.abs(rel).exists():
            break
    bundle.create(rel, data)
    bundle.note(f"**Remember**: [{_md(rec.title)}](/{rel}) ({kwargs.get('memory_type', 'FACT')})")
    bundle.flush_log()
    return Remembered(rel, rec.seal, rec.title, rec.timestamp)


def _md(text: str) -> str:
    """Text safe inside a Markdown link label."""
    return re.sub(r"[\[\]\n]", " ", text).strip() or "untitled"


# --- consolidation -------------------------------------------------------------------
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


@dataclass(frozen=True)
class Consolidated:
    """What consolidation did: ``created`` and ``merged`` concept paths, ``subsumed``
    memory paths (their new place), ``clusters``: for each concept, the memories it
    was built from (``{"concept", "memories", "new", "by"}``, ``by`` = ``model`` or
    ``rules``), ``proposer``: who proposed (``None``: the rules alone), ``problems``:
    what the rules refused of the proposal, one line each."""

    created: tuple[str, ...]
    merged: tuple[str, ...]
    subsumed: tuple[str, ...]
    clusters: tuple[dict[str, Any], ...]
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
    similarity; the title comes from the most central memory). With one (an LLM: the
    hook of the enrichment issue), its proposal is checked by the same rules
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
    report: list[dict[str, Any]] = []
    for g in groups:
        moved: list[tuple[Entry, str]] = []
        for m in g.members:
            moved.append((m, f"memories/subsumed/{m.rel.rsplit('/', 1)[1]}"))
        stamp = now_iso()
        new_sources = [
            {"id": str(m.meta.get("hash") or ""), "resource": "/" + dest, "title": m.title}
            for m, dest in moved
        ]
        lines = "".join(f"- {_md(m.title)} ([memory](/{dest}))\n" for m, dest in moved)
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
                f"**Creation**: [{_md(g.title or head.title)}](/{rel}) from {len(moved)} memories"
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
            bundle.note(f"**Update**: merged {len(moved)} memories into [{_md(c.title)}](/{rel})")
        for m, dest in moved:
            bundle.move(m, "memories/subsumed")
            subsumed.append(dest)
        report.append({"concept": rel, "memories": [d for _, d in moved],
                       "new": g.concept is None, "by": "model" if id(g) in by_model else "rules"})
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


# --- small edits ---------------------------------------------------------------------
def set_pinned(bundle: MemoryBundle, name: str, pinned: bool = True) -> str:
    """Pin (never decays) or unpin a concept; returns its path.

    Raises:
        MemoryError_: no such concept.
    """
    c = bundle.read(bundle.find(name, CONCEPT_DIRS))
    meta = dict(c.meta)
    meta["pinned"] = pinned
    if bundle.update(c, meta, c.body, "memory: pin"):
        bundle.note(f"**{'Pin' if pinned else 'Unpin'}**: [{_md(c.title)}](/{c.rel})")
        bundle.flush_log()
    return c.rel


def forget(bundle: MemoryBundle, name: str) -> str:
    """Move a memory to ``memories/archive/`` or a concept to ``concepts/archive/``
    (``status: archived``); never deletes. Returns the new path.

    Raises:
        MemoryError_: no such memory or concept, or it is archived already.
    """
    rel = bundle.find(name, ("memories/active", "memories/subsumed", "concepts/active"))
    e = bundle.read(rel)
    if rel.startswith("concepts/"):
        meta = dict(e.meta)
        meta["status"] = "archived"
        new = bundle.move(e, "concepts/archive", render_file(meta, e.body))
    else:
        new = bundle.move(e, "memories/archive")
    bundle.note(f"**Deprecation**: forgot [{_md(e.title)}](/{new})")
    bundle.flush_log()
    return new


def relate(
    bundle: MemoryBundle, source: str, rtype: str, target: str, confidence: float = 1.0
) -> dict[str, Any]:
    """Add (or update) the typed relation ``source --rtype--> target`` between two
    concepts; returns ``{"source", "type", "target", "confidence"}``.

    Raises:
        MemoryError_: unknown relation type, a missing concept, a confidence outside
            0–1, or a relation of a concept to itself.
    """
    if rtype not in RELATION_TYPES:
        raise MemoryError_(f"relation type {rtype!r}: use one of {', '.join(RELATION_TYPES)}")
    if not 0.0 <= confidence <= 1.0:
        raise MemoryError_(f"confidence {confidence}: must be between 0 and 1")
    src = bundle.read(bundle.find(source, ("concepts/active",)))
    dst = bundle.find(target, CONCEPT_DIRS)
    if dst == src.rel:
        raise MemoryError_(f"{src.rel}: a concept cannot relate to itself")
    meta = dict(src.meta)
    rels = [
        r for r in src.relations if not (r["target"].lstrip("/") == dst and r.get("type") == rtype)
    ]
    rels.append({"target": "/" + dst, "type": rtype, "confidence": confidence})
    meta["relations"] = rels
    if bundle.update(src, meta, src.body, "memory: relate"):
        bundle.note(f"**Update**: [{_md(src.title)}](/{src.rel}) {rtype} [{dst}](/{dst})")
        bundle.flush_log()
    return {"source": src.rel, "type": rtype, "target": dst, "confidence": confidence}


def supersede(bundle: MemoryBundle, name: str) -> str:
    """Mark a concept ``status: superseded`` (maintenance then supersedes what
    ``depends_on`` it); returns its path.

    Raises:
        MemoryError_: no such active concept.
    """
    c = bundle.read(bundle.find(name, ("concepts/active",)))
    meta = dict(c.meta)
    meta["status"] = "superseded"
    if bundle.update(c, meta, c.body, "memory: supersede"):
        bundle.note(f"**Deprecation**: superseded [{_md(c.title)}](/{c.rel})")
        bundle.flush_log()
    return c.rel
