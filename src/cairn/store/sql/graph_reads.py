"""Reads of the graph tables beyond the walks (see ``graph_walk.py``; the writes are in
``edges.py``): nodes, statistics, the data the edge builders read, implicit-edge
features and node references."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from cairn import model

if TYPE_CHECKING:
    from cairn.model import (
        DocumentBrief,
        GraphCounts,
        GraphDocument,
        GraphNode,
        GraphUnit,
        OrphanDocument,
        Stub,
        StubKind,
        UnitShape,
        UnitSpan,
    )
from cairn.store.sql.graph_walk import GraphWalkMixin, chunks, loads
from cairn.store.sql.outline import STRUCTURAL, outline_counts, wanted

_EMPTY: Mapping[str, Any] = MappingProxyType({})

GRAPH_EXTRA = ("relations",)
"""The keys of a unit's ``extra`` the edge builders read (an OKF concept's parsed
relations); the rest (a chat message's role, time, keywords...) is not loaded."""


def _graph_extra(text: str | None) -> Mapping[str, Any]:
    """The :data:`GRAPH_EXTRA` part of a unit's ``extra`` JSON (parsed only if it may
    hold one of those keys)."""
    if not text or not any(f'"{k}"' in text for k in GRAPH_EXTRA):
        return _EMPTY
    extra = loads(text, {})
    if not isinstance(extra, dict):
        return _EMPTY
    kept = {k: extra[k] for k in GRAPH_EXTRA if k in extra}
    return kept or _EMPTY


class GraphReadsMixin(GraphWalkMixin):
    """Queries over the graph tables beyond the walks (:class:`GraphWalkMixin`): nodes,
    statistics, what the edge builders read, implicit-edge features and node
    references."""

    # --- nodes -------------------------------------------------------------------------
    def node_ids(self) -> list[str]:
        """Every node of the graph: unit ids, then stub ids, each sorted."""
        ids = [r[0] for r in self.db.execute("SELECT id FROM units ORDER BY id")]
        return ids + [r[0] for r in self.db.execute("SELECT id FROM graph_stubs ORDER BY id")]

    def nodes(self, ids: Iterable[str]) -> dict[str, GraphNode]:
        """Display data of nodes (units with their documents; stubs) by id."""
        out: dict[str, GraphNode] = {}
        for part in chunks(list(dict.fromkeys(ids))):
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                "SELECT u.id, u.title, u.kind, u.line_start, u.document_id, u.outline_path, "
                "d.path, d.title AS doc_title, d.type AS doc_type, r.path AS root_path "
                "FROM units u JOIN documents d ON d.id = u.document_id "
                f"JOIN roots r ON r.id = d.root_id WHERE u.id IN ({q})",
                list(part),
            ):
                out[r["id"]] = model.GraphNode(
                    r["id"], "unit", r["title"] or r["doc_title"], r["kind"],
                    document_id=r["document_id"], doc_title=r["doc_title"],
                    doc_type=r["doc_type"], path=r["path"],
                    abs_path=f"{r['root_path'].rstrip('/')}/{r['path']}", line=r["line_start"],
                    outline_path=tuple(loads(r["outline_path"], [])),
                )
            for s in self._stubs(part):
                out[s.id] = model.GraphNode(s.id, "stub", s.label, s.kind, target=s.target,
                                      reason=s.reason)
        return out

    def _stubs(self, ids: Sequence[str]) -> list[Stub]:
        q = ",".join("?" * len(ids))
        return [
            model.Stub(r[0], cast("StubKind", r[1]), r[2], r[3], r[4])
            for r in self.db.execute(
                f"SELECT id, kind, label, target, reason FROM graph_stubs WHERE id IN ({q})",
                list(ids),
            )
        ]

    def unit_shapes(self, unit_ids: Iterable[str]) -> dict[str, UnitShape]:
        """``unit id -> (document, ordinal, body length)`` for the units among ``unit_ids``."""
        out: dict[str, UnitShape] = {}
        ids = [u for u in dict.fromkeys(unit_ids) if not u.startswith("stub:")]
        for part in chunks(ids):
            q = ",".join("?" * len(part))
            for uid, did, ordinal, size in self.db.execute(
                f"SELECT id, document_id, ordinal, length(body) FROM units WHERE id IN ({q})",
                list(part),
            ):
                out[uid] = model.UnitShape(uid, did, int(ordinal), int(size or 0))
        return out

    def counts(self) -> GraphCounts:
        """Node counts, edges per relation and origin, unresolved link occurrences."""

        def one(sql: str) -> int:
            return int(self.db.execute(sql).fetchone()[0] or 0)

        by_relation = {str(k): int(v) for k, v in self.db.execute(
            "SELECT relation, count(*) FROM edges GROUP BY relation")}
        by_origin = {str(k): int(v) for k, v in self.db.execute(
            "SELECT origin, count(*) FROM edges GROUP BY origin")}
        outline = outline_counts(self.db)
        for rel, n in outline.items():
            by_relation[rel] = by_relation.get(rel, 0) + n
        if outline:
            by_origin[STRUCTURAL] = by_origin.get(STRUCTURAL, 0) + sum(outline.values())
        return model.GraphCounts(
            units=one("SELECT count(*) FROM units"),
            stubs=one("SELECT count(*) FROM graph_stubs"),
            documents=one("SELECT count(*) FROM documents"),
            by_relation=dict(sorted(by_relation.items())),
            by_origin=dict(sorted(by_origin.items())),
            unresolved_links=one(
                "SELECT coalesce(sum(count), 0) FROM edges WHERE relation='unresolved'"),
        )

    def endpoints(self, origins: Sequence[str] | None = None) -> Iterator[tuple[str, str]]:
        """``(source, target)`` of every edge of ``origins`` (``None``: all)."""
        where = ""
        if origins:
            where = f" WHERE origin IN ({','.join('?' * len(origins))})"
        for s, t in self.db.execute(f"SELECT source, target FROM edges{where}",
                                    list(origins or ())):
            yield str(s), str(t)
        for a in self._outline(None, wanted(None, origins or None)):
            yield a.source, a.target

    def top_linked(self, limit: int = 10) -> list[tuple[str, str, int]]:
        """``(document id, path, linking documents)`` of the documents most linked to by
        declared edges from other documents."""
        return [
            (r[0], r[1], int(r[2]))
            for r in self.db.execute(
                "SELECT e.target_document_id, d.path, count(DISTINCT e.source_document_id) AS n "
                "FROM edges e JOIN documents d ON d.id = e.target_document_id "
                "WHERE e.origin='declared' AND e.source_document_id != e.target_document_id "
                "GROUP BY e.target_document_id ORDER BY n DESC, d.path LIMIT ?",
                (limit,),
            )
        ]

    def orphans(self) -> list[OrphanDocument]:
        """Documents with no resolved declared edge to or from another document or an
        existing attachment (a note that embeds a ``.base`` or an image is linked), by
        root, path and id."""
        rows = self.db.execute(
            "SELECT d.id, d.path, d.title, d.format, r.path AS root_path FROM documents d "
            "JOIN roots r ON r.id = d.root_id WHERE NOT EXISTS ("
            "  SELECT 1 FROM edges e WHERE e.origin = 'declared' AND e.source_document_id = d.id"
            "  AND e.target_document_id IS NOT NULL AND e.target_document_id != d.id"
            ") AND NOT EXISTS ("
            "  SELECT 1 FROM edges e JOIN graph_stubs s ON s.id = e.target"
            "  WHERE e.origin = 'declared' AND e.source_document_id = d.id"
            "  AND e.relation != 'unresolved' AND s.kind = 'attachment'"
            ") AND NOT EXISTS ("
            "  SELECT 1 FROM edges e WHERE e.origin = 'declared' AND e.target_document_id = d.id"
            "  AND e.source_document_id != d.id"
            ") ORDER BY r.path, d.path, d.key, d.id"
        ).fetchall()
        wanting = dict(self.db.execute(
            "SELECT source_document_id, sum(count) FROM edges WHERE origin='declared' AND "
            "relation = 'unresolved' GROUP BY source_document_id"
        ).fetchall())
        return [
            model.OrphanDocument(r["id"], r["title"], r["path"],
                           f"{r['root_path'].rstrip('/')}/{r['path']}", r["format"],
                           int(wanting.get(r["id"], 0) or 0))
            for r in rows
        ]

    # --- what the builders read --------------------------------------------------------
    def graph_sources(
        self, document_ids: Sequence[str] | None = None
    ) -> tuple[list[GraphDocument], list[GraphUnit]]:
        """The documents (``None``: all) and their units, units by document and ordinal."""
        doc_sql = "SELECT id, root_id, path, type, metadata, tags, content_hash FROM documents"
        unit_sql = ("SELECT id, document_id, ordinal, parent_id, kind, tags, properties, extra "
                    "FROM units")
        parts: list[Sequence[str] | None] = (
            [None] if document_ids is None else list(chunks(list(document_ids))))
        docs: list[GraphDocument] = []
        units: list[GraphUnit] = []
        # every unit of the index may be held at once (a first build, a big chat
        # export): equal strings are shared and empty mappings are one object
        shared: dict[str, str] = {}
        for part in parts:
            where, args = "", []
            if part is not None:
                where = f" WHERE {{c}} IN ({','.join('?' * len(part))})"
                args = list(part)
            # rows unpacked, not indexed by name (a look-up per column on either backend)
            for did, root, path, type_, metadata, tags, content_hash in self.db.execute(
                doc_sql + where.format(c="id"), args
            ):
                meta = loads(metadata, {})
                docs.append(model.GraphDocument(
                    did, root, path, type_, meta if isinstance(meta, dict) else {},
                    tuple(str(t) for t in loads(tags, [])), content_hash))
            for uid, doc_id, ordinal, parent_id, kind, tags, properties, extra_json in (
                self.db.execute(
                    unit_sql + where.format(c="document_id") + " ORDER BY document_id, ordinal",
                    args)
            ):
                props = loads(properties, {})
                units.append(model.GraphUnit(
                    uid, shared.setdefault(doc_id, doc_id), int(ordinal), parent_id,
                    shared.setdefault(kind, kind),
                    tuple(str(t) for t in loads(tags, [])),
                    props if isinstance(props, dict) and props else _EMPTY,
                    _graph_extra(extra_json)))
        return docs, units

    def first_units(self, document_ids: Sequence[str] | None = None) -> dict[str, str]:
        """``document id -> id of its first unit`` (``None``: every document)."""
        sql = ("SELECT document_id, id FROM units u WHERE ordinal = "
               "(SELECT min(ordinal) FROM units v WHERE v.document_id = u.document_id)")
        if document_ids is None:
            return {r[0]: r[1] for r in self.db.execute(sql)}
        out: dict[str, str] = {}
        for part in chunks(list(dict.fromkeys(document_ids))):
            q = ",".join("?" * len(part))
            out.update((r[0], r[1]) for r in self.db.execute(
                sql + f" AND u.document_id IN ({q})", list(part)))
        return out

    # --- implicit-edge features --------------------------------------------------------
    def features_of(self, document_ids: Sequence[str]) -> set[str]:
        """Every feature recorded for the given documents."""
        out: set[str] = set()
        for part in chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            out.update(r[0] for r in self.db.execute(
                f"SELECT DISTINCT feature FROM graph_features WHERE document_id IN ({q})",
                list(part)))
        return out

    def holders(self, features: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """``feature -> [(unit id, document id)]`` for the given features."""
        out: dict[str, list[tuple[str, str]]] = {}
        for part in chunks(list(features)):
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
        for part in chunks(list(unit_ids)):
            q = ",".join("?" * len(part))
            for uid, feat in self.db.execute(
                f"SELECT unit_id, feature FROM graph_features WHERE unit_id IN ({q})", list(part)
            ):
                out.setdefault(uid, set()).add(feat)
        return out

    def feature_counts(self, features: Sequence[str]) -> dict[str, int]:
        """How many units carry each feature."""
        out: dict[str, int] = {}
        for part in chunks(list(features)):
            q = ",".join("?" * len(part))
            for feat, n in self.db.execute(
                f"SELECT feature, count(DISTINCT unit_id) FROM graph_features "
                f"WHERE feature IN ({q}) GROUP BY feature",
                list(part),
            ):
                out[feat] = int(n)
        return out

    # --- node references ---------------------------------------------------------------
    def documents_brief(self, document_ids: Sequence[str]) -> dict[str, DocumentBrief]:
        """``document id -> DocumentBrief`` (with unit ids in order)."""
        out: dict[str, DocumentBrief] = {}
        for part in chunks(list(document_ids)):
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                f"SELECT id, root_id, path, title FROM documents WHERE id IN ({q})", list(part)
            ):
                units = tuple(u[0] for u in self.db.execute(
                    "SELECT id FROM units WHERE document_id=? ORDER BY ordinal", (r[0],)))
                out[r[0]] = model.DocumentBrief(r[0], r[1], r[2], r[3], units)
        return out

    def documents_at_path(self, root_id: str, path: str) -> list[DocumentBrief]:
        """The documents indexed from one file (several for a chat export), in order."""
        ids = [r[0] for r in self.db.execute(
            "SELECT id FROM documents WHERE root_id=? AND path=? ORDER BY key, id",
            (root_id, path))]
        briefs = self.documents_brief(ids)
        return [briefs[i] for i in ids if i in briefs]

    def unit_spans(self, document_id: str) -> list[UnitSpan]:
        """A document's units with their line spans, in order."""
        return [
            model.UnitSpan(r[0], r[1] or "", int(r[2]), int(r[3]))
            for r in self.db.execute(
                "SELECT id, title, line_start, line_end FROM units WHERE document_id=? "
                "ORDER BY ordinal", (document_id,))
        ]

    def ids_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        """Unit ids, then document ids, starting with ``prefix`` (at most ``limit`` each)."""
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        out = [r[0] for r in self.db.execute(
            "SELECT id FROM units WHERE id LIKE ? ESCAPE '\\' LIMIT ?", (like, limit))]
        return out + [r[0] for r in self.db.execute(
            "SELECT id FROM documents WHERE id LIKE ? ESCAPE '\\' LIMIT ?", (like, limit))]
