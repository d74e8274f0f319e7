"""What the search page shows beside its hits: the facets as links that add (or take
away) a filter, and each hit's explanation as rows — every summand of its score, the
keyword and semantic lists' ranks and raw scores, the fusion's parameters and, for a
hit brought in by graph expansion, the paths walked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cairn.model import Facets

FACET_TITLES = {"format": "Format", "tag": "Tag", "todo": "TODO", "type": "Type",
                "root": "Folder"}


def _label(field: str, value: str) -> str:
    if field == "root":
        return value.rstrip("/").rsplit("/", 1)[-1] or value
    return value


def facet_links(q: str, facets: Facets) -> list[dict[str, Any]]:
    """The facet groups of the search page, in :data:`cairn.model.FACET_FIELDS` order,
    groups without values left out.

    Returns:
        ``[{"field", "title", "values": [{"label", "value", "count", "active",
        "q"}]}]`` where ``q`` is the query with the value's filter added — or taken
        away when ``active`` (already in the query); values that cannot be written as
        a filter have ``q`` ``None``.
    """
    words = q.split()
    out: list[dict[str, Any]] = []
    for field, values in facets.fields.items():
        rows = []
        for v in values:
            active = v.filter is not None and v.filter in words
            if v.filter is None:
                nq = None
            elif active:
                nq = " ".join(w for w in words if w != v.filter)
            else:
                nq = f"{q.strip()} {v.filter}"
            rows.append({"label": _label(field, v.value), "value": v.value,
                         "count": v.count, "active": active, "q": nq})
        if rows:
            out.append({"field": field, "title": FACET_TITLES.get(field, field),
                        "values": rows})
    return out


def _num(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    return f"{x:.6g}"


def explain_rows(exp: Mapping[str, Any]) -> dict[str, Any] | None:
    """A hit's explanation (``Hit.explain``, see :mod:`cairn.search.hits`) as what the
    page's "explain" view shows, or ``None`` when there is none.

    Returns:
        ``{"score", "summands": [(name, value)], "lists": [(list, rank, raw name,
        raw value)], "params": [(name, value)], "paths": [{"seed", "contribution",
        "edges": [{"from", "to", "relation", "origin", "direction"}]}]}`` with numbers
        as text; the summands add up to ``score``; a list's raw score split into parts
        (``keyword.parts``) is followed by one ``("· <part>", "", "part", value)`` row each.
    """
    if not exp:
        return None
    summands = [(str(k), _num(v)) for k, v in dict(exp.get("summands", {})).items()]
    lists = []
    for name, raw in (("keyword", "bm25"), ("semantic", "cosine")):
        part = exp.get(name)
        if isinstance(part, Mapping):
            lists.append((name, _num(part.get("rank")), raw, _num(part.get(raw))))
            lists += [(f"· {k}", "", "part", _num(v))
                      for k, v in dict(part.get("parts") or {}).items()]
    params = [("mode", str(exp.get("mode", "")))]
    for key in ("fusion", "rrf_k", "relative", "fts_query", "model"):
        if key in exp:
            params.append((key, _num(exp[key])))
    for key in ("list_weights", "blend"):
        if isinstance(exp.get(key), Mapping):
            params.append((key, ", ".join(f"{k}={_num(v)}" for k, v in exp[key].items())))
    if exp.get("filters"):
        params.append(("filters", ", ".join(
            ("-" if f.get("negate") else "") + f.get("field", "") + ":"
            + (f"{f['key']}=" if f.get("key") else "") + str(f.get("value", ""))
            for f in exp["filters"] if isinstance(f, Mapping))))
    paths = []
    graph = exp.get("graph")
    if isinstance(graph, Mapping):
        params.append(("rank before expansion", _num(graph.get("rank_before"))))
        for p in graph.get("paths", []):
            edges = [{"from": (e.get("from") or {}).get("title") or e.get("walked_from"),
                      "to": (e.get("to") or {}).get("title") or e.get("walked_to"),
                      "relation": e.get("relation", ""), "origin": e.get("origin", ""),
                      "direction": e.get("direction", "")} for e in p.get("edges", [])]
            paths.append({"seed": p.get("seed"), "contribution": _num(p.get("contribution")),
                          "edges": edges})
    return {"score": _num(exp.get("score")), "summands": summands, "lists": lists,
            "params": params, "paths": paths}
