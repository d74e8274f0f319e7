"""Search's values: parsed queries handed to the store, hit data, chunks and vectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cairn.model.core import BlockRef, Timestamp

# --- search: parsed queries and ranked results -------------------------------------------


@dataclass(frozen=True, slots=True)
class Term:
    """One word or phrase of a query, as the text tokenizer splits it.

    Attributes:
        tokens: the index tokens of its non-CJK text (``C++`` → ``Cplusplus``); several
            tokens must match in order (a phrase).
        cjk: character bigrams of its CJK runs (matched against the bigram column).
        negate: written with a leading ``-`` (units containing it are excluded).
        text: the NFKC text as written (the semantic query text); for a group, the
            text of its positive words.
        phrase: written in double quotes.
        group: a parenthesised group ``(a b OR -c d)``: its alternatives (any of them
            matches), each a conjunction of terms (all of its positive terms match and
            none of its negated ones; a term may be a group again). ``tokens`` and
            ``cjk`` are then empty.
    """

    tokens: tuple[str, ...]
    cjk: tuple[str, ...] = ()
    negate: bool = False
    text: str = ""
    phrase: bool = False
    group: tuple[tuple[Term, ...], ...] = ()

    def leaves(self) -> tuple[Term, ...]:
        """The words and phrases this term asks for: itself, or for a group the
        positive leaves of every alternative (negated ones left out), in order."""
        if not self.group:
            return (self,)
        return tuple(
            leaf for alt in self.group for t in alt if not t.negate for leaf in t.leaves()
        )

    @property
    def searchable(self) -> bool:
        """Has something to match: tokens, CJK bigrams, or a group."""
        return bool(self.tokens or self.cjk or self.group)


@dataclass(frozen=True, slots=True)
class Filter:
    """One query filter, e.g. ``tag:work`` or ``-todo:DONE`` or ``prop:OWNER=ann``.

    Attributes:
        field: ``tag``, ``type``, ``todo``, ``priority``, ``path``, ``source``,
            ``format``, ``prop``, ``before``, ``after``, ``role``, ``kind``, ``id``,
            ``file``, ``heading``, ``level`` or a date field (below).
        value: the value as written (dates as ``YYYY-MM-DD``).
        key: the property key for ``prop``; for a date field (``scheduled``,
            ``deadline``, ``closed``, ``ts``, ``ts-inactive``, ``created``,
            ``modified``) the ISO day the query counts as today.
        negate: ``True`` when written with a leading ``-``.
        any_of: further values, OR-ed with ``value`` (``tag:work,home``); a negated
            filter then excludes every one of them. Date fields hold ``lo..hi``
            (ISO days, ``hi`` exclusive, either end empty) or ``soon``.
        term: for ``match`` (``+word``, ``+(a OR b)``), the term the unit must
            contain; ``None``: the words of ``value`` (and the CJK bigrams of ``key``)
            as one phrase.
    """

    field: str
    value: str
    key: str | None = None
    negate: bool = False
    any_of: tuple[str, ...] = ()
    term: Term | None = None

    @property
    def values(self) -> tuple[str, ...]:
        """``value`` followed by ``any_of``: the values of which one must match."""
        return (self.value, *self.any_of)


@dataclass(frozen=True, slots=True)
class TextQuery:
    """What search hands the store for keyword retrieval.

    Positive terms are OR-ed and ranked (BM25 or the backend's equivalent); negative
    terms exclude the units containing them; filters restrict units and documents.
    No positive term: a filter-only query (every score 0, listed in rounds: each
    document's first match in path order, then each one's second, and so on).
    ``alternates``: also units off a conversation's canonical branch (the messages a
    regenerated or edited one left behind); off, only the canonical thread. Every
    store method that chooses units for a query reads it here.
    """

    terms: tuple[Term, ...] = ()
    filters: tuple[Filter, ...] = ()
    alternates: bool = False

    @property
    def positive(self) -> tuple[Term, ...]:
        """Terms of which any must match."""
        return tuple(t for t in self.terms if not t.negate)

    @property
    def negative(self) -> tuple[Term, ...]:
        """Terms whose units are excluded."""
        return tuple(t for t in self.terms if t.negate)


@dataclass(frozen=True, slots=True)
class UnitFacts:
    """What ranking needs of a unit before hits are built (a light look-up).

    Attributes:
        unit_id / document_id: ids.
        title_only: a preamble holding nothing but its document's title (blank body or
            the title again), shadowed by any other hit of its document.
        type: the unit's ``type`` property, else its document's type (``None``: none).
        time: the unit's own time (a chat message), else ``None``.
        modified / created: the document's dates as written; ``mtime``: file POSIX time.
    """

    unit_id: str
    document_id: str
    title_only: bool = False
    type: str | None = None
    time: str | None = None
    modified: str | None = None
    created: str | None = None
    mtime: float = 0.0


@dataclass(frozen=True, slots=True)
class HitUnit:
    """A unit with the document fields a search hit shows.

    ``tags`` are the unit's own tags then its inherited ones (no repeats);
    ``root_path`` is the absolute folder of the source root; ``planning`` the unit's
    ``SCHEDULED``/``DEADLINE``/``CLOSED`` timestamps; ``blocks`` its Obsidian blocks
    (``^id`` anchors).
    """

    unit_id: str
    document_id: str
    ordinal: int
    kind: str
    title: str
    outline_path: tuple[str, ...]
    body: str
    parent_id: str | None
    line_start: int
    line_end: int
    tags: tuple[str, ...]
    todo: str | None
    role: str | None
    doc_title: str
    path: str
    format: str
    root_path: str
    priority: str | None = None
    planning: tuple[Timestamp, ...] = ()
    blocks: tuple[BlockRef, ...] = ()


@dataclass(frozen=True, slots=True)
class ContextUnit:
    """A neighbouring unit shown as context of a hit (the message before or after)."""

    ordinal: int
    title: str
    body: str
    role: str | None


@dataclass(frozen=True, slots=True)
class Chunk:
    """A stored chunk of a unit body (the embedded text is prefix + window).

    Attributes:
        unit_id / ordinal: the unit and 0-based position among its chunks (the key).
        start / end / window_start / window_end: character offsets into the unit body
            of the chunk and of the chunk with its overlap.
        tokens: approximate token count; ``profile``: the chunking profile's name.
        hash: content hash of the exact embedded text (the key of its vector).
    """

    unit_id: str
    ordinal: int
    start: int
    end: int
    window_start: int
    window_end: int
    tokens: int
    profile: str
    hash: str


@dataclass(frozen=True, slots=True)
class ChunkSource:
    """A unit as the chunker and the embedded-text prefix see it.

    ``tags`` are own then inherited tags (no repeats); ``doc_type`` picks the chunk
    profile. ``before_title`` / ``before_body``: of a chat message, the title and body
    of the message just before it in its conversation (``""``: none, or not a message).
    """

    unit_id: str
    kind: str
    title: str
    outline_path: tuple[str, ...]
    body: str
    tags: tuple[str, ...]
    doc_title: str
    doc_type: str | None = None
    before_title: str = ""
    before_body: str = ""


@dataclass(frozen=True, slots=True)
class VectorSpace:
    """An embedding space: the embedder fingerprint, model name, dimension, vectors."""

    space: str
    name: str
    dim: int
    vectors: int


@dataclass(frozen=True, slots=True)
class VectorMatrix:
    """Every live chunk vector of one space, ready for exact cosine search (numpy).

    Attributes:
        space: the embedder fingerprint; ``generation``: the vector generation read.
        unit_ids: the distinct units of the rows; row ``i`` belongs to
            ``unit_ids[units[i]]`` (a unit whose rows are all ``dead`` may stay).
        units: ``int64[n]`` index into ``unit_ids`` per row.
        ordinals / starts / ends: ``int64[n]`` chunk ordinal and body offsets per row.
        alternate: ``bool[n]``, the row's unit is off a conversation's canonical branch.
        matrix: ``float32[n, dim]`` unit-length vectors.
        chunk_ids: ``int64[n]`` the store's chunk id per row, ascending, when the store
            can patch the matrix from them (``VectorIndex.matrix_since``); else ``None``.
        dead: ``bool[n]``, the row's chunk is gone from the index: a patched matrix
            (``VectorIndex.matrix_since``) may keep such rows rather than copy the
            others, and every search skips them; ``None``: every row is live (a
            full load, ``VectorIndex.matrix``). :meth:`live` counts the others.
    """

    space: str
    generation: int
    unit_ids: tuple[str, ...]
    units: Any
    ordinals: Any
    starts: Any
    ends: Any
    alternate: Any
    matrix: Any
    chunk_ids: Any = None
    dead: Any = None

    def live(self) -> int:
        """How many rows are live (not :attr:`dead`)."""
        n = int(self.matrix.shape[0])
        return n if self.dead is None else n - int(self.dead.sum())
