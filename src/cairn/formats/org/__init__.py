"""Org-mode, natively and losslessly.

Public API:

* :func:`parse` — Org text → :class:`cairn.model.Document` (the format registry's text
  parser: ``parse(text, relpath)``; an optional :class:`OrgOptions` third argument).
* :func:`parse_tree` / :func:`serialize` — the lossless tree:
  ``serialize(parse_tree(t)) == t`` for any string ``t``.
* :func:`set_todo`, :func:`set_tags`, :func:`set_property` — edits that rewrite only the
  lines they must and return a new tree (for write-back by the dream cycle).
* :func:`heading_at` — the tree index of the heading on a line (a unit's ``line_start``).
* :func:`parse_headline`, :func:`parse_todo_sequences`, :func:`todo_keywords` — helpers.

The parser follows the Org syntax document (``org-syntax.org`` on Worg) and org-element's
behaviour where the document is silent; each module cites the sections it implements.
"""

from __future__ import annotations

from cairn.formats.org.options import (
    ORG_INHERITED_PROPERTIES,
    OrgOptions,
    TodoKeywords,
    parse_todo_sequences,
)
from cairn.formats.org.parser import MAX_OUTLINE_DEPTH, parse
from cairn.formats.org.tree import (
    HeadingNode,
    Headline,
    OrgTree,
    Section,
    heading_at,
    parse_headline,
    parse_tree,
    serialize,
    set_property,
    set_tags,
    set_todo,
)


def todo_keywords(text: str, options: OrgOptions | None = None) -> TodoKeywords:
    """The TODO keywords of an Org buffer (its ``#+TODO:``-style lines, else the default).

    Useful before :func:`set_todo`, which needs the file's keywords.
    """
    doc = parse(text, "buffer.org", options)
    kw = doc.metadata["todo_keywords"]
    return TodoKeywords(tuple(kw["open"]), tuple(kw["done"]))


__all__ = [
    "MAX_OUTLINE_DEPTH",
    "ORG_INHERITED_PROPERTIES",
    "HeadingNode",
    "Headline",
    "OrgOptions",
    "OrgTree",
    "Section",
    "TodoKeywords",
    "heading_at",
    "parse",
    "parse_headline",
    "parse_todo_sequences",
    "parse_tree",
    "serialize",
    "set_property",
    "set_tags",
    "set_todo",
    "todo_keywords",
]
