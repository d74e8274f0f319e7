"""One dream run: the checks over the index, compared with the last stored report, and
stored in turn (``store.reports``). On an unchanged index (same files, attachments,
day, settings and checks) the last report is reused: nothing is re-checked or stored."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import secrets
import time
from collections.abc import Sequence
from typing import Any

from cairn.errors import QueryError
from cairn.maintain.dream.base import CHECKS, DreamContext, DreamSettings, Finding
from cairn.maintain.dream.report import DreamReport, compare, finding_from_data
from cairn.model import ReportRecord
from cairn.store import Store


def load_checks() -> dict[str, Any]:
    """Import the built-in check modules (each registers itself) and return
    :data:`CHECKS`."""
    from cairn.maintain.dream import (  # noqa: F401  (registration on import)
        broken,
        contradictions,
        duplicates,
        entities,
        integrity,
        memory,
        orphans,
        stale,
        tags,
        thin,
    )

    return CHECKS


def select_checks(only: Sequence[str] | None) -> list[str]:
    """The check names to run, in registry order.

    Raises:
        QueryError: an unknown name (the message lists the known ones).
    """
    known = list(load_checks())
    if not only:
        return known
    wanted = [c.strip().lower() for o in only for c in o.split(",") if c.strip()]
    bad = [c for c in wanted if c not in CHECKS]
    if bad:
        raise QueryError(f"unknown check {', '.join(bad)}; known checks: {', '.join(known)}")
    return [c for c in known if c in wanted]


def fingerprint(store: Store, today: _dt.date, settings: DreamSettings,
                checks: Sequence[str]) -> str:
    """What a report depends on: every indexed file's content hash, the attachments,
    the day, the settings and the checks."""
    h = hashlib.sha256()
    h.update(json.dumps([today.isoformat(), dataclasses.asdict(settings), list(checks)],
                        sort_keys=True).encode())
    for root in store.roots():
        h.update(f"\0root {root.id} {root.path}".encode())
        for rel, st in sorted(store.file_states(root.id).items()):
            h.update(f"\0{rel}\0{st.hash}\0{st.status}".encode("utf-8", "surrogateescape"))
    for root_id, rel in sorted(store.attachments()):
        h.update(f"\0a {root_id} {rel}".encode("utf-8", "surrogateescape"))
    h.update(f"\0edges {store.edges.size()}".encode())
    return h.hexdigest()


def run_dream(
    store: Store,
    *,
    today: _dt.date | None = None,
    settings: DreamSettings | None = None,
    only: Sequence[str] | None = None,
    types: Any = None,
    save: bool = True,
) -> DreamReport:
    """Run the checks and make the report.

    Args:
        store: the index (its graph brought up to date by the caller).
        today: the date taken as today (default: today, UTC).
        settings: ``[dream]``.
        only: check names (``--only``; comma-separated values allowed).
        types: the roots' note types (:class:`cairn.formats.types.RootTypes`).
        save: keep the report in ``store.reports``.

    Raises:
        QueryError: an unknown check name.
    """
    started = time.perf_counter()
    today = today or _dt.datetime.now(_dt.UTC).date()
    settings = settings or DreamSettings()
    names = select_checks(only)
    fp = fingerprint(store, today, settings, names)
    last = store.reports.latest()
    now = _dt.datetime.now(_dt.UTC)
    rid = now.strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(3)
    if last is not None and last.fingerprint == fp:
        findings = tuple(finding_from_data(x) for x in last.data.get("findings", ()))
        return DreamReport(
            id=last.id, created=last.created, today=today.isoformat(), checks=tuple(names),
            findings=findings, status={f.key: "persists" for f in findings},
            previous=last.id, unchanged=True,
            seconds=round(time.perf_counter() - started, 4), fingerprint=fp,
        )
    ctx = DreamContext(store, today=today, settings=settings)
    ctx.types = types  # type: ignore[attr-defined]
    found: list[Finding] = []
    errors: list[tuple[str, str]] = []
    for name in names:
        try:
            found += CHECKS[name].run(ctx)
        except Exception as exc:  # one failing check must not hide the others
            errors.append((name, f"{type(exc).__name__}: {exc}"))
    order = {n: i for i, n in enumerate(names)}
    found.sort(key=lambda f: (order.get(f.check, 99), f.relpath, f.line or 0, f.key))
    unique = list({f.key: f for f in found}.values())
    # compare with the newest report that ran at least these checks (a narrower
    # `--only` run in between does not make everything else "new" again)
    base = next((r for r in store.reports.recent(settings.keep_reports)
                 if set(names) <= set(r.checks)), last)
    status, fixed = compare(unique, names, None if base is None else base.data)
    report = DreamReport(
        id=rid, created=now.isoformat(timespec="seconds"), today=today.isoformat(),
        checks=tuple(names), findings=tuple(unique), status=status, fixed=fixed,
        previous=None if base is None else base.id, errors=tuple(errors),
        seconds=round(time.perf_counter() - started, 4), fingerprint=fp,
    )
    if save:
        store.reports.save(
            ReportRecord(rid, report.created, fp, tuple(names), report.as_data()),
            keep=settings.keep_reports,
        )
    return report
