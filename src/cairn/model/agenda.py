"""The agenda's values: what ``cairn agenda`` shows, day by day (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

AgendaKind = str
"""``deadline``, ``scheduled``, ``timestamp`` (a plain active timestamp), ``warning``
(a deadline coming within its warning delay, shown today), ``overdue`` (an open
deadline gone by, shown today) or ``scheduled-past`` (an open item scheduled earlier,
still not done, shown today)."""


@dataclass(frozen=True, slots=True)
class AgendaItem:
    """One line of the agenda.

    Attributes:
        day: the ISO day it is shown on; ``kind``: see :data:`AgendaKind`.
        time: ``HH:MM`` of a timestamp with a time, else ``None``.
        days: for ``warning`` / ``overdue`` / ``scheduled-past``, the days until
            (positive) or since (negative) the due day; else 0.
        due: the ISO day of the occurrence (a repeat's own day).
        title / todo / priority / tags: the heading's; ``outline_path`` above it.
        path / abs_path / line: where the heading is (1-based line).
        timestamp: the timestamp as written; ``repeater`` its repeater, if any.
        unit_id / document_id: ids, for ``cairn show``.
    """

    day: str
    kind: str
    time: str | None
    days: int
    due: str
    title: str
    todo: str | None
    priority: str | None
    tags: tuple[str, ...]
    outline_path: tuple[str, ...]
    path: str
    abs_path: str
    line: int
    timestamp: str
    repeater: str | None
    unit_id: str
    document_id: str


@dataclass(frozen=True, slots=True)
class AgendaDay:
    """One day of the agenda: its ISO date, weekday name, whether it is today, and
    its items (timed ones first by time, then overdue, warnings and the rest)."""

    date: str
    weekday: str
    today: bool
    items: tuple[AgendaItem, ...]


@dataclass(frozen=True, slots=True)
class Agenda:
    """An agenda of ``days`` days from ``start`` (ISO), counted from ``today``."""

    start: str
    days: int
    today: str
    agenda: tuple[AgendaDay, ...]

    @property
    def items(self) -> tuple[AgendaItem, ...]:
        """Every item, day by day."""
        return tuple(i for d in self.agenda for i in d.items)
