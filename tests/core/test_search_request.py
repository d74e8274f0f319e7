"""``SearchRequest`` checks its fields when it is made: a bad value is a ``QueryError``
naming the field and the value, before any index is opened; the Python API takes a
request or the query text with the fields as keywords."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import QueryError
from cairn.model import SearchRequest

SAMPLE = Path(__file__).resolve().parents[2] / "sample"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("mode", "fuzzy", "'fuzzy'"),
        ("limit", 0, "0"),
        ("limit", True, "True"),
        ("limit", "10", "'10'"),
        ("offset", -1, "-1"),
        ("filters", "tag:work", "'tag:work'"),
        ("filters", ["tag:work", 3], "3"),
        ("explain", "yes", "'yes'"),
        ("alternates", 1, "1"),
        ("expand", "no", "'no'"),
        ("rerank", 0, "0"),
        ("sort", 5, "5"),
        ("today", "tomorrow", "'tomorrow'"),
        ("today", 20240306, "20240306"),
    ],
)
def test_a_bad_field_is_a_query_error_naming_it(field: str, value: Any, said: str) -> None:
    with pytest.raises(QueryError) as caught:
        SearchRequest.of("compost", **{field: value})
    assert field in str(caught.value) and said in str(caught.value)


def test_the_query_must_be_text() -> None:
    with pytest.raises(QueryError, match="query must be text"):
        SearchRequest.of(None)  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="query is missing"):
        SearchRequest.from_mapping({"mode": "keyword"})


def test_an_unknown_field_is_named() -> None:
    with pytest.raises(QueryError, match="'include_alternates'"):
        SearchRequest.of("compost", include_alternates=True)
    with pytest.raises(QueryError, match="given with a SearchRequest"):
        SearchRequest.of(SearchRequest("compost"), limit=3)


def test_a_request_reads_back_from_its_json_fields() -> None:
    req = SearchRequest("compost", mode="hybrid", limit=3, offset=6, filters=("tag:garden",),
                        explain=True, alternates=True, expand=False, sort=("priority",
                        "deadline"), rerank=True, today=dt.date(2024, 3, 6))
    data = req.to_mapping()
    assert data["filters"] == ["tag:garden"] and data["today"] == "2024-03-06"
    back = SearchRequest.from_mapping(data)
    assert back == SearchRequest.from_mapping(back.to_mapping())
    assert {k: v for k, v in back.to_mapping().items()} == data
    assert back.text == "compost tag:garden"
    # null fields take their defaults (a JSON door may send them)
    assert SearchRequest.from_mapping({"query": "x", "offset": None, "explain": None}) == (
        SearchRequest("x"))


def test_lists_are_kept_as_tuples_so_a_request_stays_frozen() -> None:
    req = SearchRequest.of("x", filters=["tag:a"], sort=["title"])
    assert req.filters == ("tag:a",) and req.sort == ("title",)
    hash(req)


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = tmp_path_factory.mktemp("request") / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([SAMPLE])
        yield c


def test_cairn_search_takes_a_request_or_the_text_and_fields(cairn: Cairn) -> None:
    req = SearchRequest("compost", mode="keyword", limit=3)
    assert cairn.search(req).hits == cairn.search("compost", mode="keyword", limit=3).hits
    assert cairn.search(req).hits == cairn.semantic.search(req).hits
    assert len(cairn.search(req).hits) == 3


def test_cairn_search_refuses_a_bad_mode_or_an_unknown_field(cairn: Cairn) -> None:
    # a mistyped mode would otherwise answer in another mode than the one asked for
    with pytest.raises(QueryError, match="unknown mode 'fuzzy'"):
        cairn.search("compost", mode="fuzzy")
    with pytest.raises(QueryError, match="'include_alternates'"):
        cairn.search("compost", include_alternates=True)
    with pytest.raises(QueryError, match="offset must be from 0 to 1,000,000,000, not -1"):
        cairn.semantic.search("compost", offset=-1)
