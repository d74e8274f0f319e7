"""``contradictions``: pairs joined by ``contradicts`` edges (declared links typed
``contradicts``, OKF relations of that type, ``types.yaml`` relations)."""

from __future__ import annotations

from cairn.maintain.dream.base import DreamContext, Finding, finding_key, register_check

RELATIONS = ("contradicts", "contradicted_by", "conflicts_with")


class ContradictionsCheck:
    """See the module docstring."""

    name = "contradictions"
    summary = "notes joined by contradicts edges"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per contradicting pair (each unordered pair once)."""
        seen: set[tuple[str, str]] = set()
        out: list[Finding] = []
        for edge in ctx.store.edges.all_edges(relations=list(RELATIONS)):
            a = ctx.document(edge.source_document_id)
            b = ctx.document(edge.target_document_id or "")
            if a is None:
                continue
            pair = tuple(sorted((edge.source, edge.target)))
            if pair in seen:
                continue
            seen.add(pair)  # type: ignore[arg-type]
            rel = ctx.display(a)
            other = ctx.display(b) if b is not None else edge.target
            line = next((u.line_start for u in ctx.units(a) if u.id == edge.source), None)
            out.append(
                Finding(
                    "contradictions", "contradicts",
                    finding_key("contradictions", "contradicts", rel, other),
                    ctx.abs_path(a), rel, line,
                    f"{a.title!r} {edge.relation} {b.title if b else edge.target!r} ({other})",
                    other, {"relation": edge.relation, "other": other,
                            "other_path": ctx.abs_path(b) if b else None,
                            "origin": edge.origin},
                )
            )
        return out


CHECK = register_check(ContradictionsCheck())
