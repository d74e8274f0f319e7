"""Reads of the SQLite store: lookups, links, runs, counts and integrity."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cairn.model import (
    CatalogDocument,
    CatalogUnit,
    Diagnostic,
    Failure,
    Link,
    LinkResolution,
    Run,
    StoredLink,
)
from cairn.store.sqlite.fts import _like_escape
from cairn.store.sqlite.schema import SQLiteBase, _j
from cairn.store.sqlite.writes import _diag


class ReadsMixin(SQLiteBase):
    """Lookups, links, runs and statistics."""

    # --- links and their resolution (graph owner) ----------------------------------
    def links_from(self, document_ids: Sequence[str] | None = None) -> list[StoredLink]:
        """The stored links of the given documents (``None``: every link), by unit and
        ordinal, with the linking document's root and path."""
        sql = (
            "SELECT l.unit_id, l.ordinal, l.document_id, d.root_id, d.path, l.kind, l.target, "
            "l.alias, l.anchor, l.line, l.raw, l.resolved_document_id, l.resolved_unit_id, "
            "l.unresolved_reason FROM links l JOIN documents d ON d.id = l.document_id"
        )
        order = " ORDER BY l.unit_id, l.ordinal"
        if document_ids is None:
            return [StoredLink(*r) for r in self.db.execute(sql + order)]
        out: list[StoredLink] = []
        ids = list(dict.fromkeys(document_ids))
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            q = ",".join("?" * len(part))
            out += [StoredLink(*r) for r in self.db.execute(
                sql + f" WHERE l.document_id IN ({q})" + order, part)]
        out.sort(key=lambda lk: (lk.unit_id, lk.ordinal))
        return out

    def set_link_resolutions(self, updates: Iterable[LinkResolution]) -> int:
        """Store new resolutions of links; returns how many were given."""
        rows = [(u.document_id, u.target_unit_id, u.reason, u.unit_id, u.ordinal)
                for u in updates]
        self.db.executemany(
            "UPDATE links SET resolved_document_id=?, resolved_unit_id=?, unresolved_reason=? "
            "WHERE unit_id=? AND ordinal=?",
            rows,
        )
        return len(rows)

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
        self, document_ids: Sequence[str] | None = None
    ) -> tuple[list[CatalogDocument], list[CatalogUnit]]:
        """What link resolution reads of the given documents (``None``: all): documents
        (path, title, aliases, declared id) and units (titles, ids, anchors), in order."""
        doc_sql = (
            "SELECT id, root_id, path, title, format, aliases, declared_id, key FROM documents"
        )
        unit_sql = (
            "SELECT id, document_id, ordinal, level, kind, title, org_id, custom_id, "
            "json_extract(extra, '$.targets'), json_extract(extra, '$.block_ids') FROM units"
        )
        parts: list[list[str] | None] = [None]
        if document_ids is not None:
            ids = list(dict.fromkeys(document_ids))
            parts = [ids[i : i + 500] for i in range(0, len(ids), 500)]
        docs: list[CatalogDocument] = []
        units: list[CatalogUnit] = []
        for part in parts:
            where, args = "", []
            if part is not None:
                where = f" WHERE {{c}} IN ({','.join('?' * len(part))})"
                args = part
            for r in self.db.execute(doc_sql + where.format(c="id"), args):
                aliases = tuple(str(a) for a in _list(r[5]))
                docs.append(CatalogDocument(r[0], r[1], r[2], r[3], r[4], aliases, r[6], r[7]))
            for r in self.db.execute(unit_sql + where.format(c="document_id"), args):
                units.append(CatalogUnit(
                    r[0], r[1], int(r[2]), int(r[3]), r[4], r[5] or "", r[6], r[7],
                    tuple(str(t) for t in _list(r[8])),
                    tuple(str(b).lstrip("^") for b in _list(r[9]))))
        docs.sort(key=lambda d: (d.root_id, d.path, d.key or "", d.id))
        units.sort(key=lambda u: (u.document_id, u.ordinal))
        return docs, units

    def links_of(self, unit_ids: Sequence[str]) -> list[sqlite3.Row]:
        """Outgoing links of the given units, in order."""
        q = ",".join("?" * len(unit_ids))
        return self.db.execute(
            f"SELECT * FROM links WHERE unit_id IN ({q}) ORDER BY unit_id, ordinal",
            list(unit_ids),
        ).fetchall()

    def backlinks(self, document_id: str) -> list[sqlite3.Row]:
        """Links from other units that resolve to this document or one of its units."""
        return self.db.execute(
            "SELECT l.*, u.title AS source_title, d.path AS source_path, d.title AS source_doc "
            "FROM links l JOIN units u ON u.id = l.unit_id "
            "JOIN documents d ON d.id = l.document_id "
            "WHERE l.resolved_document_id = ? ORDER BY d.path, l.line",
            (document_id,),
        ).fetchall()

    # --- lookups ----------------------------------------------------------------------
    def document(self, document_id: str) -> sqlite3.Row | None:
        """A document row with its root path, or ``None``."""
        row: sqlite3.Row | None = self.db.execute(
            "SELECT d.*, r.path AS root_path FROM documents d JOIN roots r ON r.id=d.root_id "
            "WHERE d.id=?",
            (document_id,),
        ).fetchone()
        return row

    def documents_at(self, root_id: str, relpath: str) -> list[sqlite3.Row]:
        """Documents indexed from one file."""
        return self.db.execute(
            "SELECT d.*, r.path AS root_path FROM documents d JOIN roots r ON r.id=d.root_id "
            "WHERE d.root_id=? AND d.path=? ORDER BY d.key",
            (root_id, relpath),
        ).fetchall()

    def rowids_of(self, unit_ids: Sequence[str]) -> dict[str, int]:
        """``unit id -> rowid`` for the given ids that exist."""
        if not unit_ids:
            return {}
        q = ",".join("?" * len(unit_ids))
        return {
            r[0]: int(r[1])
            for r in self.db.execute(
                f"SELECT id, rowid FROM units WHERE id IN ({q})", list(unit_ids)
            )
        }

    def unit(self, unit_id: str) -> sqlite3.Row | None:
        """A unit row, or ``None``."""
        row: sqlite3.Row | None = self.db.execute(
            "SELECT rowid AS urowid, * FROM units WHERE id=?", (unit_id,)
        ).fetchone()
        return row

    def units_of(self, document_id: str) -> list[sqlite3.Row]:
        """A document's units in order."""
        return self.db.execute(
            "SELECT rowid AS urowid, * FROM units WHERE document_id=? ORDER BY ordinal",
            (document_id,),
        ).fetchall()

    def find_ids(self, prefix: str) -> list[tuple[str, str]]:
        """``(table, id)`` pairs whose id starts with ``prefix`` (documents, then units)."""
        like = _like_escape(prefix) + "%"
        out = [
            ("documents", r[0])
            for r in self.db.execute(
                "SELECT id FROM documents WHERE id LIKE ? ESCAPE '\\' LIMIT 5", (like,)
            )
        ]
        out += [
            ("units", r[0])
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

    def failed_files(self) -> list[sqlite3.Row]:
        """Files whose last indexing failed (wholly or partly), with root path and reason."""
        return self.db.execute(
            "SELECT f.path, f.status, f.reason, f.line, r.path AS root_path FROM files f "
            "JOIN roots r ON r.id = f.root_id WHERE f.status != 'ok' ORDER BY r.path, f.path"
        ).fetchall()

    def document_warnings(self) -> list[tuple[str, str, list[dict[str, Any]]]]:
        """``(root path, relpath, warnings)`` for documents that carry warnings."""
        rows = self.db.execute(
            "SELECT r.path, d.path, d.warnings FROM documents d JOIN roots r ON r.id=d.root_id "
            "WHERE d.warnings != '[]' ORDER BY r.path, d.path"
        ).fetchall()
        return [(r[0], r[1], json.loads(r[2])) for r in rows]

    def counts(self) -> dict[str, Any]:
        """Counts of roots, files, documents (per format), units, links, FTS rows."""

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

    def integrity_check(self) -> list[str]:
        """Problems found by SQLite, FTS5 and cairn's own consistency checks ([] = fine)."""
        problems: list[str] = []
        for (msg,) in self.db.execute("PRAGMA integrity_check"):
            if msg != "ok":
                problems.append(f"sqlite: {msg}")
        try:
            self.db.execute("INSERT INTO units_fts(units_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            problems.append(f"fts5: {exc}")
        n_units = self.db.execute("SELECT count(*) FROM units").fetchone()[0]
        n_fts = self.db.execute("SELECT count(*) FROM units_fts").fetchone()[0]
        if n_units != n_fts:
            problems.append(f"units ({n_units}) and FTS rows ({n_fts}) differ")
        orphans = self.db.execute(
            "SELECT count(*) FROM units_fts WHERE rowid NOT IN (SELECT rowid FROM units)"
        ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} FTS rows without a unit")
        return problems


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
