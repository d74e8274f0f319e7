"""The vocabulary of cairn: plain frozen dataclasses, no I/O.

Every layer speaks in these types. Parsers (``cairn.formats``) build :class:`Document`
values holding :class:`Unit` values with ``id == ""``; the ingest pipeline assigns the
deterministic ids (see ``cairn.ingest.ids``), the store persists them, and search returns
:class:`Hit` values. Terms follow ``DESIGN.md``: document, unit, outline path, property
drawer, frontmatter, wikilink, backlink.

Lines are 1-based and inclusive; times are ISO 8601 strings as written or normalised by
the parser (``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM[:SS][Z]``); ``mtime`` is POSIX seconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# --- unit kinds -----------------------------------------------------------------------
UnitKind = Literal["preamble", "heading", "code", "concept", "message"]
"""What a unit is (see :class:`Unit`)."""
PREAMBLE: UnitKind = "preamble"  # text before the first heading (Org zeroth section, note intro)
HEADING: UnitKind = "heading"  # an Org heading or a Markdown heading section
CODE: UnitKind = "code"  # a source/fenced code block extracted as its own unit
CONCEPT: UnitKind = "concept"  # an OKF concept or memory file
MESSAGE: UnitKind = "message"  # one chat message or turn

# --- link kinds -----------------------------------------------------------------------
LinkKind = Literal["wikilink", "embed", "markdown", "org-file", "org-id", "org-heading", "url"]
"""How a link is written (see :class:`Link`)."""
WIKILINK: LinkKind = "wikilink"  # [[Note]], [[Note|alias]], [[Note#Heading]], [[Note#^block]]
EMBED: LinkKind = "embed"  # ![[Note]] / ![[image.png]]
MARKDOWN_LINK: LinkKind = "markdown"  # [text](other.md)
ORG_FILE: LinkKind = "org-file"  # [[file:x.org::*Heading]]
ORG_ID: LinkKind = "org-id"  # [[id:UUID]]
ORG_HEADING: LinkKind = "org-heading"  # [[*Heading]] / [[#custom-id]] / [[fuzzy]]
URL: LinkKind = "url"  # external http(s)/mailto/... links

SearchMode = Literal["keyword", "semantic", "hybrid"]
"""How a search ranks: BM25, embeddings, or both fused."""
SEARCH_MODES: tuple[SearchMode, ...] = ("keyword", "semantic", "hybrid")
Severity = Literal["error", "warning", "info"]
"""How bad a :class:`Diagnostic` is (``error`` only from validation)."""

LINK_KINDS = (WIKILINK, EMBED, MARKDOWN_LINK, ORG_FILE, ORG_ID, ORG_HEADING, URL)


PLANNING_ROLES = ("scheduled", "deadline", "closed")
"""Timestamp roles of an Org planning line."""


@dataclass(frozen=True, slots=True)
class Timestamp:
    """One Org (or other) timestamp.

    Attributes:
        raw: the text as written, e.g. ``<2024-05-01 Wed 10:00-11:00 +1w -2d>``.
        active: ``True`` for ``<…>``, ``False`` for ``[…]``.
        start: ISO date or datetime of the start (``2024-05-01`` / ``2024-05-01T10:00``);
            for a diary sexp, the sexp text.
        end: ISO end of a time or date range, else ``None``.
        repeater: e.g. ``+1w``, ``++1m``, ``.+2d``.
        warning: e.g. ``-3d``.
        role: ``scheduled``, ``deadline``, ``closed`` (planning line), ``property`` or
            ``body``.
        diary: ``True`` for ``<%%(…)>`` diary sexps (kept raw in ``start``).
    """

    raw: str
    active: bool
    start: str
    end: str | None = None
    repeater: str | None = None
    warning: str | None = None
    role: str = "body"
    diary: bool = False


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written in the source, plus its resolution once known.

    Attributes:
        kind: one of :data:`LINK_KINDS`.
        target: the target without decoration: a note name or path (``people/alex-ng``),
            an org ``ID``, a file path, a heading title, or a URL.
        alias: the display text (``[[t|alias]]``, ``[[t][desc]]``, ``[text](t)``).
        anchor: a heading (``Day 2``), a block (``^abc``), a custom id (``#intro``) or an
            Org search option (``*Heading``, ``::/regex/``, ``::42``) inside the target.
        line: 1-based line in the file.
        raw: the link's source text.
        resolved_document_id / resolved_unit_id: filled by link resolution.
        unresolved_reason: why resolution failed, when it did.
    """

    kind: LinkKind
    target: str
    alias: str | None = None
    anchor: str | None = None
    line: int | None = None
    raw: str = ""
    resolved_document_id: str | None = None
    resolved_unit_id: str | None = None
    unresolved_reason: str | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A warning about a file that did not stop it from being indexed.

    ``severity`` is ``"warning"`` or ``"info"``; ``line`` is 1-based or ``None``.
    """

    path: str
    message: str
    line: int | None = None
    severity: str = "warning"  # a Severity


@dataclass(frozen=True, slots=True)
class Failure:
    """A file (or part of an export) that could not be indexed, with the reason.

    ``path`` is the path relative to its source root (absolute when outside any root);
    ``line`` is 1-based or ``None``.
    """

    path: str
    reason: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Unit:
    """A knowledge unit: the retrievable node of a document.

    Org: one heading with its own section (not its children). Markdown: one heading
    section. Text before the first heading is the ``preamble`` unit (ordinal 0).

    Attributes:
        ordinal: 0-based position of the unit in its document (document order).
        level: heading depth (1 = top level); 0 for the preamble and whole-file units.
        kind: one of ``preamble``, ``heading``, ``code``, ``concept``, ``message``.
        title: heading text without TODO keyword, priority and tags.
        outline_path: heading titles from the top level down to and including this one.
        body: searchable text of the unit's own section (drawers, comments and
            front matter removed).
        parent: ordinal of the parent unit, or ``None``.
        tags: the unit's own tags; ``inherited_tags`` holds ancestors' and file tags,
            kept apart.
        properties: property drawer / per-unit fields, keys as written.
        todo: TODO keyword (``TODO``, ``NEXT`` …); ``todo_state`` is ``open``/``done``.
        priority: priority cookie value (``A``, ``B``, ``1`` …).
        timestamps: every timestamp of the unit, planning ones with their role.
        org_id / custom_id: the Org ``ID`` / ``CUSTOM_ID`` properties.
        declared_id: an id the source gives the unit (Org ``ID``, a chat message id);
            when present and unique in the index it becomes ``id``.
        line_start / line_end: 1-based inclusive line span in the file.
        links: links found in the unit, in order.
        language: language of a ``code`` unit.
        extra: format-specific fields, JSON-serialisable. Known keys: ``role``
            (chat ``user``/``assistant``/…), ``time`` (ISO time of a message),
            ``alternate`` (``True`` for a unit off the canonical branch: kept, but left
            out of default search), ``targets`` (Org ``<<dedicated targets>>``),
            ``block_ids`` (Markdown ``^block`` ids), ``comment``/``archived`` (Org).
        id / parent_id / document_id: assigned by the ingest pipeline.
    """

    ordinal: int
    level: int
    kind: str  # a UnitKind
    title: str
    outline_path: tuple[str, ...]
    body: str
    parent: int | None = None
    tags: tuple[str, ...] = ()
    inherited_tags: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)
    todo: str | None = None
    todo_state: str | None = None
    priority: str | None = None
    timestamps: tuple[Timestamp, ...] = ()
    org_id: str | None = None
    custom_id: str | None = None
    declared_id: str | None = None
    line_start: int = 1
    line_end: int = 1
    links: tuple[Link, ...] = ()
    language: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""
    parent_id: str | None = None
    document_id: str = ""

    @property
    def all_tags(self) -> tuple[str, ...]:
        """Own tags followed by inherited ones, without duplicates."""
        seen = dict.fromkeys(self.tags)
        seen.update(dict.fromkeys(self.inherited_tags))
        return tuple(seen)


@dataclass(frozen=True, slots=True)
class Document:
    """One file (or one conversation of a chat export) and its units.

    Attributes:
        path: path relative to the source root, POSIX separators.
        format: ``org``, ``markdown``, ``text``, ``okf``, ``chatgpt`` …
        title: ``#+TITLE``, frontmatter ``title``, first heading, or the file stem.
        units: the document's units in document order (``units[i].ordinal == i``).
        metadata: frontmatter / in-buffer keywords / file-level properties.
        tags: document tags (``#+FILETAGS``, frontmatter ``tags``, inline tags).
        aliases: frontmatter ``aliases`` / ``ROAM_ALIASES``.
        created / modified: ISO strings when the file declares them.
        visibility / type: from metadata, when declared.
        declared_id: an Org file-level ``ID`` or frontmatter ``id``.
        key: identifies one document among several from the same file (conversation id).
        warnings: non-fatal diagnostics found while parsing.
        id / root_id / content_hash / size / mtime: assigned by ingest.
    """

    path: str
    format: str
    title: str
    units: tuple[Unit, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    created: str | None = None
    modified: str | None = None
    visibility: str | None = None
    type: str | None = None
    declared_id: str | None = None
    key: str | None = None
    warnings: tuple[Diagnostic, ...] = ()
    id: str = ""
    root_id: str = ""
    content_hash: str = ""
    size: int = 0
    mtime: float = 0.0


@dataclass(frozen=True, slots=True)
class SourceRoot:
    """A folder (or export file) the user registered.

    ``path`` is absolute; ``include``/``exclude`` are glob patterns relative to it
    (``**`` crosses folders); ``id`` is deterministic over the resolved path.
    """

    id: str
    path: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphStep:
    """What an index run's graph step did: documents whose links and edges were
    rebuilt or dropped, edges written and deleted, and wall time in seconds."""

    changed_documents: int = 0
    removed_documents: int = 0
    edges_written: int = 0
    edges_deleted: int = 0
    edges: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class EmbedStep:
    """What an index run's embedding step did.

    Attributes:
        space: the embedder's fingerprint (``""``: no embedder, chunks only).
        units_chunked / chunks_added: units (re)chunked and chunks written.
        embedded: distinct texts sent to the model; ``cached``: new chunks whose vector
            was already stored.
        pruned: vectors no chunk uses any more, removed.
        seconds: wall time; ``embed_seconds`` the part spent in the model.
        pending: chunks still without a vector in ``space`` when the step ended (0
            after a complete step; more after an interrupted one, which ``cairn
            embed`` or the next ``cairn index`` resumes).
        interrupted: the step was stopped (Ctrl-C) after its last committed batch.
        notices: why nothing was embedded (no model) — filled by ``cairn embed``
            (:meth:`cairn.ingest.embed_step.EmbeddingStep.run`); an index run puts them
            in its warnings.
    """

    space: str = ""
    units_chunked: int = 0
    chunks_added: int = 0
    embedded: int = 0
    cached: int = 0
    pruned: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    pending: int = 0
    interrupted: bool = False
    notices: tuple[str, ...] = ()


RUN_COUNTS = ("seen", "added", "changed", "removed", "unchanged", "failed", "skipped")
"""The file counts of a :class:`Run`, in the order of its fields."""


@dataclass(frozen=True, slots=True)
class Run:
    """One indexing pass and what it did.

    Counts are files (a chat export counts once). ``failures`` lists each file that
    could not be indexed with its reason; ``warnings`` the non-fatal diagnostics.
    Times are ISO 8601 UTC; ``seconds`` is wall time of the whole run (files, graph and
    embeddings). ``graph`` and ``embedding`` report those steps when they ran.
    """

    id: str
    started: str
    finished: str | None
    config_hash: str
    seen: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    skipped: int = 0
    failures: tuple[Failure, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    seconds: float = 0.0
    graph: GraphStep | None = None
    embedding: EmbedStep | None = None

    @staticmethod
    def merged(runs: Sequence[Run]) -> Run:
        """One record for several roots' runs: the first run's id and start, the last
        one's finish, counts and seconds summed, failures and warnings concatenated.

        Raises:
            IndexError: ``runs`` is empty.
        """
        first = runs[0]
        return dataclasses.replace(
            first,
            finished=runs[-1].finished,
            **{k: sum(getattr(r, k) for r in runs) for k in RUN_COUNTS},
            failures=tuple(f for r in runs for f in r.failures),
            warnings=tuple(w for r in runs for w in r.warnings),
            seconds=round(sum(r.seconds for r in runs), 4),
        )


@dataclass(frozen=True, slots=True)
class BlockRef:
    """An Obsidian block: the paragraph or list item (or the table, quote or list before
    it) that a ``^block-id`` ends, inside a unit — what ``[[note#^id]]`` names.

    Attributes:
        id: the block id as written, without ``^``.
        line_start / line_end: its 1-based inclusive lines in the file.
        text: its text, the id left out (at most 300 characters).
    """

    id: str
    line_start: int
    line_end: int
    text: str = ""

    @staticmethod
    def all_of(blocks: Any) -> tuple[BlockRef, ...]:
        """The blocks a unit's ``extra["blocks"]`` lists (``[{"id", "line_start",
        "line_end", "text"}]``, as the Markdown parser writes it); entries of another
        shape are skipped."""
        out: list[BlockRef] = []
        for b in blocks if isinstance(blocks, list | tuple) else ():
            if not isinstance(b, Mapping) or not isinstance(b.get("id"), str):
                continue
            try:
                out.append(BlockRef(b["id"], int(b.get("line_start", 0)),
                                    int(b.get("line_end", 0)), str(b.get("text") or "")))
            except (TypeError, ValueError):
                continue
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    Attributes:
        rank: 1-based position; ``score``: the fused score (higher is better).
        unit_id / document_id: ids in the index.
        title / outline_path / doc_title: what to show; ``siblings`` are the titles of
            the unit's sibling headings.
        path: path relative to the source root; ``abs_path``: absolute file path.
        line_start / line_end: 1-based inclusive span to open the file at.
        snippet: a plain-text passage around the best match.
        highlights: ``(start, end)`` character offsets of the matches in ``snippet``.
        explain: per-list ranks and scores and fused summands, when asked for.
        priority: the priority cookie (``A`` …); ``planning``: the unit's
            ``SCHEDULED``/``DEADLINE``/``CLOSED`` timestamps.
        block: the Obsidian block of the unit that holds the first of the query's
            words (its id, without ``^``; ``note.md#^id`` opens it), else ``None``.
    """

    rank: int
    score: float
    unit_id: str
    document_id: str
    title: str
    outline_path: tuple[str, ...]
    doc_title: str
    path: str
    abs_path: str
    root: str
    format: str
    line_start: int
    line_end: int
    snippet: str
    kind: str = HEADING
    tags: tuple[str, ...] = ()
    todo: str | None = None
    siblings: tuple[str, ...] = ()
    highlights: tuple[tuple[int, int], ...] = ()
    explain: Mapping[str, Any] = field(default_factory=dict)
    priority: str | None = None
    planning: tuple[Timestamp, ...] = ()
    block: str | None = None


@dataclass(frozen=True, slots=True)
class FileState:
    """What the store knows of one file, for change detection: (size, mtime), then the
    content hash; ``status`` is ``ok``, ``partial`` or ``failed`` with its ``reason``."""

    size: int
    mtime: float
    hash: str
    status: str
    reason: str | None
