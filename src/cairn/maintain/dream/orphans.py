"""``orphans``: notes with no resolved link in or out to another document, per root
(OKF's reserved ``index.md``/``log.md`` and chat conversations are left out)."""

from __future__ import annotations

import posixpath

from cairn.maintain.dream.base import DreamContext, Finding, finding_key, register_check


class OrphansCheck:
    """See the module docstring."""

    name = "orphans"
    summary = "notes with no links in or out, per root"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per orphan note, with its root in the evidence."""
        linked: set[str] = set()
        for x in ctx.links:
            if x.resolved_document_id and x.resolved_document_id != x.document_id:
                linked.add(x.document_id)
                linked.add(x.resolved_document_id)
        out: list[Finding] = []
        for doc in ctx.notes:
            if doc.id in linked:
                continue
            if doc.format == "okf" and posixpath.basename(doc.path) in ("index.md", "log.md"):
                continue
            rel = ctx.display(doc)
            root = ctx.root_folder(doc)
            out.append(
                Finding(
                    "orphans", "orphan", finding_key("orphans", "orphan", rel, ""),
                    ctx.abs_path(doc), rel, None,
                    f"{doc.title!r} has no links in or out (root {root.name})",
                    doc.title, {"root": str(root)},
                )
            )
        return out


CHECK = register_check(OrphansCheck())
