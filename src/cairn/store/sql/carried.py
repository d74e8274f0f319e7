"""What units carry besides their text — tags, TODO keywords, note types, properties —
as a vocabulary for query understanding (:mod:`cairn.search.understand`): filed at
write time in the ``vocabulary`` table under the key a query phrase is looked up by
(:func:`vocabulary_rows`), and read back by key (index look-ups, never a scan). The
headings a phrase titles are a look-up in each backend's keyword index
(``headings_titled``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from cairn.store.sql.base import SQLBase
from cairn.text import fold_key

VALUE_MAX = 80
"""Longer property values are prose, not a value a query names."""

Carried = tuple[str, str, str]
"""``(kind, key, value)``: ``("tag", "", "books")``, ``("todo", "", "WAITING")``,
``("type", "", "Reference")``, ``("prop", "genre", "Sci-fi")`` (a property's value),
``("prop", "isbn", "")`` (a property's name)."""

VOCABULARY = 6
"""The schema version whose migration creates the ``vocabulary`` table (and files it
from the stored rows: :func:`refile_vocabulary`)."""
_NAMED = "SELECT kind, name, value FROM vocabulary WHERE key=?"
INSERT_VOCABULARY = (
    "INSERT INTO vocabulary(key, kind, name, value, source, ord, unit_id, document_id)"
    " VALUES (?,?,?,?,?,?,?,?)"
)
SKIP_KEYS = frozenset({
    "id", "custom_id", "title", "aliases", "alias", "tags", "tag", "description",
    "permalink", "cssclasses", "cssclass", "mobile", "publish", "cover", "generated",
    "conversation_id", "messages", "alternates", "todo_keywords", "unnumbered", "url",
    "header-args", "startup", "options", "created", "modified", "date", "updated",
})  # fmt: skip
"""Property names that are ids, layout or dates: never what a query's word means."""
SKIP_PREFIXES = (
    "beamer_", "html_", "latex_", "export_", "odt_", "texinfo_", "header-args", "visibility",
    "column", "ordered", "nobl", "logging", "archive", "effort", "style", "clock",
)  # fmt: skip
"""Org property names that are export, Babel or agenda settings."""
ORG_KEYWORDS = frozenset({
    "author", "category", "subtitle", "keywords", "filetags", "date", "created", "properties",
})  # fmt: skip
"""The Org file keywords that describe a note, as the keyword index's ``meta`` column
takes them (:mod:`cairn.store.sql.meta`); the rest (``#+cindex:``, ``#+options:``,
``#+html_head:`` …) are export settings, not what a note is about."""


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) and text else None
    except ValueError:
        return None


def _values(value: Any) -> list[str]:
    """A property value as short texts: a list's elements one by one, a wikilink as its
    target's name (``[[Books]]`` is ``Books``); prose and nested maps left out."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for v in items:
        if isinstance(v, bool) or v is None or isinstance(v, dict | list):
            continue
        s = str(v).strip()
        if s.startswith("[[") and s.endswith("]]"):
            s = s[2:-2].split("|", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1].strip()
        if s and len(s) <= VALUE_MAX and "\n" not in s:
            out.append(s)
    return out


def _props(props: Any, depth: int = 0) -> list[Carried]:
    """A property map's names and values (an Org file's ``properties`` map, one level
    down, as well)."""
    out: list[Carried] = []
    if not isinstance(props, Mapping):
        return out
    for key, value in props.items():
        if not isinstance(key, str):
            continue
        if isinstance(value, Mapping) and depth == 0 and key == "properties":
            out += _props(value, depth + 1)
            continue
        out.append(("prop", key, ""))
        out += [("prop", key, v) for v in _values(value)]
    return out


def keys_of(item: Carried) -> list[str]:
    """The vocabulary keys a carried value is filed under (:func:`cairn.text.fold_key`):
    a tag by itself and by its last part (``media/books``: ``book`` too), a property by
    its value, a property's name by the name; none for names no one searches by
    (:data:`SKIP_KEYS`, :data:`SKIP_PREFIXES`) or short numbers (a rating's ``7``; an
    ISBN or a year is kept)."""
    kind, key, value = item
    if kind == "prop":
        low = key.casefold()
        if low in SKIP_KEYS or low.startswith(SKIP_PREFIXES):
            return []
        if value and value.isdigit() and len(value) < 4:
            return []
        keys = [fold_key(value or key)]
    else:
        keys = [fold_key(value)]
        if kind == "tag" and "/" in value:
            keys.append(fold_key(value.rsplit("/", 1)[-1]))
    return [k for k in dict.fromkeys(keys) if k]


Carrier = tuple[int, str, int, Any, str, int]
"""A unit as :func:`vocabulary_rows` reads it: ``(rowid, id, ordinal, todo, properties
as stored JSON, alternate)``."""


def vocabulary_rows(
    document_id: str,
    units: Sequence[Carrier],
    tags: Sequence[tuple[int, str]],
    document: tuple[str | None, str, str] | None = None,
) -> list[tuple[Any, ...]]:
    """The ``vocabulary`` rows of one document as it is stored: ``(key, kind, name,
    value, source, ord, unit_id, document_id)`` for each value a unit on a canonical
    branch carries under each of its :func:`keys_of` — its tags (``tags``: ``(unit
    rowid, tag)``, source 0), TODO keyword and properties (source 1), and, carried by
    the document's first unit, its type and metadata (``document``: ``(type, metadata
    as stored JSON, format)``, source 2; of an Org file's keywords only
    :data:`ORG_KEYWORDS`); ``ord`` is the carrier's rowid. Values over
    :data:`VALUE_MAX` characters and nested maps are left out; a unit is filed once per
    value."""
    rows: list[tuple[Any, ...]] = []
    seen: set[tuple[Carried, str | None]] = set()

    def add(item: Carried, source: int, rowid: int | None, uid: str | None) -> None:
        if (item, uid) in seen:
            return
        seen.add((item, uid))
        rows.extend((k, *item, source, rowid, uid, document_id) for k in keys_of(item))

    canonical = {u[0]: u for u in units if not u[5]}
    for rowid, tag in tags:
        if rowid in canonical and tag.strip():
            add(("tag", "", tag.strip()), 0, rowid, canonical[rowid][1])
    for rowid, uid, _, todo, props, _ in canonical.values():
        if isinstance(todo, str) and todo.strip():
            add(("todo", "", todo.strip()), 1, rowid, uid)
        if props != "{}":
            for item in _props(_json(props)):
                add(item, 1, rowid, uid)
    dtype, text, fmt = document or (None, "{}", "")
    if dtype is None and text == "{}":
        return rows
    first = min(canonical.values(), key=lambda u: (u[2], u[0]), default=None)
    at, by = (first[0], first[1]) if first else (None, None)
    if isinstance(dtype, str) and dtype.strip():
        add(("type", "", dtype.strip()), 2, at, by)
    meta = _json(text)
    if fmt == "org" and isinstance(meta, Mapping):
        meta = {k: v for k, v in meta.items() if str(k).casefold() in ORG_KEYWORDS}
    for item in _props(meta):
        add(item, 2, at, by)
    return rows


def _by_document(rows: Iterable[Any]) -> Iterator[tuple[str, list[Any]]]:
    """Rows ordered by their first column (a document id) as ``(id, [rest])`` groups."""
    for doc_id, group in groupby(rows, key=lambda r: str(r[0])):
        yield doc_id, [tuple(r[1:]) for r in group]


def refile_vocabulary(store: SQLBase) -> None:
    """File every stored document's vocabulary anew from its stored rows
    (:func:`vocabulary_rows`): what an index from before the ``vocabulary`` table gets
    when it is upgraded, so it answers as it did. One ordered pass over documents,
    units and tags, a document at a time.

    Raises:
        StoreError: the backend failed.
    """
    db = store.db
    db.execute("DELETE FROM vocabulary")
    units = _by_document(db.execute(
        "SELECT document_id, rowid, id, ordinal, todo, properties, alternate FROM units"
        " ORDER BY document_id, rowid"))
    tags = _by_document(db.execute(
        "SELECT u.document_id, t.unit_rowid, t.tag FROM unit_tags t"
        " JOIN units u ON u.rowid = t.unit_rowid ORDER BY u.document_id, t.unit_rowid"))
    unit, tag = next(units, None), next(tags, None)
    for doc_id, dtype, meta, fmt in db.execute(
            "SELECT id, type, metadata, format FROM documents ORDER BY id"):
        while unit is not None and unit[0] < doc_id:  # a unit without its document
            unit = next(units, None)
        while tag is not None and tag[0] < doc_id:
            tag = next(tags, None)
        mine = unit[1] if unit is not None and unit[0] == doc_id else []
        labels = tag[1] if tag is not None and tag[0] == doc_id else []
        rows = vocabulary_rows(doc_id, mine, labels, (dtype, meta, fmt))
        if rows:
            db.executemany(INSERT_VOCABULARY, rows)


class CarriedMixin(SQLBase):
    """The values units carry, filed by key in the ``vocabulary`` table."""

    def _after_migration(self, version: int) -> None:
        """At the migration that adds the ``vocabulary`` table, file what the stored
        units carry, so an upgraded index answers as a rebuilt one would."""
        super()._after_migration(version)
        if version == VOCABULARY:
            refile_vocabulary(self)

    def carried_named(self, key: str, carriers: int) -> list[tuple[Carried, list[str]]]:
        """The values units carry whose :func:`cairn.text.fold_key` is ``key``, in
        ``(kind, name, value)`` order, each with the ids of up to ``carriers`` units on
        a canonical branch that carry it (units' tags, then units' TODO keywords and
        properties, then documents' type and metadata by their first unit; each in
        index order). Index look-ups only: one per value found and one more.

        Raises:
            StoreError: the backend failed.
        """
        out: list[tuple[Carried, list[str]]] = []
        row = self.db.execute(f"{_NAMED} ORDER BY kind, name, value LIMIT 1", (key,)).fetchone()
        while row is not None:
            item: Carried = (str(row[0]), str(row[1]), str(row[2]))
            ids = [str(r[0]) for r in self.db.execute(
                "SELECT unit_id FROM vocabulary WHERE key=? AND kind=? AND name=? AND value=?"
                " AND unit_id IS NOT NULL ORDER BY source, ord LIMIT ?", (key, *item, carriers))]
            out.append((item, ids))
            row = self._next_named(key, item)
        return out

    def _next_named(self, key: str, item: Carried) -> Any:
        """The value after ``item`` under ``key`` in ``(kind, name, value)`` order, or
        ``None``: at most three index seeks. A row value ``(kind, name, value) > (…)``
        seeks on its first column only, then reads every row after it, here every
        carrier of ``item`` (a TODO keyword on thousands of headings)."""
        kind, name, value = item
        for where, args in (
            ("kind = ? AND name = ? AND value > ? ORDER BY value", (kind, name, value)),
            ("kind = ? AND name > ? ORDER BY name, value", (kind, name)),
            ("kind > ? ORDER BY kind, name, value", (kind,)),
        ):
            row = self.db.execute(f"{_NAMED} AND {where} LIMIT 1", (key, *args)).fetchone()
            if row is not None:
                return row
        return None
