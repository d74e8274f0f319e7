"""``cairn enrich``: the enrichment service of one index (:class:`EnrichService`).

Per conversation a summary, 3–10 insights citing their messages and tags from the
user's vocabulary; the summary and insights become units of the conversation's document
(kinds ``summary`` and ``insight``, searchable, never written to a file); candidate
pairs of similar conversations (cosine of their mean message embeddings ≥ ``[enrich]
similarity``) are labelled by the model and become edges of origin ``llm`` with the
confidence as weight and the model's reason as evidence.

Every text sent to the model is masked by :class:`cairn.redact.Masker` first,
whatever ``[redact] on_ingest`` says. After each index run :meth:`EnrichService.refresh`
re-writes the enrichment units a re-index dropped (from the stored enrichment, or the
reply cache when the content changed to something already answered) and the ``llm``
edges — no request is made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.enrich.chat import (
    CONVERSATION,
    ChatText,
    chat_text,
    conversation_task,
    enrichment_from,
    mask,
    me,
    prompt_version,
    units_for,
)
from cairn.enrich.relations import Vectors, llm_edges, relation_tasks
from cairn.enrich.show import EnrichedConversation, Locate, enriched_conversation
from cairn.formats import conversation_formats

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.enrich import Estimate, RunStats, Task
    from cairn.enrich.providers import HttpProvider
    from cairn.enrich.settings import EnrichSettings
    from cairn.model import StoredDocument
    from cairn.model.enrich import RelationLabel
    from cairn.model.reliability import Wait
    from cairn.store import Store

Writing = Callable[["Wait", "Callable[[str], None] | None"], AbstractContextManager[None]]
"""``writing(wait, on_wait)``: hold the index's writer lock for a block."""

NOT_CONFIGURED = (
    "enrichment is not configured (no [enrich] provider in cairn.toml); nothing was "
    "changed. To ask a local OpenAI-compatible server (llama.cpp's llama-server, Ollama, "
    "LM Studio), add to cairn.toml:\n"
    "[enrich]\n"
    'provider = "openai"\n'
    'url = "http://127.0.0.1:8080/v1"   # llama-server; Ollama: http://127.0.0.1:11434/v1\n'
    'model = "NAME"                     # the model the server serves\n'
    'A hosted API also needs api_key_env = "VARIABLE_HOLDING_THE_KEY"; Anthropic: '
    'provider = "anthropic". See docs/guides/enrich.md.'
)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A task (a conversation or a pair of them, by its label) left without a usable
    reply, and why."""

    item: str
    reason: str


@dataclass(frozen=True)
class EnrichReport:
    """What ``cairn enrich`` did (or, with ``dry_run``, would do).

    Attributes:
        configured: whether ``[enrich]`` names a provider (``False``: nothing done,
            ``message`` says how to configure it).
        dry_run: only the estimate was computed.
        provider / model: what was asked.
        conversations: conversations found; ``pairs``: candidate pairs of them.
        estimate: requests, tokens and cost of the conversation requests not cached;
            ``pair_estimate``: of the relation requests (after a dry run: from the
            summaries cached so far).
        requests / cached / answered / retried: requests made, tasks answered from the
            cache, tasks answered by the model, bad replies asked again.
        skipped: each task without a usable reply.
        input_tokens / output_tokens: counted by the server (else estimated).
        enriched / insights / relations / llm_edges: stored after the run.
        seconds: wall time.
        notes: anything the user should know (no embeddings for relations …).
    """

    configured: bool
    message: str = ""
    dry_run: bool = False
    provider: str | None = None
    model: str | None = None
    conversations: int = 0
    pairs: int = 0
    estimate: Estimate | None = None
    pair_estimate: Estimate | None = None
    requests: int = 0
    cached: int = 0
    answered: int = 0
    retried: int = 0
    skipped: tuple[Skipped, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    enriched: int = 0
    insights: int = 0
    relations: int = 0
    llm_edges: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()


class EnrichService:
    """Summaries, insights, tags and typed relations of one index's conversations.

    Args:
        store: the index.
        config: the configuration (``[enrich]``).
        writing: holds the index's writer lock (``writing(wait, on_wait)``).
        vectors: the index's embeddings, for relations.
        locate: ``PATH[:LINE]`` → ``(root id, relpath, line)`` as ``cairn show`` reads it.
    """

    def __init__(self, store: Store, config: Config, *, writing: Writing, vectors: Vectors,
                 locate: Locate) -> None:
        self._store = store
        self._config = config
        self._writing = writing
        self._vectors = vectors
        self._locate = locate

    def settings(self) -> EnrichSettings:
        """``[enrich]``, checked.

        Raises:
            cairn.errors.ConfigError: a bad value (the message names the key).
        """
        from cairn.enrich.settings import EnrichSettings

        return EnrichSettings.from_mapping(self._config.enrich)

    def show(self, ref: str) -> EnrichedConversation:
        """One conversation's enrichment: ``ref`` is a document id, a unit id (of any of
        its units), a unique id prefix (at least 4 characters) or a path
        (``PATH[:LINE]``; a file of several enriched conversations needs the line or
        an id).

        Raises:
            NotFound: no such conversation, ``ref`` is ambiguous, or it is not enriched.
        """
        return enriched_conversation(self._store, ref, self._locate)

    # --- the run -------------------------------------------------------------------
    def run(
        self,
        *,
        dry_run: bool = False,
        limit: int | None = None,
        relations: bool = True,
        retry_invalid: bool = False,
        progress: Callable[[int, int, str], None] | None = None,
        on_estimate: Callable[[Estimate], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        wait: Wait = "config",
        on_wait: Callable[[str], None] | None = None,
    ) -> EnrichReport:
        """Enrich the index's conversations with the ``[enrich]`` model.

        The run holds the index's writer lock from its first request to its last write
        (a dry run takes none), as indexing does: a second writer waits or is refused.

        Args:
            dry_run: only estimate requests, tokens and cost; ask nothing, change
                nothing.
            limit: enrich at most this many conversations (newest first).
            relations: also type the relations of similar conversations.
            retry_invalid: ask again where a reply was invalid twice before.
            progress: ``progress(done, total, item)`` after each request or cache hit.
            on_estimate: called with the conversation requests' estimate before the
                first request (the CLI prints it).
            sleep: how rate-limit waits are made (tests record them).
            wait / on_wait: as for ``IndexService.writing`` (default ``[index]
                wait``: refuse at once when another process writes).

        Returns:
            An :class:`EnrichReport`; with no provider configured, ``configured`` is
            false and nothing is changed.

        Raises:
            cairn.errors.ConfigError: a bad ``[enrich]`` value, or its ``api_key_env``
                unset.
            cairn.errors.StoreError: the index cannot be written.
            cairn.store.lock.IndexBusy: another process writes the index (after ``wait``).
        """
        if dry_run or not self.settings().configured:  # nothing to write
            return self._enrich(dry_run=dry_run, limit=limit, relations=relations,
                                retry_invalid=retry_invalid, progress=progress,
                                on_estimate=on_estimate, sleep=sleep)
        with self._writing(wait, on_wait):
            return self._enrich(dry_run=False, limit=limit, relations=relations,
                                retry_invalid=retry_invalid, progress=progress,
                                on_estimate=on_estimate, sleep=sleep)

    def _enrich(
        self,
        *,
        dry_run: bool,
        limit: int | None,
        relations: bool,
        retry_invalid: bool,
        progress: Callable[[int, int, str], None] | None,
        on_estimate: Callable[[Estimate], None] | None,
        sleep: Callable[[float], None],
    ) -> EnrichReport:
        from cairn.enrich import Pipeline, RunStats
        from cairn.enrich.providers import make_provider

        t0 = time.perf_counter()
        settings = self.settings()
        if not settings.configured:
            return EnrichReport(configured=False, message=NOT_CONFIGURED)
        provider = make_provider(settings, sleep=sleep)
        pipeline = Pipeline(
            provider, self._store.enrichments, redact=mask,
            price_input=settings.price_input, price_output=settings.price_output,
            retry_invalid=retry_invalid,
        )
        convs = self._conversations(settings, limit)
        vocabulary = self._store.enrichments.user_tags(settings.max_tags)
        tasks = [conversation_task(c, vocabulary, settings) for c in convs]
        estimate = pipeline.estimate(tasks)
        if on_estimate is not None:
            on_estimate(estimate)
        notes: list[str] = []
        if dry_run:
            pair_tasks, pnotes = (relation_tasks(self._store, self._vectors, settings, convs)
                                  if relations else ([], []))
            return self._report(settings, provider, convs, estimate, pipeline.estimate(pair_tasks),
                                RunStats(), dry_run=True, pairs=len(pair_tasks),
                                notes=[*pnotes, "dry run: nothing was asked or changed"],
                                t0=t0)
        stats = RunStats()
        by_id = {c.doc.id: c for c in convs}

        def on_conversation(task: Task, value: Any) -> None:
            c = by_id[task.ref]
            e = enrichment_from(self._store, c, value, provider.model, settings)
            self._store.enrichments.save_enrichment(e)
            self._store.enrichments.put_units(c.doc.id, units_for(self._store, c.doc.id, e))

        pipeline.run(tasks, on_conversation, progress=progress, stats=stats)
        pairs = 0
        pair_estimate = None
        if relations:
            pair_tasks, pnotes = relation_tasks(self._store, self._vectors, settings, convs)
            notes.extend(pnotes)
            pairs = len(pair_tasks)
            pair_estimate = pipeline.estimate(pair_tasks)
            labels: list[RelationLabel] = []

            def on_pair(task: Task, value: Any) -> None:
                a, b, sim = task.ref
                if value["relation"] == "none" or value["confidence"] < settings.min_confidence:
                    return
                labels.append(me().RelationLabel(
                    a, b, value["relation"], float(value["confidence"]),
                    str(value["reason"]).strip().splitlines()[0][:300] if value["reason"] else "",
                    round(sim, 4), provider.model, prompt_version(),
                ))

            pipeline.run(pair_tasks, on_pair, progress=progress, stats=stats)
            self._store.enrichments.save_relations(labels)
        self._sync_llm_edges()
        return self._report(settings, provider, convs, estimate, pair_estimate, stats,
                            pairs=pairs, notes=notes, t0=t0)

    def _report(
        self,
        settings: EnrichSettings,
        provider: HttpProvider,
        convs: Sequence[ChatText],
        estimate: Estimate,
        pair_estimate: Estimate | None,
        stats: RunStats,
        *,
        dry_run: bool = False,
        pairs: int = 0,
        notes: Sequence[str] = (),
        t0: float,
    ) -> EnrichReport:
        counts = self._store.enrichments.counts()
        if not dry_run and any(c > 0 for c in [stats.answered]):
            notes = [*notes, "run `cairn embed` (or the next `cairn index`) so semantic "
                             "search finds the new insights"]
        return EnrichReport(
            configured=True,
            dry_run=dry_run,
            provider=settings.provider,
            model=provider.model,
            conversations=len(convs),
            pairs=pairs,
            estimate=estimate,
            pair_estimate=pair_estimate,
            requests=stats.requests,
            cached=stats.cached,
            answered=stats.answered,
            retried=stats.retried,
            skipped=tuple(Skipped(i, r) for i, r in stats.skipped),
            input_tokens=stats.input_tokens,
            output_tokens=stats.output_tokens,
            enriched=counts["conversations"],
            insights=counts["insights"],
            relations=counts["relations"],
            llm_edges=counts["llm_edges"],
            seconds=round(time.perf_counter() - t0, 3),
            notes=tuple(notes),
        )

    # --- conversations ----------------------------------------------------------------
    def _chat_documents(self) -> list[StoredDocument]:
        docs: list[StoredDocument] = []
        offset = 0
        while True:
            page = self._store.documents_by_format(sorted(conversation_formats()), limit=500,
                                                  offset=offset)
            docs.extend(page)
            if len(page) < 500:
                return docs
            offset += 500

    def _conversations(self, settings: EnrichSettings, limit: int | None) -> list[ChatText]:
        out: list[ChatText] = []
        for doc in self._chat_documents():
            if limit is not None and len(out) >= limit:
                break
            c = chat_text(self._store, doc, settings)
            if c is not None:
                out.append(c)
        return out

    def _sync_llm_edges(self) -> int:
        return self._store.enrichments.llm_edges(llm_edges(self._store))

    # --- after an index run -----------------------------------------------------------
    def refresh(self) -> None:
        """Re-write what a re-index dropped: enrichment units of re-written
        conversations (from the stored enrichment when the text is unchanged, else
        from the reply cache) and the ``llm`` edges. No request; nothing when
        ``[enrich]`` is not configured."""
        import json

        from cairn.enrich.prompts import cache_key
        from cairn.errors import ConfigError

        cfg = self._config.enrich
        if not cfg or "provider" not in cfg:
            return
        try:
            settings = self.settings()
        except ConfigError:  # `cairn enrich` names the key; indexing is not held up by it
            return
        en = self._store.enrichments
        en.forget(en.orphans())
        for doc_id in en.without_units():
            old = en.enrichment(doc_id)
            doc = self._store.document(doc_id)
            c = chat_text(self._store, doc, settings) if doc is not None else None
            if old is None or c is None:
                en.forget([doc_id])
                continue
            if c.content_hash != old.content_hash:
                got = en.cached(cache_key(CONVERSATION, settings.model, c.content_hash))
                if got is None or got[0] != "ok":
                    en.forget([doc_id])  # changed: the next `cairn enrich` asks again
                    continue
                old = enrichment_from(self._store, c, json.loads(got[1]), settings.model, settings)
                en.save_enrichment(old)
            else:  # the same text: message ids may differ after a re-parse
                from cairn.enrich.prompts import as_reply

                old = enrichment_from(self._store, c, as_reply(old, c.messages), old.model,
                                      settings)
                en.save_enrichment(old)
            en.put_units(doc_id, units_for(self._store, doc_id, old))
        self._sync_llm_edges()
