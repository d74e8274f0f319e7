"""Scanning a text for ``cairn redact scan``: each finding with its line and a masked
preview (the finding's line, every finding in it replaced by its placeholder, cut to
about 100 characters around it) — the value itself is never part of the report."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cairn.redact.detectors import find
from cairn.redact.mask import Masker

PREVIEW_CHARS = 100


@dataclass(frozen=True, slots=True)
class ScanFinding:
    """One finding of a scan: ``path`` (as given), 1-based ``line`` and ``column``,
    ``kind``, ``category`` (``secret``/``pii``), ``placeholder`` and the masked
    ``preview`` of its line."""

    path: str
    line: int
    column: int
    kind: str
    category: str
    placeholder: str
    preview: str


def preview(line: str, masker: Masker, at: int = 0) -> str:
    """``line`` with its findings masked, cut to :data:`PREVIEW_CHARS` around
    character ``at`` (of the masked line)."""
    masked = " ".join(masker.mask(line).split())
    if len(masked) <= PREVIEW_CHARS:
        return masked
    start = max(0, min(at - PREVIEW_CHARS // 3, len(masked) - PREVIEW_CHARS))
    cut = masked[start : start + PREVIEW_CHARS]
    return ("…" if start else "") + cut + ("…" if start + PREVIEW_CHARS < len(masked) else "")


def scan_text(text: str, path: str = "") -> list[ScanFinding]:
    """Every finding in ``text`` (a whole file: a private key block spans lines).

    Placeholders are numbered per text, as :class:`Masker` numbers them per document.
    """
    found = find(text)
    if not found:
        return []
    starts = [0]
    starts.extend(i + 1 for i, ch in enumerate(text) if ch == "\n")
    masker = Masker()
    out: list[ScanFinding] = []
    for f in found:
        li = bisect.bisect_right(starts, f.start) - 1
        line_start = starts[li]
        line_end = text.find("\n", f.start)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        ph = masker.placeholder(f)
        shown = preview(line, masker, f.start - line_start)
        out.append(
            ScanFinding(path, li + 1, f.start - line_start + 1, f.kind, f.category, ph, shown)
        )
    return out
