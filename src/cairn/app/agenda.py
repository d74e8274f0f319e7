"""The agenda part of :class:`cairn.app.Cairn` (:mod:`cairn.search.agenda`)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

from cairn.app.parts import Parts
from cairn.errors import QueryError

if TYPE_CHECKING:
    from cairn.model.agenda import Agenda


class AgendaMixin(Parts):
    """``Cairn.agenda``: deadlines, scheduled items and timestamps day by day."""

    def agenda(
        self,
        *,
        days: int = 7,
        start: _dt.date | str | None = None,
        today: _dt.date | str | None = None,
    ) -> Agenda:
        """An Org-agenda-style view of ``days`` days from ``start`` (default today)
        over every Org file (see :mod:`cairn.search.agenda` for the rules).

        Args:
            days: 1 to 366.
            start: the first day (a date or ``YYYY-MM-DD``).
            today: the day overdue items and warnings count from (default
                ``$CAIRN_TODAY``, else the local date).

        Raises:
            QueryError: ``days`` is out of range or a date is not ``YYYY-MM-DD``.
        """
        from cairn.search.agenda import build_agenda
        from cairn.search.dates import today as today_of

        try:
            now = today_of(today)
            first = today_of(start) if start is not None else now
        except ValueError as exc:
            raise QueryError(str(exc)) from exc
        return build_agenda(self.store, days=days, start=first, today=now)
