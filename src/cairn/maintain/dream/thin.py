"""``thin``: headings or notes whose own body is tiny (fewer than ``[dream] thin_chars``
characters) but that are linked to or tagged — the sections worth enriching. A heading
with sub-headings is structure, not thin."""

from __future__ import annotations

from collections import Counter

from cairn.maintain.dream.base import DreamContext, Finding, finding_key, register_check


class ThinCheck:
    """See the module docstring."""

    name = "thin"
    summary = "tiny headings or notes that are linked to or tagged"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per thin unit (the evidence holds its length, links and tags)."""
        to_unit: Counter[str] = Counter()
        for x in ctx.links:
            if x.resolved_unit_id and x.resolved_document_id != x.document_id:
                to_unit[x.resolved_unit_id] += 1
        limit = ctx.settings.thin_chars
        out: list[Finding] = []
        for doc in ctx.notes:
            units = ctx.units(doc)
            parents = {u.parent_id for u in units if u.parent_id}
            for unit in units:
                if unit.kind not in ("heading", "concept", "preamble") or unit.id in parents:
                    continue
                size = len(unit.body.strip())
                if size >= limit:
                    continue
                links = to_unit[unit.id]
                if unit.ordinal == 0 and len(units) == 1:
                    links += ctx.inbound.get(doc.id, 0)
                if not links and not unit.tags:
                    continue
                if unit.kind == "preamble" and not links:
                    continue
                rel = ctx.display(doc)
                why = ", ".join(
                    p for p in (f"{links} link{'' if links == 1 else 's'} to it" if links else "",
                                f"tags {' '.join(unit.tags)}" if unit.tags else "") if p
                )
                out.append(
                    Finding(
                        "thin", "thin", finding_key("thin", "thin", rel, unit.title),
                        ctx.abs_path(doc), rel, unit.line_start,
                        f"{unit.title or doc.title!r} has {size} characters of text ({why})",
                        unit.title, {"chars": size, "linked_from": links,
                                     "tags": list(unit.tags)},
                    )
                )
        return out


CHECK = register_check(ThinCheck())
