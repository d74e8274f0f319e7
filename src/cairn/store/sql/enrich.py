"""The enrichment tables (``store.enrichments``, the
:class:`cairn.store.enrichments.EnrichIndex` protocol), created on first use as the
``enrich`` component (``components`` keeps its version). Portable SQL: the PostgreSQL
store composes this mixin too.

Tables: ``enrich_cache`` (a validated reply, or the reason one was refused, per cache
key), ``enrich_conversations`` (one row per enriched conversation, the reply turned
into ids) and ``enrich_relations`` (one label per ordered pair of conversations). The
summary and insight units are ordinary rows of ``units`` (and ``units_fts``), so search
finds them; edges of origin ``llm`` are rows of ``edges``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from cairn import model
from cairn.store.sql.base import SQLBase

if TYPE_CHECKING:
    from cairn.model import Edge, Unit
    from cairn.model.enrich import Enrichment, RelationLabel
    from cairn.store.sql.writes import WritesMixin

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE enrich_cache (
        key TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        reply TEXT NOT NULL,
        created TEXT NOT NULL
    );
    CREATE TABLE enrich_conversations (
        document_id TEXT PRIMARY KEY,
        content_hash TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        summary TEXT NOT NULL,
        insights TEXT NOT NULL,
        tags TEXT NOT NULL,
        created TEXT NOT NULL
    );
    CREATE TABLE enrich_relations (
        source_document_id TEXT NOT NULL,
        target_document_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        confidence REAL NOT NULL,
        reason TEXT NOT NULL,
        similarity REAL NOT NULL,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        PRIMARY KEY (source_document_id, target_document_id)
    )
    """,
)

_KINDS = "'summary','insight'"  # cairn.model.enrich.ENRICHMENT_KINDS (a test checks)


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _me() -> Any:
    """``cairn.model.enrich``, loaded when enrichments are read (not by every search)."""
    from cairn.model import enrich

    return enrich


class SQLiteEnrichments:
    """:class:`cairn.store.enrichments.EnrichIndex` over the store's connection."""

    def __init__(self, store: SQLBase) -> None:
        self._store = store
        store.ensure_component("enrich", MIGRATIONS)

    @property
    def db(self) -> Any:
        """This thread's connection of the store."""
        return self._store.db

    # --- cache ------------------------------------------------------------------------
    def cached(self, key: str) -> tuple[str, str] | None:
        """See :meth:`cairn.store.enrichments.EnrichIndex.cached`."""
        row = self.db.execute(
            "SELECT status, reply FROM enrich_cache WHERE key=?", (key,)
        ).fetchone()
        return (str(row[0]), str(row[1])) if row is not None else None

    def cache_put(self, key: str, *, kind: str, model: str, prompt_version: str,
                  content_hash: str, status: str, reply: str) -> None:
        """See :meth:`cairn.store.enrichments.EnrichIndex.cache_put`."""
        with self._store.transaction():
            self.db.execute("DELETE FROM enrich_cache WHERE key=?", (key,))
            self.db.execute(
                "INSERT INTO enrich_cache(key, kind, model, prompt_version, content_hash, "
                "status, reply, created) VALUES (?,?,?,?,?,?,?,?)",
                (key, kind, model, prompt_version, content_hash, status, reply, _now()),
            )

    # --- conversations ----------------------------------------------------------------
    def save_enrichment(self, enrichment: Enrichment) -> None:
        """See :meth:`cairn.store.enrichments.EnrichIndex.save_enrichment`."""
        e = enrichment
        insights = [dataclasses.asdict(i) for i in e.insights]
        tags = [dataclasses.asdict(t) for t in e.tags]
        with self._store.transaction():
            self.db.execute(
                "DELETE FROM enrich_conversations WHERE document_id=?", (e.document_id,)
            )
            self.db.execute(
                "INSERT INTO enrich_conversations(document_id, content_hash, model, "
                "prompt_version, summary, insights, tags, created) VALUES (?,?,?,?,?,?,?,?)",
                (e.document_id, e.content_hash, e.model, e.prompt_version, e.summary,
                 json.dumps(insights, ensure_ascii=False), json.dumps(tags, ensure_ascii=False),
                 e.created or _now()),
            )

    def enrichment(self, document_id: str) -> Enrichment | None:
        """See :meth:`cairn.store.enrichments.EnrichIndex.enrichment`."""
        row = self.db.execute(
            "SELECT * FROM enrich_conversations WHERE document_id=?", (document_id,)
        ).fetchone()
        return _enrichment(row) if row is not None else None

    def enrichments(self) -> list[Enrichment]:
        """See :meth:`cairn.store.enrichments.EnrichIndex.enrichments`."""
        rows = self.db.execute("SELECT * FROM enrich_conversations ORDER BY document_id")
        return [_enrichment(r) for r in rows]

    def forget(self, document_ids: Sequence[str]) -> int:
        """See :meth:`cairn.store.enrichments.EnrichIndex.forget`."""
        n = 0
        with self._store.transaction():
            for d in document_ids:
                self._delete_units(d)
                cur = self.db.execute(
                    "DELETE FROM enrich_conversations WHERE document_id=?", (d,)
                )
                n += max(0, int(cur.rowcount))
                self.db.execute(
                    "DELETE FROM enrich_relations WHERE source_document_id=? "
                    "OR target_document_id=?", (d, d),
                )
        return n

    def without_units(self) -> list[str]:
        """See :meth:`cairn.store.enrichments.EnrichIndex.without_units`."""
        rows = self.db.execute(
            "SELECT e.document_id FROM enrich_conversations e "
            "WHERE EXISTS (SELECT 1 FROM documents d WHERE d.id = e.document_id) "
            "AND NOT EXISTS (SELECT 1 FROM units u WHERE u.document_id = e.document_id "
            f"AND u.kind = '{_me().SUMMARY}') ORDER BY e.document_id"
        )
        return [str(r[0]) for r in rows]

    def orphans(self) -> list[str]:
        """See :meth:`cairn.store.enrichments.EnrichIndex.orphans`."""
        rows = self.db.execute(
            "SELECT e.document_id FROM enrich_conversations e WHERE NOT EXISTS "
            "(SELECT 1 FROM documents d WHERE d.id = e.document_id) ORDER BY e.document_id"
        )
        return [str(r[0]) for r in rows]

    def _delete_units(self, document_id: str) -> None:
        # the backend's own keyword-index rows (SQLite: the FTS5 rows and their text)
        self._store._delete_fts(document_id, _me().ENRICHMENT_KINDS)
        sub = f"SELECT rowid FROM units WHERE document_id=? AND kind IN ({_KINDS})"
        self.db.execute(
            "DELETE FROM vocabulary WHERE document_id=? AND unit_id IN (SELECT id FROM units"
            f" WHERE document_id=? AND kind IN ({_KINDS}))", (document_id, document_id))
        self.db.execute(f"DELETE FROM unit_tags WHERE unit_rowid IN ({sub})", (document_id,))
        self.db.execute(
            f"DELETE FROM units WHERE document_id=? AND kind IN ({_KINDS})", (document_id,)
        )

    def put_units(self, document_id: str, units: Sequence[Unit]) -> None:
        """See :meth:`cairn.store.enrichments.EnrichIndex.put_units`."""
        row = self.db.execute(
            "SELECT root_id, path, key, format, title, tags FROM documents WHERE id=?",
            (document_id,),
        ).fetchone()
        if row is None:
            return
        doc = model.Document(
            path=str(row[1]), format=str(row[3]), title=str(row[4]), units=tuple(units),
            tags=tuple(json.loads(row[5])), key=row[2], id=document_id, root_id=str(row[0]),
        )
        writes = cast("WritesMixin", self._store)
        with self._store.transaction():
            self._delete_units(document_id)
            writes._insert_units(doc)

    # --- relations --------------------------------------------------------------------
    def save_relations(self, labels: Sequence[RelationLabel]) -> None:
        """See :meth:`cairn.store.enrichments.EnrichIndex.save_relations`."""
        with self._store.transaction():
            for r in labels:
                self.db.execute(
                    "DELETE FROM enrich_relations WHERE source_document_id=? "
                    "AND target_document_id=?", (r.source_document_id, r.target_document_id),
                )
                self.db.execute(
                    "INSERT INTO enrich_relations(source_document_id, target_document_id, "
                    "relation, confidence, reason, similarity, model, prompt_version) "
                    "VALUES (?,?,?,?,?,?,?,?)",
                    (r.source_document_id, r.target_document_id, r.relation, r.confidence,
                     r.reason, r.similarity, r.model, r.prompt_version),
                )

    def relations(self) -> list[RelationLabel]:
        """See :meth:`cairn.store.enrichments.EnrichIndex.relations`."""
        rows = self.db.execute(
            "SELECT * FROM enrich_relations ORDER BY source_document_id, target_document_id"
        )
        return [
            _me().RelationLabel(
                source_document_id=r["source_document_id"],
                target_document_id=r["target_document_id"],
                relation=r["relation"],
                confidence=float(r["confidence"]),
                reason=r["reason"],
                similarity=float(r["similarity"]),
                model=r["model"],
                prompt_version=r["prompt_version"],
            )
            for r in rows
        ]

    def llm_edges(self, edges: Sequence[Edge]) -> int:
        """See :meth:`cairn.store.enrichments.EnrichIndex.llm_edges`."""
        es = cast("Any", self._store).edges
        with self._store.transaction():
            self.db.execute("DELETE FROM edges WHERE origin='llm'")
            live = [
                e for e in edges
                if self.db.execute("SELECT 1 FROM units WHERE id=?", (e.source,)).fetchone()
            ]
            return int(es.insert(live))

    def user_tags(self, limit: int) -> list[str]:
        """See :meth:`cairn.store.enrichments.EnrichIndex.user_tags`."""
        rows = self.db.execute(
            "SELECT tag, COUNT(*) AS n FROM unit_tags GROUP BY tag ORDER BY n DESC, tag "
            "LIMIT ?", (max(0, limit),),
        )
        return [str(r[0]) for r in rows]

    def counts(self) -> dict[str, int]:
        """See :meth:`cairn.store.enrichments.EnrichIndex.counts`."""

        def one(sql: str) -> int:
            return int(self.db.execute(sql).fetchone()[0])

        return {
            "cache": one("SELECT COUNT(*) FROM enrich_cache"),
            "conversations": one("SELECT COUNT(*) FROM enrich_conversations"),
            "insights": one("SELECT COUNT(*) FROM units WHERE kind='insight'"),
            "relations": one("SELECT COUNT(*) FROM enrich_relations"),
            "llm_edges": one("SELECT COUNT(*) FROM edges WHERE origin='llm'"),
        }


def _enrichment(r: Any) -> Enrichment:
    made: Enrichment = _me().Enrichment(
        document_id=r["document_id"],
        content_hash=r["content_hash"],
        model=r["model"],
        prompt_version=r["prompt_version"],
        summary=r["summary"],
        insights=tuple(
            _me().Insight(i["type"], i["text"], tuple(i.get("messages", ())))
            for i in json.loads(r["insights"])
        ),
        tags=tuple(
            _me().EnrichTag(t["tag"], t["status"], t["given"]) for t in json.loads(r["tags"])
        ),
        created=r["created"],
    )
    return made


class EnrichMixin(SQLBase):
    """Gives the store its ``enrichments`` (created on first use)."""

    @cached_property
    def enrichments(self) -> SQLiteEnrichments:
        """The enrichment tables (:class:`cairn.store.enrichments.EnrichIndex`)."""
        return SQLiteEnrichments(self)
