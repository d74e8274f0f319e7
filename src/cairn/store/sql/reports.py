"""The ``dream_reports`` table (:class:`cairn.store.reports.ReportIndex`)."""

from __future__ import annotations

import json
import sqlite3
from functools import cached_property
from typing import TYPE_CHECKING

from cairn import model

if TYPE_CHECKING:
    from cairn.model import ReportRecord
    from cairn.store.sql.base import SQLBase


def _record(r: sqlite3.Row) -> ReportRecord:
    return model.ReportRecord(
        id=r["id"],
        created=r["created"],
        fingerprint=r["fingerprint"],
        checks=tuple(json.loads(r["checks"])),
        data=json.loads(r["data"]),
    )


class SQLiteReports:
    """Dream reports in one SQLite table (created by the schema migrations)."""

    def __init__(self, store: SQLBase) -> None:
        self.store = store

    def save(self, record: ReportRecord, *, keep: int) -> None:
        """Store a report and keep only the ``keep`` newest (at least one)."""
        db = self.store.db
        with self.store.transaction():
            db.execute(
                "INSERT OR REPLACE INTO dream_reports(id, created, fingerprint, checks, data) "
                "VALUES (?, ?, ?, ?, ?)",
                (record.id, record.created, record.fingerprint,
                 json.dumps(list(record.checks)), json.dumps(record.data, ensure_ascii=False)),
            )
            db.execute(
                "DELETE FROM dream_reports WHERE id NOT IN "
                "(SELECT id FROM dream_reports ORDER BY id DESC LIMIT ?)",
                (max(1, keep),),
            )

    def latest(self) -> ReportRecord | None:
        """The newest report, or ``None``."""
        got = self.recent(1)
        return got[0] if got else None

    def recent(self, limit: int = 10) -> list[ReportRecord]:
        """The newest ``limit`` reports, newest first."""
        rows = self.store.db.execute(
            "SELECT * FROM dream_reports ORDER BY id DESC LIMIT ?", (max(0, limit),)
        )
        return [_record(r) for r in rows]

    def get(self, report_id: str) -> ReportRecord | None:
        """One report by id."""
        row = self.store.db.execute(
            "SELECT * FROM dream_reports WHERE id=?", (report_id,)
        ).fetchone()
        return _record(row) if row is not None else None


class ReportsMixin:
    """Gives a store its ``reports``."""

    @cached_property
    def reports(self) -> SQLiteReports:
        """The dream reports (:class:`cairn.store.reports.ReportIndex`)."""
        return SQLiteReports(self)  # type: ignore[arg-type]
