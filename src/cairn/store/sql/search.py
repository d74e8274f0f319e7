"""The keyword search both backends share: filters as SQL over ``u`` (units) and ``d``
(documents), and the typed hit data search builds results from. Ranking by words is
each backend's own (FTS5 in :mod:`cairn.store.sqlite.fts`, ``tsvector`` in
:mod:`cairn.store.postgres.search`), and so is a ``+word`` filter
(:meth:`SearchBase._match_filter`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cairn import model
from cairn.errors import QueryError
from cairn.model import (
    PLANNING_ROLES,
    Filter,
    HitUnit,
    Term,
    Timestamp,
    UnitFacts,
)
from cairn.store.sql.base import SQLBase
from cairn.store.sql.filters import extra_filter

if TYPE_CHECKING:
    from cairn.model import ContextUnit, TextQuery

_WS = "char(32, 9, 10, 13)"
ROUNDS_ORDER = (
    "row_number() OVER (PARTITION BY u.document_id ORDER BY u.kind = 'preamble', u.ordinal), "
    "d.path, u.document_id, u.ordinal"
)
"""The order of a filter-only query: in rounds, each document's first matching unit (in
path order), then each one's second, and so on, so a filter that matches many units of
one file still lists the other files on its first page. A document's preamble comes
after its other matching units: one holding only the title is not listed when another
unit of its document is (``cairn.search.rank.drop_shadowed``), and this keeps the first
``k`` results a prefix of the first ``k + n``."""


_BATCH = 500
def _tags(own: str | None, inherited: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*json.loads(own or "[]"), *json.loads(inherited or "[]")]))


_FILTER_VALUES = {
    "format": "SELECT DISTINCT format FROM documents",
    "kind": "SELECT DISTINCT kind FROM units UNION "
    "SELECT DISTINCT json_extract(extra, '$.kind') FROM units WHERE kind = 'message'",
    "todo": "SELECT DISTINCT todo FROM units WHERE todo IS NOT NULL",
    "role": "SELECT DISTINCT role FROM units WHERE role IS NOT NULL",
}


class SearchBase(SQLBase):
    """Filters and typed hit data over the shared tables; a backend adds ranking."""

    def _keyword_row_problems(self, text_table: str) -> list[str]:
        """The keyword index's rows against ``units``, one sentence a problem: a count
        that differs, rows of ``text_table`` (where a backend keeps their text) whose
        unit is gone."""
        problems: list[str] = []
        n_units = self.db.execute("SELECT count(*) FROM units").fetchone()[0]
        n_fts = self.db.execute("SELECT count(*) FROM units_fts").fetchone()[0]
        if n_units != n_fts:
            problems.append(f"units ({n_units}) and FTS rows ({n_fts}) differ")
        orphans = self.db.execute(
            f"SELECT count(*) FROM {text_table} WHERE rowid NOT IN (SELECT rowid FROM units)"
        ).fetchone()[0]
        if orphans:
            problems.append(f"{orphans} FTS rows without a unit (`cairn check --repair`)")
        return problems

    # --- filters ----------------------------------------------------------------------
    def _filter_sql(
        self, filters: Sequence[Filter], *, first_unit: bool = False, few: bool = False
    ) -> tuple[list[str], list[Any]]:
        """SQL conditions over ``u`` and ``d`` and their arguments, one per filter;
        ``few``: they are checked on a few given units (a look-up per unit rather than
        every unit a filter passes listed once)."""
        where: list[str] = []
        args: list[Any] = []
        for f in filters:
            first = first_unit and not f.negate
            sql, a = self._one_filter(f, first_unit=first, few=few)
            if f.any_of:  # a list of values: any of them
                alts = [self._one_filter(replace(f, value=x, any_of=()), first_unit=first,
                                         few=few)
                        for x in f.any_of]
                sql = "(" + " OR ".join([sql, *(s for s, _ in alts)]) + ")"
                a = [*a, *(x for _, xs in alts for x in xs)]
            # a negated filter keeps units that have no value at all (NULL is not a match)
            where.append(f"NOT coalesce(({sql}), false)" if f.negate else sql)
            args.extend(a)
        return where, args

    def _one_filter(
        self, f: Filter, *, first_unit: bool = False, few: bool = False
    ) -> tuple[str, list[Any]]:
        v = f.value
        more = extra_filter(f)
        if more is not None:
            return more
        if f.field == "match":  # +word: the unit contains the word (phrase, group)
            t = f.term or Term(tuple(v.split()), tuple((f.key or "").split()))
            return self._match_filter(t) if t.searchable else ("1", [])
        if f.field == "tag":
            # Org allows '#' in a tag (``:#7:``): tag:#7 is that tag, and also the
            # Obsidian tag 7 written #7 (stored without its '#')
            low = v.casefold()
            bare = low.lstrip("#") or low
            # the tagged units listed once (every tag row read), not a look-up per
            # unit: a filter-only tag: search would otherwise visit every unit; a few
            # given units are looked up (by unit_tags_unit)
            tagged = ("t.tag IN (?, ?) OR t.tag LIKE ? ESCAPE '\\' OR t.tag LIKE ? ESCAPE '\\'")
            return (
                f"EXISTS (SELECT 1 FROM unit_tags t WHERE t.unit_rowid = u.rowid AND ({tagged}))"
                if few else f"u.rowid IN (SELECT t.unit_rowid FROM unit_tags t WHERE {tagged})",
                [low, bare, _like_escape(low) + "/%", _like_escape(bare) + "/%"],
            )
        if f.field == "todo":
            # lower-case open/done/any name a state; anything else is a keyword, matched
            # exactly as Org does (keywords are case-sensitive: todo:DONE is the keyword)
            if v in ("open", "done"):
                return ("u.todo_state = ?", [v])
            if v in ("any", "*"):
                return ("u.todo IS NOT NULL", [])
            return ("u.todo = ?", [v])
        if f.field == "priority":
            return ("u.priority = ? COLLATE NOCASE", [v.lstrip("#")])
        if f.field == "type":
            return (
                "(d.type = ? COLLATE NOCASE OR json_extract(u.properties, '$.type') = ?)",
                [v, v],
            )
        if f.field == "format":
            return ("d.format = ? COLLATE NOCASE", [v])
        if f.field == "source":
            return (
                "(d.format = ? COLLATE NOCASE OR d.root_id IN (SELECT id FROM roots "
                "WHERE path = ? OR path LIKE ? ESCAPE '\\'))",
                [v, v, "%/" + _like_escape(v.rstrip("/"))],
            )
        if f.field == "path":
            if any(c in v for c in "*?["):
                return ("d.path GLOB ?", [v])
            return ("d.path LIKE ? ESCAPE '\\'", ["%" + _like_escape(v) + "%"])
        if f.field == "prop":
            # the unit's own properties, those it inherits (Org), and its document's
            # metadata (frontmatter); a list value matches when one element does
            # a frontmatter value written as a wikilink ("[[Books]]") matches its name;
            # with ``first_unit`` a match by the document's metadata alone is one hit
            # (the document's first unit), not every section of the note
            key = f.key or ""
            link = f"[[{v}]]"
            doc_level = (
                "EXISTS (SELECT 1 FROM json_each(d.metadata) m WHERE m.key = ? COLLATE NOCASE"
                " AND (? = '' OR CAST(m.value AS TEXT) IN (? COLLATE NOCASE, ? COLLATE NOCASE)"
                " OR (m.type = 'array' AND EXISTS (SELECT 1 FROM json_each(m.value) e"
                " WHERE CAST(e.value AS TEXT) IN (? COLLATE NOCASE, ? COLLATE NOCASE)))))"
            )
            if first_unit:
                doc_level = (
                    f"({doc_level} AND u.ordinal = (SELECT min(o.ordinal) FROM units o"
                    " WHERE o.document_id = u.document_id AND o.alternate = 0))"
                )
            return (
                "(EXISTS (SELECT 1 FROM json_each(u.properties) p WHERE p.key = ? COLLATE NOCASE"
                " AND (? = '' OR p.value = ? COLLATE NOCASE))"
                " OR EXISTS (SELECT 1 FROM json_each(u.extra, '$.inherited_properties') p"
                " WHERE p.key = ? COLLATE NOCASE AND (? = '' OR p.value = ? COLLATE NOCASE))"
                f" OR {doc_level})",
                [key, v, v, key, v, v, key, v, v, link, v, link],
            )
        if f.field == "role":
            return ("u.role = ? COLLATE NOCASE", [v])
        if f.field == "kind":  # a unit kind, or a chat message's kind (question, answer …)
            return (
                "(u.kind = ? COLLATE NOCASE OR json_extract(u.extra, '$.kind') = ?)",
                [v, v.casefold()],
            )
        if f.field in ("before", "after"):
            op = "<" if f.field == "before" else ">="
            stamp = (
                "COALESCE(u.time, d.modified, d.created, "
                "strftime('%Y-%m-%dT%H:%M:%SZ', d.mtime, 'unixepoch'))"
            )
            return (f"substr({stamp}, 1, {len(v)}) {op} ?", [v])
        if f.field == "id":  # the unit, or its document's units, found by index
            return ("u.rowid IN (SELECT rowid FROM units WHERE id = ? OR document_id = ?)",
                    [v, v])
        raise QueryError(f"unknown filter field {f.field!r}")

    def search_text(
        self, query: TextQuery, *, limit: int, weights: Mapping[str, float],
        whole_documents: bool = True,
    ) -> list[tuple[str, float]]:
        """The backend's keyword ranking (:meth:`cairn.store.keyword.KeywordIndex.search_text`)."""
        raise NotImplementedError

    def best_in_documents(
        self, query: TextQuery, documents: Sequence[str], *, per_document: int,
        weights: Mapping[str, float],
    ) -> dict[str, list[str]]:
        """See :meth:`cairn.store.keyword.KeywordIndex.best_in_documents`; here by
        :meth:`search_text` with ``id:`` naming the documents (a unit's score does not
        depend on the filter, so a document's units keep their order), ``per_document``
        times as deep as the documents named; while that list comes back full, the
        documents still short are asked again on their own: a full list gives one of
        them all it needs, so each round settles a document or is the last."""
        top: dict[str, list[str]] = {d: [] for d in dict.fromkeys(documents)}
        owner: dict[str, str] = {}
        short = list(top)
        while short and per_document > 0:
            named = Filter("id", short[0], any_of=tuple(short[1:]))
            n = per_document * len(short)
            found = self.search_text(replace(query, filters=(*query.filters, named)),
                                     limit=n, weights=weights)
            new = [k for k, _ in found if k not in owner]
            owner.update((k, f.document_id) for k, f in self.unit_facts(new).items())
            for k, _ in found:
                for d in dict.fromkeys((owner.get(k), k)):
                    if d in short and len(top[d]) < per_document and k not in top[d]:
                        top[d].append(k)
            if len(found) < n:
                break
            short = [d for d in short if len(top[d]) < per_document]
        return top

    def _match_filter(self, term: Term) -> tuple[str, list[Any]]:
        """The condition of a ``+word`` filter: the unit's indexed text holds ``term``
        (searchable), in the backend's keyword index."""
        raise NotImplementedError

    def filter_units(self, unit_ids: Sequence[str], query: TextQuery) -> list[str]:
        """The given unit ids that exist and pass ``query``'s filters (and are on a
        canonical branch unless its ``alternates``), in the given order; its terms
        are not read."""
        if not unit_ids:
            return []
        where, args = self._filter_sql(query.filters, few=True)
        if not query.alternates:
            where.append("u.alternate = 0")
        ok: set[str] = set()
        ids = list(dict.fromkeys(unit_ids))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            q = ",".join("?" * len(part))
            sql = (
                "SELECT u.id FROM units u JOIN documents d ON d.id = u.document_id "
                f"WHERE u.id IN ({q})" + "".join(f" AND {w}" for w in where)
            )
            ok.update(r[0] for r in self.db.execute(sql, [*part, *args]))
        return [u for u in unit_ids if u in ok]

    def filter_values(self, field: str) -> list[str]:
        """The values of a filter field present in the index, sorted (``format``,
        ``kind``, ``todo``, ``role``), for telling a user which ones exist.

        Raises:
            QueryError: the field has no finite set of values.
        """
        sql = _FILTER_VALUES.get(field)
        if sql is None:
            raise QueryError(f"filter {field}: has no list of values")
        return sorted({str(r[0]) for r in self.db.execute(sql) if r[0]})

    def unit_facts(self, unit_ids: Sequence[str]) -> dict[str, UnitFacts]:
        """``unit id -> UnitFacts`` for the given ids that exist (see the view)."""
        out: dict[str, UnitFacts] = {}
        ids = list(dict.fromkeys(unit_ids))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                "SELECT u.id, u.document_id, u.kind = 'preamble' AND (trim(u.body, "
                + _WS
                + ") = ''"
                " OR trim(u.body, " + _WS + ") = trim(u.title, " + _WS + ")), "
                "COALESCE(json_extract(u.properties, '$.type'), d.type), u.time, d.modified, "
                "d.created, d.mtime FROM units u JOIN documents d ON d.id = u.document_id "
                f"WHERE u.id IN ({q})",
                part,
            ):
                out[r[0]] = UnitFacts(
                    r[0], r[1], bool(r[2]), r[3], r[4], r[5], r[6], float(r[7] or 0.0)
                )
        return out

    def hit_units(self, unit_ids: Sequence[str]) -> dict[str, HitUnit]:
        """``unit id -> HitUnit`` (the unit with its document's fields) for the given
        ids that exist."""
        out: dict[str, HitUnit] = {}
        ids = list(dict.fromkeys(unit_ids))
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            q = ",".join("?" * len(part))
            for r in self.db.execute(
                "SELECT u.id, u.document_id, u.ordinal, u.kind, u.title, u.outline_path, u.body, "
                "u.parent_id, u.line_start, u.line_end, u.tags, u.inherited_tags, u.todo, "
                "u.role, d.title, d.path, d.format, r.path, u.priority, u.timestamps, "
                "json_extract(u.extra, '$.blocks') "
                "FROM units u JOIN documents d ON d.id = u.document_id "
                f"JOIN roots r ON r.id = d.root_id WHERE u.id IN ({q})",
                part,
            ):
                out[r[0]] = HitUnit(
                    unit_id=r[0],
                    document_id=r[1],
                    ordinal=int(r[2]),
                    kind=r[3],
                    title=r[4] or "",
                    outline_path=tuple(json.loads(r[5] or "[]")),
                    body=r[6] or "",
                    parent_id=r[7],
                    line_start=int(r[8]),
                    line_end=int(r[9]),
                    tags=_tags(r[10], r[11]),
                    todo=r[12],
                    role=r[13],
                    doc_title=r[14] or "",
                    path=r[15],
                    format=r[16],
                    root_path=r[17],
                    priority=r[18],
                    planning=tuple(
                        Timestamp(**t)
                        for t in json.loads(r[19] or "[]")
                        if t.get("role") in PLANNING_ROLES
                    ),
                    blocks=model.BlockRef.all_of(json.loads(r[20])) if r[20] else (),
                )
        return out

    def siblings(self, document_id: str, parent_id: str | None, exclude: str) -> list[str]:
        """Titles of a unit's sibling headings (same parent), in order (at most 12)."""
        rows = self.db.execute(
            "SELECT title FROM units WHERE document_id=? AND parent_id IS ? AND id != ? "
            "AND kind='heading' ORDER BY ordinal LIMIT 12",
            (document_id, parent_id, exclude),
        ).fetchall()
        return [r[0] for r in rows]

    def siblings_many(
        self, units: Sequence[tuple[str, str | None, str]]
    ) -> dict[str, list[str]]:
        """:meth:`siblings` of many ``(document id, parent id, unit id)``:
        ``unit id -> titles`` (in process, one look-up each)."""
        return {uid: self.siblings(doc, parent, uid) for doc, parent, uid in units}

    def neighbours(self, document_id: str, ordinal: int, kind: str) -> list[ContextUnit]:
        """The units of the same kind just before and after ``ordinal`` (canonical
        branch only), in order: at most one each side."""
        before = self.db.execute(
            "SELECT ordinal, title, body, role FROM units WHERE document_id=? AND kind=? "
            "AND alternate=0 AND ordinal<? ORDER BY ordinal DESC LIMIT 1",
            (document_id, kind, ordinal),
        ).fetchall()
        after = self.db.execute(
            "SELECT ordinal, title, body, role FROM units WHERE document_id=? AND kind=? "
            "AND alternate=0 AND ordinal>? ORDER BY ordinal LIMIT 1",
            (document_id, kind, ordinal),
        ).fetchall()
        return [
            model.ContextUnit(int(r[0]), r[1] or "", r[2] or "", r[3])
            for r in (*before, *after)
        ]


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
