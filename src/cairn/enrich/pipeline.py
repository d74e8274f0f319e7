"""The enrichment run: requests as :class:`Task` values, each answered from the cache
or by the model, validated, retried once when bad, and stored at once.

Every text a task sends passes through the ``redact`` function the pipeline is built
with (there is no way to build one without it): :class:`cairn.enrich.service.EnrichService`
passes :class:`cairn.redact.Masker`, whatever ``[redact] on_ingest`` says.

The cache key is (kind, model, prompt version, content hash); a reply is stored the
moment it is validated, so an interrupted run resumes where it stopped (the
checkpoint), and a second run over unchanged content makes no request. A reply that
is bad twice is stored as ``invalid`` with its reason (asked again only with
``retry_invalid``); a request that failed (timeout, rate limit, server error) is not
stored, and the next run asks again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cairn.enrich.prompts import PROMPT_VERSION, cache_key, dumps
from cairn.enrich.providers import Completion, Provider, RequestFailed
from cairn.enrich.schema import BadReply, parse_json, validate

Check = Callable[[Any], None]
"""An extra check of a schema-valid reply (raises :class:`BadReply`)."""
Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)`` after each task."""


class ReplyCache(Protocol):
    """Where replies are kept (``store.enrichments`` is one)."""

    def cached(self, key: str) -> tuple[str, str] | None:
        """``(status, reply)`` or ``None``."""
        ...

    def cache_put(self, key: str, *, kind: str, model: str, prompt_version: str,
                  content_hash: str, status: str, reply: str) -> None:
        """Store one reply now."""
        ...


@dataclass(frozen=True)
class Task:
    """One request.

    Attributes:
        kind: ``conversation`` or ``relation``.
        label: what it is about, for progress and skip reasons (a title, a path).
        content_hash: SHA-256 of the content the prompt is made of.
        system / user: the prompt (redacted before it is sent).
        schema: the JSON Schema the reply must meet.
        check: further checks of a valid reply (message numbers in range …).
        max_tokens: the longest reply asked for.
        expected_output: output tokens expected, for the estimate.
    """

    kind: str
    label: str
    content_hash: str
    system: str
    user: str
    schema: Mapping[str, Any]
    check: Check | None = None
    max_tokens: int = 800
    expected_output: int = 400
    ref: Any = None
    """The caller's own handle (a document id, a pair), handed back with the reply."""


@dataclass(frozen=True)
class Estimate:
    """What a run would cost before it starts: ``tasks`` in all, ``cached`` among
    them, ``requests`` to make, input and output ``tokens`` (≈ 4 characters a token
    for input; the expected reply size for output) and ``cost`` in US dollars at the
    configured prices."""

    tasks: int
    cached: int
    requests: int
    input_tokens: int
    output_tokens: int
    cost: float


@dataclass
class RunStats:
    """What a run did: ``requests`` made (retries included), ``answered`` tasks,
    ``cached`` ones (no request), ``skipped`` ``[(label, reason)]``, the tokens the
    server counted (else estimated) and wall time."""

    requests: int = 0
    answered: int = 0
    cached: int = 0
    retried: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0


def tokens(text: str) -> int:
    """A token count estimate: about four characters a token."""
    return (len(text) + 3) // 4


class Pipeline:
    """Answers tasks through a provider, with a cache, redaction and validation.

    Args:
        provider: the model.
        cache: where replies are kept.
        redact: applied to every text before it is sent (required).
        price_input / price_output: US dollars per million tokens (the estimate).
        retry_invalid: ask again for replies stored as invalid.
    """

    def __init__(
        self,
        provider: Provider,
        cache: ReplyCache,
        *,
        redact: Callable[[str], str],
        price_input: float = 0.0,
        price_output: float = 0.0,
        retry_invalid: bool = False,
    ) -> None:
        self.provider = provider
        self.cache = cache
        self.redact = redact
        self.price_input = price_input
        self.price_output = price_output
        self.retry_invalid = retry_invalid

    def key(self, task: Task) -> str:
        """The task's cache key."""
        return cache_key(task.kind, self.provider.model, task.content_hash)

    def _cached(self, task: Task) -> tuple[str, str] | None:
        got = self.cache.cached(self.key(task))
        if got is not None and got[0] == "invalid" and self.retry_invalid:
            return None
        return got

    def estimate(self, tasks: Sequence[Task]) -> Estimate:
        """Tokens and cost of the tasks not in the cache (a look-up, no request)."""
        todo = [t for t in tasks if self._cached(t) is None]
        tin = sum(tokens(self.redact(t.system)) + tokens(self.redact(t.user)) for t in todo)
        tout = sum(t.expected_output for t in todo)
        cost = tin / 1e6 * self.price_input + tout / 1e6 * self.price_output
        return Estimate(len(tasks), len(tasks) - len(todo), len(todo), tin, tout, round(cost, 6))

    def run(
        self,
        tasks: Sequence[Task],
        on_reply: Callable[[Task, Any], None],
        *,
        progress: Progress | None = None,
        stats: RunStats | None = None,
    ) -> RunStats:
        """Answer every task; ``on_reply(task, value)`` gets each valid reply (cached
        or new) in task order.

        Returns:
            The run's :class:`RunStats` (``stats`` when given, added to).

        Raises:
            cairn.errors.StoreError: the cache cannot be written.
        """
        st = stats if stats is not None else RunStats()
        t0 = time.perf_counter()
        for i, task in enumerate(tasks):
            got = self._cached(task)
            if got is not None:
                st.cached += 1
                if got[0] == "ok":
                    on_reply(task, json.loads(got[1]))
                else:
                    st.skipped.append((task.label, f"invalid reply (cached): {got[1]}"))
            else:
                value = self._ask(task, st)
                if value is not None:
                    on_reply(task, value)
            if progress is not None:
                progress(i + 1, len(tasks), task.label)
        st.seconds += time.perf_counter() - t0
        return st

    def _ask(self, task: Task, st: RunStats) -> Any:
        system, user = self.redact(task.system), self.redact(task.user)
        reason = ""
        for attempt in range(2):  # a bad reply is retried once
            before = self.provider.requests
            try:
                reply: Completion = self.provider.complete(system, user,
                                                           max_tokens=task.max_tokens)
            except RequestFailed as exc:
                st.requests += self.provider.requests - before
                st.skipped.append((task.label, f"request failed: {exc}"))
                return None
            st.requests += self.provider.requests - before
            st.input_tokens += reply.input_tokens or tokens(system) + tokens(user)
            st.output_tokens += reply.output_tokens or tokens(reply.text)
            try:
                value = parse_json(reply.text)
                validate(value, task.schema)
                if task.check is not None:
                    task.check(value)
            except BadReply as exc:
                reason = str(exc)
                if attempt == 0:
                    st.retried += 1
                continue
            self._put(task, "ok", dumps(value))
            st.answered += 1
            return value
        self._put(task, "invalid", reason)
        st.skipped.append((task.label, f"invalid reply twice: {reason}"))
        return None

    def _put(self, task: Task, status: str, reply: str) -> None:
        self.cache.cache_put(
            self.key(task), kind=task.kind, model=self.provider.model,
            prompt_version=PROMPT_VERSION, content_hash=task.content_hash, status=status,
            reply=reply,
        )
