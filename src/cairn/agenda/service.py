"""``cairn.agenda``: deadlines, scheduled items and timestamps day by day over every Org
file (:class:`AgendaService`; the rules are :mod:`cairn.search.agenda`'s)."""

from __future__ import annotations

import datetime as _dt
import fnmatch
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.errors import QueryError
from cairn.model import Filter

if TYPE_CHECKING:
    from cairn.model.agenda import Agenda
    from cairn.store import Store


class AgendaService:
    """The agenda of one index.

    Args:
        store: the index.
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    def days(
        self,
        *,
        days: int = 7,
        start: _dt.date | str | None = None,
        today: _dt.date | str | None = None,
        tags: Sequence[str] = (),
        files: Sequence[str] = (),
    ) -> Agenda:
        """An Org-agenda-style view of ``days`` days from ``start`` (default today)
        over every Org file (see :mod:`cairn.search.agenda` for the rules).

        Args:
            days: 1 to 366.
            start: the first day (a date or ``YYYY-MM-DD``).
            today: the day overdue items and warnings count from (default
                ``$CAIRN_TODAY``, else the local date).
            tags: keep headings with any of these tags (own or inherited, as
                ``tag:`` matches them); empty: every heading.
            files: keep headings of files any of these name (:func:`file_matcher`);
                empty: every file.

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
        wanted = [t.strip() for t in tags if t.strip()]
        filters = [Filter("tag", wanted[0], any_of=tuple(wanted[1:]))] if wanted else []
        keep = file_matcher(files) if any(f.strip() for f in files) else None
        return build_agenda(self._store, days=days, start=first, today=now, filters=filters,
                            keep=keep)


def file_matcher(values: Sequence[str]) -> Callable[[str, str], bool]:
    """A test of ``(path from its root, absolute path)`` that is true when one of
    ``values`` names the file: a file or folder on disk (``~`` expanded; the file, or
    any file under the folder), else a glob with ``*``, ``?`` or ``[`` matched against
    the path from its root or the file name, else a part of the path from its root
    (case-insensitive, as ``path:``)."""
    disk: list[str] = []
    globs: list[str] = []
    parts: list[str] = []
    for raw in (v.strip() for v in values):
        if not raw:
            continue
        p = Path(raw).expanduser()
        if p.exists():
            disk.append(p.resolve().as_posix())
        elif any(c in raw for c in "*?["):
            globs.append(raw)
        else:
            parts.append(raw.casefold())

    def keep(path: str, abs_path: str) -> bool:
        real = Path(abs_path).resolve().as_posix() if disk else abs_path
        name = path.rsplit("/", 1)[-1]
        return (
            any(real == d or real.startswith(d.rstrip("/") + "/") for d in disk)
            or any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(name, g) for g in globs)
            or any(v in path.casefold() for v in parts)
        )

    return keep
