"""What the index keeps of a dream report (see :mod:`cairn.maintain.dream`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ReportRecord:
    """One stored dream report.

    Attributes:
        id: unique, sortable by time.
        created: ISO 8601 UTC.
        fingerprint: what the report was made from (index state, today, settings,
            checks): the same fingerprint means the same findings.
        checks: the checks that ran.
        data: the report as JSON-ready data (the ``cairn dream --json`` document).
    """

    id: str
    created: str
    fingerprint: str
    checks: tuple[str, ...]
    data: Mapping[str, Any] = field(default_factory=dict)
