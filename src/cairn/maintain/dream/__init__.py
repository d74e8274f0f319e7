"""The dream cycle: find what has gone stale, broken, orphaned or thin — and mend it
safely.

- :mod:`.base`: :class:`Finding`, :class:`Fix`, the :class:`Check` protocol, the
  registry :data:`CHECKS` / :func:`register_check`, :class:`DreamContext`,
  :class:`DreamSettings` (``[dream]``);
- one module per check: :mod:`.stale`, :mod:`.broken`, :mod:`.orphans`, :mod:`.thin`,
  :mod:`.duplicates`, :mod:`.entities`, :mod:`.contradictions`, :mod:`.integrity`,
  :mod:`.tags`;
- :mod:`.run`: :func:`run_dream` (checks → report, compared with and stored in
  ``store.reports``); :mod:`.report`: :class:`DreamReport`, Markdown;
- :mod:`.fixes`: planned edits (minimal, byte-exact elsewhere) written through
  :mod:`cairn.writeback` with ``--apply``.

A new check (the agent-memory ``maintain`` pass) is a module with an object that has
``name``, ``summary`` and ``run(ctx) -> list[Finding]``, registered with
:func:`register_check` when imported.
"""

from cairn.maintain.dream.base import (
    CHECKS,
    Check,
    DreamContext,
    DreamSettings,
    Finding,
    Fix,
    register_check,
)
from cairn.maintain.dream.report import DreamReport, render_markdown
from cairn.maintain.dream.run import load_checks, run_dream, select_checks

__all__ = [
    "CHECKS",
    "Check",
    "DreamContext",
    "DreamReport",
    "DreamSettings",
    "Finding",
    "Fix",
    "load_checks",
    "register_check",
    "render_markdown",
    "run_dream",
    "select_checks",
]
