"""The embedded store: one SQLite file (WAL) with FTS5.

Tables: ``roots`` (source roots), ``files`` (every file seen, for change detection, with
its status), ``documents``, ``units``, ``unit_tags`` (own and inherited tags, lower-cased,
for ``tag:`` filters), ``links``, ``attachments`` (non-note files, for link resolution),
``runs``, and the FTS5 table ``units_fts`` whose rowid is ``units.rowid``.

FTS5 uses ``porter unicode61 remove_diacritics 2`` over the columns title, outline_path,
tags, body, plus a ``cjk`` column of overlapping CJK character bigrams so that Chinese
and Japanese words (which have no spaces) are found. The store knows nothing of Org or
Markdown: it stores model values and answers queries built by ``cairn.search``.

Schema changes are migrations: ``MIGRATIONS[i]`` brings a database from version ``i`` to
``i + 1``; ``PRAGMA user_version`` holds the version.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.errors import StoreError
from cairn.model import Diagnostic, Document, Failure, Filter, Link, Run, SourceRoot, Unit

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: the initial schema
    """
    CREATE TABLE roots (
        id TEXT PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        include TEXT NOT NULL DEFAULT '[]',
        exclude TEXT NOT NULL DEFAULT '[]',
        added TEXT NOT NULL
    );
    CREATE TABLE files (
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        hash TEXT NOT NULL,
        format TEXT,
        status TEXT NOT NULL,
        reason TEXT,
        line INTEGER,
        PRIMARY KEY (root_id, path)
    );
    CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        root_id TEXT NOT NULL,
        path TEXT NOT NULL,
        key TEXT,
        format TEXT NOT NULL,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL,
        tags TEXT NOT NULL,
        aliases TEXT NOT NULL,
        created TEXT,
        modified TEXT,
        visibility TEXT,
        type TEXT,
        declared_id TEXT,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        warnings TEXT NOT NULL,
        FOREIGN KEY (root_id, path) REFERENCES files(root_id, path) ON DELETE CASCADE
    );
    CREATE INDEX documents_file ON documents(root_id, path);
    CREATE INDEX documents_declared ON documents(declared_id);
    CREATE TABLE units (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        parent_id TEXT,
        ordinal INTEGER NOT NULL,
        level INTEGER NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        outline_path TEXT NOT NULL,
        body TEXT NOT NULL,
        tags TEXT NOT NULL,
        inherited_tags TEXT NOT NULL,
        properties TEXT NOT NULL,
        todo TEXT,
        todo_state TEXT,
        priority TEXT,
        timestamps TEXT NOT NULL,
        org_id TEXT,
        custom_id TEXT,
        declared_id TEXT,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        language TEXT,
        extra TEXT NOT NULL,
        role TEXT,
        time TEXT,
        alternate INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX units_document ON units(document_id, ordinal);
    CREATE INDEX units_parent ON units(parent_id);
    CREATE INDEX units_org_id ON units(org_id);
    CREATE TABLE unit_tags (
        unit_rowid INTEGER NOT NULL REFERENCES units(rowid) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        inherited INTEGER NOT NULL
    );
    CREATE INDEX unit_tags_tag ON unit_tags(tag);
    CREATE INDEX unit_tags_unit ON unit_tags(unit_rowid);
    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        unit_id TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        document_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        alias TEXT,
        anchor TEXT,
        line INTEGER,
        raw TEXT NOT NULL,
        resolved_document_id TEXT,
        resolved_unit_id TEXT,
        unresolved_reason TEXT
    );
    CREATE INDEX links_unit ON links(unit_id);
    CREATE INDEX links_document ON links(document_id);
    CREATE INDEX links_resolved_doc ON links(resolved_document_id);
    CREATE INDEX links_resolved_unit ON links(resolved_unit_id);
    CREATE TABLE attachments (
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (root_id, path)
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started TEXT NOT NULL,
        finished TEXT,
        config_hash TEXT NOT NULL,
        seen INTEGER NOT NULL DEFAULT 0,
        added INTEGER NOT NULL DEFAULT 0,
        changed INTEGER NOT NULL DEFAULT 0,
        removed INTEGER NOT NULL DEFAULT 0,
        unchanged INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        failures TEXT NOT NULL DEFAULT '[]',
        warnings TEXT NOT NULL DEFAULT '[]',
        seconds REAL NOT NULL DEFAULT 0
    );
    CREATE VIRTUAL TABLE units_fts USING fts5(
        title, outline_path, tags, body, cjk,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

# Han, Hiragana, Katakana, Hangul syllables and compatibility ideographs.
_CJK_RUN = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+"
)


_CJK_EDGE = re.compile(
    r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
    r"(?=[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
    r"|(?<=[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
    r"(?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
)
_LANG_NAME = re.compile(r"(?<![\w+#])([A-Za-z])(\+\+|#)(?![\w+#])")


def fts_text(text: str) -> str:
    """Text as the FTS index holds it (and as query terms are rewritten before quoting).

    NFKC (so NFD text from macOS, full-width letters and ligatures match their plain
    forms); a space at each boundary between CJK and other characters (``CSSはHTML`` →
    ``CSS は HTML``: unicode61 would glue them into one token); ``C++``, ``C#``, ``F#``
    → ``Cplusplus``, ``Csharp``, ``Fsharp`` (unicode61 would drop the symbols and leave
    a one-letter word).
    """
    text = unicodedata.normalize("NFKC", text)
    if _CJK_RUN.search(text):
        text = _CJK_EDGE.sub(" ", text)
    if "+" in text or "#" in text:
        text = _LANG_NAME.sub(
            lambda m: m.group(1) + ("plusplus" if m.group(2) == "++" else "sharp"), text
        )
    return text


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of every CJK run in ``text``.

    A run of one character gives that character. ``"東京都"`` → ``["東京", "京都"]``.
    """
    out: list[str] = []
    for m in _CJK_RUN.finditer(text):
        run = m.group()
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True, slots=True)
class FileState:
    """What the store knows of one file: for (size, mtime) then hash change detection."""

    size: int
    mtime: float
    hash: str
    status: str
    reason: str | None


class SQLiteStore:
    """The default :class:`cairn.store.Store`: one SQLite file.

    Args:
        path: the database file (created with its folder if missing), or ``":memory:"``.

    Raises:
        StoreError: the file cannot be opened, is not a cairn database, or is newer
            than this version of cairn.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self.db.execute("PRAGMA busy_timeout = 5000")
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open index: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create index folder: {exc}") from exc

    # --- lifecycle --------------------------------------------------------------------
    def _migrate(self) -> None:
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: index schema version {version} is newer than this cairn "
                f"({SCHEMA_VERSION}); upgrade cairn or rebuild the index"
            )
        if version == 0:
            tables = self.db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type='table'"
            ).fetchone()[0]
            if tables:
                raise StoreError(f"{self.path}: not a cairn index (unknown tables, no version)")
        for i in range(version, SCHEMA_VERSION):
            with self.transaction():
                for stmt in MIGRATIONS[i].split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(f"PRAGMA user_version = {i + 1}")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with suppress(sqlite3.Error):
            self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction; rolled back if the block raises.

        Inside an open transaction it nests as a savepoint, so one file's failure can
        be rolled back without losing the rest of a batch.
        """
        if self.db.in_transaction:
            with self.savepoint():
                yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit of work inside a transaction; undone alone if the block raises."""
        self._sp = getattr(self, "_sp", 0) + 1
        name = f"sp{self._sp}"
        self.db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self.db.execute(f"ROLLBACK TO {name}")
            self.db.execute(f"RELEASE {name}")
            raise
        else:
            self.db.execute(f"RELEASE {name}")
        finally:
            self._sp -= 1

    def ensure_component(self, name: str, migrations: Sequence[str]) -> None:
        """Create or migrate the tables of an optional component (vectors, edges …).

        Each component keeps its own version in ``components``: ``migrations[i]`` is a
        script of ``;``-separated statements bringing it from version ``i`` to ``i + 1``.
        Idempotent; safe to call on every open.

        Raises:
            StoreError: the database holds a newer version of the component.
        """
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS components (name TEXT PRIMARY KEY, version INTEGER)"
        )
        row = self.db.execute("SELECT version FROM components WHERE name=?", (name,)).fetchone()
        version = int(row[0]) if row else 0
        if version > len(migrations):
            raise StoreError(
                f"{self.path}: component {name!r} is at version {version}, newer than this "
                f"cairn ({len(migrations)}); upgrade cairn or rebuild the index"
            )
        for i in range(version, len(migrations)):
            with self.transaction():
                for stmt in migrations[i].split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(
                    "INSERT INTO components(name, version) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET version=excluded.version",
                    (name, i + 1),
                )

    @property
    def schema_version(self) -> int:
        """The database's schema version (``PRAGMA user_version``)."""
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

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
    def file_states(self, root_id: str) -> dict[str, FileState]:
        """Known files of a root: ``relpath -> FileState``."""
        return {
            r["path"]: FileState(r["size"], r["mtime"], r["hash"], r["status"], r["reason"])
            for r in self.db.execute(
                "SELECT path, size, mtime, hash, status, reason FROM files WHERE root_id=?",
                (root_id,),
            )
        }

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
        """Delete one document with its units, tags, links and FTS rows."""
        self.db.execute(
            "DELETE FROM units_fts WHERE rowid IN (SELECT rowid FROM units WHERE document_id=?)",
            (doc_id,),
        )
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
        for u in doc.units:
            self._insert_unit(doc, u)

    def _insert_unit(self, doc: Document, u: Unit) -> None:
        extra = dict(u.extra)
        cur = self.db.execute(
            "INSERT INTO units(id, document_id, parent_id, ordinal, level, kind, title, "
            "outline_path, body, tags, inherited_tags, properties, todo, todo_state, priority, "
            "timestamps, org_id, custom_id, declared_id, line_start, line_end, language, extra, "
            "role, time, alternate) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
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
            ),
        )
        rowid = cur.lastrowid
        title, outline, tags, body = _fts_columns(doc, u)
        cjk = " ".join(cjk_bigrams(f"{title}\n{outline}\n{tags}\n{body}"))
        self.db.execute(
            "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk) "
            "VALUES (?,?,?,?,?,?)",
            (rowid, fts_text(title), fts_text(outline), fts_text(tags), fts_text(body), cjk),
        )
        seen: set[str] = set()
        rows = []
        for tag, inherited in [(t, 0) for t in u.tags] + [(t, 1) for t in u.inherited_tags]:
            low = tag.casefold()
            if low not in seen:
                seen.add(low)
                rows.append((rowid, low, inherited))
        self.db.executemany(
            "INSERT INTO unit_tags(unit_rowid, tag, inherited) VALUES (?,?,?)", rows
        )
        self.db.executemany(
            "INSERT INTO links(unit_id, document_id, ordinal, kind, target, alias, anchor, line, "
            "raw, resolved_document_id, resolved_unit_id, unresolved_reason) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    u.id,
                    doc.id,
                    i,
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
                for i, ln in enumerate(u.links)
            ],
        )

    # --- links ------------------------------------------------------------------------
    def all_links(self) -> list[sqlite3.Row]:
        """Every link with its source document's root and path."""
        return self.db.execute(
            "SELECT l.id, l.kind, l.target, l.anchor, l.alias, l.resolved_document_id, "
            "l.resolved_unit_id, l.unresolved_reason, d.root_id, d.path, d.id AS document_id "
            "FROM links l JOIN documents d ON d.id = l.document_id"
        ).fetchall()

    def set_link_resolutions(
        self, updates: Iterable[tuple[str | None, str | None, str | None, int]]
    ) -> None:
        """Apply ``(resolved_document_id, resolved_unit_id, unresolved_reason, link id)``."""
        self.db.executemany(
            "UPDATE links SET resolved_document_id=?, resolved_unit_id=?, unresolved_reason=? "
            "WHERE id=?",
            updates,
        )

    def catalog_rows(self) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
        """Rows for link resolution: documents and units (ids, titles, anchors)."""
        docs = self.db.execute(
            "SELECT id, root_id, path, title, aliases, declared_id, format FROM documents"
        ).fetchall()
        units = self.db.execute(
            "SELECT id, document_id, ordinal, level, kind, title, org_id, custom_id, "
            "json_extract(extra, '$.targets') AS targets, "
            "json_extract(extra, '$.block_ids') AS block_ids FROM units"
        ).fetchall()
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

    # --- search -----------------------------------------------------------------------
    def _filter_sql(self, filters: Sequence[Filter]) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        for f in filters:
            sql, a = self._one_filter(f)
            # a negated filter keeps units that have no value at all (NULL is not a match)
            where.append(f"NOT coalesce(({sql}), 0)" if f.negate else sql)
            args.extend(a)
        return where, args

    def _one_filter(self, f: Filter) -> tuple[str, list[Any]]:
        v = f.value
        if f.field == "tag":
            low = v.casefold().lstrip("#")
            return (
                "EXISTS (SELECT 1 FROM unit_tags t WHERE t.unit_rowid = u.rowid "
                "AND (t.tag = ? OR t.tag LIKE ? ESCAPE '\\'))",
                [low, _like_escape(low) + "/%"],
            )
        if f.field == "todo":
            # lower-case open/done/any name a state; anything else is a keyword, matched
            # exactly as Org does (keywords are case-sensitive: todo:DONE is the keyword)
            if v in ("open", "done"):
                return ("u.todo_state = ?", [v])
            if v in ("any", "*"):
                return ("u.todo IS NOT NULL", [])
            return ("u.todo = ?", [v])
        if f.field == "priority":
            return ("u.priority = ? COLLATE NOCASE", [v.lstrip("#")])
        if f.field == "type":
            return (
                "(d.type = ? COLLATE NOCASE OR json_extract(u.properties, '$.type') = ?)",
                [v, v],
            )
        if f.field == "format":
            return ("d.format = ? COLLATE NOCASE", [v])
        if f.field == "source":
            return (
                "(d.format = ? COLLATE NOCASE OR d.root_id IN (SELECT id FROM roots "
                "WHERE path = ? OR path LIKE ? ESCAPE '\\'))",
                [v, v, "%/" + _like_escape(v.rstrip("/"))],
            )
        if f.field == "path":
            if any(c in v for c in "*?["):
                return ("d.path GLOB ?", [v])
            return ("d.path LIKE ? ESCAPE '\\'", ["%" + _like_escape(v) + "%"])
        if f.field == "prop":
            # the unit's own properties, those it inherits (Org), and its document's
            # metadata (frontmatter); a list value matches when one element does
            key = f.key or ""
            return (
                "(EXISTS (SELECT 1 FROM json_each(u.properties) p WHERE p.key = ? COLLATE NOCASE"
                " AND (? = '' OR p.value = ? COLLATE NOCASE))"
                " OR EXISTS (SELECT 1 FROM json_each(u.extra, '$.inherited_properties') p"
                " WHERE p.key = ? COLLATE NOCASE AND (? = '' OR p.value = ? COLLATE NOCASE))"
                " OR EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? COLLATE NOCASE"
                " AND (? = '' OR CAST(m.value AS TEXT) = ? COLLATE NOCASE"
                " OR (m.type = 'array' AND EXISTS (SELECT 1 FROM json_each(m.value) e"
                " WHERE CAST(e.value AS TEXT) = ? COLLATE NOCASE)))))",
                [key, v, v, key, v, v, key, v, v, v],
            )
        if f.field == "role":
            return ("u.role = ? COLLATE NOCASE", [v])
        if f.field == "kind":  # a unit kind, or a chat message's kind (question, answer …)
            return (
                "(u.kind = ? COLLATE NOCASE OR json_extract(u.extra, '$.kind') = ?)",
                [v, v.casefold()],
            )
        if f.field in ("before", "after"):
            op = "<" if f.field == "before" else ">="
            stamp = (
                "COALESCE(u.time, d.modified, d.created, "
                "strftime('%Y-%m-%dT%H:%M:%SZ', d.mtime, 'unixepoch'))"
            )
            return (f"substr({stamp}, 1, {len(v)}) {op} ?", [v])
        if f.field == "id":
            return ("(u.id = ? OR d.id = ?)", [v, v])
        raise StoreError(f"unknown filter field {f.field!r}")

    def search_fts(
        self,
        match: str | None,
        filters: Sequence[Filter],
        *,
        limit: int,
        weights: Mapping[str, float],
        include_alternates: bool = False,
    ) -> list[tuple[int, float]]:
        """Run a BM25 query; returns ``(unit rowid, score)`` best first.

        Args:
            match: an FTS5 MATCH expression built by ``cairn.search.query`` (every
                user token quoted), or ``None`` for a filter-only query.
            filters: restrictions on units and documents.
            limit: maximum hits (live units only; filters applied before the limit).
            weights: BM25 column weights ``title``, ``outline_path``, ``tags``, ``body``.
            include_alternates: also return units off a conversation's canonical branch.

        The score is ``-bm25(...)`` (higher is better); filter-only queries score 0.
        """
        where, args = self._filter_sql(filters)
        if not include_alternates:
            where.append("u.alternate = 0")
        w = [weights.get(k, 1.0) for k in ("title", "outline_path", "tags", "body")]
        w.append(weights.get("body", 1.0))
        if match is None:
            sql = (
                "SELECT u.rowid, 0.0 FROM units u JOIN documents d ON d.id = u.document_id"
                + (" WHERE " + " AND ".join(where) if where else "")
                + " ORDER BY d.path, u.ordinal LIMIT ?"
            )
            params: list[Any] = [*args, limit]
        elif not filters:
            return self._top_by_rank(match, w, limit, include_alternates)
        else:
            extra = (" AND " + " AND ".join(where)) if where else ""
            sql = (
                "SELECT f.rowid, -bm25(units_fts, ?, ?, ?, ?, ?) AS score FROM units_fts f "
                "JOIN units u ON u.rowid = f.rowid JOIN documents d ON d.id = u.document_id "
                f"WHERE units_fts MATCH ?{extra} ORDER BY score DESC, u.rowid LIMIT ?"
            )
            params = [*w, match, *args, limit]
        try:
            return [(int(r[0]), float(r[1])) for r in self.db.execute(sql, params)]
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed: {exc}") from exc

    def _top_by_rank(
        self, match: str, weights: list[float], limit: int, include_alternates: bool
    ) -> list[tuple[int, float]]:
        """A query without filters: FTS5's own top-N by ``rank`` (its sorter keeps only
        the best N, no join per matching row), then drop off-branch chat messages,
        asking for more when too many were dropped."""
        rank = "bm25(" + ", ".join(repr(float(x)) for x in weights) + ")"
        want = limit
        while True:
            try:
                rows = [
                    (int(r[0]), -float(r[1]))
                    for r in self.db.execute(
                        "SELECT rowid, rank FROM units_fts WHERE units_fts MATCH ? "
                        "AND rank MATCH ? ORDER BY rank, rowid LIMIT ?",
                        (match, rank, want),
                    )
                ]
            except sqlite3.OperationalError as exc:
                raise StoreError(f"search failed: {exc}") from exc
            if include_alternates or not rows:
                return rows[:limit]
            q = ",".join("?" * len(rows))
            alt = {
                int(r[0])
                for r in self.db.execute(
                    f"SELECT rowid FROM units WHERE alternate = 1 AND rowid IN ({q})",
                    [r for r, _ in rows],
                )
            }
            kept = [r for r in rows if r[0] not in alt]
            if len(kept) >= limit or len(rows) < want:
                return kept[:limit]
            want *= 4

    def filter_units(
        self, unit_ids: Sequence[str], filters: Sequence[Filter], *, include_alternates: bool
    ) -> list[str]:
        """The given unit ids that pass ``filters`` (and are on a canonical branch unless
        ``include_alternates``), in the given order."""
        if not unit_ids:
            return []
        where, args = self._filter_sql(filters)
        if not include_alternates:
            where.append("u.alternate = 0")
        q = ",".join("?" * len(unit_ids))
        sql = (
            "SELECT u.id FROM units u JOIN documents d ON d.id = u.document_id "
            f"WHERE u.id IN ({q})" + "".join(f" AND {w}" for w in where)
        )
        ok = {r[0] for r in self.db.execute(sql, [*unit_ids, *args])}
        return [u for u in unit_ids if u in ok]

    def unit_rows(self, rowids: Sequence[int]) -> dict[int, sqlite3.Row]:
        """Unit rows joined with their document and root, keyed by rowid."""
        if not rowids:
            return {}
        q = ",".join("?" * len(rowids))
        rows = self.db.execute(
            "SELECT u.rowid AS urowid, u.*, d.title AS doc_title, d.path AS path, "
            "d.format AS format, d.root_id AS root_id, r.path AS root_path, d.tags AS doc_tags "
            "FROM units u JOIN documents d ON d.id = u.document_id "
            f"JOIN roots r ON r.id = d.root_id WHERE u.rowid IN ({q})",
            list(rowids),
        ).fetchall()
        return {int(r["urowid"]): r for r in rows}

    def siblings(self, document_id: str, parent_id: str | None, exclude: str) -> list[str]:
        """Titles of a unit's sibling headings (same parent), in order."""
        rows = self.db.execute(
            "SELECT title FROM units WHERE document_id=? AND parent_id IS ? AND id != ? "
            "AND kind='heading' ORDER BY ordinal LIMIT 12",
            (document_id, parent_id, exclude),
        ).fetchall()
        return [r[0] for r in rows]

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[sqlite3.Row]:
        """The units of the same kind just before and after ``ordinal`` (canonical
        branch only), in order: at most one each side."""
        before = self.db.execute(
            "SELECT ordinal, title, body, role FROM units WHERE document_id=? AND kind=? "
            "AND alternate=0 AND ordinal<? ORDER BY ordinal DESC LIMIT 1",
            (document_id, kind, ordinal),
        ).fetchall()
        after = self.db.execute(
            "SELECT ordinal, title, body, role FROM units WHERE document_id=? AND kind=? "
            "AND alternate=0 AND ordinal>? ORDER BY ordinal LIMIT 1",
            (document_id, kind, ordinal),
        ).fetchall()
        return [*before, *after]

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


def _fts_columns(doc: Document, u: Unit) -> tuple[str, str, str, str]:
    """What a unit contributes to the FTS columns title, outline path, tags and body.

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
    if u.kind == "code":
        outline = f"{outline} / {title}" if outline else title
        title = ""
        if u.language:
            tags = f"{tags} {u.language}".strip()
    return title, outline, tags, body


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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
