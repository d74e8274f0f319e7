"""Keyword-index rows held back within a write transaction (see
:meth:`cairn.store.sqlite.base.SQLiteBase.bulk_writes`).

FTS5 writes its pending terms out as a new segment at every savepoint; an index run
opens one savepoint per file, so inserting each file's rows as it is stored made one
segment per file, which FTS5's automatic merges then read and wrote again and again.
Held here, the rows of many files go in with one statement.

Rows are handed to SQL in order; ``rows[:written]`` are in FTS5. A savepoint that is
rolled back undoes what SQL did inside it, so the held rows of before it that were
written inside it are written again, and the rows made inside it are dropped. A written
row made inside the innermost open savepoint (or outside any) is not kept: undoing it
undoes its unit too. So only rows that waited when a savepoint began are kept after
they are written, and waiting rows are written once they hold :data:`HELD_CHARS`
characters: memory stays bounded however large a file or a batch is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

HELD_CHARS = 4_000_000
"""Characters of waiting rows that are written without waiting for the commit."""

Row = Sequence[Any]


def _chars(row: Row) -> int:
    """About the characters a row holds: its body and CJK columns, the large ones."""
    return len(row[4]) + len(row[5])


class HeldRows:
    """The keyword-index rows of one open transaction not yet (or written but still
    needed) in FTS5, with the marks of its open savepoints."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.written = 0
        self.marks: list[tuple[int, int]] = []
        self.waiting_chars = 0

    def add(self, rows: Sequence[Row]) -> bool:
        """Hold ``rows``; whether the waiting rows should be written now."""
        self.rows.extend(rows)
        self.waiting_chars += sum(_chars(r) for r in rows)
        return self.waiting_chars > HELD_CHARS

    def waiting(self) -> list[Row]:
        """The rows not yet written, in order."""
        return self.rows[self.written :]

    def wrote(self) -> None:
        """The waiting rows were written."""
        self.written = len(self.rows)
        self.waiting_chars = 0
        self._trim()

    def enter(self) -> None:
        """A savepoint began."""
        self.marks.append((len(self.rows), self.written))

    def release(self) -> None:
        """The innermost savepoint was released."""
        self.marks.pop()
        self._trim()

    def undo(self) -> None:
        """The innermost savepoint was rolled back."""
        mark, written = self.marks.pop()
        del self.rows[mark:]
        self.written = min(self.written, written)
        self.waiting_chars = sum(_chars(r) for r in self.waiting())
        self._trim()

    def _trim(self) -> None:
        """Drop the written rows no rollback could need: those made inside the
        innermost open savepoint (or outside any), undone with their units."""
        keep = self.marks[-1][0] if self.marks else 0
        if self.written > keep:
            del self.rows[keep : self.written]
            self.written = keep
