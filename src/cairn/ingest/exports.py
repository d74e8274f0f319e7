"""A multi-document export (a chat export) stored as a stream: each conversation as
soon as it is parsed, an unchanged one left alone, in bounded memory."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from cairn import formats
from cairn.errors import StoreUnwritable
from cairn.ingest import ids
from cairn.ingest.tally import Tally
from cairn.model import Diagnostic, Document, Failure, FileState, SourceRoot
from cairn.sources import SourceFile, content_hash
from cairn.store import Store

if TYPE_CHECKING:
    from cairn.formats.chats import Entry, Reuse


def store_export(
    store: Store,
    root: SourceRoot,
    sf: SourceFile,
    state: FileState | None,
    digest: str,
    fmt: formats.Format,
    tally: Tally,
    *,
    max_entry: int,
    redact: Callable[[Document], Document],
    scrub: Callable[[Failure], Failure],
) -> None:
    """Index a multi-document export as a stream, in bounded memory.

    Each document is stored as soon as it is parsed; one whose content hash is
    unchanged since the last import is left alone (its rows and ids stay), so a newer
    export of the same account only rewrites the conversations that changed.
    Documents gone from the export are removed at the end, unless the parser
    stopped early (a parser error; truncated or invalid JSON: the conversations
    after the break are kept as indexed). What happened is added to ``tally``;
    ``max_entry`` bounds one conversation, ``redact`` passes every document that is
    stored, ``scrub`` every failure.

    When ``redact`` has a ``fingerprint`` (a ``str`` that changes whenever its output
    could: :class:`cairn.redact.service.Redactor`), "unchanged" is decided before
    parsing when the format can (``read_entries`` of :mod:`cairn.formats.chats`): from
    a hash of the conversation's text in the file, of the parser and of that
    fingerprint, so an unchanged conversation is not built, redacted nor rewritten;
    else from a hash of the parsed document and the fingerprint. A new fingerprint (new
    settings, a new detector) or a new parser makes every document count as changed. A
    hook without a fingerprint is run on every document and its output is hashed.

    Raises:
        StoreUnwritable: the index cannot be written (the run stops).
    """
    fingerprint = getattr(redact, "fingerprint", None)
    if not isinstance(fingerprint, str):
        fingerprint = None
    existing = store.document_hashes(root.id, sf.relpath)
    by_hash = {h: d for d, h in existing.items()}
    seen: set[str] = set()
    taken_docs: set[str] = set()
    reused_ids: set[str] = set()
    failures: list[Failure] = []
    stored = rewritten = reused = removed = 0
    cut_short: list[bool] = []  # the reader stopped before the export's end

    def unchanged(digest: str) -> bool:
        doc_id = by_hash.get(_entry_hash(digest, fingerprint or ""))
        if doc_id is None or doc_id in seen:  # new, changed, or a second copy
            return False
        seen.add(doc_id)
        taken_docs.add(doc_id)
        reused_ids.add(doc_id)
        return True

    def claimed(key: str) -> bool:
        # a reused document's id is its declared id or the path-based one
        return bool(reused_ids) and (
            key in reused_ids or ids.document_id(root.id, sf.relpath, key) in reused_ids
        )

    crashed = False
    warnings: list[Diagnostic] = []
    try:
        with store.transaction():
            store.upsert_file(
                root.id,
                sf.relpath,
                size=sf.size,
                mtime=sf.mtime,
                hash_=digest,
                format_=fmt.name,
            )
            try:
                # a streamed export may be of any size; one conversation may not
                for entry in _entries(
                    fmt, sf, max_entry, fingerprint, unchanged, claimed,
                    lambda: cut_short.append(True),
                ):
                    if isinstance(entry, Failure):
                        failures.append(scrub(entry))
                        continue
                    stored += 1
                    item = entry.doc
                    if item is None:  # the same text as indexed: its rows stay
                        reused += 1
                        continue
                    if fingerprint is None:  # an opaque hook: judge by its output
                        item = redact(item)
                    hash_ = (
                        _entry_hash(entry.digest, fingerprint or "")
                        if entry.digest
                        else _document_hash(item, fingerprint or "")
                    )
                    doc_id, conflict = ids.document_id_of(store, root, sf, item, taken_docs)
                    seen.add(doc_id)
                    if existing.get(doc_id) == hash_:
                        # unchanged, and redaction would make what it made before:
                        # neither pass is run again (a parse warning is still masked)
                        if item.warnings and fingerprint is not None:
                            item = redact(item)
                        warnings.extend(item.warnings)
                        if conflict is not None:
                            warnings.append(conflict)
                        continue
                    if fingerprint is not None:
                        item = redact(item)
                    # a unit id is checked against this document's ids and the
                    # store, which holds the export's earlier documents already:
                    # no set of every unit id of the export is kept
                    doc = ids.assign_doc_ids(
                        store, root, sf, item, taken_docs, set(),
                        content_hash=hash_, known=(doc_id, conflict),
                    )
                    warnings.extend(doc.warnings)
                    store.replace_document(doc)
                    rewritten += 1
            except Exception as exc:  # a parser bug: keep what was read
                crashed = True
                failures.append(scrub(
                    Failure(sf.relpath, f"parser error: {type(exc).__name__}: {exc}")
                ))
            if not stored and failures:
                raise _NothingStored
            if not crashed and not cut_short:  # what was not read is not known gone
                for gone in set(existing) - seen:
                    store.delete_document(gone)
                    removed += 1
            if failures:
                store.upsert_file(
                    root.id,
                    sf.relpath,
                    size=sf.size,
                    mtime=sf.mtime,
                    hash_=digest,
                    format_=fmt.name,
                    failure=_partly(failures, crashed or bool(cut_short)),
                )
    except _NothingStored:
        if failures[0].reason.startswith(formats.NOT_THIS_FORMAT):
            tally.skipped += 1
            tally.warnings.append(
                Diagnostic(sf.relpath, failures[0].reason + "; skipped", severity="info")
            )
            return
        tally.failed += 1
        tally.failures.extend(failures)
        store.record_failure(root.id, sf.relpath, sf.size, sf.mtime, digest, failures[0])
        return
    except StoreUnwritable:
        raise
    except Exception as exc:  # a store-level fault for this file only
        failure = scrub(
            Failure(sf.relpath, f"could not store: {type(exc).__name__}: {exc}")
        )
        tally.failures.append(failure)
        tally.failed += 1
        store.record_failure(root.id, sf.relpath, sf.size, sf.mtime, digest, failure)
        return
    tally.warnings.extend(warnings)
    # parts that failed: the file itself is indexed, so they are warnings naming it
    tally.warnings.extend(
        Diagnostic(
            sf.relpath,
            f"partly indexed: {f.reason}" + (f" (line {f.line})" if f.line else ""),
        )
        for f in failures
    )
    if state is None:
        tally.added += 1
    elif rewritten or removed:
        tally.changed += 1
    else:  # read again (new bytes or mtime, or a part failed) but nothing to rewrite
        tally.unchanged += 1
    if rewritten < stored:
        tally.warnings.append(
            Diagnostic(
                sf.relpath,
                f"{rewritten} of {stored} documents changed; the rest kept as indexed"
                + (f" ({reused} recognised unchanged without being parsed)" if reused else ""),
                severity="info",
            )
        )


def _entries(
    fmt: formats.Format,
    sf: SourceFile,
    max_entry: int,
    fingerprint: str | None,
    unchanged: Callable[[str], bool],
    claimed: Callable[[str], bool],
    stopped: Callable[[], None],
) -> Iterator[Entry | Failure]:
    """The export's conversations as Entries: read with ``reuse`` (unchanged ones not
    built) when the format offers ``read_entries`` and redaction has a fingerprint,
    else every document parsed and given no digest."""
    from cairn.formats.chats import Entry, Reuse

    module = importlib.import_module(fmt.module)
    read = getattr(module, "read_entries", None)
    if read is not None and fingerprint is not None:
        reuse: Reuse = Reuse(unchanged=unchanged, claimed=claimed, stopped=stopped)
        yield from read(sf.path, sf.relpath, max_entry=max_entry, reuse=reuse)
        return
    for item in fmt.file_parser()(sf.path, sf.relpath, max_entry=max_entry):
        yield item if isinstance(item, Failure) else Entry("", item)


def _entry_hash(digest: str, fingerprint: str) -> str:
    """The content hash stored for a conversation read by its text: its digest (text
    and parser) and the redaction it gets."""
    return content_hash((fingerprint + "\x00entry\x00" + digest).encode("utf-8"))


def _partly(failures: list[Failure], stopped: bool) -> Failure:
    """The one reason kept for a partly indexed export (what ``cairn stats`` shows),
    covering every part the run reported: the reason reading stopped, when it did (the
    last failure: what came after it is not indexed), then how many conversations were
    skipped as unreadable."""
    head = failures[-1] if stopped else failures[0]
    others = len(failures) - 1
    if not others:
        return head
    what = "other part" if stopped else "more part"
    return Failure(
        head.path, f"{head.reason}; and {others} {what}{'s' if others > 1 else ''} not indexed",
        head.line,
    )


class _NothingStored(Exception):
    """Raised inside an export's transaction to undo it when nothing could be read."""


def _document_hash(doc: Document, fingerprint: str) -> str:
    """A content hash of a parsed document (before ids) and of the redaction it gets,
    to skip unchanged ones: the text is hashed, never stored or logged."""
    return content_hash(
        (fingerprint + "\x00" + repr(doc)).encode("utf-8", "surrogatepass")
    )
