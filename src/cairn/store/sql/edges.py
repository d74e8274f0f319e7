"""Edge and stub-node tables of the knowledge graph, beside the units in the index.

Created with ``store.ensure_component("graph", MIGRATIONS)`` when ``store.edges`` is
first used. Tables:

* ``edges`` — one typed, directed edge per (source, target, relation, origin); ``id`` is
  the deterministic UUIDv5 of those four (see :func:`cairn.graph.edges.edge_id`).
  Structural edges (``parent`` / ``next`` / ``previous``) are not stored: every read
  derives them from the units (:mod:`cairn.store.sql.outline`).
  ``source`` is always a unit and references ``units(id) ON DELETE CASCADE``, so
  deleting a file's units deletes every edge leaving them. ``target`` is a unit id or a
  stub-node id (no foreign key: stubs are not units); the trigger
  ``graph_unit_deleted`` deletes the edges pointing at a unit when it is deleted, so no
  edge ever dangles; ``graph_unit_inserted`` forgets a document's built state when its
  units are written again. ``links`` counts the link occurrences an edge stands for;
  ``count`` every occurrence (links and metadata values); ``evidence`` is a JSON list of
  what the edge came from (at most 50 items).
* ``graph_stubs`` — stub nodes for targets that do not resolve to a unit.
* ``graph_docs`` — the content hash of each document as of the last graph update, so
  the graph finds changed and removed documents without help from the pipeline.
* ``graph_features`` — the tags and property values each document's units carried at
  the last update (for incremental implicit edges; kept when the units go).
* ``graph_names`` — the name keys each document answers to (file stem, aliases,
  declared and Org ``ID`` s; see :func:`cairn.graph.resolve.name_key`), as of the last
  link resolution; attachments appear as pseudo-documents ``attachment:ROOT:PATH``.
* ``graph_wants`` — the name keys each document's links (``source='link'``) and
  relation metadata values (``source='value'``) look for: who may resolve differently
  when a document answering to a key changes.
* ``graph_dirty`` — documents whose declared and rule edges must be rebuilt at the next
  graph update (``*``: all), written by link resolution.
* ``graph_meta`` — ``key → value`` (the fingerprint of the build settings).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cairn.store.sql.graph_reads import GraphReadsMixin
from cairn.store.sql.graph_walk import chunks
from cairn.store.sql.outline import STRUCTURAL, outline_counts_by_document

if TYPE_CHECKING:
    from cairn.model import Edge, Stub
    from cairn.store.sql.base import SQLBase

_EDGE_INDEXES = (
    ("edges_out", "CREATE INDEX IF NOT EXISTS edges_out ON edges(source, relation)"),
    ("edges_in", "CREATE INDEX IF NOT EXISTS edges_in ON edges(target, relation)"),
    ("edges_origin_doc", "CREATE INDEX IF NOT EXISTS edges_origin_doc "
     "ON edges(origin, source_document_id)"),
    ("edges_target_doc", "CREATE INDEX IF NOT EXISTS edges_target_doc "
     "ON edges(target_document_id, origin)"),
)
"""The edge table's secondary indexes, as the migration creates them."""

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE edges (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        relation TEXT NOT NULL,
        origin TEXT NOT NULL,
        weight REAL NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        links INTEGER NOT NULL DEFAULT 0,
        evidence TEXT NOT NULL DEFAULT '[]',
        source_document_id TEXT NOT NULL,
        target_document_id TEXT,
        run_id TEXT
    );
    CREATE INDEX edges_out ON edges(source, relation, origin, target, weight);
    CREATE INDEX edges_in ON edges(target, relation, origin, source, weight);
    CREATE INDEX edges_origin_doc ON edges(origin, source_document_id);
    CREATE INDEX edges_target_doc ON edges(target_document_id, origin);
    CREATE TABLE graph_stubs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        target TEXT NOT NULL,
        reason TEXT
    );
    CREATE TABLE graph_docs (
        document_id TEXT PRIMARY KEY,
        content_hash TEXT NOT NULL
    );
    CREATE TABLE graph_features (
        document_id TEXT NOT NULL,
        unit_id TEXT NOT NULL,
        feature TEXT NOT NULL
    );
    CREATE INDEX graph_features_doc ON graph_features(document_id);
    CREATE INDEX graph_features_feature ON graph_features(feature, unit_id)
    """,
    """
    CREATE TABLE graph_names (
        document_id TEXT NOT NULL,
        key TEXT NOT NULL
    );
    CREATE INDEX graph_names_doc ON graph_names(document_id);
    CREATE INDEX graph_names_key ON graph_names(key, document_id);
    CREATE TABLE graph_wants (
        document_id TEXT NOT NULL,
        source TEXT NOT NULL,
        key TEXT NOT NULL
    );
    CREATE INDEX graph_wants_doc ON graph_wants(document_id, source);
    CREATE INDEX graph_wants_key ON graph_wants(key, document_id);
    CREATE TABLE graph_dirty (
        document_id TEXT PRIMARY KEY
    );
    CREATE TABLE graph_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )
    """,
    # structural edges are derived from the units on demand (store/sql/outline.py):
    # the stored ones go; the walking indexes keep only what the queries filter by (a
    # walk reads the edge's id from the table anyway, so covering columns bought
    # nothing but size)
    """
    DELETE FROM edges WHERE origin = 'structural';
    DROP INDEX edges_out;
    DROP INDEX edges_in;
    CREATE INDEX edges_out ON edges(source, relation);
    CREATE INDEX edges_in ON edges(target, relation)
    """,
    # the implicit edges of a graph update read the features of a chunk of units at a
    # time (unit_features): without this index, each read scans the whole table, so a
    # cold build's work grew with the square of the corpus
    """
    CREATE INDEX graph_features_unit ON graph_features(unit_id)
    """,
)

# Statements holding ``;`` (the component migrator splits scripts on ``;``), so they are
# created on their own, idempotently, each time the tables are opened. The first keeps
# edges from dangling when a target unit goes; the second marks a document as changed
# whenever its units are written again (even with the same content hash, e.g. a file
# re-parsed after a failure or a settings change), so the next update rebuilds it.
TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS graph_unit_deleted AFTER DELETE ON units BEGIN "
    "DELETE FROM edges WHERE target = OLD.id; END",
    "CREATE TRIGGER IF NOT EXISTS graph_unit_inserted AFTER INSERT ON units BEGIN "
    "DELETE FROM graph_docs WHERE document_id = NEW.document_id; END",
)

EVIDENCE_CAP = 50
ALL = "*"


_OUTLINE = '[{"via": "outline"}]'


def evidence_json(evidence: Sequence[Mapping[str, Any]]) -> str:
    """The stored form of an edge's evidence (capped at :data:`EVIDENCE_CAP` items)."""
    if len(evidence) == 1 and evidence[0] == {"via": "outline"}:
        return _OUTLINE  # structural edges: most of them
    return json.dumps(
        [dict(e) for e in evidence[:EVIDENCE_CAP]], ensure_ascii=False, default=str
    )


class SQLiteEdgeIndex(GraphReadsMixin):
    """The :class:`cairn.store.base.EdgeIndex` of one :class:`SQLiteStore` (``store.edges``).

    Writes must run inside ``store.transaction()``.

    Raises:
        cairn.errors.StoreError: the graph tables are newer than this cairn.
    """

    def __init__(self, store: SQLBase) -> None:
        self.store = store
        self._outline_counted: dict[str, tuple[str, int, int]] = {}
        """document id -> (content hash, units, structural edges) last counted."""
        store.ensure_component("graph", MIGRATIONS)
        for trigger in TRIGGERS:
            self.db.execute(trigger)

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection of the store (never one captured at construction:
        a graph write from another thread must run inside that thread's transaction)."""
        return self.store.db

    # --- edges and stubs ---------------------------------------------------------------
    def insert(self, edges: Iterable[Edge], run_id: str | None = None) -> int:
        """Insert or replace edges (same id → replaced); returns how many were given.

        Structural edges are not stored: the store derives them from the units
        (:mod:`cairn.store.sql.outline`), so given ones are counted and dropped."""
        given = list(edges)
        rows = [
            (e.id, e.source, e.target, e.relation, e.origin, e.weight, e.count, e.links,
             evidence_json(e.evidence), e.source_document_id, e.target_document_id, run_id)
            for e in given if e.origin != STRUCTURAL
        ]
        self.db.executemany(
            "INSERT OR REPLACE INTO edges(id, source, target, relation, origin, weight, count, "
            "links, evidence, source_document_id, target_document_id, run_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        return len(given)

    def delete_ids(self, ids: Sequence[str]) -> None:
        """Delete edges by id."""
        for part in chunks(list(ids)):
            q = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM edges WHERE id IN ({q})", list(part))

    @contextmanager
    def bulk_load(self) -> Iterator[bool]:
        """A block that writes many edges into an empty edge table: the secondary
        indexes are dropped and built again at the end (SQLite builds an index from the
        whole table several times faster than it updates it row by row). Yields whether
        the table was empty — when not, nothing is dropped. Call inside a transaction;
        queries inside the block still work, only slower.
        """
        empty = self.db.execute("SELECT 1 FROM edges LIMIT 1").fetchone() is None
        if empty:
            for name, _ddl in _EDGE_INDEXES:
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
        try:
            yield empty
        finally:
            if empty:
                for _name, ddl in _EDGE_INDEXES:
                    self.db.execute(ddl)

    def delete_implicit_touching(self, unit_ids: Sequence[str], relation: str) -> None:
        """Delete implicit edges of ``relation`` with either end among ``unit_ids``."""
        for part in chunks(list(unit_ids)):
            q = ",".join("?" * len(part))
            for column in ("source", "target"):
                self.db.execute(
                    f"DELETE FROM edges WHERE origin='implicit' AND relation=? "
                    f"AND {column} IN ({q})",
                    [relation, *part],
                )

    def upsert_stubs(self, stubs: Iterable[Stub]) -> None:
        """Insert or refresh stub nodes. Of two spellings of one stub's label the
        smaller (by code point) is kept, whichever was written first, and of two
        reasons the first by :func:`cairn.graph.edges.reason_order` (a reason, then
        the smaller), so an index updated file by file, or built a chunk of documents
        at a time, has the stubs of a fresh build."""
        todo = list(stubs)
        ids = [s.id for s in todo]
        have: dict[str, tuple[str, str | None]] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            q = ",".join("?" * len(part))
            have.update((str(r[0]), (str(r[1]), r[2])) for r in self.db.execute(
                f"SELECT id, label, reason FROM graph_stubs WHERE id IN ({q})", part))
        rows = []
        for s in todo:
            label, reason = have.get(s.id, (s.label, s.reason))
            if (s.reason is None, s.reason or "") < (reason is None, reason or ""):
                reason = s.reason
            rows.append((s.id, s.kind, min(s.label, label), s.target, reason))
        self.db.executemany(
            "INSERT INTO graph_stubs(id, kind, label, target, reason) VALUES (?,?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET kind=excluded.kind, label=excluded.label, "
            "reason=excluded.reason",
            rows,
        )

    def prune_stubs(self) -> int:
        """Delete stub nodes no edge points at; returns how many."""
        # One pass over the edges, not one per stub: a bulk load drops the edges'
        # indexes, and a correlated NOT EXISTS then scans the whole table per stub.
        cur = self.db.execute(
            "DELETE FROM graph_stubs WHERE id NOT IN (SELECT target FROM edges)"
        )
        return cur.rowcount

    def clear(self) -> None:
        """Delete every edge, stub, built-state, feature and dirty mark and the build
        fingerprint (the next update builds everything); the names and wants of link
        resolution are kept."""
        for table in ("edges", "graph_stubs", "graph_docs", "graph_features", "graph_dirty",
                      "graph_meta"):
            self.db.execute(f"DELETE FROM {table}")

    def size(self) -> tuple[int, int]:
        """``(edges, stub nodes)``; edges include the derived structural ones, counted
        again only for documents whose content hash or unit count moved since this
        edge index last counted them (:meth:`_structural_total`)."""
        n_edges = int(self.db.execute("SELECT count(*) FROM edges").fetchone()[0])
        n_edges += self._structural_total()
        n_stubs = int(self.db.execute("SELECT count(*) FROM graph_stubs").fetchone()[0])
        return n_edges, n_stubs

    def _structural_total(self) -> int:
        """Structural edges in the whole index. Counted per document and kept, keyed
        by the document's content hash and unit count, so a graph update after one
        changed note counts that note's outline, not every outline (the count of every
        outline was a quarter of a ``remember`` at 12,000 notes)."""
        rows = [(str(r[0]), str(r[1]), int(r[2])) for r in self.db.execute(
            "SELECT d.id, d.content_hash, (SELECT count(*) FROM units u "
            "WHERE u.document_id = d.id) FROM documents d"  # a join and GROUP BY: 8x slower
        )]
        old = self._outline_counted
        stale = [d for d, h, n in rows if old.get(d, ("", -1, 0))[:2] != (h, n)]
        if len(stale) > 900:  # most of the index (a first count): one pass over it all
            counted = outline_counts_by_document(self.db, None)
        else:
            counted = {}
            for part in chunks(stale):
                counted.update(outline_counts_by_document(self.db, part))
        recount = set(stale)
        fresh: dict[str, tuple[str, int, int]] = {}
        for d, h, n in rows:
            edges = counted.get(d, 0) if d in recount else old[d][2]
            fresh[d] = (h, n, edges)
        self._outline_counted = fresh
        return sum(v[2] for v in fresh.values())

    # --- built state -------------------------------------------------------------------
    def changed_documents(self) -> tuple[list[str], list[str]]:
        """``(changed or new document ids, removed document ids)`` since the last update."""
        changed = [
            r[0]
            for r in self.db.execute(
                "SELECT d.id FROM documents d LEFT JOIN graph_docs g ON g.document_id = d.id "
                "WHERE g.content_hash IS NULL OR g.content_hash != d.content_hash"
            )
        ]
        removed = [
            r[0]
            for r in self.db.execute(
                "SELECT g.document_id FROM graph_docs g LEFT JOIN documents d "
                "ON d.id = g.document_id WHERE d.id IS NULL"
            )
        ]
        return changed, removed

    def document_ids(self) -> list[str]:
        """Every document id of the index, sorted."""
        return [r[0] for r in self.db.execute("SELECT id FROM documents ORDER BY id")]

    def mark_built(self, document_ids: Sequence[str]) -> None:
        """Record the given documents' current content hashes as built."""
        for part in chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            self.db.execute(
                "INSERT INTO graph_docs(document_id, content_hash) "
                f"SELECT id, content_hash FROM documents WHERE id IN ({q}) "
                "ON CONFLICT(document_id) DO UPDATE SET content_hash=excluded.content_hash",
                list(part),
            )

    def forget_docs(self, document_ids: Sequence[str]) -> None:
        """Drop the built-state and feature rows of documents."""
        for part in chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM graph_docs WHERE document_id IN ({q})", list(part))
            self.db.execute(f"DELETE FROM graph_features WHERE document_id IN ({q})", list(part))

    def set_features(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Add ``(document id, unit id, feature)`` rows (``tag:x`` / ``prop:key=value``)."""
        self.db.executemany(
            "INSERT INTO graph_features(document_id, unit_id, feature) VALUES (?,?,?)",
            list(rows),
        )

    def meta(self, key: str) -> str | None:
        """A value of ``graph_meta`` (e.g. the build settings' fingerprint), or ``None``."""
        row = self.db.execute("SELECT value FROM graph_meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of ``graph_meta``."""
        self.db.execute(
            "INSERT INTO graph_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    # --- names, wants, dirty documents (incremental resolution) --------------------------
    def names_of(self, document_ids: Sequence[str]) -> dict[str, set[str]]:
        """``document id -> name keys`` recorded for the given documents."""
        out: dict[str, set[str]] = {}
        for part in chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            for did, key in self.db.execute(
                f"SELECT document_id, key FROM graph_names WHERE document_id IN ({q})",
                list(part),
            ):
                out.setdefault(did, set()).add(key)
        return out

    def named_documents(self, prefix: str = "") -> set[str]:
        """Every document id (and attachment pseudo-id) with recorded names, or those
        starting with ``prefix``."""
        if not prefix:
            return {r[0] for r in self.db.execute(
                "SELECT DISTINCT document_id FROM graph_names")}
        hi = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT document_id FROM graph_names WHERE document_id >= ? "
            "AND document_id < ?", (prefix, hi))}

    def name_drift(self) -> tuple[list[str], list[str]]:
        """``(documents without recorded names, named documents that are gone)``;
        attachment pseudo-ids are left out."""
        unnamed = [r[0] for r in self.db.execute(
            "SELECT d.id FROM documents d WHERE NOT EXISTS "
            "(SELECT 1 FROM graph_names n WHERE n.document_id = d.id)")]
        gone = [r[0] for r in self.db.execute(
            "SELECT DISTINCT n.document_id FROM graph_names n WHERE n.document_id "
            "NOT LIKE 'attachment:%' AND NOT EXISTS "
            "(SELECT 1 FROM documents d WHERE d.id = n.document_id)")]
        return unnamed, gone

    def set_names(self, names: Mapping[str, Iterable[str]]) -> None:
        """Replace the recorded name keys of the given documents (empty: forget them)."""
        ids = list(names)
        for part in chunks(ids):
            q = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM graph_names WHERE document_id IN ({q})", list(part))
        self.db.executemany(
            "INSERT INTO graph_names(document_id, key) VALUES (?, ?)",
            [(d, k) for d, keys in names.items() for k in sorted(set(keys))],
        )

    def documents_named(self, keys: Iterable[str]) -> set[str]:
        """Documents (and attachment pseudo-ids) answering to any of ``keys``."""
        return self._documents_by_key("graph_names", keys)

    def _documents_by_key(self, table: str, keys: Iterable[str]) -> set[str]:
        """The ``document_id`` of the rows of ``table`` (``graph_names``, ``graph_wants``)
        whose ``key`` is any of ``keys``."""
        out: set[str] = set()
        for part in chunks(sorted(set(keys))):
            q = ",".join("?" * len(part))
            out.update(r[0] for r in self.db.execute(
                f"SELECT DISTINCT document_id FROM {table} WHERE key IN ({q})", list(part)))
        return out

    def set_wants(self, source: str, wants: Mapping[str, Iterable[str]]) -> None:
        """Replace the keys the given documents look for, of one ``source`` (``link`` or
        ``value``)."""
        for part in chunks(list(wants)):
            q = ",".join("?" * len(part))
            self.db.execute(
                f"DELETE FROM graph_wants WHERE source=? AND document_id IN ({q})",
                [source, *part],
            )
        self.db.executemany(
            "INSERT INTO graph_wants(document_id, source, key) VALUES (?, ?, ?)",
            [(d, source, k) for d, keys in wants.items() for k in sorted(set(keys))],
        )

    def documents_wanting(self, keys: Iterable[str]) -> set[str]:
        """Documents whose links or relation values look for any of ``keys``."""
        return self._documents_by_key("graph_wants", keys)

    def forget_wants(self, document_ids: Sequence[str]) -> None:
        """Drop every want of the given (removed) documents."""
        for part in chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM graph_wants WHERE document_id IN ({q})", list(part))

    def mark_dirty(self, document_ids: Iterable[str]) -> None:
        """Mark documents (or :data:`ALL`) for a rebuild of their declared and rule edges."""
        self.db.executemany(
            "INSERT OR IGNORE INTO graph_dirty(document_id) VALUES (?)",
            [(d,) for d in document_ids],
        )

    def dirty(self) -> set[str]:
        """The documents marked dirty (``{"*"}``: all), left marked."""
        return {r[0] for r in self.db.execute("SELECT document_id FROM graph_dirty")}

    def take_dirty(self) -> set[str]:
        """The documents marked dirty (``{"*"}`` for all), unmarking them."""
        out = {r[0] for r in self.db.execute("SELECT document_id FROM graph_dirty")}
        self.db.execute("DELETE FROM graph_dirty")
        return out


class EdgesMixin:
    """Gives :class:`SQLiteStore` its ``edges`` attribute."""

    _edge_index: SQLiteEdgeIndex | None = None

    @property
    def edges(self) -> SQLiteEdgeIndex:
        """The graph tables of this store (created on first use)."""
        if self._edge_index is None:
            self._edge_index = SQLiteEdgeIndex(self)  # type: ignore[arg-type]
        return self._edge_index
