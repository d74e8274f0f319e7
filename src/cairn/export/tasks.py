"""Org tasks in an Obsidian vault, and what a round trip must keep of them.

An Org heading ``* DONE [#A] Ship it :work:`` with the planning line
``CLOSED: [2024-03-02 Sat 10:00] SCHEDULED: <2024-03-01 Fri>`` is written as::

    # DONE [#A] Ship it #work

    closed:: 2024-03-02T10:00
    scheduled:: 2024-03-01

The keyword and the priority stay in the heading text, as written in Org (searchable,
and what Org users read); the planning becomes Dataview inline fields, the form the
export already gives heading properties (``id:: …``). A planning timestamp is written
as an ISO date or date-time when that says all of it (no repeater, warning or range;
active for ``scheduled``/``deadline``, inactive for ``closed``, as Org writes them),
else as the Org timestamp itself (``deadline:: <2024-03-05 Tue +1w -2d>``), so nothing
is lost. :func:`org_tasks` and :func:`markdown_tasks` read the same facts back from
either side for :meth:`cairn.export.service.ExportService.compare`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from cairn.model import StoredUnit, Timestamp

PLANNING = ("scheduled", "deadline", "closed")
_FIELD = re.compile(r"^(scheduled|deadline|closed)::[ \t]*(.+?)[ \t]*$", re.M)
_PRIORITY = re.compile(r"^\[#([A-Za-z0-9])\][ \t]+")
_TAGS = re.compile(r"(?:[ \t]+#[\w@%:/-]+)+[ \t]*$")
"""The ``#tag`` words the export appends to a heading (Org tag characters; a title's
own ``#+HTML`` is not one)."""


def heading_text(todo: str | None, priority: str | None, title: str) -> str:
    """The heading text of an Org task: ``KEYWORD [#P] title`` (parts present only)."""
    return " ".join(p for p in (todo, f"[#{priority}]" if priority else None, title) if p)


def _planning_value(ts: Timestamp) -> str:
    canonical = ts.active if ts.role != "closed" else not ts.active
    plain = not (ts.end or ts.repeater or ts.warning or ts.diary) and canonical
    return ts.start if plain else ts.raw


def planning_lines(timestamps: Iterable[Timestamp]) -> str:
    """The planning timestamps of a unit as inline-field lines (``""``: none)."""
    return "".join(
        f"{ts.role}:: {_planning_value(ts)}\n" for ts in timestamps if ts.role in PLANNING
    )


Task = tuple[str, ...]
"""``(document title, heading title, keyword, priority, scheduled, deadline, closed)``;
an absent part is ``""``; a date as the export writes it."""


def org_tasks(title: str, units: Sequence[StoredUnit]) -> set[Task]:
    """The tasks of an Org document: every heading with a keyword, a priority or a
    planning timestamp."""
    out: set[Task] = set()
    for u in units:
        dates = {ts.role: _planning_value(ts) for ts in u.timestamps if ts.role in PLANNING}
        if u.level == 0 or not (u.todo or u.priority or dates):
            continue
        out.add((title, u.title, u.todo or "", u.priority or "",
                 *(dates.get(r, "") for r in PLANNING)))
    return out


def split_heading(text: str, keywords: Iterable[str]) -> tuple[str, str, str]:
    """``(keyword, priority, title)`` of an exported heading's text, its trailing
    ``#tags`` left out; ``keywords``: the task keywords the source uses."""
    todo = ""
    first, _, rest = text.partition(" ")
    # ``DONE`` alone is a task with no title, as Org reads ``* DONE``
    if first and first in set(keywords) and (rest or text == first):
        todo, text = first, rest
    priority = ""
    m = _PRIORITY.match(text)
    if m:
        priority, text = m.group(1), text[m.end() :]
    if text.startswith("COMMENT "):  # Org's commented heading, as the export writes it
        text = text[len("COMMENT ") :]
    return todo, priority, _TAGS.sub("", text).strip()


def markdown_tasks(
    title: str, units: Sequence[StoredUnit], keywords: Iterable[str]
) -> set[Task]:
    """The tasks of an exported Markdown note, read back from its headings and their
    inline planning fields (the inverse of :func:`heading_text` and
    :func:`planning_lines`)."""
    keys = set(keywords)
    out: set[Task] = set()
    for u in units:
        if u.level == 0:
            continue
        todo, priority, head = split_heading(u.title, keys)
        dates: Mapping[str, str] = {m.group(1): m.group(2) for m in _FIELD.finditer(u.body)}
        if todo or priority or dates:
            out.add((title, head, todo, priority, *(dates.get(r, "") for r in PLANNING)))
    return out


_INLINE_FIELD = re.compile(r"^[A-Za-z][\w-]*::(?:[ \t].*)?$\n?", re.M)


def plain_unit(u: StoredUnit, keywords: frozenset[str]) -> tuple[str, str, str]:
    """``(heading title, outline path, body)`` of a unit as the round trip compares
    them: headings without task keyword, priority or trailing ``#tags`` (the
    preamble's title is ``""``), the outline path joined with `` / ``, the body
    without its ``key:: value`` lines."""
    def plain(text: str) -> str:
        # ``* COMMENT TODO x`` (no keyword: Org's order is keyword, priority, COMMENT) is
        # written so; its title ``TODO x`` is read on both sides without the COMMENT
        return split_heading(text.removeprefix("COMMENT "), keywords)[2]

    head = plain(u.title) if u.level else ""
    path = " / ".join(plain(p) for p in u.outline_path)
    return head, path, _INLINE_FIELD.sub("", u.body)
