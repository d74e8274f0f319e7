"""The sections of a Markdown note while they are built, and the frozen units they become."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.formats import frontmatter as fm_mod
from cairn.model import (
    HEADING,
    Diagnostic,
    Link,
    Unit,
)

# --- analysis --------------------------------------------------------------------------


@dataclass(slots=True)
class Section:
    """A unit being built (mutable); see :class:`cairn.model.Unit` for the fields."""

    level: int
    title: str
    line_start: int
    line_end: int = 0
    parent: int | None = None
    outline_path: tuple[str, ...] = ()
    body: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    tag_set: set[str] = field(default_factory=set)  # ``tags`` as a set, for lookups
    links: list[Link] = field(default_factory=list)
    block_ids: list[str] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)  # {"id", "line_start", …}
    callouts: list[dict[str, Any]] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)
    code_languages: list[str] = field(default_factory=list)  # of its fenced blocks


@dataclass(slots=True)
class Analysis:
    """What :func:`analyse` found in one Markdown file (shared by Markdown and OKF).

    Attributes:
        front: the front matter result.
        sections: ``sections[0]`` is the preamble, then one per top-level heading.
        leading_h1: the text of a level-1 heading that opens the body (nothing but
            comments before it), if any.
        inline_tags: every inline tag of the note in order, without duplicates.
        warnings: diagnostics (front matter problems first).
        total_lines: number of lines of the file.
    """

    front: fm_mod.FrontMatter
    sections: list[Section]
    leading_h1: str | None
    inline_tags: list[str]
    warnings: list[Diagnostic]
    total_lines: int


def _normalise_text(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\ufeff" in text:
        text = text.replace("\ufeff", "")
    return text


def _opens_with(body: str, prefix: str) -> bool:
    """Whether ``body`` already opens with ``prefix`` (whitespace and list or heading
    marks aside; a ``prefix`` cut with ``…`` counts up to the cut): an OKF
    ``description`` that only repeats the note's first line is not put before it
    again, so the text (and every snippet of it) does not say it twice."""
    want = " ".join(prefix.split()).removesuffix("…").rstrip()
    have = " ".join(body.split()).lstrip("#*-> ")
    return bool(want) and have.startswith(want)


def build_units(
    analysis: Analysis,
    title: str,
    first_kind: str,
    inherited: Sequence[str],
    properties: Mapping[str, str],
    first_extra: Mapping[str, Any] | None = None,
    first_body_prefix: str = "",
) -> tuple[Unit, ...]:
    """Turn :attr:`Analysis.sections` into frozen units (ordinal 0 is ``first_kind``)."""
    units: list[Unit] = []
    inherited_t = tuple(inherited)
    for ordinal, sec in enumerate(analysis.sections):
        extra: dict[str, Any] = {}
        if sec.block_ids:
            extra["block_ids"] = list(dict.fromkeys(sec.block_ids))
        if sec.blocks:  # the first block of an id wins, as in Obsidian
            extra["blocks"] = list({b["id"]: b for b in reversed(sec.blocks)}.values())[::-1]
        if sec.callouts:
            extra["callouts"] = sec.callouts
        if sec.footnotes:
            extra["footnotes"] = list(dict.fromkeys(sec.footnotes))
        if sec.code_languages:
            extra["code_languages"] = list(dict.fromkeys(sec.code_languages))
        body = "\n".join(sec.body).strip()
        if ordinal == 0:
            if first_extra:
                extra.update(first_extra)
            if first_body_prefix and not _opens_with(body, first_body_prefix):
                body = (first_body_prefix + "\n\n" + body).strip()
            units.append(
                Unit(
                    ordinal=0,
                    level=0,
                    kind=first_kind,
                    title=title,
                    outline_path=(),
                    body=body,
                    tags=tuple(sec.tags),
                    inherited_tags=inherited_t,
                    properties=dict(properties),
                    line_start=sec.line_start,
                    line_end=max(sec.line_start, sec.line_end),
                    links=tuple(sec.links),
                    extra=extra,
                )
            )
            continue
        own = tuple(sec.tags)
        units.append(
            Unit(
                ordinal=ordinal,
                level=sec.level,
                kind=HEADING,
                title=sec.title,
                outline_path=sec.outline_path,
                body=body,
                parent=sec.parent,
                tags=own,
                inherited_tags=tuple(t for t in inherited_t if t not in own),
                line_start=sec.line_start,
                line_end=sec.line_end,
                links=tuple(sec.links),
                extra=extra,
            )
        )
    return tuple(units)
