"""Search: one service over the store (:class:`cairn.search.service.SearchService`).

Modules by role:

* :mod:`~cairn.search.query` — the query language: user text → :class:`Query` → the
  :class:`cairn.model.TextQuery` the store ranks; its filters in
  :mod:`~cairn.search.filters` (``source:`` paths resolved), its function words in
  :mod:`~cairn.search.stopwords`;
* :mod:`~cairn.search.rank` — the keyword, semantic and hybrid lists and their fusion;
  the linear blend's inputs (type weights, time decay, graph proximity) in
  :mod:`~cairn.search.blend`, the one title-only-preamble rule in
  :mod:`~cairn.search.preambles`, the exact-title rule in :mod:`~cairn.search.titles`;
* :mod:`~cairn.search.dense` — exact cosine top-k over ``store.vectors``;
* :mod:`~cairn.search.fusion` — RRF and the linear blend;
* :mod:`~cairn.search.expand` — graph expansion of a ranking;
* :mod:`~cairn.search.hits` and :mod:`~cairn.search.snippet` — hits, snippets, context
  and explanations;
* :mod:`~cairn.search.service` — the service: mode fallbacks, paging, notes;

Everything is keyed by unit id; no SQL and no backend syntax lives here.
"""
