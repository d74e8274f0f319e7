"""Reads of the shared tables: lookups, links, runs and counts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cairn import model
from cairn.model import Diagnostic, Failure, Link, Run, Timestamp
from cairn.store.sql.base import SQLBase, _j
from cairn.store.sql.search import _like_escape
from cairn.store.sql.writes import _diag

if TYPE_CHECKING:
    from cairn.model import (
        Backlink,
        CatalogDocument,
        CatalogUnit,
        FailedFile,
        LinkOccurrence,
        LinkResolution,
        StoredDocument,
        StoredLink,
        StoredUnit,
    )


class ReadsMixin(SQLBase):
    """Lookups, links, runs and statistics."""

    # --- links and their resolution (graph owner) ----------------------------------
    def links_from(self, document_ids: Sequence[str] | None = None) -> list[LinkOccurrence]:
        """The stored links of the given documents (``None``: every link), by unit and
        ordinal, with the linking document's root and path."""
        sql = (
            "SELECT l.unit_id, l.ordinal, l.document_id, d.root_id, d.path, l.kind, l.target, "
            "l.alias, l.anchor, l.line, l.raw, l.resolved_document_id, l.resolved_unit_id, "
            "l.unresolved_reason FROM links l JOIN documents d ON d.id = l.document_id"
        )
        order = " ORDER BY l.unit_id, l.ordinal"
        if document_ids is None:
            return [model.LinkOccurrence(*r) for r in self.db.execute(sql + order)]
        out: list[LinkOccurrence] = []
        ids = list(dict.fromkeys(document_ids))
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            q = ",".join("?" * len(part))
            out += [model.LinkOccurrence(*r) for r in self.db.execute(
                sql + f" WHERE l.document_id IN ({q})" + order, part)]
        out.sort(key=lambda lk: (lk.unit_id, lk.ordinal))
        return out

    def set_link_resolutions(self, updates: Iterable[LinkResolution]) -> int:
        """Store new resolutions of links; returns how many were given.

        Links are addressed by ``(unit_id, ordinal)``, but only ``unit_id`` is indexed:
        an update per pair would scan all of a unit's links each time, quadratic in the
        links of one heading. The row ids of each unit's links are read once instead and
        the updates go by row id.
        """
        todo = list(updates)
        units = list(dict.fromkeys(u.unit_id for u in todo))
        row_of: dict[tuple[str, int], int] = {}
        for i in range(0, len(units), 500):
            part = units[i : i + 500]
            q = ",".join("?" * len(part))
            for rowid, unit_id, ordinal in self.db.execute(
                f"SELECT id, unit_id, ordinal FROM links WHERE unit_id IN ({q})", part
            ):
                row_of[(unit_id, int(ordinal))] = int(rowid)
        rows = [(u.document_id, u.target_unit_id, u.reason, row_of[(u.unit_id, u.ordinal)])
                for u in todo if (u.unit_id, u.ordinal) in row_of]
        self.db.executemany(
            "UPDATE links SET resolved_document_id=?, resolved_unit_id=?, unresolved_reason=? "
            "WHERE id=?",
            rows,
        )
        return len(todo)

    def documents_linking_to(self, document_ids: Sequence[str]) -> set[str]:
        """Documents with a link currently resolved to one of ``document_ids``."""
        out: set[str] = set()
        ids = list(dict.fromkeys(document_ids))
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            q = ",".join("?" * len(part))
            out.update(r[0] for r in self.db.execute(
                f"SELECT DISTINCT document_id FROM links WHERE resolved_document_id IN ({q})",
                part))
        return out

    def catalog_entries(
        self, document_ids: Sequence[str] | None = None, *, names_only: bool = False
    ) -> tuple[list[CatalogDocument], list[CatalogUnit]]:
        """What link resolution reads of the given documents (``None``: all): documents
        (path, title, aliases, declared id) and units (titles, ids, anchors), in order;
        ``names_only``: of the units only those with an Org ``ID``, without anchors
        (what :func:`cairn.graph.names.document_names` reads)."""
        doc_sql = (
            "SELECT id, root_id, path, title, format, aliases, declared_id, key FROM documents"
        )
        unit_sql = (
            "SELECT id, document_id, ordinal, level, kind, title, org_id, custom_id, "
            + ("NULL, NULL FROM units WHERE org_id IS NOT NULL" if names_only else
               "json_extract(extra, '$.targets'), json_extract(extra, '$.block_ids') "
               "FROM units")
        )
        parts: list[list[str] | None] = [None]
        if document_ids is not None:
            ids = list(dict.fromkeys(document_ids))
            parts = [ids[i : i + 500] for i in range(0, len(ids), 500)]
        docs: list[CatalogDocument] = []
        units: list[CatalogUnit] = []
        for part in parts:
            where, unit_where, args = "", "", []
            if part is not None:
                where = f" WHERE {{c}} IN ({','.join('?' * len(part))})"
                unit_where = where.replace("WHERE", "AND") if names_only else where
                args = part
            # rows unpacked, not indexed: a PostgreSQL row's __getitem__ is Python code
            doc = model.CatalogDocument
            for id_, root, path, title, fmt, aliases, declared, key in self.db.execute(
                doc_sql + where.format(c="id"), args
            ):
                names = tuple(str(a) for a in _list(aliases)) if aliases else ()
                docs.append(doc(id_, root, path, title, fmt, names, declared, key))
            unit = model.CatalogUnit
            for uid, did, ordinal, level, kind, utitle, org_id, custom_id, targets, blocks in (
                self.db.execute(unit_sql + unit_where.format(c="document_id"), args)
            ):
                units.append(unit(
                    uid, did, int(ordinal), int(level), kind, utitle or "", org_id, custom_id,
                    tuple(str(t) for t in _list(targets)) if targets else (),
                    tuple(str(b).lstrip("^") for b in _list(blocks)) if blocks else ()))
        docs.sort(key=lambda d: (d.root_id, d.path, d.key or "", d.id))
        units.sort(key=lambda u: (u.document_id, u.ordinal))
        return docs, units

    def links_of(self, unit_ids: Sequence[str]) -> list[StoredLink]:
        """Outgoing links of the given units, by unit id then position."""
        if not unit_ids:
            return []
        q = ",".join("?" * len(unit_ids))
        rows = self.db.execute(
            "SELECT unit_id, kind, target, alias, anchor, line, resolved_document_id, "
            f"resolved_unit_id, unresolved_reason FROM links WHERE unit_id IN ({q}) "
            "ORDER BY unit_id, ordinal",
            list(unit_ids),
        ).fetchall()
        return [model.StoredLink(*r) for r in rows]

    def backlinks(self, document_id: str) -> list[Backlink]:
        """Links from units anywhere that resolve to this document or one of its units,
        by source path and line."""
        rows = self.db.execute(
            "SELECT l.document_id, l.unit_id, u.title, d.path, l.kind, l.target, l.anchor, "
            "l.line, l.resolved_unit_id FROM links l JOIN units u ON u.id = l.unit_id "
            "JOIN documents d ON d.id = l.document_id "
            "WHERE l.resolved_document_id = ? ORDER BY d.path, l.line",
            (document_id,),
        ).fetchall()
        return [model.Backlink(*r) for r in rows]

    # --- lookups ----------------------------------------------------------------------
    def document(self, document_id: str) -> StoredDocument | None:
        """The document with this id, or ``None``."""
        row = self.db.execute(
            f"{_DOC_SELECT} WHERE d.id=?",
            (document_id,),
        ).fetchone()
        return _document(row) if row is not None else None

    def documents_at(self, root_id: str, relpath: str) -> list[StoredDocument]:
        """The documents indexed from one file (by key; empty when none)."""
        rows = self.db.execute(
            f"{_DOC_SELECT} WHERE d.root_id=? AND d.path=? ORDER BY d.key",
            (root_id, relpath),
        ).fetchall()
        return [_document(r) for r in rows]

    def unit(self, unit_id: str) -> StoredUnit | None:
        """The unit with this id, or ``None``."""
        row = self.db.execute(f"{_UNIT_SELECT} WHERE id=?", (unit_id,)).fetchone()
        return _unit(row) if row is not None else None

    def units_of(self, document_id: str) -> list[StoredUnit]:
        """A document's units in document order (by ordinal)."""
        rows = self.db.execute(
            f"{_UNIT_SELECT} WHERE document_id=? ORDER BY ordinal", (document_id,)
        ).fetchall()
        return [_unit(r) for r in rows]

    def find_ids(self, prefix: str) -> list[tuple[str, str]]:
        """``(kind, id)`` pairs, kind ``document`` or ``unit``, whose id starts with
        ``prefix``: at most five of each, documents first."""
        like = _like_escape(prefix) + "%"
        out = [
            ("document", r[0])
            for r in self.db.execute(
                "SELECT id FROM documents WHERE id LIKE ? ESCAPE '\\' LIMIT 5", (like,)
            )
        ]
        out += [
            ("unit", r[0])
            for r in self.db.execute(
                "SELECT id FROM units WHERE id LIKE ? ESCAPE '\\' LIMIT 5", (like,)
            )
        ]
        return out

    # --- runs and stats ---------------------------------------------------------------
    def save_run(self, run: Run) -> None:
        """Insert or replace a run record."""
        self.db.execute(
            "INSERT OR REPLACE INTO runs(id, started, finished, config_hash, seen, added, changed, "
            "removed, unchanged, failed, skipped, failures, warnings, seconds) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run.id,
                run.started,
                run.finished,
                run.config_hash,
                run.seen,
                run.added,
                run.changed,
                run.removed,
                run.unchanged,
                run.failed,
                run.skipped,
                _j([{"path": f.path, "reason": f.reason, "line": f.line} for f in run.failures]),
                _j([_diag(w) for w in run.warnings]),
                run.seconds,
            ),
        )

    def last_run(self) -> Run | None:
        """The most recent run, or ``None``."""
        r = self.db.execute(
            "SELECT * FROM runs ORDER BY started DESC, rowid DESC LIMIT 1"
        ).fetchone()
        if r is None:
            return None
        return Run(
            id=r["id"],
            started=r["started"],
            finished=r["finished"],
            config_hash=r["config_hash"],
            seen=r["seen"],
            added=r["added"],
            changed=r["changed"],
            removed=r["removed"],
            unchanged=r["unchanged"],
            failed=r["failed"],
            skipped=r["skipped"],
            failures=tuple(Failure(**f) for f in json.loads(r["failures"])),
            warnings=tuple(Diagnostic(**w) for w in json.loads(r["warnings"])),
            seconds=r["seconds"],
        )

    def failed_files(self) -> list[FailedFile]:
        """Files whose last indexing failed (wholly or partly), by root and path."""
        rows = self.db.execute(
            "SELECT r.path, f.path, f.status, f.reason, f.line FROM files f "
            "JOIN roots r ON r.id = f.root_id WHERE f.status != 'ok' ORDER BY r.path, f.path"
        ).fetchall()
        return [model.FailedFile(*r) for r in rows]

    def document_warnings(self) -> list[tuple[str, str, tuple[Diagnostic, ...]]]:
        """``(root path, relpath, warnings)`` for documents that carry warnings."""
        rows = self.db.execute(
            "SELECT r.path, d.path, d.warnings FROM documents d JOIN roots r ON r.id=d.root_id "
            "WHERE d.warnings != '[]' ORDER BY r.path, d.path"
        ).fetchall()
        return [(r[0], r[1], _diagnostics(r[2])) for r in rows]

    def counts(self) -> dict[str, Any]:
        """Counts: ``roots``, ``files``, ``documents``, ``units``, ``links``,
        ``links_resolved``, ``links_unresolved`` (neither URLs nor attachments),
        ``fts_rows``, ``failed_files`` (ints) and ``formats`` (``format ->
        {"documents", "units"}``)."""

        def one(sql: str) -> int:
            return int(self.db.execute(sql).fetchone()[0])

        per_format = {
            r[0]: {"documents": r[1], "units": r[2]}
            for r in self.db.execute(
                "SELECT d.format, count(DISTINCT d.id), count(u.rowid) FROM documents d "
                "LEFT JOIN units u ON u.document_id = d.id GROUP BY d.format ORDER BY d.format"
            )
        }
        return {
            "roots": one("SELECT count(*) FROM roots"),
            "files": one("SELECT count(*) FROM files"),
            "documents": one("SELECT count(*) FROM documents"),
            "units": one("SELECT count(*) FROM units"),
            "links": one("SELECT count(*) FROM links"),
            "links_resolved": one(
                "SELECT count(*) FROM links WHERE resolved_document_id IS NOT NULL"
            ),
            "links_unresolved": one(
                "SELECT count(*) FROM links WHERE resolved_document_id IS NULL AND kind != 'url' "
                "AND coalesce(unresolved_reason, '') NOT LIKE 'attachment: %'"
            ),
            "fts_rows": one("SELECT count(*) FROM units_fts"),
            "failed_files": one("SELECT count(*) FROM files WHERE status != 'ok'"),
            "formats": per_format,
        }



def _list(text: str | None) -> list[Any]:
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def link_from_row(r: Mapping[str, Any]) -> Link:
    """Rebuild a :class:`Link` from a ``links`` row."""
    return Link(
        kind=r["kind"],
        target=r["target"],
        alias=r["alias"],
        anchor=r["anchor"],
        line=r["line"],
        raw=r["raw"],
        resolved_document_id=r["resolved_document_id"],
        resolved_unit_id=r["resolved_unit_id"],
        unresolved_reason=r["unresolved_reason"],
    )


_DOC_SELECT = (
    "SELECT d.id, d.title, d.format, d.path, r.path AS root_path, d.key, d.type, d.tags, "
    "d.aliases, d.created, d.modified, d.metadata, d.warnings, d.size, d.mtime, d.root_id, "
    "d.declared_id FROM documents d JOIN roots r ON r.id=d.root_id"
)
_UNIT_SELECT = (
    "SELECT id, document_id, ordinal, level, kind, title, outline_path, parent_id, tags, "
    "inherited_tags, properties, todo, todo_state, priority, timestamps, org_id, custom_id, "
    "language, line_start, line_end, extra, body FROM units"
)


def _diagnostics(text: str) -> tuple[Diagnostic, ...]:
    return tuple(
        Diagnostic(
            path=w.get("path", ""),
            message=w.get("message", ""),
            line=w.get("line"),
            severity=w.get("severity", "warning"),
        )
        for w in json.loads(text)
    )


def _document(r: sqlite3.Row) -> StoredDocument:
    root = r["root_path"]
    return model.StoredDocument(
        id=r["id"],
        title=r["title"],
        format=r["format"],
        path=r["path"],
        abs_path=f"{root.rstrip('/')}/{r['path']}",
        root=root,
        key=r["key"],
        type=r["type"],
        tags=tuple(json.loads(r["tags"])),
        aliases=tuple(json.loads(r["aliases"])),
        created=r["created"],
        modified=r["modified"],
        metadata=json.loads(r["metadata"]),
        warnings=_diagnostics(r["warnings"]),
        size=r["size"],
        mtime=r["mtime"],
        root_id=r["root_id"],
        declared_id=r["declared_id"],
    )


def _unit(r: sqlite3.Row) -> StoredUnit:
    return model.StoredUnit(
        id=r["id"],
        document_id=r["document_id"],
        ordinal=r["ordinal"],
        level=r["level"],
        kind=r["kind"],
        title=r["title"],
        outline_path=tuple(json.loads(r["outline_path"])),
        parent_id=r["parent_id"],
        tags=tuple(json.loads(r["tags"])),
        inherited_tags=tuple(json.loads(r["inherited_tags"])),
        properties=json.loads(r["properties"]),
        todo=r["todo"],
        todo_state=r["todo_state"],
        priority=r["priority"],
        timestamps=tuple(Timestamp(**t) for t in json.loads(r["timestamps"])),
        org_id=r["org_id"],
        custom_id=r["custom_id"],
        language=r["language"],
        line_start=r["line_start"],
        line_end=r["line_end"],
        extra=json.loads(r["extra"]),
        body=r["body"],
    )
