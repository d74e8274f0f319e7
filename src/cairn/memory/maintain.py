"""``maintain``: one maintenance cycle of a memory bundle (``OKF-MEMORY.md``,
"Maintenance"): integrity, symmetry, truth maintenance and Hebbian decay.

- **integrity** — every memory's seal recomputed; mismatches reported, never fixed;
- **symmetry** — every consolidated (``memories/subsumed/``) memory must be a source of
  an active concept, every concept source must name a memory that exists; reported;
  memories still in ``memories/active/`` are counted as pending consolidation;
- **truth maintenance** — a concept that is ``superseded`` or has confidence 0 makes
  every concept that ``depends_on`` it, transitively, ``superseded`` with confidence
  0.0; cycles of ``depends_on`` are found (strongly connected components) and reported,
  and the walk visits each concept once, so a cycle never loops;
- **Hebbian decay** — each recall recorded in the access log since the last cycle adds
  one to the concept's ``retrieval_count``; active, unpinned concepts not recalled lose
  0.1 confidence; at or below 0.2 they move to ``concepts/archive/`` (``status:
  archived``), and the relations to them of the concepts left follow them there;
- **dangling** — every relation or body link of an active concept that leads to no
  concept file is reported, in every cycle while it exists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cairn.memory.bundle import MemoryBundle, render_file
from cairn.memory.files import link_label
from cairn.memory.layout import Entry
from cairn.memory.verify import SealProblem, verify_entries

DECAY_STEP = 0.1
"""Confidence lost per cycle by a concept that was not recalled."""
ARCHIVE_AT = 0.2
"""At or below this confidence a decayed concept is archived."""


@dataclass(frozen=True, slots=True)
class MissingSource:
    """A concept's source seal that names no memory in the bundle."""

    concept: str
    seal: str


@dataclass(frozen=True, slots=True)
class Decayed:
    """A concept's confidence after this cycle's decay."""

    concept: str
    confidence: float


@dataclass(frozen=True, slots=True)
class Dangling:
    """A relation or body link of an active concept (``source``) that leads to no
    concept file (``target``); JSON ``{"from", "to"}``."""

    source: str
    target: str

    def to_mapping(self) -> dict[str, str]:
        """The JSON object ``{"from", "to"}``."""
        return {"from": self.source, "to": self.target}


@dataclass
class MaintainReport:
    """One maintenance cycle.

    Attributes:
        checked: memories whose seal was recomputed; ``integrity``: the mismatches.
        unsourced: subsumed memories that are the source of no active concept.
        missing_sources: sources naming no memory in the bundle.
        pending: memories still waiting for consolidation.
        superseded: concepts superseded by truth maintenance in this cycle.
        cycles: ``depends_on`` cycles, each a sorted list of concept paths.
        recalled: concept path → recalls counted in this cycle.
        decayed: the concepts' confidence after this cycle's decay.
        archived: concepts moved to ``concepts/archive/`` (their new paths).
        dangling: relations or links of active concepts that lead to no concept file.
        problems: files that could not be read.
        changed: every bundle file written or moved.
        dry_run: nothing was written (``diffs`` holds what would have been).
    """

    checked: int = 0
    integrity: list[SealProblem] = field(default_factory=list)
    unsourced: list[str] = field(default_factory=list)
    missing_sources: list[MissingSource] = field(default_factory=list)
    pending: int = 0
    superseded: list[str] = field(default_factory=list)
    cycles: list[list[str]] = field(default_factory=list)
    recalled: dict[str, int] = field(default_factory=dict)
    decayed: list[Decayed] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    dangling: list[Dangling] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    dry_run: bool = False
    diffs: list[str] = field(default_factory=list)


def _target(rel: Mapping[str, Any]) -> str:
    return str(rel.get("target", "")).strip().lstrip("/")


def dangling(
    metas: Mapping[str, Mapping[str, Any]], bodies: Mapping[str, str], present: set[str]
) -> list[Dangling]:
    """Every relation (``relations[].target``) or body link (``/concepts/…`` or
    ``(concepts/…)``) of the concepts in ``metas`` that leads to no concept in
    ``present`` (bundle-relative paths), sorted."""
    out: set[tuple[str, str]] = set()
    for p, meta in metas.items():
        rels = meta.get("relations")
        for r in rels if isinstance(rels, list) else []:
            if isinstance(r, dict) and (t := _target(r)) and t not in present:
                out.add((p, t))
        for m in _CONCEPT_LINK.finditer(bodies.get(p, "")):
            if m.group(1) not in present:
                out.add((p, m.group(1)))
    return [Dangling(a, b) for a, b in sorted(out)]


_CONCEPT_LINK = re.compile(r"[(/](concepts/(?:active|archive)/[^)\s#]+\.md)")


def depends_cycles(concepts: Mapping[str, Entry]) -> list[list[str]]:
    """The cycles of ``depends_on`` among ``concepts`` (path → entry): strongly
    connected components of more than one concept, or a concept depending on itself,
    each as a sorted list; sorted. Iterative Tarjan (no recursion limit)."""
    graph = {
        p: [
            t
            for r in e.relations
            if r.get("type") == "depends_on" and (t := _target(r)) in concepts
        ]
        for p, e in concepts.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succ = graph[node]
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp: list[str] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in graph[node]:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(out)


def maintain(
    bundle: MemoryBundle, recalls: Mapping[str, int], *, decay: bool = True
) -> MaintainReport:
    """Run one maintenance cycle (see the module docstring).

    Args:
        bundle: the bundle, its lock held by the caller.
        recalls: bundle-relative concept path → recalls since the last cycle (the access
            log; the caller marks them consumed once this returns).
        decay: run the Hebbian decay step (``False``: report and truth maintenance only).

    Raises:
        WriteConflict: a concept changed while this ran (the caller retries).
    """
    rep = MaintainReport(dry_run=bundle.dry_run)
    rep.checked, rep.integrity, memories = verify_entries(bundle)
    concepts = {e.rel: e for e in bundle.entries("concepts/active", rep.problems)}
    archived = {e.rel: e for e in bundle.entries("concepts/archive", rep.problems)}
    metas: dict[str, dict[str, Any]] = {p: dict(e.meta) for p, e in concepts.items()}

    # symmetry
    seals_of_memories: dict[str, str] = {}
    for folder in ("memories/subsumed", "memories/archive"):
        for e in memories.get(folder, []):  # unreadable ones are integrity problems
            seals_of_memories[str(e.meta.get("hash") or "")] = e.rel
    rep.pending = len(bundle.listing("memories/active"))
    active_sources = {
        s
        for p, e in concepts.items()
        if metas[p].get("status", "active") == "active"
        for s in e.source_seals
    }
    for s, rel in sorted(seals_of_memories.items(), key=lambda x: x[1]):
        if rel.startswith("memories/subsumed/") and s not in active_sources:
            rep.unsourced.append(rel)
    for p, e in sorted({**concepts, **archived}.items()):
        for s in e.source_seals:
            if s not in seals_of_memories:
                rep.missing_sources.append(MissingSource(p, s))

    # truth maintenance
    rep.cycles = depends_cycles(concepts)
    dependants: dict[str, list[str]] = {}
    for p, e in concepts.items():
        for r in e.relations:
            if r.get("type") == "depends_on":
                dependants.setdefault(_target(r), []).append(p)

    def fallen(p: str) -> bool:
        m = metas[p]
        conf = m.get("confidence")
        zero = isinstance(conf, int | float) and not isinstance(conf, bool) and conf <= 0
        return m.get("status") == "superseded" or zero

    queue = sorted(p for p in concepts if fallen(p))
    seen = set(queue)
    while queue:
        p = queue.pop(0)
        for d in sorted(dependants.get(p, [])):
            if d in seen:
                continue
            seen.add(d)
            if metas[d].get("status", "active") == "active":
                metas[d]["status"] = "superseded"
                metas[d]["confidence"] = 0.0
                rep.superseded.append(d)
            queue.append(d)

    # Hebbian decay
    to_archive: list[str] = []
    if decay:
        for p in sorted(concepts):
            m = metas[p]
            n = int(recalls.get(p, 0))
            if n:
                count = m.get("retrieval_count")
                m["retrieval_count"] = (count if isinstance(count, int) else 0) + n
                rep.recalled[p] = n
                continue
            if m.get("status", "active") != "active" or m.get("pinned") is True:
                continue
            conf = concepts[p].confidence
            new = round(max(0.0, conf - DECAY_STEP), 4)
            m["confidence"] = new
            rep.decayed.append(Decayed(p, new))
            if new <= ARCHIVE_AT + 1e-9:
                to_archive.append(p)

    # write: relations to a concept archived now follow it to concepts/archive/
    moving = {p: f"concepts/archive/{p.rsplit('/', 1)[1]}" for p in to_archive}
    for p in sorted(concepts):
        if p in moving:
            continue
        rels = metas[p].get("relations")
        if isinstance(rels, list) and any(
            isinstance(r, dict) and _target(r) in moving for r in rels
        ):
            metas[p]["relations"] = [
                {**r, "target": "/" + moving[_target(r)]}
                if isinstance(r, dict) and _target(r) in moving else r
                for r in rels
            ]
    for p in sorted(concepts):
        e = concepts[p]
        if p in to_archive:
            continue
        if metas[p] != e.meta:
            bundle.update(e, metas[p], e.body, "memory: maintain")
    for p in rep.superseded:
        title = link_label(concepts[p].title)
        bundle.note(f"**Deprecation**: [{title}](/{p}) superseded (depends_on)")
    for p in to_archive:
        e = concepts[p]
        metas[p]["status"] = "archived"
        moved = bundle.move(e, "concepts/archive", render_file(metas[p], e.body))
        rep.archived.append(moved)
        bundle.note(
            f"**Deprecation**: [{link_label(e.title)}](/{moved}) archived (decayed to "
            f"{metas[p]['confidence']})"
        )
    rep.dangling = dangling(
        {p: metas[p] for p in concepts if p not in moving},
        {p: concepts[p].body for p in concepts},
        (set(concepts) - set(moving)) | set(moving.values()) | set(archived),
    )
    if rep.superseded or rep.archived or rep.decayed or rep.recalled:
        bundle.note(
            f"**Maintenance**: {len(rep.recalled)} recalled, {len(rep.decayed)} decayed, "
            f"{len(rep.archived)} archived, {len(rep.superseded)} superseded, "
            f"{len(rep.integrity)} seal mismatches, {len(rep.cycles)} cycles"
        )
    bundle.flush_log()
    rep.changed = bundle.changes.touched()
    rep.diffs = list(bundle.changes.diffs)
    return rep
