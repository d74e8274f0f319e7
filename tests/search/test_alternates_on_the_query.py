"""Chat messages off a conversation's canonical branch are searched only when the
request asks for ``alternates``; the parsed query carries that to the store, whose
keyword list and filters read it from the query they are given, in every mode, with
filters, required words (``+word``) and graph expansion."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.model import SearchRequest, TextQuery
from cairn.search.query import parse_query

pytestmark = pytest.mark.corpus

CASE = Path(__file__).resolve().parents[3] / "shared" / "cases" / "030-chatgpt-active-branch-only"


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cairn]:
    pytest.importorskip("cairn.formats.chats")
    if not CASE.is_dir():
        pytest.skip("../shared/cases is absent")
    base = tmp_path_factory.mktemp("alternates")
    (base / "in").mkdir()
    shutil.copy(CASE / "conversations.json", base / "in" / "conversations.json")
    with Cairn.open(db=base / "i.db") as c:
        c.index([base / "in"])
        yield c


def _alternate(c: Cairn) -> str:
    (uid,) = [u for u, in c.store.db.execute("SELECT id FROM units WHERE alternate = 1 "
                                             "AND body LIKE '%quokka%'")]
    return str(uid)


def test_the_store_reads_the_branch_from_the_query(cairn: Cairn) -> None:
    weights = cairn.config.search.weights
    for text in ("quokka", "+quokka", "quokka format:chatgpt", "+quokka role:assistant"):
        tq = parse_query(text).for_store()
        assert tq.alternates is False
        assert cairn.store.search_text(tq, limit=10, weights=weights) == [], text
        found = cairn.store.search_text(replace(tq, alternates=True), limit=10,
                                        weights=weights)
        assert [u for u, _ in found] == [_alternate(cairn)], text
    alt = _alternate(cairn)
    assert cairn.store.filter_units([alt], TextQuery()) == []
    assert cairn.store.filter_units([alt], TextQuery(alternates=True)) == [alt]


@pytest.mark.parametrize("text", ["quokka", "+quokka", "quokka format:chatgpt"])
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid", None])
@pytest.mark.parametrize("expand", [False, True])
def test_a_request_finds_an_alternate_only_when_it_asks(
    cairn: Cairn, text: str, mode: str | None, expand: bool
) -> None:
    asked = SearchRequest.of(text, mode=mode, expand=expand, alternates=True)
    hits = [h.unit_id for h in cairn.search(asked).hits]
    assert hits[0] == _alternate(cairn)
    if not expand:  # expansion adds the thread's linked messages after it
        assert hits == [_alternate(cairn)]
    assert cairn.search(replace(asked, alternates=False)).hits == ()


def test_facets_and_terms_count_alternates_only_when_asked(cairn: Cairn) -> None:
    assert cairn.fields.facets("quokka").candidates == 0
    assert cairn.fields.facets("quokka", include_alternates=True).candidates == 1
    assert cairn.fields.terms("quokka").documents == ()
    assert len(cairn.fields.terms("quokka", include_alternates=True).documents) == 1
