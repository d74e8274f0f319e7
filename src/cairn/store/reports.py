"""The narrow store protocol of dream reports (``store.reports``): the last reports of
``cairn dream``, so the next run can say what is new, fixed or persists."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cairn.model import ReportRecord


class ReportIndex(Protocol):
    """Stored dream reports, newest first."""

    def save(self, record: ReportRecord, *, keep: int) -> None:
        """Store a report and keep only the ``keep`` newest (at least one)."""
        ...

    def latest(self) -> ReportRecord | None:
        """The newest report, or ``None`` before the first."""
        ...

    def recent(self, limit: int = 10) -> list[ReportRecord]:
        """The newest ``limit`` reports, newest first."""
        ...

    def get(self, report_id: str) -> ReportRecord | None:
        """One report by id."""
        ...
