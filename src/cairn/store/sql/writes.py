"""Writes of the shared tables: roots, files, documents, units, tags and links."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cairn.model import Diagnostic, Document, Failure, FileState, SourceRoot, Unit
from cairn.store.sql.base import SQLBase, _j, _now
from cairn.store.sql.carried import INSERT_VOCABULARY, vocabulary_rows
from cairn.store.sql.meta import document_meta, meta_text
from cairn.text import cjk_bigrams, fts_text


class WritesMixin(SQLBase):
    """Roots, files and documents."""

    # --- roots ------------------------------------------------------------------------
    def upsert_root(self, root: SourceRoot) -> None:
        """Add a source root, or update its globs."""
        self.db.execute(
            "INSERT INTO roots(id, path, include, exclude, added) VALUES (?,?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET include=excluded.include, exclude=excluded.exclude",
            (root.id, root.path, _j(list(root.include)), _j(list(root.exclude)), _now()),
        )

    def roots(self) -> list[SourceRoot]:
        """Every registered source root, by path."""
        rows = self.db.execute("SELECT * FROM roots ORDER BY path").fetchall()
        return [
            SourceRoot(
                r["id"], r["path"], tuple(json.loads(r["include"])), tuple(json.loads(r["exclude"]))
            )
            for r in rows
        ]

    def remove_root(self, root_id: str) -> int:
        """Forget a root and everything indexed from it; returns documents removed."""
        n = self.db.execute(
            "SELECT count(*) FROM documents WHERE root_id=?", (root_id,)
        ).fetchone()[0]
        with self.transaction():
            for (path,) in self.db.execute(
                "SELECT path FROM files WHERE root_id=?", (root_id,)
            ).fetchall():
                self._delete_file_documents(root_id, path)
            self.db.execute("DELETE FROM roots WHERE id=?", (root_id,))
        return int(n)

    # --- files ------------------------------------------------------------------------
    def file_states(
        self, root_id: str, paths: Sequence[str] | None = None
    ) -> dict[str, FileState]:
        """Known files of a root: ``relpath -> FileState`` (``paths``: only these)."""
        sql = "SELECT path, size, mtime, hash, status, reason FROM files WHERE root_id=?"
        if paths is None:
            rows = list(self.db.execute(sql, (root_id,)))
        else:
            want = list(dict.fromkeys(paths))
            rows = []
            for i in range(0, len(want), 500):
                part = want[i : i + 500]
                q = ",".join("?" * len(part))
                rows += self.db.execute(sql + f" AND path IN ({q})", (root_id, *part))
        return {
            r["path"]: FileState(r["size"], r["mtime"], r["hash"], r["status"], r["reason"])
            for r in rows
        }

    def file_paths(self, root_id: str, named: str | None = None) -> list[str]:
        """The relpaths of a root's known files (no states: cheaper than
        :meth:`file_states` on a large root); ``named``: only files of that name
        (case-insensitive, e.g. ``index.md``)."""
        if named is None:
            rows = self.db.execute("SELECT path FROM files WHERE root_id=?", (root_id,))
            return [r[0] for r in rows]
        low = named.lower()
        rows = self.db.execute(
            "SELECT path FROM files WHERE root_id=? AND lower(path) LIKE ?",
            (root_id, "%" + low.replace("%", "").replace("_", "")),
        )
        return [r[0] for r in rows if r[0].rsplit("/", 1)[-1].lower() == low]

    def file_count(self, root_id: str) -> int:
        """How many files of a root the index knows."""
        row = self.db.execute("SELECT count(*) FROM files WHERE root_id=?", (root_id,)).fetchone()
        return int(row[0])

    def documents_of_root(self, root_id: str, *, typed_only: bool = False) -> list[Document]:
        """A root's documents by path (then key), without units; ``typed_only``: only
        those that declare a ``type``."""
        sql = "SELECT * FROM documents WHERE root_id=?"
        if typed_only:
            sql += " AND type IS NOT NULL"
        return [
            Document(
                path=r["path"],
                format=r["format"],
                title=r["title"],
                units=(),
                metadata=json.loads(r["metadata"]),
                tags=tuple(json.loads(r["tags"])),
                aliases=tuple(json.loads(r["aliases"])),
                created=r["created"],
                modified=r["modified"],
                visibility=r["visibility"],
                type=r["type"],
                declared_id=r["declared_id"],
                key=r["key"],
                id=r["id"],
                root_id=r["root_id"],
                content_hash=r["content_hash"],
                size=r["size"],
                mtime=r["mtime"],
            )
            for r in self.db.execute(sql + " ORDER BY path, key", (root_id,))
        ]

    def touch_file(self, root_id: str, relpath: str, size: int, mtime: float) -> None:
        """Record a new (size, mtime) for a file whose content hash did not change."""
        self.db.execute(
            "UPDATE files SET size=?, mtime=? WHERE root_id=? AND path=?",
            (size, mtime, root_id, relpath),
        )
        self.db.execute(
            "UPDATE documents SET size=?, mtime=? WHERE root_id=? AND path=?",
            (size, mtime, root_id, relpath),
        )

    def record_failure(
        self, root_id: str, relpath: str, size: int, mtime: float, hash_: str, failure: Failure
    ) -> None:
        """Mark a file failed. Documents indexed from an earlier good version are kept."""
        self.db.execute(
            "INSERT INTO files(root_id, path, size, mtime, hash, format, status, reason, line) "
            "VALUES (?,?,?,?,?,NULL,'failed',?,?) ON CONFLICT(root_id, path) DO UPDATE SET "
            "size=excluded.size, mtime=excluded.mtime, hash=excluded.hash, status='failed', "
            "reason=excluded.reason, line=excluded.line",
            (root_id, relpath, size, mtime, hash_, failure.reason, failure.line),
        )

    def remove_file(self, root_id: str, relpath: str) -> int:
        """Delete a file and its documents, units, links and FTS rows; returns documents."""
        n = self._delete_file_documents(root_id, relpath)
        self.db.execute("DELETE FROM files WHERE root_id=? AND path=?", (root_id, relpath))
        return n

    def _delete_file_documents(self, root_id: str, relpath: str) -> int:
        doc_ids = [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM documents WHERE root_id=? AND path=?", (root_id, relpath)
            )
        ]
        for doc_id in doc_ids:
            self.delete_document(doc_id)
        return len(doc_ids)

    def delete_document(self, doc_id: str) -> None:
        """Delete one document with its units, tags, links, FTS and vocabulary rows."""
        self._delete_fts(doc_id)
        self.db.execute("DELETE FROM vocabulary WHERE document_id=?", (doc_id,))
        self.db.execute("DELETE FROM links WHERE document_id=?", (doc_id,))
        self.db.execute(
            "DELETE FROM unit_tags WHERE unit_rowid IN "
            "(SELECT rowid FROM units WHERE document_id=?)",
            (doc_id,),
        )
        self.db.execute("DELETE FROM units WHERE document_id=?", (doc_id,))
        self.db.execute("DELETE FROM documents WHERE id=?", (doc_id,))

    def document_hashes(self, root_id: str, relpath: str) -> dict[str, str]:
        """``document id -> content hash`` of the documents indexed from one file."""
        return {
            r[0]: r[1]
            for r in self.db.execute(
                "SELECT id, content_hash FROM documents WHERE root_id=? AND path=?",
                (root_id, relpath),
            )
        }

    def replace_document(self, doc: Document) -> None:
        """Insert a document (units with final ids), replacing one with the same id."""
        self.delete_document(doc.id)
        self._insert_document(doc)

    def set_attachments(self, root_id: str, paths: Iterable[str]) -> None:
        """Replace the list of a root's non-note files."""
        self.db.execute("DELETE FROM attachments WHERE root_id=?", (root_id,))
        self.db.executemany(
            "INSERT OR IGNORE INTO attachments(root_id, path) VALUES (?,?)",
            ((root_id, p) for p in paths),
        )

    def attachments(self) -> list[tuple[str, str]]:
        """``(root_id, relpath)`` of every known non-note file."""
        return [(r[0], r[1]) for r in self.db.execute("SELECT root_id, path FROM attachments")]

    def document_owner(self, doc_id: str) -> tuple[str, str] | None:
        """``(root_id, path)`` of the file a document id belongs to, if any."""
        r = self.db.execute("SELECT root_id, path FROM documents WHERE id=?", (doc_id,)).fetchone()
        return (r[0], r[1]) if r else None

    def unit_owner(self, unit_id: str) -> str | None:
        """The id of the document holding a unit id, if any."""
        r = self.db.execute("SELECT document_id FROM units WHERE id=?", (unit_id,)).fetchone()
        return str(r[0]) if r else None

    def replace_file(
        self,
        root_id: str,
        relpath: str,
        *,
        size: int,
        mtime: float,
        hash_: str,
        format_: str,
        documents: Sequence[Document],
        failure: Failure | None = None,
    ) -> None:
        """Replace everything indexed from one file with ``documents``.

        Units must carry their final ids. Call inside :meth:`transaction`.
        ``failure`` marks the file partly failed (e.g. some conversations of an export).
        """
        self._delete_file_documents(root_id, relpath)
        self.upsert_file(
            root_id, relpath, size=size, mtime=mtime, hash_=hash_, format_=format_, failure=failure
        )
        for doc in documents:
            self._insert_document(doc)

    def upsert_file(
        self,
        root_id: str,
        relpath: str,
        *,
        size: int,
        mtime: float,
        hash_: str,
        format_: str,
        failure: Failure | None = None,
    ) -> None:
        """Record a file as indexed (``ok``, or ``partial`` with ``failure``)."""
        status = "partial" if failure else "ok"
        self.db.execute(
            "INSERT INTO files(root_id, path, size, mtime, hash, format, status, reason, line) "
            "VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(root_id, path) DO UPDATE SET "
            "size=excluded.size, mtime=excluded.mtime, hash=excluded.hash, "
            "format=excluded.format, status=excluded.status, reason=excluded.reason, "
            "line=excluded.line",
            (
                root_id,
                relpath,
                size,
                mtime,
                hash_,
                format_,
                status,
                failure.reason if failure else None,
                failure.line if failure else None,
            ),
        )

    def _insert_document(self, doc: Document) -> None:
        self.db.execute(
            "INSERT INTO documents(id, root_id, path, key, format, title, metadata, tags, "
            "aliases, created, modified, visibility, type, declared_id, content_hash, size, "
            "mtime, warnings) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                doc.id,
                doc.root_id,
                doc.path,
                doc.key,
                doc.format,
                doc.title,
                _j(dict(doc.metadata)),
                _j(list(doc.tags)),
                _j(list(doc.aliases)),
                doc.created,
                doc.modified,
                doc.visibility,
                doc.type,
                doc.declared_id,
                doc.content_hash,
                doc.size,
                doc.mtime,
                _j([_diag(w) for w in doc.warnings]),
            ),
        )
        self._insert_units(doc)

    def _insert_units(self, doc: Document) -> None:
        """A document's units with their FTS rows, tags and links: one statement per
        table (rowids are given out here, inside the write transaction)."""
        described = (doc.type, _j(dict(doc.metadata)), doc.format)
        if not doc.units:
            self._write_vocabulary(vocabulary_rows(doc.id, [], [], described))
            return
        first = self._first_rowid(len(doc.units))
        units: list[tuple[Any, ...]] = []
        fts: list[tuple[Any, ...]] = []
        raw: list[tuple[str, str]] = []
        tags: list[tuple[Any, ...]] = []
        links: list[tuple[Any, ...]] = []
        shared = document_meta(doc)
        for i, u in enumerate(doc.units):
            rowid = first + 1 + i
            extra = dict(u.extra)
            units.append(
                (
                    rowid,
                    u.id,
                    doc.id,
                    u.parent_id,
                    u.ordinal,
                    u.level,
                    u.kind,
                    u.title,
                    _j(list(u.outline_path)),
                    u.body,
                    _j(list(u.tags)),
                    _j(list(u.inherited_tags)),
                    _j(dict(u.properties)),
                    u.todo,
                    u.todo_state,
                    u.priority,
                    _j([_ts(t) for t in u.timestamps]),
                    u.org_id,
                    u.custom_id,
                    u.declared_id,
                    u.line_start,
                    u.line_end,
                    u.language,
                    _j(extra),
                    extra.get("role"),
                    extra.get("time"),
                    1 if extra.get("alternate") else 0,
                )
            )
            title, outline, tag_text, body = _fts_columns(doc, u)
            meta = meta_text(doc, u, shared)
            cjk = " ".join(cjk_bigrams(f"{title}\n{outline}\n{tag_text}\n{body}\n{meta}"))
            fts.append(
                (
                    rowid,
                    fts_text(title),
                    fts_text(outline),
                    fts_text(tag_text),
                    fts_text(body),
                    cjk,
                    fts_text(meta),
                )
            )
            raw.append((u.title, u.body))
            seen: set[str] = set()
            for tag, inherited in [(t, 0) for t in u.tags] + [(t, 1) for t in u.inherited_tags]:
                low = tag.casefold()
                if low not in seen:
                    seen.add(low)
                    tags.append((rowid, low, inherited))
            links.extend(
                (
                    u.id,
                    doc.id,
                    k,
                    ln.kind,
                    ln.target,
                    ln.alias,
                    ln.anchor,
                    ln.line,
                    ln.raw,
                    ln.resolved_document_id,
                    ln.resolved_unit_id,
                    ln.unresolved_reason,
                )
                for k, ln in enumerate(u.links)
            )
        self.db.executemany(
            "INSERT INTO units(rowid, id, document_id, parent_id, ordinal, level, kind, title, "
            "outline_path, body, tags, inherited_tags, properties, todo, todo_state, priority, "
            "timestamps, org_id, custom_id, declared_id, line_start, line_end, language, extra, "
            "role, time, alternate) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            units,
        )
        self._write_fts(fts, raw)
        self.db.executemany(
            "INSERT INTO unit_tags(unit_rowid, tag, inherited) VALUES (?,?,?)", tags
        )
        self.db.executemany(
            "INSERT INTO links(unit_id, document_id, ordinal, kind, target, alias, anchor, line, "
            "raw, resolved_document_id, resolved_unit_id, unresolved_reason) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            links,
        )
        carriers = [(u[0], u[1], u[4], u[13], u[12], u[26]) for u in units]
        self._write_vocabulary(
            vocabulary_rows(doc.id, carriers, [(t[0], t[1]) for t in tags], described))

    def _write_vocabulary(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert a document's :func:`~cairn.store.sql.carried.vocabulary_rows`."""
        if rows:
            self.db.executemany(INSERT_VOCABULARY, rows)

    def _first_rowid(self, count: int) -> int:
        """The rowid before ``count`` new units' rowids (``max(rowid)`` of ``units``;
        called inside the write transaction)."""
        return int(self.db.execute("SELECT coalesce(max(rowid), 0) FROM units").fetchone()[0])


def _fts_columns(doc: Document, u: Unit) -> tuple[str, str, str, str]:
    """What a unit contributes to the FTS columns title, outline path, tags and body
    (``meta``: :func:`cairn.store.sql.meta.meta_text`).

    A document's aliases and ``description`` are searchable through its first unit. A
    code unit's title is usually made up (``python code block``), so it is searched
    with the outline path's weight, not the title's, and its language counts as a tag.
    """
    title = u.title
    outline = " / ".join(u.outline_path)
    tags = " ".join(u.all_tags)
    body = u.body
    if u.ordinal == 0:
        if doc.aliases:
            title = " ; ".join([title, *doc.aliases])
        desc = doc.metadata.get("description") if isinstance(doc.metadata, Mapping) else None
        if isinstance(desc, str) and desc.strip() and desc not in body:
            body = f"{desc}\n{body}"
    if u.kind == "message" and len(u.outline_path) > 1:
        # a message's outline starts with its conversation's title: searched there (the
        # conversation's first unit), not once per message, or a one-word reply ("lol")
        # would top every query naming the conversation
        outline = " / ".join(u.outline_path[1:])
    if u.kind == "code":
        outline = f"{outline} / {title}" if outline else title
        title = ""
        if u.language:
            tags = f"{tags} {u.language}".strip()
    return title, outline, tags, body


def _diag(d: Diagnostic) -> dict[str, Any]:
    return {"path": d.path, "message": d.message, "line": d.line, "severity": d.severity}


def _ts(t: Any) -> dict[str, Any]:
    return {
        "raw": t.raw,
        "active": t.active,
        "start": t.start,
        "end": t.end,
        "repeater": t.repeater,
        "warning": t.warning,
        "role": t.role,
        "diary": t.diary,
    }
