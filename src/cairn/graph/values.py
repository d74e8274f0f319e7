"""Relation values written in metadata (``depends_on: "[[X]]"``, ``related: [a, b]``,
OKF relation targets, ``types.yaml`` rule targets) resolved to units, with the same
catalog and rules as link resolution (:mod:`cairn.graph.resolve`)."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping
from typing import Any

from cairn.graph.catalog import Catalog, Resolution, resolve_link
from cairn.graph.edges import LINK_IN_TEXT
from cairn.graph.names import link_keys
from cairn.model import MARKDOWN_LINK, ORG_FILE, ORG_ID, WIKILINK, LinkKind, LinkOccurrence


def _probe(kind: LinkKind, target: str, anchor: str | None, root_id: str, src_path: str,
           src_doc: str) -> LinkOccurrence:
    return LinkOccurrence("", 0, src_doc, root_id, src_path, kind, target, anchor=anchor)


def _is_url(v: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*://", v, re.I)) or v.startswith("mailto:")


def value_keys(value: str, src_path: str) -> set[str]:
    """The name keys of the documents a relation value could resolve to (see
    :func:`cairn.graph.resolve.link_keys`)."""
    v = value.strip()
    kind, target, anchor = link_shape(v)
    if kind is not None:
        return link_keys(_probe(kind, target, anchor, "", src_path, ""))
    if _is_url(v):
        return set()
    return link_keys(_probe(WIKILINK, v.split("#", 1)[0], None, "", src_path, ""))


class ValueResolver:
    """Resolves relation values (names, paths, links written in metadata) to units.

    Uses a :class:`cairn.graph.resolve.Catalog` built on first use by ``catalog()``
    (the whole index's, or one of the documents the values can name). A value is tried
    as written (wikilink, Org link or Markdown-style path relative to the file), then as
    a path relative to each folder above the file (bundle-relative OKF paths), then as a
    note name.
    """

    def __init__(self, catalog: Callable[[], Catalog]) -> None:
        self._factory = catalog
        self._cat: Catalog | None = None

    def _catalog(self) -> Catalog:
        if self._cat is None:
            self._cat = self._factory()
        return self._cat

    def resolve(self, value: str, root_id: str, src_path: str, src_doc: str) -> Resolution:
        """``(document id, unit id, unresolved reason)`` for one value."""
        cat = self._catalog()
        v = value.strip()
        kind, target, anchor = link_shape(v)
        if kind is not None:
            doc, unit, reason = resolve_link(
                _probe(kind, target, anchor, root_id, src_path, src_doc), cat)
            return self._finish(cat, doc, unit, reason)
        if _is_url(v):
            return None, None, "external URL"
        path = v.split("#", 1)[0]
        anchor = v.split("#", 1)[1] if "#" in v else None
        folder = posixpath.dirname(src_path)
        tries: list[str] = []
        rel_path = path.lstrip("/")
        if path.startswith("/"):  # bundle-relative: the bundle root is some folder above
            tries.append(rel_path)
        parts = folder.split("/") if folder else []
        for i in range(len(parts), -1, -1):
            tries.append(posixpath.normpath(posixpath.join("/".join(parts[:i]), rel_path)))
        for rel in tries:
            found = cat.doc_at(root_id, rel)
            if found:
                unit = cat.anchor_unit(found, anchor) if anchor else None
                return self._finish(cat, found, unit, None)
        doc, unit, reason = resolve_link(
            _probe(WIKILINK, path, anchor, root_id, src_path, src_doc), cat)
        return self._finish(cat, doc, unit, reason)

    @staticmethod
    def _finish(cat: Catalog, doc: str | None, unit: str | None, reason: str | None
                ) -> Resolution:
        if doc and not unit:
            unit = cat.preamble(doc)
        return doc, unit, reason


def link_shape(v: str) -> tuple[LinkKind | None, str, str | None]:
    """``(link kind, target, anchor)`` when ``v`` is written as a link, else ``(None, v,
    None)``: ``[[id:X]]``, ``[[file:p::*H]]``, ``[[Note#H|alias]]``, ``[text](path)``."""
    m = re.fullmatch(r"!?\[\[([^\]]+)\](?:\[[^\]]*\])?\]", v)
    if m:
        inner = m.group(1)
        if inner.startswith("id:"):
            return ORG_ID, inner[3:].strip(), None
        if inner.startswith("file:"):
            path, _, opt = inner[5:].partition("::")
            return ORG_FILE, path, opt or None
        inner = inner.split("|", 1)[0]
        target, _, anchor = inner.partition("#")
        return WIKILINK, target.strip(), anchor.strip() or None
    m = re.fullmatch(r"\[[^\]]*\]\(([^)]+)\)", v)
    if m:
        target, _, anchor = m.group(1).partition("#")
        return MARKDOWN_LINK, target.strip(), anchor.strip() or None
    if v.startswith("id:"):
        return ORG_ID, v[3:].strip(), None
    return None, v, None


def relation_items(value: Any) -> list[str]:
    """The individual targets of a relation value: list items, or a string split on
    commas when it holds no link syntax; link-shaped strings give each link."""
    out: list[str] = []
    if value is None or isinstance(value, bool):
        return out
    if isinstance(value, list | tuple):
        for v in value:
            out.extend(relation_items(v))
        return out
    if isinstance(value, Mapping):
        for k in ("target", "path", "id", "name"):
            if isinstance(value.get(k), str):
                return [value[k]]
        return out
    text = str(value).strip()
    if not text:
        return out
    links = LINK_IN_TEXT.findall(text)
    if links:
        return links
    if text.startswith("[") and text.endswith("]"):  # a JSON list as property text
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return relation_items(parsed)
    return [p.strip().strip("\"'") for p in text.split(",") if p.strip().strip("\"'")]

