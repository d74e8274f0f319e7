"""Edge and stub-node tables of the knowledge graph, in the index's SQLite file.

Created with ``store.ensure_component("graph", MIGRATIONS)``. Tables:

* ``edges`` — one typed, directed edge per (source, target, relation, origin); ``id`` is
  the deterministic UUIDv5 of those four (see :func:`cairn.graph.edges.edge_id`).
  ``source`` is always a unit and references ``units(id) ON DELETE CASCADE``, so
  deleting a file's units deletes every edge leaving them. ``target`` is a unit id or a
  stub-node id (no foreign key: stubs are not units); the trigger
  ``graph_unit_deleted`` deletes the edges pointing at a unit when it is deleted, so no
  edge ever dangles; ``graph_unit_inserted`` forgets a document's built state when its
  units are written again. ``links`` counts the ``links`` rows (link occurrences) an edge
  stands for; ``count`` counts every occurrence (links and metadata values);
  ``evidence`` is a JSON list of what the edge came from (at most 50 items).
* ``graph_stubs`` — stub nodes for targets that do not resolve to a unit (missing
  notes, unknown org IDs, missing attachments) and for attachments (non-note files).
* ``graph_docs`` — the content hash of each document as of the last graph update, so
  :class:`cairn.graph.service.GraphService` finds changed and removed documents
  without help from the pipeline.
* ``graph_features`` — the tags and property values each document's units carried at
  the last update (for incremental implicit edges; kept when the units go).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.store.sqlite import SQLiteStore

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


@dataclass(slots=True)
class EdgeRow:
    """One edge as stored.

    Attributes:
        id: deterministic UUIDv5 over (source, target, relation, origin).
        source / target: unit ids (``target`` may be a stub id).
        relation: ``references``, ``embeds``, ``depends_on``, ``parent`` … or
            ``unresolved``.
        origin: ``declared``, ``structural``, ``rule`` or ``implicit``.
        weight: the edge's own strength, usually in (0, 1] (OKF confidence, tag rarity).
        count: occurrences merged into the edge; ``links``: how many of them are rows of
            the ``links`` table.
        evidence: JSON-ready dicts naming where the edge came from.
        source_document_id / target_document_id: documents of the two ends
            (``None`` for a stub target).
    """

    id: str
    source: str
    target: str
    relation: str
    origin: str
    weight: float
    source_document_id: str
    target_document_id: str | None
    count: int = 1
    links: int = 0
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def as_tuple(self, run_id: str | None) -> tuple[Any, ...]:
        """Values in the column order of :meth:`EdgeStore.insert`."""
        return (
            self.id,
            self.source,
            self.target,
            self.relation,
            self.origin,
            self.weight,
            self.count,
            self.links,
            json.dumps(self.evidence[:EVIDENCE_CAP], ensure_ascii=False, default=str),
            self.source_document_id,
            self.target_document_id,
            run_id,
        )


@dataclass(frozen=True, slots=True)
class Stub:
    """A stub node: a target that is not a unit.

    ``kind`` is ``note`` (a missing note), ``id`` (an unknown org ID), ``heading`` (a
    missing heading in the linking file), ``attachment`` (a non-note file, existing or
    not) or ``file``; ``label`` is what to show; ``target`` the normalised key;
    ``reason`` why it did not resolve (``None`` for an existing attachment).
    """

    id: str
    kind: str
    label: str
    target: str
    reason: str | None


def _chunks(items: Sequence[Any], n: int = 500) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


class EdgeStore:
    """Queries over the graph tables of one :class:`SQLiteStore`.

    Args:
        store: the open store; the ``graph`` component is created or migrated here.

    Raises:
        cairn.errors.StoreError: the component is newer than this cairn.
    """

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        store.ensure_component("graph", MIGRATIONS)
        for trigger in TRIGGERS:
            self.db.execute(trigger)

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection of the store (never one captured at construction:
        a graph write from another thread must run inside that thread's transaction)."""
        return self.store.db

    # --- writes (call inside store.transaction()) --------------------------------------
    def insert(self, edges: Iterable[EdgeRow], run_id: str | None = None) -> int:
        """Insert or replace edges (same id → replaced); returns how many."""
        rows = [e.as_tuple(run_id) for e in edges]
        self.db.executemany(
            "INSERT OR REPLACE INTO edges(id, source, target, relation, origin, weight, count, "
            "links, evidence, source_document_id, target_document_id, run_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        return len(rows)

    def delete_ids(self, ids: Sequence[str]) -> None:
        """Delete edges by id."""
        for part in _chunks(list(ids)):
            q = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM edges WHERE id IN ({q})", list(part))

    def delete_origin_for_documents(self, origin: str, document_ids: Sequence[str]) -> None:
        """Delete edges of one origin leaving the given documents."""
        for part in _chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            self.db.execute(
                f"DELETE FROM edges WHERE origin=? AND source_document_id IN ({q})",
                [origin, *part],
            )

    def delete_implicit_touching(self, unit_ids: Sequence[str], relation: str) -> None:
        """Delete implicit edges of ``relation`` with either end among ``unit_ids``."""
        for part in _chunks(list(unit_ids)):
            q = ",".join("?" * len(part))
            self.db.execute(
                f"DELETE FROM edges WHERE origin='implicit' AND relation=? AND source IN ({q})",
                [relation, *part],
            )
            self.db.execute(
                f"DELETE FROM edges WHERE origin='implicit' AND relation=? AND target IN ({q})",
                [relation, *part],
            )

    def upsert_stubs(self, stubs: Iterable[Stub]) -> None:
        """Insert or refresh stub nodes."""
        self.db.executemany(
            "INSERT INTO graph_stubs(id, kind, label, target, reason) VALUES (?,?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET kind=excluded.kind, label=excluded.label, "
            "reason=excluded.reason",
            [(s.id, s.kind, s.label, s.target, s.reason) for s in stubs],
        )

    def prune_stubs(self) -> int:
        """Delete stub nodes no edge points at; returns how many."""
        cur = self.db.execute(
            "DELETE FROM graph_stubs WHERE NOT EXISTS "
            "(SELECT 1 FROM edges e WHERE e.target = graph_stubs.id)"
        )
        return cur.rowcount

    def set_doc_hashes(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Record ``(document id, content hash)`` as built."""
        self.db.executemany(
            "INSERT INTO graph_docs(document_id, content_hash) VALUES (?,?) "
            "ON CONFLICT(document_id) DO UPDATE SET content_hash=excluded.content_hash",
            list(pairs),
        )

    def forget_docs(self, document_ids: Sequence[str]) -> None:
        """Drop the built-state and feature rows of documents."""
        for part in _chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM graph_docs WHERE document_id IN ({q})", list(part))
            self.db.execute(f"DELETE FROM graph_features WHERE document_id IN ({q})", list(part))

    def set_features(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Add ``(document id, unit id, feature)`` rows (``tag:x`` / ``prop:key=value``)."""
        self.db.executemany(
            "INSERT INTO graph_features(document_id, unit_id, feature) VALUES (?,?,?)",
            list(rows),
        )

    def clear(self) -> None:
        """Delete every edge, stub, built-state and feature row."""
        for table in ("edges", "graph_stubs", "graph_docs", "graph_features"):
            self.db.execute(f"DELETE FROM {table}")

    # --- change detection --------------------------------------------------------------
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

    # --- reads -------------------------------------------------------------------------
    def edges_of_origin(self, origin: str) -> dict[str, tuple[Any, ...]]:
        """``id -> (source, target, relation, weight, count, links, evidence JSON)``."""
        return {
            r[0]: tuple(r[1:])
            for r in self.db.execute(
                "SELECT id, source, target, relation, weight, count, links, evidence "
                "FROM edges WHERE origin=?",
                (origin,),
            )
        }

    def features_of(self, document_ids: Sequence[str]) -> set[str]:
        """Every feature recorded for the given documents."""
        out: set[str] = set()
        for part in _chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            out.update(
                r[0]
                for r in self.db.execute(
                    f"SELECT DISTINCT feature FROM graph_features WHERE document_id IN ({q})",
                    list(part),
                )
            )
        return out

    def holders(self, features: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """``feature -> [(unit id, document id)]`` for the given features."""
        out: dict[str, list[tuple[str, str]]] = {}
        for part in _chunks(list(features)):
            q = ",".join("?" * len(part))
            for feat, uid, did in self.db.execute(
                f"SELECT feature, unit_id, document_id FROM graph_features WHERE feature IN ({q})",
                list(part),
            ):
                out.setdefault(feat, []).append((uid, did))
        return out

    def unit_features(self, unit_ids: Sequence[str]) -> dict[str, set[str]]:
        """``unit id -> features``."""
        out: dict[str, set[str]] = {}
        for part in _chunks(list(unit_ids)):
            q = ",".join("?" * len(part))
            for uid, feat in self.db.execute(
                f"SELECT unit_id, feature FROM graph_features WHERE unit_id IN ({q})", list(part)
            ):
                out.setdefault(uid, set()).add(feat)
        return out

    def feature_counts(self, features: Sequence[str]) -> dict[str, int]:
        """How many units carry each feature."""
        out: dict[str, int] = {}
        for part in _chunks(list(features)):
            q = ",".join("?" * len(part))
            for feat, n in self.db.execute(
                f"SELECT feature, count(DISTINCT unit_id) FROM graph_features "
                f"WHERE feature IN ({q}) GROUP BY feature",
                list(part),
            ):
                out[feat] = int(n)
        return out

    def out_edges(
        self, nodes: Sequence[str], relations: Sequence[str] | None = None
    ) -> list[tuple[str, str, str, str, str, float]]:
        """``(id, source, target, relation, origin, weight)`` of edges leaving ``nodes``."""
        return self._adjacent("source", nodes, relations)

    def in_edges(
        self, nodes: Sequence[str], relations: Sequence[str] | None = None
    ) -> list[tuple[str, str, str, str, str, float]]:
        """``(id, source, target, relation, origin, weight)`` of edges entering ``nodes``."""
        return self._adjacent("target", nodes, relations)

    def _adjacent(
        self, column: str, nodes: Sequence[str], relations: Sequence[str] | None
    ) -> list[tuple[str, str, str, str, str, float]]:
        out: list[tuple[str, str, str, str, str, float]] = []
        rel_sql = ""
        rel_args: list[str] = []
        if relations:
            rel_sql = f" AND relation IN ({','.join('?' * len(relations))})"
            rel_args = list(relations)
        for part in _chunks(list(nodes), 900 - len(rel_args)):
            q = ",".join("?" * len(part))
            out.extend(
                self.db.execute(
                    f"SELECT id, source, target, relation, origin, weight FROM edges "
                    f"WHERE {column} IN ({q}){rel_sql}",
                    [*part, *rel_args],
                ).fetchall()
            )
        return out

    def edges_by_ids(self, ids: Sequence[str]) -> dict[str, sqlite3.Row]:
        """Full edge rows by id."""
        out: dict[str, sqlite3.Row] = {}
        for part in _chunks(list(ids)):
            q = ",".join("?" * len(part))
            for r in self.db.execute(f"SELECT * FROM edges WHERE id IN ({q})", list(part)):
                out[r["id"]] = r
        return out

    def node_rows(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Display data for nodes (units joined with documents; stubs) by id.

        Each value has ``id``, ``type`` (``unit`` or ``stub``), ``title``, ``path``,
        ``document_id``, ``kind``, ``line`` (units) or ``reason`` (stubs).
        """
        out: dict[str, dict[str, Any]] = {}
        wanted = list(dict.fromkeys(ids))
        for part in _chunks(wanted):
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                "SELECT u.id, u.title, u.kind, u.line_start, u.document_id, u.outline_path, "
                "d.path, d.title AS doc_title, d.type AS doc_type, r.path AS root_path "
                "FROM units u JOIN documents d ON d.id = u.document_id "
                f"JOIN roots r ON r.id = d.root_id WHERE u.id IN ({q})",
                list(part),
            ):
                out[r["id"]] = {
                    "id": r["id"],
                    "type": "unit",
                    "title": r["title"] or r["doc_title"],
                    "kind": r["kind"],
                    "document_id": r["document_id"],
                    "doc_title": r["doc_title"],
                    "doc_type": r["doc_type"],
                    "path": r["path"],
                    "abs_path": f"{r['root_path'].rstrip('/')}/{r['path']}",
                    "line": r["line_start"],
                    "outline_path": json.loads(r["outline_path"]),
                }
            for r in self.db.execute(
                f"SELECT id, kind, label, target, reason FROM graph_stubs WHERE id IN ({q})",
                list(part),
            ):
                out[r["id"]] = {
                    "id": r["id"],
                    "type": "stub",
                    "title": r["label"],
                    "kind": r["kind"],
                    "target": r["target"],
                    "reason": r["reason"],
                    "document_id": None,
                    "path": None,
                }
        return out
