"""Consolidation proposed by a language model: :class:`ModelProposer`, a
:class:`cairn.memory.similarity.Proposer` over any ``ask(system, user) -> reply text``
(the app wires it to the ``[enrich]`` provider of :mod:`cairn.enrich`, with every text
masked by :class:`cairn.redact.Masker` first).

The model sees the new memories in batches of :data:`BATCH` (id ``m1`` …, tags, title,
text cut at :data:`MAX_TEXT` characters) with, per batch, the :data:`CANDIDATES`
active concepts most like them by the deterministic similarity (id ``c1`` …, title,
description) — so a prompt stays small on a bundle of thousands of concepts — and
answers JSON::

    {"clusters": [{"memories": ["m1", "m3"], "concept": "c2" | null,
                   "title": "a title for a new concept" | null}]}

The model only proposes. Its answer is turned into clusters here — unknown ids, a
memory named twice, a malformed reply are :attr:`ModelProposer.problems` — and
:func:`cairn.memory.consolidate.consolidate` checks the clusters by the rules its own
clustering keeps (:func:`cairn.memory.similarity.checked_proposal`: each memory
pending and used once, a merge target an active concept; and a merge needs evidence:
a shared tag, shared words or, with embeddings, a cosine above the floor). What the
model leaves out, gets wrong, or fails to answer (a request that fails after the
provider's retries) is clustered deterministically. A new concept's title is the
model's when it is one line of 1–120 characters, else the most central memory's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cairn.errors import CairnError
from cairn.memory.similarity import Cluster

if TYPE_CHECKING:
    from cairn.memory.layout import Entry

BATCH = 20
"""New memories per request."""
CANDIDATES = 12
"""Existing concepts shown per request (the most similar ones)."""
MAX_TEXT = 400
"""Characters of one memory's or concept's text in a prompt."""
MAX_TITLE = 120
"""The longest title taken from the model."""

SYSTEM = (
    "You organise an agent's memory. New memories (ids m1, m2, ...) must each be placed "
    "in exactly one cluster. A cluster either joins one existing concept (ids c1, c2, "
    "...) when its memories are about the same thing as that concept, or becomes a new "
    "concept with a short title. Reply with JSON only, in this shape: "
    '{"clusters": [{"memories": ["m1"], "concept": "c1" or null, "title": "..." or null}]}'
)
"""The instructions sent with every request."""

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["clusters"],
    "properties": {
        "clusters": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["memories"],
                "properties": {
                    "memories": {"type": "array", "items": {"type": "string"}},
                    "concept": {"type": ["string", "null"]},
                    "title": {"type": ["string", "null"]},
                },
            },
        }
    },
}
"""The JSON Schema of a reply (servers that constrain output to a schema can use it;
:func:`read_reply` checks the same shape)."""

Ask = Callable[[str, str], str]
"""``ask(system, user)`` → the model's reply text; raises :class:`CairnError` (e.g.
:class:`cairn.errors.ProviderUnavailable`) when the request fails."""


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def prompt(
    memories: Sequence[Entry], concepts: Sequence[Entry], mask: Callable[[str], str]
) -> str:
    """The user message for one batch (``m<i>``/``c<i>`` ids by position, 1-based);
    every text passes ``mask`` first."""
    lines = ["Existing concepts:"]
    for i, c in enumerate(concepts, 1):
        desc = str(c.meta.get("description") or c.body)
        lines.append(f"c{i}: {mask(_cut(c.title, MAX_TITLE))} — {mask(_cut(desc, MAX_TEXT))}")
    if not concepts:
        lines.append("(none)")
    lines += ["", "New memories:"]
    for i, m in enumerate(memories, 1):
        tags = ", ".join(m.tags)
        text = mask(_cut(f"{m.title}: {m.body}", MAX_TEXT))
        lines.append(f"m{i}: [{mask(tags)}] {text}")
    return "\n".join(lines)


def read_reply(text: str) -> list[dict[str, Any]]:
    """The ``clusters`` of a reply: the first JSON object in ``text`` (a code fence or
    prose around it is tolerated) in the shape of :data:`REPLY_SCHEMA`.

    Raises:
        ValueError: no JSON object, or not that shape (the message says where).
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not JSON: {exc.msg} at {exc.pos}") from None
    clusters = data.get("clusters") if isinstance(data, dict) else None
    if not isinstance(clusters, list):
        raise ValueError('the reply has no "clusters" list')
    out: list[dict[str, Any]] = []
    for i, c in enumerate(clusters):
        mems = c.get("memories") if isinstance(c, dict) else None
        if not isinstance(mems, list) or not all(isinstance(m, str) for m in mems):
            raise ValueError(f'clusters[{i}]: "memories" is not a list of ids')
        concept, title = c.get("concept"), c.get("title")
        if concept is not None and not isinstance(concept, str):
            raise ValueError(f'clusters[{i}]: "concept" is not an id or null')
        if title is not None and not isinstance(title, str):
            raise ValueError(f'clusters[{i}]: "title" is not a string or null')
        out.append({"memories": mems, "concept": concept, "title": title})
    return out


def clean_title(title: str | None) -> str | None:
    """A model's title when usable (one line, 1–:data:`MAX_TITLE` characters after
    trimming), else ``None``."""
    if title is None:
        return None
    t = " ".join(title.split()).strip(" \"'`*#")
    if not t or len(t) > MAX_TITLE or "\n" in title.strip():
        return None
    return t


def candidates(
    memories: Sequence[Entry],
    concepts: Sequence[Entry],
    k: int,
    features: Mapping[str, frozenset[str]] | None = None,
) -> list[Entry]:
    """The ``k`` concepts most similar to any of ``memories`` (deterministic similarity;
    ties by path), those with no similarity left out; ``features``: a concept's
    shingles by path, when computed already."""
    from cairn.memory.consolidate import shingles, similarity

    feats = [(m.tags, shingles(f"{m.title}\n{m.body}")) for m in memories]
    scored: list[tuple[float, str, Entry]] = []
    for c in concepts:
        cf = features.get(c.rel) if features is not None else None
        if cf is None:
            cf = shingles(f"{c.title}\n{c.body}")
        best = max((similarity(t, f, c.tags, cf) for t, f in feats), default=0.0)
        if best > 0:
            scored.append((-best, c.rel, c))
    scored.sort(key=lambda x: (x[0], x[1]))
    return [c for _, _, c in scored[:k]]


class ModelProposer:
    """Clusters proposed by a model (module docstring).

    Args:
        ask: one request: ``ask(system, user)`` → reply text.
        mask: applied to every text before it is sent (the app passes the redaction
            masker; default: unchanged).
        batch / max_candidates: memories and concepts per request.

    Attributes:
        problems: what the model got wrong or could not answer, one line each.
        requests: requests made.
    """

    def __init__(
        self,
        ask: Ask,
        *,
        mask: Callable[[str], str] = lambda s: s,
        batch: int = BATCH,
        max_candidates: int = CANDIDATES,
    ) -> None:
        self.ask, self.mask = ask, mask
        self.batch, self.max_candidates = max(1, batch), max(0, max_candidates)
        self.problems: list[str] = []
        self.requests = 0

    def propose(self, memories: Sequence[Entry], concepts: Sequence[Entry]) -> list[Cluster]:
        """Clusters of ``memories`` (new ones, or merged into one of ``concepts``), one
        request per batch; a batch whose request or reply fails proposes nothing."""
        from cairn.memory.consolidate import shingles

        out: list[Cluster] = []
        features = {c.rel: shingles(f"{c.title}\n{c.body}") for c in concepts}
        for i in range(0, len(memories), self.batch):
            part = list(memories[i : i + self.batch])
            shown = candidates(part, concepts, self.max_candidates, features)
            self.requests += 1
            try:
                reply = self.ask(SYSTEM, prompt(part, shown, self.mask))
                proposed = read_reply(reply)
            except (CairnError, ValueError) as exc:
                self.problems.append(f"batch {i // self.batch + 1}: no usable answer: {exc}")
                continue
            out += self._clusters(proposed, part, shown)
        return out

    def _clusters(
        self, proposed: list[dict[str, Any]], part: list[Entry], shown: list[Entry]
    ) -> list[Cluster]:
        by_id = {f"m{i}": m for i, m in enumerate(part, 1)}
        concept_of = {f"c{i}": c for i, c in enumerate(shown, 1)}
        used: set[str] = set()
        out: list[Cluster] = []
        for c in proposed:
            concept = None
            if c["concept"] is not None:
                concept = concept_of.get(re.sub(r"\s+", "", c["concept"]).lower())
                if concept is None:
                    self.problems.append(
                        f"{c['concept']!r}: not a concept of the request (left to the rules)"
                    )
                    continue  # its memories are clustered deterministically
            members: list[Entry] = []
            for mid in c["memories"]:
                key = re.sub(r"\s+", "", mid).lower()
                m = by_id.get(key)
                if m is None:
                    self.problems.append(f"{mid!r}: not a memory of the request")
                elif key in used:
                    self.problems.append(f"{mid!r} ({m.rel}): proposed twice")
                else:
                    used.add(key)
                    members.append(m)
            if members:
                title = None if concept is not None else clean_title(c["title"])
                out.append(Cluster(members, concept, [], title=title))
        return out
