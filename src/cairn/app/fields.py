"""Fields of hits as table columns (Dataview's ``TABLE``): ``cairn search --fields``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.app.parts import Parts
from cairn.errors import QueryError
from cairn.model import Hit

FIELDS = (
    "title",
    "doc_title",
    "path",
    "abs_path",
    "line",
    "rank",
    "score",
    "kind",
    "format",
    "todo",
    "priority",
    "tags",
    "deadline",
    "scheduled",
    "closed",
)
"""Field names a column may take, besides ``prop:KEY``."""


def parse_fields(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"title,todo,prop:OWNER"`` as column names.

    Raises:
        QueryError: a name is neither one of :data:`FIELDS` nor ``prop:KEY``.
    """
    parts = text.split(",") if isinstance(text, str) else [p for s in text for p in s.split(",")]
    names = tuple(p.strip() for p in parts if p.strip())
    for n in names:
        if n.casefold() not in FIELDS and not (n.casefold().startswith("prop:") and len(n) > 5):
            raise QueryError(f"unknown field {n!r}; fields: {', '.join(FIELDS)}, prop:KEY")
    if not names:
        raise QueryError("--fields needs at least one field name")
    return names


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


class FieldsMixin(Parts):
    """``Cairn.hit_fields``: the columns of a table of hits."""

    def hit_fields(
        self, hits: Sequence[Hit], fields: str | Sequence[str]
    ) -> list[dict[str, str | None]]:
        """One row per hit, ``{field: text or None}`` in the order of ``fields``
        (:data:`FIELDS`, or ``prop:KEY``: the unit's property, else one it inherits,
        else its document's frontmatter/keyword value; a list joined with ``, ``).
        ``deadline``/``scheduled``/``closed`` are the planning timestamps as written.

        Raises:
            QueryError: an unknown field name.
        """
        names = parse_fields(fields)
        rows: list[dict[str, str | None]] = []
        for h in hits:
            unit = self.store.unit(h.unit_id) if any(":" in n for n in names) else None
            doc = self.store.document(h.document_id) if unit is not None else None
            row: dict[str, str | None] = {}
            for n in names:
                low = n.casefold()
                if low.startswith("prop:"):
                    key = n[5:].casefold()
                    value: Any = None
                    sources: list[Any] = []
                    if unit is not None:
                        sources += [unit.properties, unit.extra.get("inherited_properties") or {}]
                    if doc is not None:
                        sources.append(doc.metadata)
                    for src in sources:
                        hit = next((v for k, v in dict(src).items() if k.casefold() == key), None)
                        if hit is not None:
                            value = hit
                            break
                    row[n] = _text(value)
                elif low in ("deadline", "scheduled", "closed"):
                    row[n] = next((t.raw for t in h.planning if t.role == low), None)
                elif low == "line":
                    row[n] = str(h.line_start)
                elif low == "score":
                    row[n] = f"{h.score:.4f}"
                else:
                    row[n] = _text(getattr(h, low))
            rows.append(row)
        return rows
