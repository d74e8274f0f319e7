"""``SearchRequest``: one search, as every door asks for it.

The CLI, the HTTP API, the MCP tool, the web UI, the CLI's fast path and the
warm-model socket each read their own input into one :class:`SearchRequest` and hand
it to :meth:`cairn.app.Cairn.search`, which hands it to
:meth:`cairn.search.service.SearchService.search`; the parameters of a search are
declared here and nowhere else. A request is checked when it is made, so a bad value
fails at the door with a :class:`~cairn.errors.QueryError` naming the field, before
any index is opened.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.errors import QueryError
from cairn.model.core import SEARCH_MODES, SearchMode

MAX_LIMIT = 1_000_000
"""The most hits one page may ask for: more than any index holds in practice, and far
below what SQLite's 64-bit integers (and the candidate lists sized from it) can take."""
MAX_OFFSET = 1_000_000_000
"""The most hits a page may skip."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search: what to look for and how to rank and page it.

    Attributes:
        query: the query text: words (any may match), ``"phrases"``, ``-exclusions``
            and filters (``tag:work``; see :mod:`cairn.search.query`). Any text; the
            query language never rejects it.
        mode: ``keyword`` (BM25), ``semantic`` (embeddings) or ``hybrid`` (their
            fusion); ``None``: hybrid when the index has embeddings, else keyword. A
            semantic request without embeddings answers with keywords and a note.
        limit: hits per page, 1 to :data:`MAX_LIMIT`; ``None``: ``[search] limit`` (10).
        offset: hits to skip, 0 to :data:`MAX_OFFSET` (paging: the next page starts at
            ``offset + limit``).
        filters: more filters in the query language (``tag:work``, ``-todo:DONE``),
            appended to ``query`` (see :attr:`text`).
        explain: give each hit its ranks, raw scores, fused summands and, with
            ``expand``, the edges walked.
        alternates: also chat messages off a conversation's canonical branch (the
            branch a regenerated or edited message left behind); off, only the
            canonical thread is searched.
        expand: graph expansion: walk 1–2 hops from the top hits along typed edges
            and re-score; ``None``: ``[graph] expand`` (off).
        sort: order by fields instead of relevance, compared in turn: a comma list
            (``"priority,deadline"``) or a sequence of keys (relevance, deadline,
            scheduled, priority, modified, title; an unknown key is a
            :class:`~cairn.errors.QueryError` when the search runs); ``None``:
            relevance.
        rerank: re-rank the first ``[rerank] top_k`` hits with the configured
            reranker; ``None``: ``[rerank] enabled`` (off).
        today: the day relative dates (``deadline:this-week``) count from, a date or
            ``YYYY-MM-DD``; ``None``: ``$CAIRN_TODAY``, else the local date.

    Raises:
        QueryError: a field has the wrong type or value (the message names the field
            and the value).
    """

    query: str
    mode: SearchMode | None = None
    limit: int | None = None
    offset: int = 0
    filters: tuple[str, ...] = ()
    explain: bool = False
    alternates: bool = False
    expand: bool | None = None
    sort: str | tuple[str, ...] | None = None
    rerank: bool | None = None
    today: _dt.date | str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str):
            raise QueryError(f"query must be text, not {_shown(self.query)}")
        if self.mode is not None and self.mode not in SEARCH_MODES:
            raise QueryError(f"unknown mode {self.mode!r}: use keyword, semantic or hybrid")
        if self.limit is not None and not (_is_int(self.limit) and 1 <= self.limit <= MAX_LIMIT):
            raise QueryError(f"limit must be a whole number from 1 to {MAX_LIMIT:,}, not "
                             f"{_shown(self.limit)}")
        if not (_is_int(self.offset) and 0 <= self.offset <= MAX_OFFSET):
            raise QueryError(f"offset must be from 0 to {MAX_OFFSET:,}, not "
                             f"{_shown(self.offset)}")
        if isinstance(self.filters, str) or not isinstance(self.filters, Sequence) or not all(
            isinstance(f, str) for f in self.filters
        ):
            raise QueryError(f"filters must be a list of text, not {_shown(self.filters)}")
        object.__setattr__(self, "filters", tuple(self.filters))
        for name in ("explain", "alternates"):
            if not isinstance(getattr(self, name), bool):
                raise QueryError(f"{name} must be true or false, not "
                                 f"{_shown(getattr(self, name))}")
        for name in ("expand", "rerank"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), bool):
                raise QueryError(f"{name} must be true, false or unset, not "
                                 f"{_shown(getattr(self, name))}")
        self._check_sort()
        self._check_today()

    def _check_sort(self) -> None:
        sort = self.sort
        if sort is None or isinstance(sort, str):
            return
        if not isinstance(sort, Sequence) or not all(isinstance(k, str) for k in sort):
            raise QueryError(f"sort must be a comma list or a list of keys, not {_shown(sort)}")
        object.__setattr__(self, "sort", tuple(sort))

    def _check_today(self) -> None:
        today = self.today
        if today is None or isinstance(today, _dt.date):
            return
        if not isinstance(today, str):
            raise QueryError(f"today must be a date (YYYY-MM-DD), not {_shown(today)}")
        try:
            _dt.date.fromisoformat(today.strip()[:10])
        except ValueError:
            raise QueryError(f"today: not a date (YYYY-MM-DD): {today!r}") from None

    @property
    def text(self) -> str:
        """The query with :attr:`filters` appended: what is parsed and searched."""
        if not self.filters:
            return self.query
        return " ".join((self.query, *self.filters)).strip()

    @classmethod
    def of(cls, request: SearchRequest | str, /, **options: Any) -> SearchRequest:
        """``request`` itself, or a request for the query text ``request`` with these
        fields (``SearchRequest.of("compost", mode="keyword")``).

        Raises:
            QueryError: an option is not a field, has a bad value, or options come
                with a request already made.
        """
        if isinstance(request, SearchRequest):
            if options:
                raise QueryError(f"options {', '.join(sorted(options))} given with a "
                                 "SearchRequest: set them on the request")
            return request
        return cls.from_mapping({"query": request, **options})

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SearchRequest:
        """A request from a JSON object's fields (``{"query": …, "mode": …}``, as the
        warm-model socket carries it; a missing or null field takes its default).

        Raises:
            QueryError: a field is unknown, missing (``query``) or has a bad value.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(k for k in data if k not in names)
        if unknown:
            raise QueryError(f"unknown search field {unknown[0]!r}; fields: "
                             f"{', '.join(f.name for f in dataclasses.fields(cls))}")
        if "query" not in data:
            raise QueryError("query is missing")
        given = {k: v for k, v in data.items() if v is not None or k == "query"}
        if isinstance(given.get("filters"), list):
            given["filters"] = tuple(given["filters"])
        if isinstance(given.get("sort"), list):
            given["sort"] = tuple(given["sort"])
        return cls(**given)

    def to_mapping(self) -> dict[str, Any]:
        """The fields as a JSON object (:meth:`from_mapping` reads it back): tuples as
        lists, a date as ``YYYY-MM-DD``."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, _dt.date):
                value = value.isoformat()
            out[f.name] = value
        return out

    def with_defaults(self, *, expand: bool) -> SearchRequest:
        """This request with ``expand`` filled in when it is unset (the
        configuration's default, which only the composition root knows)."""
        if self.expand is not None:
            return self
        return dataclasses.replace(self, expand=expand)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """A bad value as a message shows it: its repr, cut short (it may be huge)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
