"""A multi-document export (a chat export) stored as a stream: each conversation as
soon as it is parsed, an unchanged one left alone, in bounded memory."""

from __future__ import annotations

from collections.abc import Callable

from cairn import formats
from cairn.errors import StoreUnwritable
from cairn.ingest import ids
from cairn.ingest.tally import Tally
from cairn.model import Diagnostic, Document, Failure, FileState, SourceRoot
from cairn.sources import SourceFile, content_hash
from cairn.store import Store


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
    stopped early. What happened is added to ``tally``; ``max_entry`` bounds one
    conversation, ``redact`` passes every document that is stored, ``scrub`` every
    failure.

    When ``redact`` has a ``fingerprint`` (a ``str`` that changes whenever its output
    could: :class:`cairn.redact.service.Redactor`), "unchanged" is decided before
    redaction, from a hash of the parsed document and that fingerprint, so an
    unchanged conversation is neither redacted nor rewritten; a new fingerprint (new
    settings, a new detector) makes every document count as changed. A hook without
    one is run on every document and its output is hashed.

    Raises:
        StoreUnwritable: the index cannot be written (the run stops).
    """
    fingerprint = getattr(redact, "fingerprint", None)
    if not isinstance(fingerprint, str):
        fingerprint = None
    existing = store.document_hashes(root.id, sf.relpath)
    seen: set[str] = set()
    taken_docs: set[str] = set()
    failures: list[Failure] = []
    stored = rewritten = 0
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
                parse = fmt.file_parser()
                for item in parse(sf.path, sf.relpath, max_entry=max_entry):
                    if isinstance(item, Failure):
                        failures.append(scrub(item))
                        continue
                    if fingerprint is None:  # an opaque hook: judge by its output
                        item = redact(item)
                    hash_ = _document_hash(item, fingerprint or "")
                    doc_id, conflict = ids.document_id_of(store, root, sf, item, taken_docs)
                    seen.add(doc_id)
                    stored += 1
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
            if not crashed:
                for gone in set(existing) - seen:
                    store.delete_document(gone)
            if failures:
                store.upsert_file(
                    root.id,
                    sf.relpath,
                    size=sf.size,
                    mtime=sf.mtime,
                    hash_=digest,
                    format_=fmt.name,
                    failure=failures[0],
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
    else:
        tally.changed += 1
    if rewritten < stored:
        tally.warnings.append(
            Diagnostic(
                sf.relpath,
                f"{rewritten} of {stored} documents changed; the rest kept as indexed",
                severity="info",
            )
        )


class _NothingStored(Exception):
    """Raised inside an export's transaction to undo it when nothing could be read."""


def _document_hash(doc: Document, fingerprint: str) -> str:
    """A content hash of a parsed document (before ids) and of the redaction it gets,
    to skip unchanged ones: the text is hashed, never stored or logged."""
    return content_hash(
        (fingerprint + "\x00" + repr(doc)).encode("utf-8", "surrogatepass")
    )
