"""FTS5 MATCH expressions of parsed queries.

User text never reaches FTS5 unescaped: every token of a :class:`cairn.model.Term` is
a quoted string, so ``C++``, ``NEAR``, ``*`` or ``"unbalanced`` are plain words. A term
of several tokens (``BENCH-100821``, ``path/to/file.toml``, a quoted phrase) becomes an
FTS5 phrase; CJK bigrams are a phrase against the ``cjk`` column.
"""

from __future__ import annotations

from cairn.model import Term, TextQuery


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def group_expr(t: Term) -> str:
    """A group (``(a b OR c)``) as FTS5 syntax, every operator parenthesised:
    alternatives OR-ed, each its positive terms AND-ed minus (``NOT``) its negated
    ones."""
    alts: list[str] = []
    for alt in t.group:
        pos = [term_expr(x) for x in alt if not x.negate and x.searchable]
        neg = [term_expr(x) for x in alt if x.negate and x.searchable]
        if not pos:
            continue
        expr = pos[0] if len(pos) == 1 else "(" + " AND ".join(pos) + ")"
        if neg:
            expr = f"({expr} NOT ({' OR '.join(neg)}))"
        alts.append(expr)
    return alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")"


def term_expr(t: Term) -> str:
    """One term as FTS5 syntax: a quoted phrase of its tokens, its CJK bigrams as a
    phrase against the ``cjk`` column, or a group."""
    if t.group:
        return group_expr(t)
    parts: list[str] = []
    if t.tokens and t.cjk:  # CSSはHTML: the Latin words need not be adjacent any more
        parts.extend(_quote(tok) for tok in t.tokens)
    elif t.tokens:
        parts.append(_quote(" ".join(t.tokens)))
    if t.cjk:
        parts.append("cjk : " + _quote(" ".join(t.cjk)))
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def fts_match(query: TextQuery) -> str | None:
    """The FTS5 MATCH expression of a query, or ``None`` when it has no positive term.

    Positive terms are OR-ed; negative ones are subtracted with ``NOT``; a group
    (``(a b OR c)``) is its own parenthesised expression.
    """
    pos = [term_expr(t) for t in query.positive if t.searchable]
    if not pos:
        return None
    expr = " OR ".join(pos)
    neg = [term_expr(t) for t in query.negative if t.searchable]
    if neg:
        expr = f"({expr}) NOT ({' OR '.join(neg)})"
    return expr


def required_match(query: TextQuery) -> tuple[str, TextQuery] | None:
    """A query whose positive terms are all required (``+a +b``) as one MATCH of their
    conjunction, and the query without those ``match`` filters; ``None`` otherwise.

    BM25 sums over the phrases of the expression, each once, so ``a AND b`` scores a
    unit as ``a OR b`` does: the same hits and scores as the filters, but FTS5 ranks
    its own top N instead of testing every unit of a common word against a set."""
    must = [f for f in query.filters if f.field == "match" and not f.negate]
    if not must:
        return None
    pos = [term_expr(t) for t in query.positive if t.searchable]
    required: list[str] = []
    for f in must:
        t = f.term or Term(tuple(f.value.split()), tuple((f.key or "").split()))
        if t.searchable:
            required.append(term_expr(t))
    if not pos or set(required) != set(pos):
        return None
    expr = " AND ".join(f"({p})" for p in dict.fromkeys(pos))
    neg = [term_expr(t) for t in query.negative if t.searchable]
    if neg:
        expr = f"({expr}) NOT ({' OR '.join(neg)})"
    rest = tuple(f for f in query.filters if not (f.field == "match" and not f.negate))
    return expr, TextQuery(terms=query.terms, filters=rest, alternates=query.alternates)


def neg_match(query: TextQuery) -> str | None:
    """The negative terms OR-ed (the units to exclude), or ``None`` without any."""
    neg = [term_expr(t) for t in query.negative if t.searchable]
    return " OR ".join(neg) if neg else None
