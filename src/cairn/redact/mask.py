"""Masking: a finding becomes a stable placeholder, ``[SECRET:github-token#1]`` or
``[PII:email#2]``, numbered per kind in the order values first appear in one
:class:`Masker` (one document: the same value is the same placeholder everywhere in it).

:func:`redact_document` applies an ``on_ingest`` mode to a parsed
:class:`~cairn.model.Document`: ``mask`` replaces every finding in the titles, outline
paths, bodies, property values, tags, links, string fields of ``extra``, and the
document's title, aliases, metadata and parse warnings; ``drop-unit`` leaves out every
unit holding a finding (its children move to the nearest kept ancestor) and masks the
rest; ``off`` returns it unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from cairn.model import Document, Link, Unit
from cairn.redact.detectors import Finding, find

Mode = Literal["mask", "drop-unit", "off"]
MODES: tuple[Mode, ...] = ("mask", "drop-unit", "off")


class Masker:
    """Replaces findings with placeholders numbered per kind; one per document.

    ``counts`` holds how many distinct values of each kind were masked.
    """

    def __init__(self) -> None:
        self._numbers: dict[tuple[str, str], int] = {}
        self.counts: dict[str, int] = {}
        self.findings = 0

    def placeholder(self, f: Finding) -> str:
        """``[SECRET:kind#n]`` / ``[PII:kind#n]``: the same value gets the same ``n``."""
        key = (f.kind, f.value)
        n = self._numbers.get(key)
        if n is None:
            n = self.counts.get(f.kind, 0) + 1
            self.counts[f.kind] = n
            self._numbers[key] = n
        return f"[{'SECRET' if f.category == 'secret' else 'PII'}:{f.kind}#{n}]"

    def mask(self, text: str) -> str:
        """``text`` with every finding replaced (unchanged when there is none)."""
        return self.mask_found(text, find(text))

    def mask_found(self, text: str, found: list[Finding]) -> str:
        """``text`` with the findings ``found`` in it (``find(text)``) replaced."""
        if not found:
            return text
        self.findings += len(found)
        parts: list[str] = []
        pos = 0
        for f in found:
            parts.append(text[pos : f.start])
            parts.append(self.placeholder(f))
            pos = f.end
        parts.append(text[pos:])
        return "".join(parts)

    def mask_value(self, value: Any) -> Any:
        """Strings masked inside nested mappings, lists and tuples; other values kept."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, Mapping):
            return {k: self.mask_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.mask_value(v) for v in value)
        return value


def _mask_link(m: Masker, link: Link) -> Link:
    if not find(link.target) and not find(link.raw) and not find(link.alias or ""):
        return link
    return dataclasses.replace(
        link,
        target=m.mask(link.target),
        raw=m.mask(link.raw),
        alias=m.mask(link.alias) if link.alias is not None else None,
    )


def _without_pieces(value: Any, secrets: list[str]) -> Any:
    """``value`` without the list items that are a piece of a found value: words a
    parser drew from the text before it was masked (a message's ``keywords``)."""
    if isinstance(value, Mapping):
        return {k: _without_pieces(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(
            _without_pieces(v, secrets) for v in value
            if not (isinstance(v, str) and v.strip() and any(v.lower() in s for s in secrets))
        )
    return value


def mask_unit(m: Masker, u: Unit) -> Unit:
    """The unit with every finding of its text fields masked, and the words drawn from
    them (list items of ``extra`` that are pieces of a found value) left out."""
    # the title and body are searched once: their findings are masked below
    in_title, in_body = find(u.title), find(u.body)
    secrets = [f.value.lower() for f in (*in_title, *in_body)]
    extra = m.mask_value(dict(u.extra))
    return dataclasses.replace(
        u,
        title=m.mask_found(u.title, in_title),
        outline_path=tuple(m.mask(p) for p in u.outline_path),
        body=m.mask_found(u.body, in_body),
        tags=tuple(m.mask(t) for t in u.tags),
        properties={k: m.mask(v) for k, v in u.properties.items()},
        links=tuple(_mask_link(m, link) for link in u.links),
        extra=_without_pieces(extra, secrets) if secrets else extra,
    )


def _has_finding(u: Unit) -> bool:
    return bool(find(u.body) or find(u.title) or any(find(v) for v in u.properties.values()))


def _drop_units(units: tuple[Unit, ...]) -> tuple[Unit, ...]:
    """The units without findings, ordinals renumbered, parents re-pointed."""
    by_ordinal = {u.ordinal: u for u in units}
    kept = [u for u in units if not _has_finding(u)]
    new_ordinal = {u.ordinal: i for i, u in enumerate(kept)}

    def kept_parent(p: int | None) -> int | None:
        while p is not None and p not in new_ordinal:
            parent = by_ordinal.get(p)
            p = parent.parent if parent is not None else None
        return new_ordinal.get(p) if p is not None else None

    return tuple(
        dataclasses.replace(u, ordinal=new_ordinal[u.ordinal], parent=kept_parent(u.parent))
        for u in kept
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Redacted:
    """What :func:`redact_document` did: the document to store, the number of findings
    masked, the distinct values per kind and the units dropped."""

    document: Document
    findings: int = 0
    kinds: Mapping[str, int] = dataclasses.field(default_factory=dict)
    dropped_units: int = 0


def redact_document(doc: Document, mode: Mode) -> Redacted:
    """Apply an ``on_ingest`` mode to a parsed document (the file is never touched).

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown redaction mode {mode!r}; use one of {', '.join(MODES)}")
    if mode == "off":
        return Redacted(doc)
    units = doc.units
    dropped = 0
    if mode == "drop-unit":
        units = _drop_units(units)
        dropped = len(doc.units) - len(units)
    m = Masker()
    out = dataclasses.replace(
        doc,
        title=m.mask(doc.title),
        metadata=m.mask_value(dict(doc.metadata)),
        aliases=tuple(m.mask(a) for a in doc.aliases),
        units=tuple(mask_unit(m, u) for u in units),
        warnings=tuple(
            dataclasses.replace(w, message=m.mask(w.message)) if find(w.message) else w
            for w in doc.warnings
        ),
    )
    if not m.findings and not dropped:
        return Redacted(doc)
    return Redacted(out, m.findings, dict(m.counts), dropped)
