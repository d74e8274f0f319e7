"""Conversations (chat exports) written out as notes: the live branch only.

A branch-aware import keeps the messages off the conversation's live branch (ChatGPT
regenerations, edited prompts) as units marked ``extra["alternate"]``; they were not
said in the conversation a reader follows, so an export leaves them out and reports
how many (:func:`live_units`). A message's code blocks are also units of their own
(``code``), whose text the message already holds: a note written from a conversation
shows each message once (:func:`conversation_markdown`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.export.results import Skipped
from cairn.model import CODE, StoredUnit


def is_alternate(u: StoredUnit) -> bool:
    """Whether a unit is a message (or its code) off the live branch."""
    extra: Any = u.extra or {}
    return bool(extra.get("alternate")) if isinstance(extra, dict) else False


def live_units(units: Sequence[StoredUnit]) -> tuple[list[StoredUnit], int]:
    """``(units on the live branch, alternate messages left out)``."""
    kept = [u for u in units if not is_alternate(u)]
    dropped = sum(1 for u in units if is_alternate(u) and u.kind != CODE)
    return kept, dropped


def conversation_markdown(units: Sequence[StoredUnit]) -> tuple[str, int]:
    """A conversation's live branch as Markdown: its preamble text, then one ``##``
    section per message (its title: role and time), code blocks inside their message.

    Returns:
        ``(markdown body, alternate messages left out)``.
    """
    kept, dropped = live_units(units)
    parts: list[str] = []
    for u in kept:
        if u.kind == CODE:
            continue
        if u.level > 0:
            parts.append(f"## {u.title}\n\n" if u.title else "")
        if u.body.strip():
            parts.append(u.body.strip("\n") + "\n\n")
    return "".join(parts).rstrip() + "\n", dropped


def skipped_alternates(path: str, key: str | None, n: int) -> Skipped:
    """The report entry of a conversation whose ``n`` alternates were left out."""
    where = f"{path}#{key}" if key else path
    return Skipped(where, f"{n} alternate messages (regenerations, edits) off the live "
                   "branch: not exported")
