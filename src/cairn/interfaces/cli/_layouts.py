"""Other layouts of ``cairn search`` results: ``--format vimgrep`` (editors jump to
hits), ``--files`` (hits grouped per file) and ``--fields`` tables (text, CSV, JSON).
No Typer, no Rich (the fast path may reach here)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cairn.interfaces.cli._plain import emit_json, one_line, out, plural, quote_path

if TYPE_CHECKING:
    from cairn.model import Hit

FORMATS = ("text", "json", "csv", "vimgrep")
"""Values of ``--format``."""


def _flat(text: str) -> str:
    return one_line(text)


def print_vimgrep(hits: Sequence[Hit], positions: Sequence[tuple[int, int]]) -> None:
    """``path:line:col:text`` per hit, as ``rg --vimgrep`` prints: the line and column
    of its first matching word (``positions``, from ``Cairn.hit_positions``); the text
    is the title and the snippet on one line. A path holding a control character is
    quoted (:func:`._plain.quote_path`), so one hit is one line."""
    for h, (line, col) in zip(hits, positions, strict=True):
        title, snippet = _flat(h.title or h.doc_title), _flat(h.snippet)
        text = snippet if snippet.startswith(title) else f"{title} — {snippet}".strip(" —")
        out.line(f"{quote_path(h.abs_path)}:{line}:{col}:{text}")


def files_of(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Hits grouped per file, files in the order of their best hit:
    ``[{"path", "abs_path", "doc_title", "hits"}]``."""
    groups: dict[str, dict[str, Any]] = {}
    for h in hits:
        g = groups.setdefault(
            h.abs_path,
            {"path": h.path, "abs_path": h.abs_path, "doc_title": h.doc_title, "hits": []},
        )
        g["hits"].append(h)
    return list(groups.values())


def print_files(
    hits: Sequence[Hit], took_ms: float, as_json: bool, query: str, notes: Sequence[str]
) -> None:
    """``--files``: each file once (its best rank first), then its hits' lines and titles."""
    groups = files_of(hits)
    if as_json:
        emit_json({"query": query, "took_ms": took_ms, "notes": list(notes), "files": groups})
        return
    p = out.paint
    for g in groups:
        out.line(
            p(quote_path(g["abs_path"]), "blue"),
            p(f"  ({plural(len(g['hits']), 'hit')})", "dim"),
        )
        for h in g["hits"]:
            title = " ".join(x for x in (h.todo, h.title or h.doc_title) if x)
            out.line(f"  {h.line_start:>5}: ", p(_flat(title)))
    out.line(
        p(f"{plural(len(groups), 'file')}, {plural(len(hits), 'hit')} in {took_ms:.1f} ms", "dim")
    )


def print_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str], fmt: str) -> None:
    """``--fields``: rows (values typed as JSON has them, see
    :func:`cairn.fields.columns.hit_fields`) as an aligned text table or CSV (a header
    row; cells as :func:`field_text` gives them), or a JSON list (numbers stay numbers)."""
    if fmt == "json":
        emit_json(list(rows))
        return
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        for r in rows:
            w.writerow([field_text(r.get(n)) for n in names])
        out.line(buf.getvalue().rstrip("\n"))
        return
    whole = [n.casefold() in _WHOLE for n in names]
    cells = [
        [(quote_path(v) if keep else _cut(_flat(v))) for v, keep in
         zip((field_text(r.get(n)) for n in names), whole, strict=True)]
        for r in rows
    ]
    widths = [max([len(n), *(len(c[i]) for c in cells)]) for i, n in enumerate(names)]
    out.line(
        out.paint(
            "  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)).rstrip(), "bold"
        )
    )
    for c in cells:
        out.line("  ".join(x.ljust(w) for x, w in zip(c, widths, strict=True)).rstrip())


def field_text(value: Any) -> str:
    """A ``--fields`` value as a CSV or text cell: a list joined with ``, ``, a float in
    6 significant digits, a boolean ``true``/``false``, nothing as ``""``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(field_text(v) for v in value)
    return str(value)


_WHOLE = frozenset({"path", "abs_path", "root"})
"""Columns never cut: a shortened path names a file that does not exist."""
CELL_WIDTH = 60
"""The widest other cell of a text table; a longer value ends in ``…``."""


def _cut(text: str) -> str:
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"
