"""The enrichment part of :class:`cairn.app.Cairn` (issue 18): ``cairn enrich``.

Per conversation a summary, 3–10 insights citing their messages and tags from the
user's vocabulary (:mod:`cairn.enrich`); the summary and insights become units of the
conversation's document (kinds ``summary`` and ``insight``, searchable, never written
to a file); candidate pairs of similar conversations (cosine of their mean message
embeddings ≥ ``[enrich] similarity``) are labelled by the model and become edges of
origin ``llm`` with the confidence as weight and the model's reason as evidence.

Every text sent to the model is masked by :class:`cairn.redact.Masker` first,
whatever ``[redact] on_ingest`` says. After each index run :meth:`_enrich_refresh`
re-writes the enrichment units a re-index dropped (from the stored enrichment, or the
reply cache when the content changed to something already answered) and the ``llm``
edges — no request is made.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.app.enrich_show import EnrichShowMixin
from cairn.app.redact import CHAT_FORMATS
from cairn.model import MESSAGE, Unit

if TYPE_CHECKING:
    from cairn.enrich import Estimate, Message, RunStats, Task
    from cairn.enrich.providers import HttpProvider
    from cairn.enrich.settings import EnrichSettings
    from cairn.model import Edge, StoredDocument
    from cairn.model.enrich import Enrichment, RelationLabel
    from cairn.model.reliability import Wait

def _me() -> Any:
    """``cairn.model.enrich``, loaded when enrichment is used (not by every search)."""
    from cairn.model import enrich

    return enrich


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
CONVERSATION = "conversation"
RELATION = "relation"


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
        skipped: ``{"item", "reason"}`` of each task without a usable reply.
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
    skipped: tuple[dict[str, str], ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    enriched: int = 0
    insights: int = 0
    relations: int = 0
    llm_edges: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass
class _Conversation:
    doc: StoredDocument
    messages: list[Message]
    text: str
    content_hash: str


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EnrichMixin(EnrichShowMixin):
    """``cairn enrich``: summaries, insights, tags and typed relations by a model."""

    writing: Callable[..., AbstractContextManager[None]]

    def enrich_settings(self) -> EnrichSettings:
        """``[enrich]``, checked.

        Raises:
            cairn.errors.ConfigError: a bad value (the message names the key).
        """
        from cairn.enrich.settings import EnrichSettings

        return EnrichSettings.from_mapping(self.config.enrich)

    @staticmethod
    def _mask(text: str) -> str:
        """What every text sent to a model goes through (whatever ``on_ingest`` says)."""
        from cairn.redact import Masker

        return Masker().mask(text)

    # --- the run ----------------------------------------------------------------------
    def enrich(
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
            wait / on_wait: as for :meth:`cairn.app.reliability.ReliabilityMixin.writing`
                (default ``[index] wait``: refuse at once when another process writes).

        Returns:
            An :class:`EnrichReport`; with no provider configured, ``configured`` is
            false and nothing is changed.

        Raises:
            cairn.errors.ConfigError: a bad ``[enrich]`` value, or its ``api_key_env``
                unset.
            cairn.errors.StoreError: the index cannot be written.
            cairn.store.lock.IndexBusy: another process writes the index (after ``wait``).
        """
        if dry_run or not self.enrich_settings().configured:  # nothing to write
            return self._enrich(dry_run=dry_run, limit=limit, relations=relations,
                                retry_invalid=retry_invalid, progress=progress,
                                on_estimate=on_estimate, sleep=sleep)
        with self.writing(wait, on_wait):
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
        settings = self.enrich_settings()
        if not settings.configured:
            return EnrichReport(configured=False, message=NOT_CONFIGURED)
        provider = make_provider(settings, sleep=sleep)
        pipeline = Pipeline(
            provider, self.store.enrichments, redact=self._mask,
            price_input=settings.price_input, price_output=settings.price_output,
            retry_invalid=retry_invalid,
        )
        convs = self._conversations(settings, limit)
        vocabulary = self.store.enrichments.user_tags(settings.max_tags)
        tasks = [self._conversation_task(c, vocabulary, settings) for c in convs]
        estimate = pipeline.estimate(tasks)
        if on_estimate is not None:
            on_estimate(estimate)
        notes: list[str] = []
        if dry_run:
            pair_tasks, pnotes = self._pair_tasks(settings, convs) if relations else ([], [])
            return self._report(settings, provider, convs, estimate, pipeline.estimate(pair_tasks),
                                RunStats(), dry_run=True, pairs=len(pair_tasks),
                                notes=[*pnotes, "dry run: nothing was asked or changed"],
                                t0=t0)
        stats = RunStats()
        by_id = {c.doc.id: c for c in convs}

        def on_conversation(task: Task, value: Any) -> None:
            c = by_id[task.ref]
            e = self._enrichment_from(c, value, provider.model, settings)
            self.store.enrichments.save_enrichment(e)
            self.store.enrichments.put_units(c.doc.id, self._units_for(c.doc.id, e))

        pipeline.run(tasks, on_conversation, progress=progress, stats=stats)
        pairs = 0
        pair_estimate = None
        if relations:
            pair_tasks, pnotes = self._pair_tasks(settings, convs)
            notes.extend(pnotes)
            pairs = len(pair_tasks)
            pair_estimate = pipeline.estimate(pair_tasks)
            labels: list[RelationLabel] = []

            def on_pair(task: Task, value: Any) -> None:
                a, b, sim = task.ref
                if value["relation"] == "none" or value["confidence"] < settings.min_confidence:
                    return
                labels.append(_me().RelationLabel(
                    a, b, value["relation"], float(value["confidence"]),
                    str(value["reason"]).strip().splitlines()[0][:300] if value["reason"] else "",
                    round(sim, 4), provider.model, _prompt_version(),
                ))

            pipeline.run(pair_tasks, on_pair, progress=progress, stats=stats)
            self.store.enrichments.save_relations(labels)
        self._sync_llm_edges()
        return self._report(settings, provider, convs, estimate, pair_estimate, stats,
                            pairs=pairs, notes=notes, t0=t0)

    def _report(
        self,
        settings: EnrichSettings,
        provider: HttpProvider,
        convs: Sequence[_Conversation],
        estimate: Estimate,
        pair_estimate: Estimate | None,
        stats: RunStats,
        *,
        dry_run: bool = False,
        pairs: int = 0,
        notes: Sequence[str] = (),
        t0: float,
    ) -> EnrichReport:
        counts = self.store.enrichments.counts()
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
            skipped=tuple({"item": i, "reason": r} for i, r in stats.skipped),
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
            page = self.store.documents_by_format(sorted(CHAT_FORMATS), limit=500,
                                                  offset=offset)
            docs.extend(page)
            if len(page) < 500:
                return docs
            offset += 500

    def _conversation(self, doc: StoredDocument, settings: EnrichSettings) -> _Conversation | None:
        from cairn.enrich import Message, conversation_text
        from cairn.enrich.prompts import sha256

        msgs = [
            Message(u.id, str(u.extra.get("role") or ""), u.body)
            for u in self.store.units_of(doc.id)
            if u.kind == MESSAGE and not u.extra.get("alternate") and u.body.strip()
        ]
        if not msgs:
            return None
        text = self._mask(conversation_text(doc.title, msgs, settings.max_chars))
        return _Conversation(doc, msgs, text, sha256(text))

    def _conversations(self, settings: EnrichSettings, limit: int | None) -> list[_Conversation]:
        out: list[_Conversation] = []
        for doc in self._chat_documents():
            if limit is not None and len(out) >= limit:
                break
            c = self._conversation(doc, settings)
            if c is not None:
                out.append(c)
        return out

    def _conversation_task(
        self, c: _Conversation, vocabulary: Sequence[str], settings: EnrichSettings
    ) -> Task:
        from cairn.enrich import Task
        from cairn.enrich.prompts import (
            CONVERSATION_SCHEMA,
            CONVERSATION_SYSTEM,
            conversation_prompt,
        )
        from cairn.enrich.schema import BadReply

        n = len(c.messages)

        def check(value: Any) -> None:
            for i, ins in enumerate(value["insights"]):
                bad = [m for m in ins["messages"] if m > n]
                if bad:
                    raise BadReply(f"$.insights[{i}].messages: no message {bad[0]} (of {n})")

        return Task(
            kind=CONVERSATION,
            label=f"{c.doc.path} · {c.doc.title}",
            content_hash=c.content_hash,
            system=CONVERSATION_SYSTEM,
            user=conversation_prompt(c.text, vocabulary),
            schema=CONVERSATION_SCHEMA,
            check=check,
            max_tokens=settings.max_tokens,
            expected_output=min(settings.max_tokens, 450),
            ref=c.doc.id,
        )

    def _enrichment_from(
        self, c: _Conversation, value: Any, model: str, settings: EnrichSettings
    ) -> Enrichment:
        from cairn.enrich.tags import classify

        ids = [m.id for m in c.messages]
        insights = tuple(
            _me().Insight(i["type"], i["text"].strip(),
                    tuple(dict.fromkeys(ids[m - 1] for m in i["messages"] if 1 <= m <= len(ids))))
            for i in value["insights"]
        )
        vocabulary = self.store.enrichments.user_tags(10_000)
        tags = classify(value.get("tags", ()), vocabulary, settings.tag_aliases)
        made: Enrichment = _me().Enrichment(c.doc.id, c.content_hash, model, _prompt_version(),
                          value["summary"].strip(), insights, tags, _now())
        return made

    def _units_for(self, document_id: str, e: Enrichment) -> list[Unit]:
        """The summary and insight units of an enrichment, after the document's own."""
        import uuid

        from cairn.enrich.prompts import short
        from cairn.ingest.ids import NAMESPACE

        derived = (_me().SUMMARY, _me().INSIGHT)
        own = [u for u in self.store.units_of(document_id) if u.kind not in derived]
        start = max((u.ordinal for u in own), default=-1) + 1
        doc = self.store.document(document_id)
        title = doc.title if doc is not None else ""

        def uid(n: int) -> str:
            return str(uuid.uuid5(NAMESPACE, f"enrich:{document_id}:{n}"))

        common: dict[str, Any] = {"model": e.model, "origin": "llm"}
        tags = {"llm_tags": " ".join(t.tag for t in e.tags)} if e.tags else {}
        units = [Unit(
            ordinal=start, level=1, kind=_me().SUMMARY, title=f"Summary: {title}",
            outline_path=("Summary",), body=e.summary, properties=tags,
            extra={**common, "tags": [dataclasses.asdict(t) for t in e.tags]},
            id=uid(0), document_id=document_id,
        )]
        for n, ins in enumerate(e.insights, 1):
            units.append(Unit(
                ordinal=start + n, level=1, kind=_me().INSIGHT,
                title=f"{ins.type.capitalize()}: {short(ins.text)}",
                outline_path=("Insights",), body=ins.text,
                properties={"insight_type": ins.type},
                extra={**common, "insight_type": ins.type, "messages": list(ins.messages)},
                id=uid(n), document_id=document_id,
            ))
        return units

    # --- relations --------------------------------------------------------------------
    def _pair_tasks(
        self, settings: EnrichSettings, convs: Sequence[_Conversation]
    ) -> tuple[list[Task], list[str]]:
        """Relation requests for candidate pairs among enriched conversations."""
        from cairn.enrich import Task
        from cairn.enrich.prompts import RELATION_SCHEMA, RELATION_SYSTEM, relation_prompt, sha256

        if settings.max_pairs == 0:
            return [], []
        enriched = {e.document_id: e for e in self.store.enrichments.enrichments()}
        live = [c for c in convs if c.doc.id in enriched]
        if len(live) < 2:
            return [], []
        pairs, note = self._candidate_pairs(live, settings)
        tasks: list[Task] = []
        for a, b, sim in pairs:
            ea, eb_ = enriched[a.doc.id], enriched[b.doc.id]
            user = relation_prompt((a.doc.title, ea.summary), (b.doc.title, eb_.summary))
            tasks.append(Task(
                kind=RELATION,
                label=f"{a.doc.title} ↔ {b.doc.title}",
                content_hash=sha256(f"{ea.content_hash}\x1f{eb_.content_hash}\x1f{user}"),
                system=RELATION_SYSTEM,
                user=user,
                schema=RELATION_SCHEMA,
                max_tokens=min(settings.max_tokens, 200),
                expected_output=60,
                ref=(a.doc.id, b.doc.id, sim),
            ))
        return tasks, [note] if note else []

    def _candidate_pairs(
        self, convs: Sequence[_Conversation], settings: EnrichSettings
    ) -> tuple[list[tuple[_Conversation, _Conversation, float]], str]:
        """Pairs whose mean message vectors have cosine ≥ ``similarity``, each
        conversation's ``max_pairs`` most similar; A is the later conversation."""
        import numpy as np

        if not self.semantic.has_vectors():
            return [], ("no embeddings: relations between conversations need them "
                        "(run `cairn embed`, then `cairn enrich` again)")
        emb = self.semantic.embedder
        if emb is None:
            return [], "no embedding model available: relations were not typed"
        m = self.store.vectors.matrix(emb.fingerprint)
        row_of = {u: i for i, u in enumerate(m.unit_ids)}
        vecs: list[Any] = []
        keep: list[_Conversation] = []
        for c in convs:
            idx = [row_of[x.id] for x in c.messages if x.id in row_of]
            if not idx:
                continue
            rows = np.isin(m.units, np.asarray(idx, dtype=np.int64))
            v = np.asarray(m.matrix[rows], dtype=np.float32).mean(axis=0)
            norm = float(np.linalg.norm(v))
            if norm > 0:
                vecs.append(v / norm)
                keep.append(c)
        if len(keep) < 2:
            return [], ""
        mat = np.stack(vecs)
        sims = mat @ mat.T
        chosen: dict[tuple[str, str], float] = {}
        for i in range(len(keep)):
            order = [int(j) for j in np.argsort(-sims[i]) if int(j) != i]
            for j in [j for j in order if sims[i, j] >= settings.similarity][: settings.max_pairs]:
                key = tuple(sorted((keep[i].doc.id, keep[j].doc.id)))
                chosen[key] = float(sims[i, j])  # type: ignore[index]
        by_id = {c.doc.id: c for c in keep}
        out: list[tuple[_Conversation, _Conversation, float]] = []
        for (x, y), sim in sorted(chosen.items()):
            a, b = by_id[x], by_id[y]
            if (a.doc.created or "", a.doc.id) < (b.doc.created or "", b.doc.id):
                a, b = b, a  # A is the later one: "A builds_on B"
            out.append((a, b, sim))
        return out, ""

    def _llm_edges(self) -> list[Edge]:
        from cairn.model import Edge
        from cairn.model.edge_ids import edge_id

        labels = self.store.enrichments.relations()
        docs = sorted({x for r in labels for x in (r.source_document_id, r.target_document_id)})
        first = self.store.edges.first_units(docs)
        out: list[Edge] = []
        for r in labels:
            s, t = first.get(r.source_document_id), first.get(r.target_document_id)
            if s is None or t is None:
                continue
            out.append(Edge(
                id=edge_id(s, t, r.relation, "llm"), source=s, target=t, relation=r.relation,
                origin="llm", weight=r.confidence, source_document_id=r.source_document_id,
                target_document_id=r.target_document_id,
                evidence=({"reason": r.reason, "confidence": r.confidence, "model": r.model,
                           "similarity": r.similarity},),
            ))
        return out

    def _sync_llm_edges(self) -> int:
        return self.store.enrichments.llm_edges(self._llm_edges())

    # --- after an index run -----------------------------------------------------------
    def _enrich_refresh(self) -> None:
        """Re-write what a re-index dropped: enrichment units of re-written
        conversations (from the stored enrichment when the text is unchanged, else
        from the reply cache) and the ``llm`` edges. No request; nothing when
        ``[enrich]`` is not configured."""
        import json

        from cairn.enrich.prompts import cache_key
        from cairn.errors import ConfigError

        cfg = self.config.enrich
        if not cfg or "provider" not in cfg:
            return
        try:
            settings = self.enrich_settings()
        except ConfigError:  # `cairn enrich` names the key; indexing is not held up by it
            return
        en = self.store.enrichments
        en.forget(en.orphans())
        for doc_id in en.without_units():
            old = en.enrichment(doc_id)
            doc = self.store.document(doc_id)
            c = self._conversation(doc, settings) if doc is not None else None
            if old is None or c is None:
                en.forget([doc_id])
                continue
            if c.content_hash != old.content_hash:
                got = en.cached(cache_key(CONVERSATION, settings.model, c.content_hash))
                if got is None or got[0] != "ok":
                    en.forget([doc_id])  # changed: the next `cairn enrich` asks again
                    continue
                old = self._enrichment_from(c, json.loads(got[1]), settings.model, settings)
                en.save_enrichment(old)
            else:  # the same text: message ids may differ after a re-parse
                from cairn.enrich.prompts import as_reply

                old = self._enrichment_from(c, as_reply(old, c.messages), old.model, settings)
                en.save_enrichment(old)
            en.put_units(doc_id, self._units_for(doc_id, old))
        self._sync_llm_edges()


def _prompt_version() -> str:
    from cairn.enrich import PROMPT_VERSION

    return PROMPT_VERSION
