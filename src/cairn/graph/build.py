"""Building the typed graph of one store: edges written as diffs after each index run.

:class:`GraphBuilder` brings the edge index up to date with the documents: structural
and implicit edges of the changed documents, declared and rule edges of those and of
the documents link resolution marked, a chunk of documents at a time so that memory
holds one chunk, not the index. :class:`cairn.graph.service.GraphService` owns one and
answers the queries.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.graph import edges as eb
from cairn.graph.catalog import Catalog
from cairn.graph.declared import build_declared
from cairn.graph.resolve import DOCUMENT_CHUNK, catalog_for, in_chunks
from cairn.graph.structural import build_rules, implicit_edges, structural_count, unit_features
from cairn.model import Edge, GraphDocument, GraphUnit
from cairn.store import Store


@dataclass(frozen=True, slots=True)
class UpdateReport:
    """What an update did: documents rebuilt / removed, edges written / deleted per origin,
    and wall time in seconds."""

    changed_documents: int
    removed_documents: int
    written: Mapping[str, int] = field(default_factory=dict)
    deleted: Mapping[str, int] = field(default_factory=dict)
    edges: int = 0
    stubs: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "changed_documents": self.changed_documents,
            "removed_documents": self.removed_documents,
            "written": dict(self.written),
            "deleted": dict(self.deleted),
            "edges": self.edges,
            "stubs": self.stubs,
            "seconds": self.seconds,
        }


class GraphBuilder:
    """Builds and updates the edges of ``store`` with ``config``, ``chunk`` documents
    at a time (see :data:`cairn.graph.resolve.DOCUMENT_CHUNK`; the graph is the same
    whatever it is). ``config`` may be replaced between updates; when it differs from
    the one the graph was built with, the next :meth:`update` rebuilds everything."""

    def __init__(self, store: Store, config: eb.BuildConfig, chunk: int = DOCUMENT_CHUNK) -> None:
        self.store = store
        self.es = store.edges
        self.config = config
        self.chunk = chunk

    def is_stale(self) -> bool:
        """Whether documents changed, or links were resolved again, since the last update
        (or the settings differ from those the graph was built with)."""
        changed, removed = self.es.changed_documents()
        return bool(changed or removed or self.es.dirty()
                    or self.es.meta("config") != eb.config_fingerprint(self.config))

    def update(
        self,
        changed: Iterable[str] | None = None,
        removed: Iterable[str] | None = None,
        *,
        run_id: str | None = None,
    ) -> UpdateReport:
        """Bring the graph up to date after an index run (and :func:`resolve_links`).

        Args:
            changed: documents added or re-written (added to those found by comparing
                content hashes).
            removed: documents deleted (likewise).
            run_id: recorded on the edges written.

        Structural and implicit edges are rebuilt for the changed documents (implicit
        ones also for the units sharing a tag or property value with them); declared and
        rule edges for the changed documents and those link resolution marked (whose
        links or relation values may resolve differently), each written as a diff. The
        first update, and one after the settings changed, builds everything. Runs in one
        transaction (nested in the caller's, if any).

        Raises:
            cairn.errors.StoreError: the store failed.
        """
        t0 = time.perf_counter()
        es = self.es
        written: dict[str, int] = {}
        deleted: dict[str, int] = {}
        fingerprint = eb.config_fingerprint(self.config)
        with self.store.transaction(), contextlib.ExitStack() as stack:
            full = es.meta("config") != fingerprint
            if full:
                es.clear()
            # the first build: write into an empty table, indexes built at the end
            cold = stack.enter_context(es.bulk_load())
            found_changed, found_removed = es.changed_documents()
            ch = set(found_changed) | set(changed or ())
            rm = (set(found_removed) | set(removed or ())) - ch
            dirty = es.take_dirty()
            decl: set[str] | None = None if full or "*" in dirty else (ch | dirty) - rm
            load = sorted(set(es.document_ids()) | ch) if decl is None else sorted(ch | decl)
            feats: set[str] = set()  # the tags and values changed documents had or have
            live: set[str] = set()
            # a chunk of documents at a time: memory holds one chunk, not the index
            for part in in_chunks(load, self.chunk):
                docs, units = es.graph_sources(part)
                ours = part if decl is None else [d for d in part if d in decl]
                self._declared_and_rules(docs, units, ours, written, deleted, run_id,
                                         cold=cold)
                ch_docs = [d for d in docs if d.id in ch]
                if ch_docs:
                    ch_units = [u for u in units if u.document_id in ch]
                    written[eb.STRUCTURAL] = (written.get(eb.STRUCTURAL, 0)
                                              + structural_count(ch_units))
                    self._forget_features(ch_docs, ch_units, feats, cold=cold)
                    live.update(d.id for d in ch_docs)
            rm |= ch - live  # said to have changed, but gone from the index
            ch = live
            if ch or rm:
                written.setdefault(eb.STRUCTURAL, 0)
                feats |= es.features_of(sorted(rm))
                es.forget_docs(sorted(rm))
                written[eb.IMPLICIT] = self._update_implicit(feats, run_id, cold=cold)
                es.forget_wants(sorted(rm))
                es.mark_built(sorted(ch))
            es.prune_stubs()
            es.set_meta("config", fingerprint)
            n_edges, n_stubs = es.size()
        return UpdateReport(len(ch), len(rm), written, deleted, n_edges, n_stubs,
                            round(time.perf_counter() - t0, 4))

    def rebuild(self, *, run_id: str | None = None) -> UpdateReport:
        """Drop every edge and build the graph from scratch."""
        with self.store.transaction():
            self.es.clear()
        return self.update(run_id=run_id)

    def _declared_and_rules(
        self,
        docs: Sequence[GraphDocument],
        units: Sequence[GraphUnit],
        ids: Sequence[str],
        written: dict[str, int],
        deleted: dict[str, int],
        run_id: str | None,
        *,
        cold: bool = False,
    ) -> None:
        """Rebuild the declared and rule edges leaving the documents ``ids`` (those of
        ``docs`` and ``units`` that are not among them are left alone); ``cold``: the
        edge table was empty when the update began, so none leave them yet."""
        if not ids:
            return
        es, store = self.es, self.store
        decl = set(ids)
        docs = [d for d in docs if d.id in decl]
        units = [u for u in units if u.document_id in decl]
        links = store.links_from(ids)
        targets = {lk.resolved_document_id for lk in links if lk.resolved_document_id}
        firsts = es.first_units(sorted(decl | targets))

        def catalog(keys: set[str]) -> Catalog:
            return catalog_for(store, keys, decl)

        declared, vwants = build_declared(docs, units, links, self.config, catalog, firsts)
        rules, rwants = build_rules(docs, self.config, catalog, firsts)
        for d, keys in rwants.items():
            vwants.setdefault(d, set()).update(keys)
        es.set_wants("value", vwants)
        self._sync(eb.DECLARED, declared, ids, written, deleted, run_id, cold=cold)
        self._sync(eb.RULE, rules, ids, written, deleted, run_id, cold=cold)

    def _sync(
        self,
        origin: str,
        built: eb.EdgeSet,
        document_ids: Sequence[str],
        written: dict[str, int],
        deleted: dict[str, int],
        run_id: str | None,
        *,
        cold: bool = False,
    ) -> None:
        """Write the difference between ``built`` and the stored edges of ``origin``
        leaving ``document_ids``; adds to the counts in ``written`` and ``deleted``.
        ``cold``: the edge table was empty when the update began, so nothing is read."""
        self.es.upsert_stubs(built.stubs.values())
        # In a cold build the edge indexes are dropped (bulk_load), and this read
        # would scan the whole table once per chunk of documents: quadratic in the
        # corpus, for edges that cannot exist yet (a document is in one chunk).
        old = {} if cold else self.es.edges_of_origin(origin, document_ids)
        gone = [eid for eid in old if eid not in built]
        fresh: list[Edge] = []
        for e in built:
            o = old.get(e.id)
            if o is None or not eb.same_edge(o, e):
                fresh.append(e)
        self.es.delete_ids(gone)
        written[origin] = written.get(origin, 0) + self.es.insert(fresh, run_id)
        deleted[origin] = deleted.get(origin, 0) + len(gone)

    def _forget_features(
        self,
        docs: Sequence[GraphDocument],
        units: Sequence[GraphUnit],
        feats: set[str],
        *,
        cold: bool,
    ) -> None:
        """Replace the recorded features of changed documents' units; the old and new
        ones are added to ``feats``. Unless ``cold`` (an empty edge table), the units'
        implicit edges go: those still sharing a feature are rebuilt from ``feats``."""
        es = self.es
        ids = [d.id for d in docs]
        feats |= es.features_of(ids)
        es.forget_docs(ids)
        rows = unit_features(docs, units, self.config.implicit_keys)
        es.set_features(rows)
        feats.update(f for _d, _u, f in rows)
        if not cold:
            unit_ids = sorted(u.id for u in units)
            for rel in (eb.SHARES_TAG, eb.SHARES_PROPERTY):
                es.delete_implicit_touching(unit_ids, rel)

    def _update_implicit(self, feats: set[str], run_id: str | None, *, cold: bool) -> int:
        """Rebuild the implicit edges of the units holding one of ``feats`` (the
        features changed documents had or have), a chunk of units at a time; ``cold``:
        the edge table was empty, nothing to delete. Returns the edges written."""
        es = self.es
        holders = es.holders(sorted(feats))
        affected = sorted({u for hs in holders.values() for u, _d in hs})
        del holders
        if not cold:
            for part in in_chunks(affected, self.chunk):
                for rel in (eb.SHARES_TAG, eb.SHARES_PROPERTY):
                    es.delete_implicit_touching(part, rel)
        n = 0
        for part in in_chunks(affected, self.chunk):
            have = es.unit_features(part)
            all_feats = sorted({f for fs in have.values() for f in fs})
            counts = es.feature_counts(all_feats)
            small = [f for f in all_feats if counts.get(f, 0) <= self.config.max_feature_units]
            owners = es.holders(small)
            partners = {u for hs in owners.values() for u, _d in hs}
            have.update(es.unit_features(sorted(partners - set(have))))
            unit_doc = {u: d for hs in owners.values() for u, d in hs}
            # a pair whose other end is an affected unit of an earlier chunk was built there
            done = {b for b in partners if b < part[0] and have.get(b, set()) & feats}
            n += es.insert(implicit_edges(part, have, owners, counts, unit_doc,
                                          self.config.max_feature_units, skip=done), run_id)
        return n
