"""``stale``: Org headings past their ``DEADLINE``/``SCHEDULED`` still in a not-done
TODO state (a repeating task is never stale because its base date passed: Org moves
its date forward when it is done), OKF concepts past ``stale_after`` (OKF §5.5: stale
when now ≥ ``stale_after``) or marked ``deprecated`` yet still linked to, and old notes
that are still heavily linked to."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from cairn.maintain.dream.base import DreamContext, Finding, Fix, finding_key, register_check


def _date(text: str) -> _dt.date | None:
    try:
        return _dt.date.fromisoformat(text[:10])
    except (ValueError, TypeError):
        return None


def _modified(ctx: DreamContext, doc: Any) -> _dt.date | None:
    """A note's last modification: its declared ``modified`` date, else the file's
    mtime as indexed."""
    if doc.modified:
        got = _date(str(doc.modified))
        if got is not None:
            return got
    if doc.mtime:
        return _dt.datetime.fromtimestamp(doc.mtime, _dt.UTC).date()
    return None


class StaleCheck:
    """See the module docstring."""

    name = "stale"
    summary = "past deadlines and schedules, stale OKF concepts, old notes still linked"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """The stale findings of ``ctx`` (see the module docstring)."""
        out: list[Finding] = []
        for doc in ctx.notes:
            if doc.format == "org":
                out += self._org(ctx, doc)
            if doc.format == "okf":
                out += self._okf(ctx, doc)
        out += self._old_linked(ctx)
        return out

    def _org(self, ctx: DreamContext, doc: Any) -> list[Finding]:
        out: list[Finding] = []
        rel = ctx.display(doc)
        for unit in ctx.units(doc):
            if unit.todo_state != "open":
                continue
            for ts in unit.timestamps:
                if ts.role not in ("deadline", "scheduled") or ts.diary or ts.repeater:
                    continue
                when = _date(ts.start)
                if when is None or when >= ctx.today:
                    continue
                days = (ctx.today - when).days
                kind = f"past-{ts.role}"
                out.append(
                    Finding(
                        "stale",
                        kind,
                        finding_key("stale", kind, rel, f"{unit.title}|{ts.start}"),
                        ctx.abs_path(doc),
                        rel,
                        unit.line_start,
                        f"{unit.todo} {unit.title!r}: {ts.role.upper()} {ts.raw} passed "
                        f"{days} days ago",
                        ts.raw,
                        {"todo": unit.todo, "heading": unit.title, "days": days,
                         "date": ts.start, "role": ts.role},
                    )
                )
        return out

    def _okf(self, ctx: DreamContext, doc: Any) -> list[Finding]:
        units = ctx.units(doc)
        if not units:
            return []
        okf = units[0].extra.get("okf") if isinstance(units[0].extra, dict) else None
        if not isinstance(okf, dict):
            return []
        rel = ctx.display(doc)
        status = str(okf.get("status") or "stable")
        stale_after = okf.get("stale_after")
        out: list[Finding] = []
        if isinstance(stale_after, str):
            try:
                when = _dt.datetime.fromisoformat(stale_after)
            except ValueError:
                when = None
            today = _dt.datetime.combine(ctx.today, _dt.time(), _dt.UTC)
            if when is not None and when.tzinfo is not None and today >= when:
                wanted = ctx.settings.stale_status
                fix = (
                    Fix("mark_status", ctx.abs_path(doc),
                        f"set status: {wanted} in {rel}", {"status": wanted})
                    if status != wanted
                    else None
                )
                out.append(
                    Finding(
                        "stale", "okf-stale-after",
                        finding_key("stale", "okf-stale-after", rel, stale_after),
                        ctx.abs_path(doc), rel, ctx.front_line(doc, "stale_after"),
                        f"OKF concept {doc.title!r} is past stale_after {stale_after} "
                        f"(status {status})",
                        stale_after, {"status": status, "stale_after": stale_after}, fix,
                    )
                )
        if status == "deprecated" and ctx.inbound.get(doc.id, 0):
            n = ctx.inbound[doc.id]
            out.append(
                Finding(
                    "stale", "okf-deprecated-linked",
                    finding_key("stale", "okf-deprecated-linked", rel, status),
                    ctx.abs_path(doc), rel, ctx.front_line(doc, "status"),
                    f"OKF concept {doc.title!r} is deprecated but {n} documents still link to it",
                    status, {"linked_from": n},
                )
            )
        return out

    def _old_linked(self, ctx: DreamContext) -> list[Finding]:
        out: list[Finding] = []
        limit = ctx.settings.heavily_linked
        for doc in ctx.notes:
            n = ctx.inbound.get(doc.id, 0)
            if n < limit:
                continue
            when = _modified(ctx, doc)
            if when is None:
                continue
            age = (ctx.today - when).days
            if age < ctx.settings.old_days:
                continue
            rel = ctx.display(doc)
            out.append(
                Finding(
                    "stale", "old-linked",
                    finding_key("stale", "old-linked", rel, ""),
                    ctx.abs_path(doc), rel, None,
                    f"{doc.title!r} was last modified {age} days ago ({when}) and "
                    f"{n} documents link to it",
                    when.isoformat(), {"days": age, "linked_from": n},
                )
            )
        return out


CHECK = register_check(StaleCheck())
