"""``integrity``: OKF conformance errors, ``types.yaml`` violations and the parsers'
warnings about a note (broken front matter, …), each with the absolute path a user can
open and the line (see :func:`cairn.maintain.validate.validate_roots`)."""

from __future__ import annotations

from pathlib import Path

from cairn.formats.types import load_root_types
from cairn.maintain.dream.base import DreamContext, Finding, finding_key, register_check
from cairn.maintain.validate import validate_roots


class IntegrityCheck:
    """See the module docstring."""

    name = "integrity"
    summary = "OKF conformance, types.yaml violations, broken front matter"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per diagnostic."""
        registry = getattr(ctx, "types", None)
        if registry is None:
            registry = load_root_types([(r.id, Path(r.path)) for r in ctx.roots], None)
        out: list[Finding] = []
        by_name = {Path(r.path).name: Path(r.path) for r in ctx.roots}
        for d in validate_roots(ctx.store, ctx.roots, registry):
            head, _, rest = d.path.partition("/")
            folder = by_name.get(head)
            path = str(folder / rest) if folder is not None else d.path
            kind = "okf" if "OKF" in d.message or "okf" in d.message.lower() else "types"
            out.append(self._finding(kind, path, d.path, d.line, d.message, d.severity))
        roots = {r.path for r in ctx.roots}
        for root_path, relpath, warnings in ctx.store.document_warnings():
            if root_path not in roots:
                continue
            display = f"{Path(root_path).name}/{relpath}"
            for w in warnings:
                out.append(self._finding("note", f"{root_path.rstrip('/')}/{relpath}", display,
                                         w.line, w.message, w.severity))
        return out

    @staticmethod
    def _finding(
        kind: str, path: str, display: str, line: int | None, message: str, severity: str
    ) -> Finding:
        return Finding(
            "integrity", kind, finding_key("integrity", kind, display, message),
            path, display, line, message, severity, {"severity": severity},
        )


CHECK = register_check(IntegrityCheck())
