"""A dream report: the findings of one run, what is new, fixed or persists since the
last stored report, as JSON-ready data and as Markdown."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.maintain.dream.base import Finding, Fix


@dataclass(frozen=True, slots=True)
class DreamReport:
    """One run of the dream cycle.

    Attributes:
        id: unique, sortable by time; ``created``: ISO 8601 UTC; ``today``: the date
            the checks took as today.
        checks: the checks that ran, in order.
        findings: every finding, by check, then path and line.
        status: ``finding key -> "new" | "persists"`` against the previous report.
        fixed: findings of the previous report (of these checks) that are gone.
        previous: the id of the report compared with, ``None`` for the first.
        unchanged: the index had not changed since the previous report of the same
            checks, settings and day: its findings were reused, nothing re-checked.
        errors: ``(check, reason)`` of checks that failed (the others still ran).
        seconds: wall time of the run.
        fingerprint: see :class:`cairn.model.ReportRecord`.
    """

    id: str
    created: str
    today: str
    checks: tuple[str, ...]
    findings: tuple[Finding, ...]
    status: Mapping[str, str] = field(default_factory=dict)
    fixed: tuple[Mapping[str, Any], ...] = ()
    previous: str | None = None
    unchanged: bool = False
    errors: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    fingerprint: str = ""

    @property
    def counts(self) -> dict[str, int]:
        """Findings per check (every check that ran, zero included)."""
        c = Counter(f.check for f in self.findings)
        return {name: c.get(name, 0) for name in self.checks}

    def as_data(self) -> dict[str, Any]:
        """The ``cairn dream --json`` document (docs/guides/dream.md gives its shape)."""
        new = sum(1 for v in self.status.values() if v == "new")
        return {
            "id": self.id,
            "created": self.created,
            "today": self.today,
            "checks": list(self.checks),
            "counts": self.counts,
            "summary": {"findings": len(self.findings), "new": new,
                        "persists": len(self.findings) - new, "fixed": len(self.fixed)},
            "previous": self.previous,
            "unchanged": self.unchanged,
            "seconds": self.seconds,
            "errors": [{"check": c, "error": e} for c, e in self.errors],
            "findings": [
                {**finding_data(f), "status": self.status.get(f.key, "new")}
                for f in self.findings
            ],
            "fixed": [dict(x) for x in self.fixed],
        }


def finding_data(f: Finding) -> dict[str, Any]:
    """A finding as JSON-ready data."""
    d = {k.name: getattr(f, k.name) for k in dataclasses.fields(f)}
    d["evidence"] = dict(f.evidence)
    d["fix"] = None if f.fix is None else {
        "kind": f.fix.kind, "path": f.fix.path, "description": f.fix.description,
        "params": dict(f.fix.params), "auto": f.fix.auto,
    }
    return d


def finding_from_data(d: Mapping[str, Any]) -> Finding:
    """The inverse of :func:`finding_data` (for a stored report)."""
    fx = d.get("fix")
    fix = None if not isinstance(fx, Mapping) else Fix(
        str(fx["kind"]), str(fx["path"]), str(fx.get("description", "")),
        dict(fx.get("params") or {}),
        bool(fx.get("auto", False)),  # a report stored without it: only proposed
    )
    return Finding(
        str(d["check"]), str(d["kind"]), str(d["key"]), str(d["path"]), str(d["relpath"]),
        d.get("line"), str(d.get("message", "")), str(d.get("value", "")),
        dict(d.get("evidence") or {}), fix,
    )


def compare(
    findings: Sequence[Finding], checks: Sequence[str], previous: Mapping[str, Any] | None
) -> tuple[dict[str, str], tuple[dict[str, Any], ...]]:
    """``(status by key, fixed)`` of ``findings`` against a previous report's data
    (only findings of checks both runs made are compared)."""
    if previous is None:
        return {f.key: "new" for f in findings}, ()
    ran = set(checks) & set(previous.get("checks", ()))
    before = {
        x["key"]: x for x in previous.get("findings", ()) if x.get("check") in ran
    }
    status = {f.key: "persists" if f.key in before else "new" for f in findings}
    now = {f.key for f in findings}
    fixed = tuple(
        {k: x.get(k) for k in ("key", "check", "kind", "relpath", "line", "message")}
        for key, x in before.items()
        if key not in now
    )
    return status, fixed


def render_markdown(report: DreamReport, *, limit: int = 50) -> str:
    """The report for people: a summary table, then each check's findings (at most
    ``limit`` per check; ``--json`` has them all), fixes proposed and what was fixed."""
    data = report.as_data()
    s = data["summary"]
    lines = [
        f"# cairn dream — {report.today}",
        "",
        f"{s['findings']} findings: {s['new']} new, {s['persists']} persist, "
        f"{s['fixed']} fixed since the last report"
        + (" (index unchanged: last report reused)" if report.unchanged else "")
        + ".",
        "",
        "| check | findings |",
        "| --- | ---: |",
        *(f"| {name} | {n} |" for name, n in report.counts.items()),
        "",
    ]
    for check, error in report.errors:
        lines += [f"> **{check} failed:** {error}", ""]
    by_check: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_check.setdefault(f.check, []).append(f)
    for name in report.checks:
        items = by_check.get(name, [])
        if not items:
            continue
        lines += [f"## {name} ({len(items)})", ""]
        for f in items[:limit]:
            where = f"{f.relpath}:{f.line}" if f.line else f.relpath
            mark = " **new**" if report.status.get(f.key) == "new" and report.previous else ""
            lines.append(f"- `{where}`{mark} — {f.message}")
            cands = f.evidence.get("candidates") if isinstance(f.evidence, Mapping) else None
            if cands:
                lines.append("  candidates: " + ", ".join(
                    f"`{c['path']}` ({c['similarity']:.2f} by {c['by']})" for c in cands))
            if f.fix is not None:
                what = "fix" if f.fix.auto else "proposed fix (`--apply --proposed`)"
                lines.append(f"  {what}: {f.fix.description}")
        if len(items) > limit:
            lines.append(f"- … and {len(items) - limit} more (`cairn dream --json` lists all)")
        lines.append("")
    if report.fixed:
        lines += [f"## fixed since the last report ({len(report.fixed)})", ""]
        lines += [f"- `{x['relpath']}` — {x['message']}" for x in report.fixed[:limit]]
        lines.append("")
    return "\n".join(lines)
