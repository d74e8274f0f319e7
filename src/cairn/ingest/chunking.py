"""Units → chunks sized for embedding (DESIGN.md, "The model": Chunk).

A unit whose body fits the token budget is one chunk. A longer body is cut at the
strongest boundary that keeps pieces under the budget: paragraphs (blank lines) and list
items first, then sentences, then (for a run-on sentence) words. Pieces are packed
greedily into chunks of about ``target`` tokens. ``text`` is the chunk itself; ``window``
is the chunk extended by up to ``overlap`` tokens of the text before and after it (whole
sentences or words), so the embedding of a chunk sees its neighbourhood while the
snippet shows only the chunk.

Tokens are counted with a cheap approximation of a WordPiece tokenizer: every run of
word characters and every other non-space character counts one (:func:`count_tokens`).
English prose comes out within about 20% of all-MiniLM-L6-v2's own count.

Profiles (``short``, ``medium``, ``long``) give (target, overlap) pairs; a note type
picks its profile in ``types.yaml`` (``chunk_profile``); the token numbers are
configurable through :class:`ChunkConfig`. The default, ``medium`` (160 tokens, 24 of
overlap each side), keeps a window plus its metadata prefix within the 256 WordPiece
tokens all-MiniLM-L6-v2 reads; on SciFact it gave the best hybrid nDCG@10 of the
sizes tried (128/16: 0.718, 160/24: 0.720, 192/32: 0.714 with the int8 model).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from cairn.errors import ConfigError

_TOKEN = re.compile(r"\w+|[^\w\s]")
_PARA = re.compile(r"\n[ \t]*\n+")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"')\]]*\s+")
_FENCE = re.compile(r"^[ \t]*(```|~~~|#\+begin_src|#\+BEGIN_SRC)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Profile:
    """A chunk size: ``target`` tokens per chunk, ``overlap`` tokens of context each side."""

    target: int
    overlap: int


DEFAULT_PROFILES: Mapping[str, Profile] = {
    "short": Profile(target=96, overlap=16),
    "medium": Profile(target=160, overlap=24),
    "long": Profile(target=384, overlap=48),
}


@dataclass(frozen=True, slots=True)
class ChunkConfig:
    """Chunking settings.

    Attributes:
        profiles: profile name → :class:`Profile` (``default`` is an alias of ``medium``).
        default_profile: the profile used when a note type names none.
        type_profiles: note type (lower case) → a profile name or a :class:`Profile`
            (from ``types.yaml`` ``chunk_profile``; see :meth:`with_types`).
    """

    profiles: Mapping[str, Profile] = field(default_factory=lambda: dict(DEFAULT_PROFILES))
    default_profile: str = "medium"
    type_profiles: Mapping[str, str | Profile] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> ChunkConfig:
        """Read a ``[chunking]`` table: ``default_profile`` and ``profiles`` (name →
        ``{target, overlap}`` in tokens), merged over :data:`DEFAULT_PROFILES`.

        Raises:
            ConfigError: a profile lacks ``target``/``overlap`` or the default names none.
        """
        profiles = dict(DEFAULT_PROFILES)
        try:
            for name, p in dict(table.get("profiles", {})).items():
                profiles[str(name)] = Profile(int(p["target"]), int(p.get("overlap", 0)))
        except (TypeError, ValueError, KeyError) as exc:
            raise ConfigError(f"[chunking] profiles need target and overlap: {exc}") from exc
        default = str(table.get("default_profile", "medium"))
        if default not in profiles:
            raise ConfigError(f"[chunking] default_profile {default!r} is not a profile")
        return cls(profiles=profiles, default_profile=default)

    def _named(self, name: str) -> tuple[str, Profile]:
        if name == "default" and "default" not in self.profiles:
            name = "medium"
        if name not in self.profiles:
            name = self.default_profile
        return name, self.profiles.get(name, DEFAULT_PROFILES["medium"])

    def profile_for(self, note_type: str | None) -> tuple[str, Profile]:
        """``(name, Profile)`` for a note type; unknown names fall back to the default."""
        chosen = self.type_profiles.get((note_type or "").casefold())
        if isinstance(chosen, Profile):
            return f"{note_type}:{chosen.target}/{chosen.overlap}", chosen
        return self._named(chosen or self.default_profile)

    def with_types(self, registry: Any) -> ChunkConfig:
        """This config with per-type profiles from a ``types.yaml`` registry
        (:class:`cairn.formats.types.TypeRegistry`: each type's ``chunk_profile`` with
        ``max_tokens``/``overlap``; aliases included)."""
        out: dict[str, str | Profile] = dict(self.type_profiles)
        for t in getattr(registry, "types", {}).values():
            cp = t.chunk_profile
            prof = Profile(int(cp.max_tokens), int(cp.overlap))
            for name in (t.name, *t.aliases):
                out[name.casefold()] = prof
        return replace(self, type_profiles=out)

    def signature(self) -> str:
        """A short hash of the settings; chunks made under another signature are redone."""
        parts = [f"{k}:{p.target}:{p.overlap}" for k, p in sorted(self.profiles.items())]
        parts.append(f"default:{self.default_profile}")
        for k, v in sorted(self.type_profiles.items()):
            val = f"{v.target}/{v.overlap}" if isinstance(v, Profile) else v
            parts.append(f"type:{k}={val}")
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class TextChunk:
    """A slice of a unit's body sized for embedding.

    Attributes:
        unit_id: the unit it belongs to.
        ordinal: 0-based position among the unit's chunks.
        text: the chunk (``body[start:end]``).
        window: the chunk with its overlap (``body[window_start:window_end]``).
        start / end / window_start / window_end: character offsets into the body.
        tokens: approximate token count of ``text`` (:func:`count_tokens`).
    """

    unit_id: str
    ordinal: int
    text: str
    window: str
    start: int
    end: int
    window_start: int
    window_end: int
    tokens: int


def count_tokens(text: str) -> int:
    """Approximate token count: word runs and single punctuation characters."""
    return len(_TOKEN.findall(text))


def _spans(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` at ``pattern`` matches; spans exclude the separators."""
    out: list[tuple[int, int]] = []
    pos = start
    for m in pattern.finditer(text, start, end):
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        out.append((pos, end))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _list_items(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split a paragraph at the start of each list item (keeping the marker)."""
    cuts = [m.start() for m in _LIST_ITEM.finditer(text, start, end)]
    if not cuts:
        return [(start, end)]
    bounds = sorted({start, *cuts, end})
    return [(a, b) for a, b in itertools.pairwise(bounds) if text[a:b].strip()]


def _word_spans(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Cut a run-on span into pieces of at most ``budget`` tokens at token boundaries."""
    out: list[tuple[int, int]] = []
    toks = list(_TOKEN.finditer(text, start, end))
    for i in range(0, len(toks), budget):
        group = toks[i : i + budget]
        a = start if i == 0 else group[0].start()
        b = end if i + budget >= len(toks) else toks[i + budget].start()
        out.append((a, b))
    return out


def _pieces(text: str, budget: int) -> list[tuple[int, int]]:
    """Spans of ``text`` of at most ``budget`` tokens each, cut at the strongest boundary.

    Fenced code blocks count as one paragraph (never split at their blank lines unless
    they exceed the budget).
    """
    out: list[tuple[int, int]] = []
    for pa, pb in _paragraphs(text):
        for la, lb in _list_items(text, pa, pb):
            if count_tokens(text[la:lb]) <= budget:
                out.append((la, lb))
                continue
            for sa, sb in _spans(text, la, lb, _SENTENCE_END):
                if count_tokens(text[sa:sb]) <= budget:
                    out.append((sa, sb))
                else:
                    out.extend(_word_spans(text, sa, sb, budget))
    return out


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """Paragraph spans; blank lines inside a fenced code block do not split it."""
    fences = [m.start() for m in _FENCE.finditer(text)]
    protected: list[tuple[int, int]] = []
    for a, b in zip(fences[::2], fences[1::2], strict=False):
        line_end = text.find("\n", b)
        protected.append((a, len(text) if line_end < 0 else line_end))
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _PARA.finditer(text):
        if any(pa <= m.start() < pb for pa, pb in protected):
            continue
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        out.append((pos, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _extend_back(text: str, start: int, floor: int, budget: int) -> int:
    """Move ``start`` back over up to ``budget`` tokens of ``text[floor:start]``."""
    if budget <= 0 or start <= floor:
        return start
    # only the last ``budget`` tokens matter: scan a window that grows until it holds
    # more than that (its first token may be cut by the window, so it is never kept)
    # or reaches ``floor`` — the same tokens as a scan from ``floor``, without reading
    # a long unit from its start for every chunk
    span = 16 * (budget + 1)
    while True:
        lo = max(floor, start - span)
        toks = list(_TOKEN.finditer(text, lo, start))
        if lo == floor or len(toks) > budget:
            break
        span *= 4
    if not toks:
        return start
    keep = toks[-budget:]
    words = [t for t in keep if t.group()[0].isalnum() or t.group()[0] == "_"]
    first = (words or keep)[0].start()
    # prefer a sentence start inside the kept context
    for m in _SENTENCE_END.finditer(text, first, start):
        if m.end() < start:
            return m.end()
    return first


def _extend_forward(text: str, end: int, ceil: int, budget: int) -> int:
    """Move ``end`` forward over up to ``budget`` tokens of ``text[end:ceil]``."""
    if budget <= 0 or end >= ceil:
        return end
    keep = list(itertools.islice(_TOKEN.finditer(text, end, ceil), budget))
    if not keep:
        return end
    last = keep[-1].end()
    best = last
    for m in _SENTENCE_END.finditer(text, end, last):
        best = m.start()
    return best if best > end else last


def chunk_text(unit_id: str, body: str, profile: Profile) -> list[TextChunk]:
    """Split one unit body into chunks.

    Args:
        unit_id: the unit's id (copied into each chunk).
        body: the unit's body text.
        profile: token target and overlap.

    Returns:
        At least one chunk for a non-blank body (one chunk when it fits ``target``);
        ``[]`` for a blank body. Chunks are in order and do not overlap each other;
        their windows do.
    """
    if not body.strip():
        return []
    total = count_tokens(body)
    if total <= profile.target:
        a, b = _trim(body, 0, len(body))
        return [TextChunk(unit_id, 0, body[a:b], body[a:b], a, b, a, b, total)]
    groups: list[tuple[int, int, int]] = []  # start, end, tokens
    for a, b in _pieces(body, profile.target):
        n = count_tokens(body[a:b])
        if groups and groups[-1][2] + n <= profile.target:
            s, _, t = groups[-1]
            groups[-1] = (s, b, t + n)
        else:
            groups.append((a, b, n))
    chunks: list[TextChunk] = []
    for i, (a, b, n) in enumerate(groups):
        a, b = _trim(body, a, b)
        wa = _extend_back(body, a, groups[i - 1][0] if i else 0, profile.overlap)
        wb = _extend_forward(
            body, b, groups[i + 1][1] if i + 1 < len(groups) else len(body), profile.overlap
        )
        wa, wb = _trim(body, wa, wb)
        chunks.append(TextChunk(unit_id, i, body[a:b], body[wa:wb], a, b, wa, wb, n))
    return chunks


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def metadata_prefix(
    doc_title: str | None,
    outline_path: tuple[str, ...] | list[str],
    tags: tuple[str, ...] | list[str],
) -> str:
    """The short line put before each chunk when it is embedded.

    ``"Doc title › Heading › Sub (#tag1 #tag2)\\n"``: the document title and the outline
    path (without repeating the document title), and the tags. ``""`` when all are empty.
    """
    parts: list[str] = []
    for p in (doc_title or "", *outline_path):
        p = " ".join(p.split())
        if p and (not parts or parts[-1] != p):
            parts.append(p)
    line = " › ".join(parts)
    if tags:
        tag_text = " ".join("#" + t.lstrip("#") for t in dict.fromkeys(tags))
        line = f"{line} ({tag_text})" if line else tag_text
    return line + "\n" if line else ""


def content_hash(text: str) -> str:
    """SHA-256 (hex, 32 chars) of the embedded text: the embedding cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
