"""Typed relations between similar conversations: the candidate pairs (cosine of their
mean message vectors), the requests that label them and the ``llm`` edges the labels
become."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.enrich.chat import ChatText

if TYPE_CHECKING:
    from cairn.embed.base import Embedder
    from cairn.enrich import Task
    from cairn.enrich.settings import EnrichSettings
    from cairn.model import Edge
    from cairn.store import Store

RELATION = "relation"


@dataclass(frozen=True)
class Vectors:
    """How enrichment reaches the index's embeddings: whether there are any, and the
    model (loaded only when asked; ``None``: unavailable)."""

    has_vectors: Callable[[], bool]
    embedder: Callable[[], Embedder | None]
NO_VECTORS = ("no embeddings: relations between conversations need them "
              "(run `cairn embed`, then `cairn enrich` again)")


def relation_tasks(
    store: Store, vectors: Vectors, settings: EnrichSettings, convs: Sequence[ChatText],
) -> tuple[list[Task], list[str]]:
    """Relation requests for candidate pairs among enriched conversations, and notes
    (``vectors``: whether the index holds embeddings, and the model that made them)."""
    from cairn.enrich import Task
    from cairn.enrich.prompts import RELATION_SCHEMA, RELATION_SYSTEM, relation_prompt, sha256

    if settings.max_pairs == 0:
        return [], []
    enriched = {e.document_id: e for e in store.enrichments.enrichments()}
    live = [c for c in convs if c.doc.id in enriched]
    if len(live) < 2:
        return [], []
    pairs, note = candidate_pairs(store, vectors, live, settings)
    tasks: list[Task] = []
    for a, b, sim in pairs:
        ea, eb_ = enriched[a.doc.id], enriched[b.doc.id]
        user = relation_prompt((a.doc.title, ea.summary), (b.doc.title, eb_.summary))
        tasks.append(Task(
            kind=RELATION,
            label=f"{a.doc.title} ↔ {b.doc.title}",
            content_hash=sha256(f"{ea.content_hash}\x1f{eb_.content_hash}\x1f{user}"),
            system=RELATION_SYSTEM,
            user=user,
            schema=RELATION_SCHEMA,
            max_tokens=min(settings.max_tokens, 200),
            expected_output=60,
            ref=(a.doc.id, b.doc.id, sim),
        ))
    return tasks, [note] if note else []


def candidate_pairs(
    store: Store, vectors: Vectors, convs: Sequence[ChatText], settings: EnrichSettings,
) -> tuple[list[tuple[ChatText, ChatText, float]], str]:
    """Pairs whose mean message vectors have cosine ≥ ``similarity``, each
    conversation's ``max_pairs`` most similar; A is the later conversation."""
    import numpy as np

    if not vectors.has_vectors():
        return [], NO_VECTORS
    emb = vectors.embedder()
    if emb is None:
        return [], "no embedding model available: relations were not typed"
    m = store.vectors.matrix(emb.fingerprint)
    row_of = {u: i for i, u in enumerate(m.unit_ids)}
    vecs: list[Any] = []
    keep: list[ChatText] = []
    for c in convs:
        idx = [row_of[x.id] for x in c.messages if x.id in row_of]
        if not idx:
            continue
        rows = np.isin(m.units, np.asarray(idx, dtype=np.int64))
        v = np.asarray(m.matrix[rows], dtype=np.float32).mean(axis=0)
        norm = float(np.linalg.norm(v))
        if norm > 0:
            vecs.append(v / norm)
            keep.append(c)
    if len(keep) < 2:
        return [], ""
    mat = np.stack(vecs)
    sims = mat @ mat.T
    chosen: dict[tuple[str, str], float] = {}
    for i in range(len(keep)):
        order = [int(j) for j in np.argsort(-sims[i]) if int(j) != i]
        for j in [j for j in order if sims[i, j] >= settings.similarity][: settings.max_pairs]:
            key = tuple(sorted((keep[i].doc.id, keep[j].doc.id)))
            chosen[key] = float(sims[i, j])  # type: ignore[index]
    by_id = {c.doc.id: c for c in keep}
    out: list[tuple[ChatText, ChatText, float]] = []
    for (x, y), sim in sorted(chosen.items()):
        a, b = by_id[x], by_id[y]
        if (a.doc.created or "", a.doc.id) < (b.doc.created or "", b.doc.id):
            a, b = b, a  # A is the later one: "A builds_on B"
        out.append((a, b, sim))
    return out, ""


def llm_edges(store: Store) -> list[Edge]:
    """The ``llm`` edges of the stored relation labels (between first units)."""
    from cairn.model import Edge
    from cairn.model.edge_ids import edge_id

    labels = store.enrichments.relations()
    docs = sorted({x for r in labels for x in (r.source_document_id, r.target_document_id)})
    first = store.edges.first_units(docs)
    out: list[Edge] = []
    for r in labels:
        s, t = first.get(r.source_document_id), first.get(r.target_document_id)
        if s is None or t is None:
            continue
        out.append(Edge(
            id=edge_id(s, t, r.relation, "llm"), source=s, target=t, relation=r.relation,
            origin="llm", weight=r.confidence, source_document_id=r.source_document_id,
            target_document_id=r.target_document_id,
            evidence=({"reason": r.reason, "confidence": r.confidence, "model": r.model,
                       "similarity": r.similarity},),
        ))
    return out
