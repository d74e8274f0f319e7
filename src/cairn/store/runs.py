"""The record of index runs, the index's counts and its health."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cairn.model import Diagnostic, FailedFile, Run


class RunLog(Protocol):
    """Index runs, failed files and warnings, counts, integrity check and repair."""

    def save_run(self, run: Run) -> None:
        """Insert or replace a run record (its ``graph``/``embedding`` steps are not kept)."""
        ...

    def last_run(self) -> Run | None:
        """The most recent indexing run, or ``None`` before the first."""
        ...

    def failed_files(self) -> list[FailedFile]:
        """Files whose last indexing failed wholly or partly, by root and path."""
        ...

    def document_warnings(self) -> list[tuple[str, str, tuple[Diagnostic, ...]]]:
        """``(root path, relpath, warnings)`` for each document that carries warnings."""
        ...

    def counts(self) -> dict[str, Any]:
        """Counts: ``roots``, ``files``, ``documents``, ``units``, ``links``,
        ``links_resolved``, ``links_unresolved``, ``fts_rows``, ``failed_files`` (ints)
        and ``formats`` (``format -> {"documents": int, "units": int}``)."""
        ...

    def integrity_check(self) -> list[str]:
        """Problems of the index, one sentence each (empty when healthy)."""
        ...

    def repair(self) -> list[str]:
        """Mend what :meth:`integrity_check` finds in the keyword index (rows without a
        unit; the index rebuilt from the units when it still disagrees), in one
        transaction; what was done, one sentence each (empty: nothing to mend)."""
        ...
