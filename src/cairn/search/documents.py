"""Documents as well as units: a file whose sections together match gains over one
short section (``document``), a note the best hits link to gains (``link_hop``), and a
filtered search lists more than one file (``file_crowding``). Each is a named summand
of the fused score, so ``--explain`` shows it and the summands still add up.

Fusion scores units, so a file whose answer is spread over three sections, each ranked
middling by both lists, loses to one short section that holds the query's rarer word.
So, in hybrid RRF, each document's best unit among the first :data:`DOCUMENT_DEPTH`
fused units gains

    ``document`` = weight × Σ over the document's next :data:`SIBLINGS` best units there
    of Σ_l w_l · norm_l(raw)

(0 when it has no other unit there), ``w_l`` the list's fusion weight and ``norm_l``
the list's raw score min-max normalised over its first 100 (1 at its head, 0 at its
tail; the ``rel_<list>`` normalisation of :func:`cairn.search.fusion.rrf`). Scores,
not ranks: a section deep in both lists still holds a rank share, and summing those
lifted long manuals whose many sections each match a word; their normalised scores
are near 0. Only the best unit gains, so the file rises once and its other sections do
not crowd the page. The weight is ``[fusion] document``; it is 0 (off) by default: at
0.05 it raised the judged notes' dev split as a whole but lowered three of its kinds.

A question that names one note while its answer is in a note it links to ("who created
the system my note on task switching relies on") finds the first and not the second.
So each of the first :data:`HOP_SEEDS` fused units passes a share of its score to the
notes it links to (resolved links to other files): the linked unit when the link names
one and it is among the first :data:`DEPTH` fused units, else that document's best
unit there, gains

    ``link_hop`` = weight × the linking unit's score / the files it links to,

the best such link counting. Dividing by the files linked keeps an index page that
links to every table from lifting them all. A unit the lists did not find is not
brought in. The weight is ``[fusion] link_hop`` (0: off).

A dated chat message takes no part in either: a conversation is one document of many
turns, and which turn answers is :mod:`cairn.search.conversation`'s question. Both
weights were measured on the dev splits of the judged notes, SciFact and LoCoMo
(``docs/benchmarks.md``).

A filter (``tag:draft``) narrows the candidates to the units it passes; when one file
holds most of them its sections fill the page and another file that passes the filter
is never seen, with or without ``--files``. So, in every mode, when the query has a
filter and words, a unit among the first :data:`CROWD_WINDOW` results that is the
(``per_file`` + 1)-th or later of its document there is put after every other unit of
that window and before the units past it, keeping its order among those moved: its
score is mapped into the gap between the lowest unit kept in the window and the first
unit past it, as the summand ``file_crowding`` (scores stay positive). ``per_file`` is
``[fusion] per_file`` (default :data:`PER_FILE`; 0: off). A filter-only query needs no
such rule: the store already lists its units in rounds over documents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from cairn.model import UnitFacts
from cairn.search.fusion import Fused, make_distinct, norm_head
from cairn.store import Store

DEPTH = 100
"""Fused units read for the link hop (the fusion's own depth per list)."""

DOCUMENT_DEPTH = 20
"""Fused units read for the document score: sections further down are not evidence
that a file matches (a long manual has many middling sections)."""

SIBLINGS = 2
"""Other units of a document whose scores its best unit gains a share of."""

PER_FILE = 3
"""Units of one document listed, with a filter, before other documents' units."""

CROWD_WINDOW = 50
"""Results the per-file cap reorders (the first pages); units past it keep their place."""


def _with(f: Fused, name: str, value: float) -> Fused:
    summands = {**f.summands, name: value}
    summands.pop("order", None)  # make_distinct sets it again where needed
    return Fused(f.key, math.fsum(summands.values()), summands, f.ranks, f.raw)


def add_document_score(
    fused: Sequence[Fused], facts: Mapping[str, UnitFacts], weight: float,
    list_weights: Mapping[str, float],
) -> list[Fused]:
    """``fused`` (best first, unit ids as keys) with the ``document`` summand added to
    each document's best unit among the first :data:`DOCUMENT_DEPTH` (see the module),
    re-sorted; the same list when ``weight`` is 0 or no document has two units there.

    Args:
        fused: fused results, best first (``ranks`` and ``raw`` per list).
        facts: unit id → facts (a unit without facts, or a dated chat message, is left
            out).
        weight: the share of the siblings' evidence the best unit gains.
        list_weights: the fusion's list weights (a list not named weighs 1.0).
    """
    if weight <= 0 or not fused:
        return list(fused)
    by_doc: dict[str, list[Fused]] = {}
    for f in fused[:DOCUMENT_DEPTH]:
        fact = facts.get(f.key)
        if fact is None or fact.time is not None:
            continue
        by_doc.setdefault(fact.document_id, []).append(f)
    if all(len(units) < 2 for units in by_doc.values()):
        return list(fused)
    # each list again, in its own order, from the ranks and raw scores fusion kept
    lists: dict[str, list[tuple[int, str, float]]] = {}
    for f in fused:
        for n, r in f.ranks.items():
            lists.setdefault(n, []).append((r, f.key, f.raw[n]))
    norms = {n: norm_head([(k, s) for _, k, s in sorted(lst)]) for n, lst in lists.items()}
    gains: dict[str, float] = {}
    for units in by_doc.values():
        if len(units) > 1:
            best, *rest = units  # already best first
            gain = weight * math.fsum(list_weights.get(n, 1.0) * norms[n][u.key]
                                      for u in rest[:SIBLINGS] for n in u.ranks)
            if gain > 0:
                gains[best.key] = gain
    if not gains:
        return list(fused)
    return make_distinct([_with(f, "document", gains[f.key]) if f.key in gains else f
                          for f in fused])


def crowd_files(fused: Sequence[Fused], facts: Mapping[str, UnitFacts],
                per_file: int = PER_FILE) -> list[Fused]:
    """``fused`` (best first, positive scores) with each document's units past its first
    ``per_file`` among the first :data:`CROWD_WINDOW` moved after the window's other
    units and before the units past the window, by the ``file_crowding`` summand (see
    the module); the same list when no unit is past its document's first ``per_file``
    there, all are, or ``per_file`` is 0.

    The window is fixed so that the order does not depend on how many results were
    asked for (pages join into one big page): its caller ranks at least
    ``CROWD_WINDOW + 1`` results when it applies.

    Args:
        fused: results, best first.
        facts: unit id → facts (a unit without facts counts as its own document).
        per_file: units of one document kept in place.
    """
    if per_file <= 0 or not fused:
        return list(fused)
    seen: dict[str, int] = {}
    crowded: set[str] = set()
    for f in fused[:CROWD_WINDOW]:
        fact = facts.get(f.key)
        doc = fact.document_id if fact is not None else f"unit:{f.key}"
        seen[doc] = seen.get(doc, 0) + 1
        if seen[doc] > per_file:
            crowded.add(f.key)
    kept = [f.score for f in fused[:CROWD_WINDOW] if f.key not in crowded]
    if not crowded or not kept:
        return list(fused)
    # without the tie-break ``order`` summand, which _with drops
    base = {f.key: math.fsum(v for n, v in f.summands.items() if n != "order")
            for f in fused if f.key in crowded}
    low, high = min(kept), max(base.values())
    floor = max(0.0, fused[CROWD_WINDOW].score) if len(fused) > CROWD_WINDOW else 0.0
    if high <= 0 or low <= floor or min(base.values()) <= 0:
        return list(fused)  # scores that no such move can order
    # the crowded units' scores mapped into (floor, low), in their own order
    span = math.nextafter(low, floor) - floor

    def moved(b: float) -> float:
        return floor + span * (b / high) * (1 - 1e-9)

    out = [_with(f, "file_crowding", moved(base[f.key]) - base[f.key])
           if f.key in crowded else f for f in fused]
    return make_distinct(out, key_order=False)


HOP_SEEDS = 3
"""Best fused units whose links are followed by the link hop."""


def add_link_hop(store: Store, fused: Sequence[Fused], facts: Mapping[str, UnitFacts],
                 weight: float) -> list[Fused]:
    """``fused`` (best first, unit ids as keys) with the ``link_hop`` summand: the
    best unit, among the first :data:`DEPTH`, of each document that one of the first
    :data:`HOP_SEEDS` units links to (the linked unit itself when the link names one
    and it is there) gains ``weight`` × the linking unit's score (the best such link);
    re-sorted. The same list when ``weight`` is 0 or no link leads to a listed unit.
    Raises what the store raises."""
    if weight <= 0 or not fused:
        return list(fused)
    seeds = {f.key: f.score for f in fused[:HOP_SEEDS]
             if (fact := facts.get(f.key)) is not None and fact.time is None}
    links = [ln for ln in store.links_of(list(seeds)) if ln.resolved_document_id]
    if not links:
        return list(fused)
    best: dict[str, str] = {}
    listed: set[str] = set()
    for f in fused[:DEPTH]:
        fact = facts.get(f.key)
        if fact is not None and fact.time is None:
            best.setdefault(fact.document_id, f.key)
            listed.add(f.key)
    # a link inside the file is not a hop to another
    links = [ln for ln in links if ln.resolved_document_id != facts[ln.unit_id].document_id]
    fanout: dict[str, set[str]] = {}
    for ln in links:
        fanout.setdefault(ln.unit_id, set()).add(str(ln.resolved_document_id))
    gains: dict[str, float] = {}
    for ln in links:
        doc = str(ln.resolved_document_id)
        target = ln.resolved_unit_id if ln.resolved_unit_id in listed else best.get(doc)
        if target is not None and target not in seeds:
            gain = weight * seeds[ln.unit_id] / len(fanout[ln.unit_id])
            gains[target] = max(gains.get(target, 0.0), gain)
    if not gains:
        return list(fused)
    return make_distinct([_with(f, "link_hop", gains[f.key]) if f.key in gains else f
                          for f in fused])
