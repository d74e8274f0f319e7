"""The embedding pass: chunk what changed, embed what is not cached, prune the rest.

The indexer calls :func:`embed_pass` after each run. It is incremental by construction:

1. units without chunks (new, or rewritten because their file changed, moved or was
   renamed — the store deletes a changed file's units and their chunks cascade) are
   chunked (:mod:`cairn.ingest.chunking`), each chunk keyed by the content hash of the
   exact text it embeds (metadata prefix + window);
2. chunks whose hash has no vector in the embedder's space are embedded in batches
   (identical texts once), so unchanged text is never embedded twice and a different
   model fills its own space;
3. vectors no live chunk uses are pruned.

Without an embedder (``--no-embed``, provider ``none``, or a model that cannot be
loaded) the pass chunks and prunes (no model is needed for either, and chunking first
keeps the vectors of moved notes) and returns one notice: units whose text has no
vector yet are found by keywords only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.embed.base import Embedder
from cairn.ingest.chunking import (
    ChunkConfig,
    TextChunk,
    chunk_text,
    content_hash,
    count_tokens,
    metadata_prefix,
)
from cairn.model import Chunk, ChunkSource, EmbedStep
from cairn.model.eta import WeighsWork
from cairn.store import Store, VectorIndex

EmbedProgress = Callable[[int, int, str], None]
"""``progress(done, total, phase)``: ``phase`` is ``"chunk"`` or ``"embed"``; ``done``
and ``total`` count units (chunk) or texts (embed). The embed phase is reported once
before the first text (``done`` 0, so a display sees the phase start before the model
loads) and after each commit; a callback that is also a
:class:`cairn.model.eta.WeighsWork` is told the characters embedded before each call
(texts go shortest first, so a count rate would promise too early an end)."""



EmbedReport = EmbedStep
"""What one embedding pass did (:class:`cairn.model.EmbedStep`)."""


CONTEXT_CHARS = 300
"""At most this much of the turn before a chat message is embedded with it (its end,
where a question usually is)."""
EMBED_TEXT_VERSION = "turn-context:1"
"""Part of the chunking signature: a change to what is embedded re-chunks every unit
(unchanged texts keep their vectors by hash)."""


def unit_prefix(unit: ChunkSource) -> str:
    """The metadata prefix of a unit (document title, outline path with the unit's own
    title, tags): what is embedded before each of its chunks' windows. A chat message's
    prefix ends with the turn before it (:func:`turn_context`)."""
    outline = unit.outline_path
    if unit.title and (not outline or outline[-1] != unit.title):
        outline = (*outline, unit.title)
    prefix = metadata_prefix(unit.doc_title, outline, unit.tags)
    return prefix + turn_context(unit) if unit.kind == "message" else prefix


def turn_context(unit: ChunkSource) -> str:
    """What is embedded between a chat message's metadata line and its text: the turn
    before it as ``"Speaker: text"`` (its last :data:`CONTEXT_CHARS` characters, from a
    word start) on its own line, then the message's own speaker, ``"Speaker: "``. A
    turn of a conversation is short and often answers the one before it ("5 years
    already!" answers "How long have you been married?"), so its meaning is embedded
    with that question; a link or image in it keeps only its text. The speaker is the
    title before ``" · "`` (``"Caroline · 2023-05-08 13:56"`` → ``Caroline``); ``""``
    for a message with neither."""
    out = ""
    before = " ".join(_LINK.sub(r"\1", unit.before_body).split())
    if before:
        if len(before) > CONTEXT_CHARS:
            cut = before[-CONTEXT_CHARS:]
            before = cut.split(" ", 1)[1] if " " in cut else cut
        who = _speaker(unit.before_title)
        out = f"{who}: {before}\n" if who else before + "\n"
    who = _speaker(unit.title)
    return out + (f"{who}: " if who else "")


_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")
"""A Markdown link or image: its text is kept, its address (no meaning, many tokens)
dropped."""


def _speaker(title: str) -> str:
    return title.split(" · ", 1)[0].strip()


def chunk_unit(unit: ChunkSource, config: ChunkConfig) -> tuple[str, list[TextChunk], list[str]]:
    """``(profile name, chunks, embedded texts)`` for one unit.

    A heading (or message, concept …) with a blank body but a title gets one empty chunk,
    so its title (carried by the prefix) is still searchable by meaning; a blank
    preamble (the empty text before a file's first heading) gets none.
    """
    name, profile = config.profile_for(unit.doc_type)
    chunks = chunk_text(unit.unit_id, unit.body, profile)
    prefix = unit_prefix(unit)
    if not chunks and prefix.strip() and unit.kind != "preamble":
        chunks = [TextChunk(unit.unit_id, 0, "", "", 0, 0, 0, 0, 0)]
    return name, chunks, [prefix + c.window for c in chunks]


UNIT_PAGE = 500
"""Units whose text :func:`chunk_pending` holds at once."""
TEXT_PAGE = 4096
"""Texts :func:`embed_missing` holds at once (sorted by length within a page)."""


def chunk_pending(
    store: Store,
    config: ChunkConfig,
    document_ids: Sequence[str] | None = None,
    progress: EmbedProgress | None = None,
) -> tuple[int, int]:
    """Chunk every unit that has no chunks (optionally only in ``document_ids``).

    Redoes all chunks when the chunking settings changed. Returns ``(units that got
    chunks, chunks)``; blank units get none and are looked at again on the next pass.
    """
    vs: VectorIndex = store.vectors
    sig = f"{config.signature()}+{EMBED_TEXT_VERSION}"
    if vs.chunker_signature() != sig:
        with store.transaction():
            vs.reset_chunks(sig)
        document_ids = None
    # the units are read a page at a time: memory holds one page of text, not the index
    rowids = vs.unchunked_rowids(document_ids)
    total = len(rowids)
    n_units = n_chunks = 0
    batch: list[Chunk] = []
    i = 0
    for start in range(0, total, UNIT_PAGE):
        for unit in vs.chunk_sources(rowids[start : start + UNIT_PAGE]):
            i += 1
            name, chunks, texts = chunk_unit(unit, config)
            for c, t in zip(chunks, texts, strict=True):
                batch.append(
                    Chunk(
                        c.unit_id,
                        c.ordinal,
                        c.start,
                        c.end,
                        c.window_start,
                        c.window_end,
                        c.tokens or count_tokens(t),
                        name,
                        content_hash(t),
                    )
                )
            n_units += 1 if chunks else 0
            n_chunks += len(chunks)
            if len(batch) >= 2000:
                with store.transaction():
                    vs.add_chunks(batch)
                batch = []
            if progress and i % 200 == 0:
                progress(i, total, "chunk")
    if batch:
        with store.transaction():
            vs.add_chunks(batch)
    if progress and i % 200:
        progress(i, total, "chunk")
    return n_units, n_chunks


COMMIT_SECONDS = 2.0
"""A batch of vectors is committed at least this often (seconds of model time), so a
killed or interrupted pass loses at most this much work."""


@dataclass
class EmbedTally:
    """What :func:`embed_missing` did so far (kept when it is interrupted).

    Attributes:
        embedded: distinct texts embedded and committed.
        total: distinct texts that lacked a vector when the pass started.
        missing: chunks that lacked a vector when the pass started.
        spent: seconds inside the embedder.
        interrupted: stopped by Ctrl-C (``KeyboardInterrupt``) after the last commit.
    """

    embedded: int = 0
    total: int = 0
    missing: int = 0
    spent: float = 0.0
    interrupted: bool = False


def embed_missing(
    store: Store,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    progress: EmbedProgress | None = None,
    tally: EmbedTally | None = None,
) -> tuple[int, int, float]:
    """Embed every live chunk lacking a vector in the embedder's space.

    Texts are embedded once per distinct hash, read :data:`TEXT_PAGE` at a time and
    sorted by length within a page so batches pad little, ``batch_size`` per embedder
    call; vectors are committed every
    :data:`COMMIT_SECONDS` (or every ``16 × batch_size`` texts), so a pass that is
    killed keeps what it committed and the next pass embeds only the rest.

    Args:
        tally: filled as the pass goes (read it when this raises ``KeyboardInterrupt``).

    Returns:
        ``(distinct texts embedded, chunks that lacked a vector, seconds in embedder)``.

    Raises:
        KeyboardInterrupt: passed on after the vectors embedded before it were
            committed (the embedder call it interrupted is dropped).
    """
    vs: VectorIndex = store.vectors
    space = embedder.fingerprint
    t = tally if tally is not None else EmbedTally()
    with store.transaction():
        vs.ensure_space(space, embedder.name, embedder.dim)
    t.missing = vs.missing_vectors(space)
    # the texts are read a page at a time (each once, however many chunks share it):
    # a first pass without bodies counts them and their characters, the second embeds
    chars_total = 0
    after = 0
    while page := vs.missing_texts(space, after, TEXT_PAGE, bodies=False):
        t.total += len(page)
        chars_total += sum(len(unit_prefix(u)) + c.window_end - c.window_start
                           for _i, c, u in page)
        after = page[-1][0]
    if t.total:
        with store.transaction():
            vs.expect_vectors(space, t.total)
    bs = max(1, batch_size)
    most = bs * 16
    held: list[tuple[str, Any]] = []
    since = 0.0  # model seconds since the last commit
    weigh = progress.work if isinstance(progress, WeighsWork) else None
    chars_done = chars_held = 0

    def report() -> None:
        if weigh is not None:
            weigh(chars_done, chars_total, "embed")
        if progress:
            progress(t.embedded, t.total, "embed")

    if t.total:
        report()
    after = 0
    try:
        while page := vs.missing_texts(space, after, TEXT_PAGE):
            after = page[-1][0]
            texts = {c.hash: unit_prefix(u) + u.body[c.window_start : c.window_end]
                     for _i, c, u in page}
            del page
            order = sorted(texts, key=lambda h: len(texts[h]))  # shortest first: less padding
            for i in range(0, len(order), bs):
                part = order[i : i + bs]
                t0 = time.perf_counter()
                batch = [texts[h] for h in part]
                vecs = embedder.embed(batch)
                took = time.perf_counter() - t0
                t.spent += took
                since += took
                held.extend(zip(part, vecs, strict=True))
                chars_held += sum(len(x) for x in batch)
                if since >= COMMIT_SECONDS or len(held) >= most or i + bs >= len(order):
                    with store.transaction():
                        vs.put_vectors(space, held)
                    t.embedded += len(held)
                    chars_done += chars_held
                    held, since, chars_held = [], 0.0, 0
                    report()
    except KeyboardInterrupt:
        # the signal lands between two embedder calls: the vectors made before it are
        # kept (the next pass embeds only the rest), the call it interrupted is dropped
        if held:
            with store.transaction():
                vs.put_vectors(space, held)
            t.embedded += len(held)
        raise
    return t.embedded, t.missing, t.spent


def embed_pass(
    store: Store,
    embedder: Embedder | None,
    *,
    document_ids: Sequence[str] | None = None,
    config: ChunkConfig | None = None,
    batch_size: int = 64,
    progress: EmbedProgress | None = None,
) -> EmbedReport:
    """Bring chunks and vectors up to date after an indexing run.

    Args:
        store: the open store.
        embedder: the embedder, or ``None`` when embeddings are off or unavailable.
        document_ids: documents added or changed in the run (``None``: find every unit
            without chunks; the result is the same, the look-up a little wider).
        config: chunking settings.
        batch_size: texts per embedder call (the pass hands the embedder
            ``16 × batch_size`` texts at a time and commits after each).
        progress: called as chunks and vectors are made.

    Returns:
        An :class:`EmbedReport` (``space == ""`` when nothing was embedded). Never
        raises for a missing model: pass ``None`` and units are only chunked. Ctrl-C
        (``KeyboardInterrupt``) while chunking or embedding ends the pass early, not
        with an exception: what was committed stays, and the report has
        ``interrupted`` set and ``pending`` chunks still without a vector.
    """
    t0 = time.perf_counter()
    vs = store.vectors
    cfg = config or ChunkConfig()
    if embedder is None:
        # chunk anyway (no model needed): a moved or renamed note's new chunks keep
        # referring to its cached vectors, so pruning below cannot drop them and the
        # note stays findable by meaning
        n_units, n_chunks = chunk_pending(store, cfg, document_ids, progress)
        with store.transaction():
            pruned = vs.prune()
        return EmbedReport(
            units_chunked=n_units,
            chunks_added=n_chunks,
            pruned=pruned,
            seconds=round(time.perf_counter() - t0, 4),
        )
    tally = EmbedTally()
    n_units = n_chunks = 0
    try:
        n_units, n_chunks = chunk_pending(store, cfg, document_ids, progress)
        embed_missing(store, embedder, batch_size=batch_size, progress=progress, tally=tally)
    except KeyboardInterrupt:
        # Ctrl-C: the batch in progress was rolled back, the committed ones stay; the
        # step reports what is still waiting (`cairn embed` or the next index resumes)
        tally.interrupted = True
    with store.transaction():
        pruned = vs.prune()
    return EmbedReport(
        space=embedder.fingerprint,
        units_chunked=n_units,
        chunks_added=n_chunks,
        embedded=tally.embedded,
        cached=max(0, n_chunks - tally.missing),
        pruned=pruned,
        seconds=round(time.perf_counter() - t0, 4),
        embed_seconds=round(tally.spent, 4),
        pending=vs.missing_vectors(embedder.fingerprint) if tally.interrupted else 0,
        interrupted=tally.interrupted,
    )
