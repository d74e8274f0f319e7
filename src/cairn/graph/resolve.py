"""Link resolution across the whole index.

Each stored link is resolved to a document (and, where the link names a heading, block,
custom id or Org ``ID``, to a unit), or given the reason it could not be:

* Org ``id:X`` → the unit whose ``ID`` property is X in any file, else the document whose
  file-level ``ID`` is X (Org manual, "Handling Links"; org-roam's id links).
* Org ``file:path::option`` → ``path`` relative to the linking file's folder; the
  option ``*Heading`` names a heading, ``#id`` a ``CUSTOM_ID``, anything else a
  dedicated target or heading title (Org syntax, "Links": search options).
* Org ``[[*Heading]]`` / ``[[#id]]`` / ``[[text]]`` → inside the linking file.
* Wikilinks, embeds and Markdown links, as Obsidian resolves them
  (:mod:`cairn.graph.obsidian`, one catalog per source root): file name
  case-insensitively, relative and root paths, the shortest unique path, aliases;
  ``#Heading`` and ``#^block`` anchors name a unit of the target; other extensions are
  attachments. cairn extends Obsidian in one way: a bare name that names no Markdown
  note may name an Org or text note of the same root by its file stem
  (``[[garden]]`` → ``garden.org``); when several share the stem, the one the link's
  path names relative to the linking note, else the nearest (fewest folder steps),
  and equally near ones leave the link unresolved, the reason naming them.

One link is resolved against a :class:`cairn.graph.catalog.Catalog` by
:func:`cairn.graph.catalog.resolve_link`; this module resolves the index.
Resolution is incremental (:func:`resolve_links`): after a run, only the links of the
documents that changed, and of the documents whose links could resolve differently
because of them, are resolved again, so a link to a note that appears later resolves
without re-indexing its source, and a one-file change costs about one file. What makes
that exact is that a link can only reach documents that answer to one of its *name keys*
(:func:`link_keys`: the case-folded last path segment, with and without a note
extension, or ``id:X``), and a document answers to the keys of its file name, aliases
and declared / Org ``ID`` s (:func:`document_names`); both are recorded in the graph
tables, and a partial catalog of the candidates gives the same answer as the whole one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from cairn.graph.catalog import Catalog, resolve_link
from cairn.graph.names import (
    attachment_node,
    document_names,
    link_keys,
    name_key,
)
from cairn.graph.names import split_attachment as _split_attachment
from cairn.model import (
    CatalogDocument,
    CatalogUnit,
    LinkOccurrence,
    LinkResolution,
)
from cairn.store import LinkIndex, Store

DOCUMENT_CHUNK = 1000
"""Documents whose links are resolved (and whose edges are built) together: a step
holds one chunk's documents, units and links at a time, not the whole index's, so the
memory of a first build of a big chat export does not grow with its conversations."""


def _apply(store: LinkIndex, links: Sequence[LinkOccurrence], cat: Catalog) -> int:
    updates = []
    for lk in links:
        res = resolve_link(lk, cat)
        if res != (lk.resolved_document_id, lk.resolved_unit_id, lk.unresolved_reason):
            updates.append(LinkResolution(lk.unit_id, lk.ordinal, *res))
    return store.set_link_resolutions(updates)


def _names(docs: Sequence[CatalogDocument], units: Sequence[CatalogUnit]) -> dict[str, set[str]]:
    by_doc: dict[str, list[CatalogUnit]] = defaultdict(list)
    for u in units:
        by_doc[u.document_id].append(u)
    return {d.id: document_names(d, by_doc.get(d.id, ())) for d in docs}


def catalog_for(store: Store, keys: Iterable[str], document_ids: Iterable[str]) -> Catalog:
    """A catalog of ``document_ids`` and of every document and attachment answering to
    one of ``keys``: enough to resolve links and values of those documents whose keys
    are ``keys`` exactly as the whole index would."""
    named = store.edges.documents_named(keys)
    wanted = set(document_ids)
    att: list[tuple[str, str]] = []
    for n in named:
        split = _split_attachment(n)
        if split is None:
            wanted.add(n)
        else:
            att.append(split)
    docs, units = store.catalog_entries(sorted(wanted))
    return Catalog.build(docs, units, att)


def resolve_links(
    store: Store,
    changed_document_ids: Iterable[str] | None,
    removed_document_ids: Iterable[str] | None,
    *,
    chunk: int = DOCUMENT_CHUNK,
) -> int:
    """Resolve the links that may resolve differently after documents changed.

    Args:
        store: the open store.
        changed_document_ids: documents added or re-written since the last resolution;
            ``None`` resolves every link of the index.
        removed_document_ids: documents deleted since then (``None``: every link).
        chunk: documents read at a time (see :data:`DOCUMENT_CHUNK`).

    Resolved again are the links of the changed documents, of the documents whose links
    or relation values name a key a changed, removed or added document (or attachment)
    answers to or answered to, and of those with links resolved to a changed or removed
    document. Documents the name table does not know yet count as changed, named ones
    that are gone as removed. Every document whose links were resolved again is marked
    for its declared and rule edges to be rebuilt by the next
    :meth:`cairn.graph.service.GraphService.update`. The result equals a full
    resolution, whatever ``chunk``: names are recorded for every document first, then
    each chunk's links are resolved against a catalog of that chunk and of the
    documents its links name. Runs in one transaction (nested in the caller's, if any).

    Returns:
        How many link resolutions changed.

    Raises:
        cairn.errors.StoreError: the store failed.
    """
    es = store.edges
    with store.transaction():
        if changed_document_ids is None or removed_document_ids is None:
            return _resolve_everything(store, chunk)
        unnamed, gone = es.name_drift()
        changed = set(changed_document_ids) | set(unnamed)
        removed = (set(removed_document_ids) | set(gone)) - changed
        att_now = {attachment_node(r, p): (r, p) for r, p in store.attachments()}
        att_old = es.named_documents("attachment:")
        att_added = set(att_now) - att_old
        att_removed = att_old - set(att_now)
        keys: set[str] = set().union(*es.names_of(sorted(removed | att_removed)).values())
        live = _record_names(store, sorted(changed), keys, chunk)
        removed |= changed - live  # said to have changed, but not in the index
        changed &= live
        added = {a: {name_key(att_now[a][1])} for a in att_added}
        keys.update(*added.values())
        es.set_names({**{d: () for d in removed | att_removed}, **added})
        es.forget_wants(sorted(removed))
        affected = (changed | es.documents_wanting(keys)
                    | store.documents_linking_to(sorted(changed | removed))) - removed
        return _relink(store, sorted(affected), chunk, mark=True)


def in_chunks(ids: Sequence[str], size: int) -> Iterable[list[str]]:
    """``ids`` in lists of at most ``size`` (at least one)."""
    for i in range(0, len(ids), max(1, size)):
        yield list(ids[i : i + max(1, size)])


def _record_names(store: Store, ids: Sequence[str], keys: set[str], chunk: int) -> set[str]:
    """Record the name keys of the documents ``ids``, ``chunk`` at a time; their old and
    new keys are added to ``keys``. Returns the ids of those still in the index."""
    es = store.edges
    live: set[str] = set()
    for part in in_chunks(ids, chunk):
        keys.update(*es.names_of(part).values())
        new = _names(*store.catalog_entries(part, names_only=True))
        keys.update(*new.values())
        es.set_names(new)
        live.update(new)
    return live


def _relink(store: Store, ids: Sequence[str], chunk: int, *, mark: bool) -> int:
    """Resolve the links of the documents ``ids`` (names recorded), ``chunk`` at a time,
    each against a catalog of its documents and of those their links name; record what
    each document's links look for and, with ``mark``, mark the documents dirty."""
    es = store.edges
    n = 0
    for part in in_chunks(ids, chunk):
        links = store.links_from(part)
        wants: dict[str, set[str]] = {d: set() for d in part}
        for lk in links:
            wants.setdefault(lk.document_id, set()).update(link_keys(lk))
        n += _apply(store, links, catalog_for(store, set().union(*wants.values()), part))
        es.set_wants("link", wants)
        if mark:
            es.mark_dirty(part)
    return n


def _resolve_everything(store: Store, chunk: int) -> int:
    es = store.edges
    ids = es.document_ids()
    live = _record_names(store, ids, set(), chunk)
    names: dict[str, set[str]] = {
        attachment_node(r, p): {name_key(p)} for r, p in store.attachments()}
    stale = es.named_documents() - live - set(names)
    es.set_names({**{s: () for s in stale}, **names})
    es.forget_wants(sorted(stale))
    n = _relink(store, ids, chunk, mark=False)
    es.mark_dirty(["*"])
    return n


def resolve_all(store: Store) -> int:
    """Resolve every link in the store; returns how many resolutions changed
    (:func:`resolve_links` with ``None``: everything)."""
    return resolve_links(store, None, None)
