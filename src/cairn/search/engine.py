"""Keyword search: parse the query, run BM25 over FTS5, build explained hits."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cairn.config import SearchConfig
from cairn.model import PLANNING_ROLES, Hit, Timestamp
from cairn.search.query import Query, parse_query, to_fts
from cairn.search.snippet import make_snippet, term_patterns
from cairn.store import Store


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits for one query, with the parsed query and timing (milliseconds)."""

    query: Query
    hits: tuple[Hit, ...]
    took_ms: float
    notes: tuple[str, ...] = field(default=())


def _title_only(row: Any) -> bool:
    """A preamble unit that holds nothing but its document's title."""
    body = row["body"].strip()
    return row["kind"] == "preamble" and (not body or body == row["title"].strip())


def _drop_shadowed_preambles(
    ranked: list[tuple[int, float]], rows: dict[int, Any]
) -> list[tuple[int, float]]:
    """Drop a document's title-only preamble unit when another unit of the same
    document is also a hit: one result per place to read."""
    docs_with_content = {
        rows[r]["document_id"] for r, _ in ranked if r in rows and not _title_only(rows[r])
    }
    return [
        (r, s)
        for r, s in ranked
        if r in rows and not (_title_only(rows[r]) and rows[r]["document_id"] in docs_with_content)
    ]


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def hit_context(store: Store, r: Any) -> tuple[str, ...]:
    """Sibling heading titles of a heading; the previous and next messages of a chat
    message (``"user: …"``), so a hit can be read in context."""
    if r["kind"] == "heading":
        return tuple(store.siblings(r["document_id"], r["parent_id"], r["id"]))
    if r["kind"] == "message":
        return tuple(
            f"{n['role'] or 'message'}: {_short(n['body'] or n['title'])}"
            for n in store.neighbours(r["document_id"], r["ordinal"], "message")
        )
    return ()


def build_hit(
    store: Store,
    r: Any,
    rank: int,
    score: float,
    snippet: str,
    highlights: tuple[tuple[int, int], ...],
    explain: dict[str, Any],
) -> Hit:
    """A :class:`Hit` from a row of :meth:`SQLiteStore.unit_rows`."""
    tags = tuple(json.loads(r["tags"])) + tuple(json.loads(r["inherited_tags"]))
    return Hit(
        rank=rank,
        score=score,
        unit_id=r["id"],
        document_id=r["document_id"],
        title=r["title"],
        outline_path=tuple(json.loads(r["outline_path"])),
        doc_title=r["doc_title"],
        path=r["path"],
        abs_path=f"{r['root_path'].rstrip('/')}/{r['path']}",
        root=r["root_path"],
        format=r["format"],
        line_start=r["line_start"],
        line_end=r["line_end"],
        snippet=snippet,
        kind=r["kind"],
        tags=tuple(dict.fromkeys(tags)),
        todo=r["todo"],
        siblings=hit_context(store, r),
        highlights=highlights,
        explain=explain,
        priority=r["priority"],
        planning=tuple(
            Timestamp(**t) for t in json.loads(r["timestamps"]) if t["role"] in PLANNING_ROLES
        ),
    )


class Searcher:
    """BM25 keyword search over a store.

    Args:
        store: the open store.
        config: column weights and the default limit.
    """

    def __init__(self, store: Store, config: SearchConfig) -> None:
        self.store = store
        self.config = config

    def hits_for(self, unit_ids: Sequence[str], query: Query) -> list[Hit]:
        """Hits (rank 0, score 0) for given units, with snippets for ``query``: for
        units that a later step (graph expansion) brings in."""
        ids = self.store.rowids_of(unit_ids)
        rows = self.store.unit_rows(list(ids.values()))
        patterns = term_patterns(query.positive)
        out: list[Hit] = []
        for uid in unit_ids:
            r = rows.get(ids.get(uid, -1))
            if r is None:
                continue
            body = r["body"] or ""
            snippet, spans = make_snippet(body if body.strip() else r["title"], patterns)
            out.append(build_hit(self.store, r, 0, 0.0, snippet, spans, {}))
        return out

    def search(
        self,
        text: str,
        *,
        limit: int | None = None,
        explain: bool = False,
        include_alternates: bool = False,
    ) -> SearchResult:
        """Search for ``text`` (see :mod:`cairn.search.query` for the syntax).

        Returns at most ``limit`` hits, best first. An empty query (no words and no
        filters) returns no hits. Never raises for any user text.
        """
        t0 = time.perf_counter()
        query = parse_query(text)
        k = max(1, limit or self.config.limit)
        if query.is_empty:
            return SearchResult(query, (), 0.0, query.notes)
        match = to_fts(query)
        if match is None and not query.filters:
            return SearchResult(query, (), 0.0, query.notes)
        ranked = self.store.search_fts(
            match,
            query.filters,
            limit=k + 10,
            weights=self.config.weights,
            include_alternates=include_alternates,
        )
        rows = self.store.unit_rows([r for r, _ in ranked])
        ranked = _drop_shadowed_preambles(ranked, rows)[:k]
        patterns = term_patterns(query.positive)
        hits: list[Hit] = []
        for rank, (rowid, score) in enumerate(ranked, start=1):
            r = rows.get(rowid)
            if r is None:
                continue
            body = r["body"] or ""
            snippet, highlights = make_snippet(body if body.strip() else r["title"], patterns)
            exp: dict[str, Any] = {}
            if explain:
                exp = {
                    "mode": "keyword",
                    "keyword": {"rank": rank, "bm25": score},
                    "fts_query": match,
                    "weights": dict(self.config.weights),
                    "filters": [
                        {"field": f.field, "value": f.value, "key": f.key, "negate": f.negate}
                        for f in query.filters
                    ],
                    "score": score,
                }
            hits.append(build_hit(self.store, r, rank, score, snippet, highlights, exp))
        took = (time.perf_counter() - t0) * 1000
        return SearchResult(query, tuple(hits), round(took, 3), query.notes)
