"""The ``meta`` column of the keyword index: the words a note is remembered by beyond its
title, outline path, tags and body — frontmatter keys and values, Org file keywords and
property drawers, TODO keywords, priorities and tags (DESIGN.md, Keyword search).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.model import Document, Unit

META_MAX = 600
"""Characters of metadata text kept per unit (FTS5's BM25 normalises by the length of
all columns together: a long ``meta`` would push every unit of its document down)."""
_META_SKIP = frozenset(
    {
        # searched in their own columns
        "title", "aliases", "alias", "tags", "tag", "description",
        # identifiers, layout and counts: no word a person would search by
        "permalink", "cssclasses", "cssclass", "mobile", "publish", "cover", "coordinates",
        "concept_id", "conversation_id", "generated", "messages", "alternates", "id",
        "custom_id", "todo_keywords",
    }
)  # fmt: skip
_ORG_META = frozenset({"author", "category", "subtitle", "keywords", "filetags", "date", "created"})
"""The Org file keywords that describe a note (the rest are export settings)."""
_WIKILINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")


def _meta_value(value: Any, out: list[str], depth: int = 0) -> None:
    if value is None or isinstance(value, bool) or depth > 2:
        return
    if isinstance(value, str):
        if value.startswith(("http://", "https://")):
            return  # a URL's words are not what a note is remembered by
        # a wikilink value reads as its target's name (and its alias): [[Books]] -> Books
        text = _WIKILINK.sub(lambda m: " ".join(g for g in m.groups() if g), value)
        if text.strip():
            out.append(text.strip())
    elif isinstance(value, int | float):
        out.append(str(value))
    elif isinstance(value, Mapping):
        for k, v in value.items():
            out.append(str(k))
            _meta_value(v, out, depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            _meta_value(v, out, depth + 1)


def document_meta(doc: Document) -> tuple[list[str], Mapping[str, Any]]:
    """The part of :func:`meta_text` every unit of ``doc`` shares: the words of its
    frontmatter keys and values, and its file-level Org properties (computed once per
    document by the writer and passed to :func:`meta_text`)."""
    out: list[str] = []
    meta = doc.metadata if isinstance(doc.metadata, Mapping) else {}
    org = doc.format == "org"
    file_props = meta.get("properties") if org else None
    for key, value in meta.items():
        low = str(key).casefold()
        if low in _META_SKIP or (org and low not in _ORG_META):
            continue
        out.append(str(key))
        _meta_value(value, out)
    return out, file_props if isinstance(file_props, Mapping) else {}


def meta_text(
    doc: Document, u: Unit, shared: tuple[list[str], Mapping[str, Any]] | None = None
) -> str:
    """The ``meta`` FTS column of a unit: its document's frontmatter keys and values
    (a wikilink value by its target's name; title, aliases, tags and description are
    searched in their own columns), the unit's own and inherited properties (Org
    property drawers), its TODO keyword, priority and tags — so a note remembered by
    its author, genre, status or ISBN is found by plain words. At most
    :data:`META_MAX` characters. ``shared``: :func:`document_meta` of ``doc``, when
    the caller has it."""
    words, file_props = shared if shared is not None else document_meta(doc)
    out = list(words)
    inherited = u.extra.get("inherited_properties") if isinstance(u.extra, Mapping) else None
    for props in (
        file_props,
        u.properties,
        inherited if isinstance(inherited, Mapping) else {},
    ):
        for key, value in props.items():
            if str(key).casefold() in _META_SKIP:
                continue
            out.append(str(key))
            _meta_value(value, out)
    if u.todo:
        out.append(u.todo)
    if u.priority:
        out.append(f"priority {u.priority}")
    out.extend(t.lstrip("#") for t in u.all_tags)
    return " ".join(out)[:META_MAX]
