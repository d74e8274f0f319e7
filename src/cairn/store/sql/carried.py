"""What units carry besides their text — tags, TODO keywords, note types, properties,
heading titles — as a vocabulary for query understanding
(:mod:`cairn.search.understand`): every distinct value, read in a few statements
(the caller keeps it until the index changes), and the headings a phrase titles
(a look-up in the keyword index, never a scan)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cairn.store.sql.base import SQLBase

VALUE_MAX = 80
"""Longer property values are prose, not a value a query names."""

Carried = tuple[str, str, str]
"""``(kind, key, value)``: ``("tag", "", "books")``, ``("todo", "", "WAITING")``,
``("type", "", "Reference")``, ``("prop", "genre", "Sci-fi")`` (a property's value),
``("prop", "isbn", "")`` (a property's name)."""

_FIRST_UNIT = (
    "(SELECT o.id FROM units o WHERE o.document_id = d.id AND o.alternate = 0"
    " ORDER BY o.ordinal LIMIT 1)"
)
_TAGS = (
    "SELECT t.tag, u.id FROM unit_tags t JOIN units u ON u.rowid = t.unit_rowid"
    " WHERE u.alternate = 0"
)
_UNITS = (
    "SELECT id, todo, properties FROM units"
    " WHERE alternate = 0 AND (todo IS NOT NULL OR properties != '{}')"
)
_DOCUMENTS = (
    f"SELECT {_FIRST_UNIT}, d.type, d.metadata, d.format FROM documents d"
    " WHERE d.type IS NOT NULL OR d.metadata != '{}'"
)
"""A document's metadata is carried by its first unit (as ``prop:`` lists it once)."""
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


class CarriedMixin(SQLBase):
    """The values units carry, and headings by title."""

    def carried_vocabulary(self, carriers: int) -> dict[Carried, list[str]]:
        """Every distinct value a unit carries (see :data:`Carried`) with the ids of up
        to ``carriers`` units on a canonical branch that carry it: tags, TODO
        keywords, note types, and the names and values of units' properties and
        documents' metadata (list values element by element, values over
        :data:`VALUE_MAX` characters left out; a document's by its first unit; of an
        Org file's keywords only :data:`ORG_KEYWORDS`). Costs
        a pass over the units table: keep it until :meth:`change_token` moves.

        Raises:
            StoreError: the backend failed.
        """
        out: dict[Carried, list[str]] = {}

        def add(item: Carried, uid: Any) -> None:
            ids = out.setdefault(item, [])
            if isinstance(uid, str) and len(ids) < carriers and uid not in ids:
                ids.append(uid)

        # one pass over each table: the units table is the costly one (rows hold bodies)
        for tag, uid in self.db.execute(_TAGS):
            if isinstance(tag, str) and tag.strip():
                add(("tag", "", tag.strip()), uid)
        for uid, todo, props in self.db.execute(_UNITS):
            if isinstance(todo, str) and todo.strip():
                add(("todo", "", todo.strip()), uid)
            for item in _props(_json(props)):
                add(item, uid)
        for uid, dtype, text, fmt in self.db.execute(_DOCUMENTS):
            if isinstance(dtype, str) and dtype.strip():
                add(("type", "", dtype.strip()), uid)
            meta = _json(text)
            if fmt == "org" and isinstance(meta, Mapping):
                meta = {k: v for k, v in meta.items() if str(k).casefold() in ORG_KEYWORDS}
            for item in _props(meta):
                add(item, uid)
        return out
