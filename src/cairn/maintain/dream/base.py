"""The vocabulary of the dream cycle: findings, proposed fixes, the ``Check`` protocol,
the registry of checks and the read-only context every check runs over.

A check is one module under :mod:`cairn.maintain.dream` with one object that has a
``name`` and a ``run(ctx) -> list[Finding]``; :func:`register_check` adds it to
:data:`CHECKS` (the memory ``maintain`` pass plugs in the same way). Checks never write:
a finding may carry a :class:`Fix`, which :mod:`cairn.maintain.dream.fixes` turns into a
planned edit and writes through :mod:`cairn.writeback` only with ``--apply``.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cairn.formats import note_formats
from cairn.model import Document, LinkOccurrence, SourceRoot, StoredUnit
from cairn.store import Store

FIX_KINDS = (
    "retarget_link", "add_org_id", "mark_status", "create_note", "normalise_tag",
    "memory_maintain",
)
"""Every kind of :class:`Fix` ``--apply`` can make."""


@dataclass(frozen=True, slots=True)
class Fix:
    """A proposed change to one file.

    Attributes:
        kind: one of :data:`FIX_KINDS`.
        path: the absolute path of the file to change (or create, for ``create_note``).
        description: one sentence a person reads (``"retarget [[Foo]] → [[Bar]]"``).
        params: what the fix needs, by kind: ``retarget_link`` ``{"line", "old",
            "new"}`` (the link text as written and its replacement); ``add_org_id``
            ``{"line", "title"}`` (the heading line, 0 for the file level, and its
            title); ``mark_status`` ``{"status"}``; ``create_note`` ``{"title",
            "format", "mentions"}``; ``normalise_tag`` ``{"old", "new", "format"}``;
            ``memory_maintain`` ``{"bundle"}`` (``path`` is the bundle folder; not a
            text edit: the app runs one memory maintenance cycle).
        auto: ``True`` when the evidence is clear enough for ``--apply`` to make it;
            ``False`` for a proposal (weaker evidence: a person decides, ``--apply``
            makes it only with ``--proposed``).
    """

    kind: str
    path: str
    description: str
    params: Mapping[str, Any] = field(default_factory=dict)
    auto: bool = True


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the dream cycle found, with its evidence.

    Attributes:
        check: the check that found it (``stale``, ``broken`` …).
        kind: what exactly (``past-deadline``, ``unresolved-link`` …).
        key: a stable identity across runs (check, kind, file, subject; no line
            number, so an edit above it does not make it "new").
        path: the absolute path of the file a user opens.
        relpath: the path inside its root, prefixed by the root folder's name.
        line: the 1-based line of the evidence, ``None`` when it is the whole file.
        message: one sentence for people.
        value: the value that triggered it (a date, a link target, a tag …).
        evidence: more facts, JSON-serialisable (candidates, counts, similarity …).
        fix: the proposed fix, when there is one.
    """

    check: str
    kind: str
    key: str
    path: str
    relpath: str
    line: int | None
    message: str
    value: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    fix: Fix | None = None


@dataclass(frozen=True, slots=True)
class DreamSettings:
    """``[dream]`` of ``cairn.toml`` (every key optional).

    Attributes:
        old_days: a note not modified for this many days is "old" (stale check).
        heavily_linked: linked from at least this many documents ⇒ "heavily linked".
        thin_chars: a body shorter than this (characters, stripped) is thin.
        duplicate_similarity: shingle (Jaccard) or cosine similarity for duplicates, 0–1.
        duplicate_min_chars: units shorter than this are not compared for duplicates.
        entity_min: a value must recur in at least this many units to be an entity.
        entity_folder: where proposed entity notes are created, relative to the root.
        stale_status: the OKF ``status`` a stale concept is marked with.
        keep_reports: how many reports the index keeps.
        schedule_minutes: ``cairn serve`` runs dream every this many minutes (0: never).
    """

    old_days: int = 365
    heavily_linked: int = 5
    thin_chars: int = 40
    duplicate_similarity: float = 0.85
    duplicate_min_chars: int = 200
    entity_min: int = 3
    entity_folder: str = "entities"
    stale_status: str = "deprecated"
    keep_reports: int = 10
    schedule_minutes: int = 0

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any] | None) -> DreamSettings:
        """Settings from the ``[dream]`` table (unknown keys were refused by the config).

        Raises:
            cairn.errors.ConfigError: a value of the wrong type.
        """
        from cairn.errors import ConfigError

        out = cls()
        kw: dict[str, Any] = {}
        for name, default in (
            (f, getattr(out, f)) for f in out.__dataclass_fields__
        ):
            if table is None or name not in table:
                continue
            value = table[name]
            want = type(default)
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want) or isinstance(value, bool):
                raise ConfigError(
                    f"[dream] {name} must be a {want.__name__}, not {value!r}"
                )
            kw[name] = value
        return cls(**kw)


class DreamContext:
    """What every check reads: the index's roots, documents, units and links, loaded
    once per run and cached (checks never query the store themselves for the same
    thing twice).

    Args:
        store: the index.
        today: the date the run treats as today (tests inject a fixed one).
        settings: ``[dream]``.
        roots: the roots to check (default: every registered root).
    """

    def __init__(
        self,
        store: Store,
        *,
        today: _dt.date,
        settings: DreamSettings,
        roots: Iterable[SourceRoot] | None = None,
    ) -> None:
        self.store = store
        self.today = today
        self.settings = settings
        self.roots = list(store.roots() if roots is None else roots)
        self.root_by_id = {r.id: r for r in self.roots}
        self._docs: list[Document] | None = None
        self._units: dict[str, list[StoredUnit]] = {}
        self._links: list[LinkOccurrence] | None = None

    # --- documents ---------------------------------------------------------------------
    @property
    def documents(self) -> list[Document]:
        """Every document of the checked roots, by root then path (no units)."""
        if self._docs is None:
            self._docs = [d for r in self.roots for d in self.store.documents_of_root(r.id)]
        return self._docs

    @property
    def notes(self) -> list[Document]:
        """The documents that are notes (chat conversations left out)."""
        return [d for d in self.documents if d.format in note_formats()]

    def document(self, doc_id: str) -> Document | None:
        """A checked document by id."""
        return self._by_id.get(doc_id)

    @property
    def _by_id(self) -> dict[str, Document]:
        cache: dict[str, Document] | None = getattr(self, "_by_id_cache", None)
        if cache is None:
            cache = {d.id: d for d in self.documents}
            self._by_id_cache = cache
        return cache

    def units(self, doc: Document) -> list[StoredUnit]:
        """A document's units in order (read once)."""
        got = self._units.get(doc.id)
        if got is None:
            got = self.store.units_of(doc.id)
            self._units[doc.id] = got
        return got

    def root_folder(self, doc: Document) -> Path:
        """The folder of the document's root."""
        return Path(self.root_by_id[doc.root_id].path)

    def abs_path(self, doc: Document) -> str:
        """The absolute path of the document's file."""
        return str(self.root_folder(doc) / doc.path)

    def display(self, doc: Document) -> str:
        """``<root folder name>/<relpath>``: what a report shows (and a user opens
        from the folder above the root)."""
        return f"{self.root_folder(doc).name}/{doc.path}"

    def text(self, doc: Document) -> str | None:
        """The document file's current text (UTF-8, replacement characters), read once;
        ``None`` when it cannot be read."""
        cache: dict[str, str | None] = self.__dict__.setdefault("_texts", {})
        path = self.abs_path(doc)
        if path not in cache:
            try:
                cache[path] = Path(path).read_bytes().decode("utf-8", "replace")
            except OSError:
                cache[path] = None
        return cache[path]

    def front_line(self, doc: Document, key: str) -> int | None:
        """The 1-based line of ``key:`` in the document's YAML front matter, if any."""
        text = self.text(doc)
        if not text:
            return None
        return front_matter_line(text, key)

    # --- links ---------------------------------------------------------------------------
    @property
    def links(self) -> list[LinkOccurrence]:
        """Every stored link of the checked roots."""
        if self._links is None:
            ids = set(self.root_by_id)
            self._links = [x for x in self.store.links_from(None) if x.root_id in ids]
        return self._links

    @property
    def inbound(self) -> Counter[str]:
        """``document id -> number of other documents linking to it`` (resolved links)."""
        cache: Counter[str] | None = getattr(self, "_inbound", None)
        if cache is None:
            pairs = {
                (x.document_id, x.resolved_document_id)
                for x in self.links
                if x.resolved_document_id and x.resolved_document_id != x.document_id
            }
            cache = Counter(t for _, t in pairs)
            self._inbound = cache
        return cache


class Check(Protocol):
    """One check of the dream cycle (one module each).

    Attributes:
        name: its name for ``--only`` and in reports (lower case, no spaces).
        summary: one line for ``cairn dream --help`` and the report.
    """

    name: str
    summary: str

    def run(self, ctx: DreamContext) -> list[Finding]:
        """The findings over ``ctx`` (never writes; never raises for a user's file)."""
        ...


CHECKS: dict[str, Check] = {}
"""The registered checks by name, in registration order (the report's order)."""


def register_check(check: Check) -> Check:
    """Add (or replace) a check in :data:`CHECKS`; returns it."""
    CHECKS[check.name] = check
    return check


def front_matter_line(text: str, key: str) -> int | None:
    """The 1-based line of a top-level ``key:`` inside a leading ``---`` block."""
    lines = text.split("\n")
    if not lines or lines[0].lstrip("\ufeff").rstrip("\r ") != "---":
        return None
    for i, line in enumerate(lines[1:], start=2):
        if line.rstrip("\r ") in ("---", "..."):
            return None
        if line.startswith(f"{key}:"):
            return i
    return None


def finding_key(check: str, kind: str, relpath: str, subject: str) -> str:
    """The stable identity of a finding (see :attr:`Finding.key`)."""
    return f"{check}|{kind}|{relpath}|{subject}"
