"""``+word`` (a word every hit must hold) ranks exactly as the words alone do, among
the units that hold every required word, however common the word is."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.search.query import parse_query

_WEIGHTS = {"title": 10.0, "outline_path": 5.0, "tags": 5.0, "body": 1.0}
_WORDS = ["the", "garden", "tomato", "basil", "water", "soil", "seed", "sun"]


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cairn]:
    tmp = tmp_path_factory.mktemp("required")
    root = tmp / "notes"
    root.mkdir()
    rnd = random.Random(7)
    for i in range(60):
        parts = [f"# Note {i}\n"]
        for j in range(5):
            words = rnd.choices(_WORDS, k=rnd.randint(3, 30))
            parts.append(f"## Part {j}\n{' '.join(words)}\n")
        (root / f"n{i}.md").write_text("\n".join(parts), encoding="utf-8")
    with Cairn(Config(db_path=tmp / "i.db", embed={"provider": "none"})) as c:
        c.index([str(root)], embed=False)
        yield c


def _ranked(c: Cairn, query: str) -> list[tuple[str, float]]:
    return c.store.search_text(
        parse_query(query).for_store(), limit=10_000, weights=_WEIGHTS
    )


def _holding(c: Cairn, word: str) -> set[str]:
    return {u for u, _ in _ranked(c, word)}


@pytest.mark.parametrize(
    ("required", "query", "plain"),
    [
        (["the"], "+the", "the"),
        (["the", "basil"], "+the +basil", "the basil"),
        (["basil", "the", "sun"], "+basil +sun +the", "basil sun the"),
        (["the"], "+the basil", "the basil"),
        (["the"], "+the -basil", "the -basil"),
        (["the", "water"], "+the +water tag:none-such", None),
    ],
)
def test_required_words_keep_the_plain_ranking_of_the_units_holding_them(
    cairn: Cairn, required: list[str], query: str, plain: str | None
) -> None:
    got = _ranked(cairn, query)
    if plain is None:
        assert got == []
        return
    keep = set.intersection(*(_holding(cairn, w) for w in required))
    want = [(u, s) for u, s in _ranked(cairn, plain) if u in keep]
    assert want, "the sample should hold units with every required word"
    assert [u for u, _ in got] == [u for u, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want])
