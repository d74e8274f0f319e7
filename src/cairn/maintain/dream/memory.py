"""``memory``: the agent-memory maintenance cycle of every root that is a memory bundle
(``OKF-MEMORY.md``; :mod:`cairn.memory.maintain`), as dream findings.

The check runs one cycle as a *dry run* (nothing is written, the access log is not
consumed) and reports what it found or would do:

- ``seal-mismatch`` — a memory whose seal does not match its text (never fixed);
- ``unreadable`` — a bundle file that cannot be read;
- ``unsourced-memory`` / ``missing-source`` — the symmetry rule broken either way;
- ``pending-consolidation`` — memories still in ``memories/active/`` (one per bundle);
- ``depends-cycle`` — a cycle of ``depends_on`` relations;
- ``would-supersede`` — truth maintenance would supersede a concept (what it
  ``depends_on`` fell);
- ``would-archive`` — decay would bring a concept to ``concepts/archive/``, with
  ``dangling`` relations to it in the evidence;
- ``maintenance-due`` — one per bundle that a cycle would change: the counts, and the
  fix ``memory_maintain`` (``cairn dream --apply`` runs
  :meth:`cairn.memory.service.MemoryService.maintain` on the bundle; dry runs show its diffs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cairn.maintain.dream.base import DreamContext, Finding, Fix, finding_key, register_check
from cairn.model import SourceRoot


def memory_bundles(roots: list[SourceRoot]) -> list[Path]:
    """The roots that are memory bundles (``memories/`` and ``concepts/`` folders and an
    ``index.md``), in order."""
    from cairn.memory.layout import is_memory_bundle

    return [Path(r.path) for r in roots if is_memory_bundle(Path(r.path))]


class MemoryCheck:
    """See the module docstring."""

    name = "memory"
    summary = "agent-memory bundles: seals, symmetry, truth maintenance, decay (dry run)"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """The findings of one dry-run maintenance cycle per memory bundle root."""
        out: list[Finding] = []
        for folder in memory_bundles(ctx.roots):
            out += self._bundle(ctx, folder)
        return out

    def _bundle(self, ctx: DreamContext, folder: Path) -> list[Finding]:
        from cairn.memory.bundle import MemoryBundle
        from cairn.memory.maintain import maintain
        from cairn.writeback import Backups

        bundle = MemoryBundle(folder, Backups(folder / ".cairn-unused"), dry_run=True)
        recalls, _ = ctx.store.access_log.pending(str(bundle.folder))
        rep = maintain(bundle, recalls)
        name = folder.name
        out: list[Finding] = []

        def add(kind: str, rel: str, message: str, value: str = "",
                evidence: dict[str, Any] | None = None, fix: Fix | None = None,
                subject: str = "") -> None:
            shown = f"{name}/{rel}" if rel else name
            out.append(Finding(
                "memory", kind, finding_key("memory", kind, shown, subject),
                str(folder / rel) if rel else str(folder), shown, None, message, value,
                evidence or {}, fix,
            ))

        for p in rep.integrity:
            add("seal-mismatch", p.path, f"{p.path}: {p.reason} (verify; never fixed)",
                p.expected or "", {"expected": p.expected, "actual": p.actual})
        for problem in rep.problems:
            rel, _, why = problem.partition(": ")
            add("unreadable", rel, problem, why)
        for rel in rep.unsourced:
            add("unsourced-memory", rel,
                f"{rel} is consolidated but the source of no active concept")
        for m in rep.missing_sources:
            add("missing-source", m.concept,
                f"{m.concept} names a source memory that is not in the bundle",
                m.seal, {"concept": m.concept, "seal": m.seal}, subject=m.seal)
        if rep.pending:
            add("pending-consolidation", "memories/active",
                f"{rep.pending} memories wait for consolidation (cairn memory consolidate)",
                str(rep.pending), {"pending": rep.pending})
        for cyc in rep.cycles:
            add("depends-cycle", cyc[0], "depends_on cycle: " + " → ".join(cyc),
                ", ".join(cyc), {"concepts": cyc}, subject=",".join(cyc))
        for rel in rep.superseded:
            add("would-supersede", rel,
                f"{rel} depends on a superseded or zero-confidence concept: "
                "maintenance supersedes it")
        for moved in rep.archived:
            rel = "concepts/active/" + moved.rsplit("/", 1)[1]
            dangling = [d.source for d in rep.dangling if d.target == rel]
            add("would-archive", rel,
                f"{rel} decays to the archive threshold: maintenance archives it"
                + (f" ({len(dangling)} concepts link to it)" if dangling else ""),
                evidence={"dangling": dangling})
        if rep.changed:
            counts = {
                "recalled": len(rep.recalled), "decayed": len(rep.decayed),
                "archived": len(rep.archived), "superseded": len(rep.superseded),
                "files": len(rep.changed),
            }
            add("maintenance-due", "",
                f"a maintenance cycle changes {len(rep.changed)} files of the memory bundle "
                f"{name} ({counts['recalled']} recalled, {counts['decayed']} decayed, "
                f"{counts['archived']} archived, {counts['superseded']} superseded)",
                str(len(rep.changed)), counts,
                Fix("memory_maintain", str(folder),
                    f"run one memory maintenance cycle on {name}", {"bundle": str(folder)}))
        return out


CHECK = register_check(MemoryCheck())
