"""``recall``: search a memory bundle's concepts and memories, then follow concept
relations one hop (graph expansion), best first.

The search itself is cairn's (hybrid when the index has embeddings); this module keeps
the hits inside the bundle's ``concepts/active/`` and ``memories/active/``, and adds
the concepts related to a hit concept with the score ``hit score × relation confidence
× EXPAND_WEIGHT`` (a concept reached both ways keeps its best score). Recording the
recall in the access log is the caller's job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn.memory.bundle import MemoryBundle, MemoryError_
from cairn.model import Hit

EXPAND_WEIGHT = 0.5
"""Share of a hit's score given to a concept related to it."""
SEARCHED = ("concepts/active/", "memories/active/")
"""What recall searches: active concepts and the memories not yet consolidated (a
consolidated memory is reached through its concept, whose body links it)."""


@dataclass(frozen=True, slots=True)
class Via:
    """How expansion reached a concept: a relation of ``type`` from the concept at
    ``source`` (a bundle-relative path); JSON ``{"from", "type"}``."""

    source: str
    type: str

    def to_mapping(self) -> dict[str, str]:
        """The JSON object ``{"from", "type"}``."""
        return {"from": self.source, "type": self.type}


@dataclass(frozen=True)
class RecallHit:
    """One recalled concept or memory.

    Attributes:
        path: bundle-relative path; ``kind``: ``concept`` or ``memory``.
        title / snippet / score: what to show (score: higher is better).
        via: for a concept reached by expansion, the relation followed; ``None`` for
            a direct hit.
        status / confidence / retrieval_count / pinned: a concept's fields (``None``
            for memories).
    """

    path: str
    kind: str
    title: str
    snippet: str
    score: float
    via: Via | None = None
    status: str | None = None
    confidence: float | None = None
    retrieval_count: int | None = None
    pinned: bool | None = None


@dataclass(frozen=True)
class RecallResult:
    """A recall: the ``query``, the ``bundle`` folder, the ``hits`` and ``recorded``,
    the number of concept recalls written to the access log."""

    query: str
    bundle: str
    hits: tuple[RecallHit, ...]
    recorded: int = 0


def _concept_hit(
    bundle: MemoryBundle, rel: str, score: float, snippet: str, via: Via | None
) -> RecallHit | None:
    try:
        e = bundle.read(rel)
    except MemoryError_:
        return None
    status = str(e.meta.get("status", "active"))
    count = e.meta.get("retrieval_count")
    return RecallHit(
        rel,
        "concept",
        e.title,
        snippet or str(e.meta.get("description") or ""),
        score,
        via,
        status,
        e.confidence,
        count if isinstance(count, int) else 0,
        e.meta.get("pinned") is True,
    )


def recall_hits(
    bundle: MemoryBundle, hits: Sequence[Hit], *, limit: int = 10, expand: bool = True
) -> list[RecallHit]:
    """The bundle's part of ``hits`` (one entry per file, its best unit), expanded over
    concept relations, best first, at most ``limit``."""
    best: dict[str, RecallHit] = {}
    folder = str(bundle.folder)
    for h in hits:
        p = Path(h.abs_path)
        if not str(p).startswith(folder + "/"):
            continue
        rel = p.relative_to(bundle.folder).as_posix()
        if not rel.startswith(SEARCHED) or rel in best:
            continue
        if rel.startswith("concepts/"):
            got = _concept_hit(bundle, rel, h.score, h.snippet, None)
            if got is None or got.status != "active":
                continue
            best[rel] = got
        else:
            best[rel] = RecallHit(rel, "memory", h.doc_title or h.title, h.snippet, h.score)
    if expand:
        for hit in sorted(best.values(), key=lambda x: -x.score):
            if hit.kind != "concept" or hit.via is not None:
                continue
            try:
                e = bundle.read(hit.path)
            except MemoryError_:
                continue
            for r in e.relations:
                target = str(r["target"]).strip().lstrip("/")
                if not target.startswith("concepts/active/"):
                    continue
                conf = r.get("confidence")
                w = (
                    float(conf)
                    if isinstance(conf, int | float) and not isinstance(conf, bool)
                    else 1.0
                )
                score = hit.score * w * EXPAND_WEIGHT
                if target in best and best[target].score >= score:
                    continue
                got = _concept_hit(
                    bundle, target, score, "", Via(hit.path, str(r.get("type")))
                )
                if got is not None and got.status == "active":
                    best[target] = got
    return sorted(best.values(), key=lambda x: (-x.score, x.path))[:limit]
