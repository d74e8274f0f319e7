"""Fusion arithmetic on hand-computed examples: RRF, the linear blend, distinct scores."""

from __future__ import annotations

import itertools
import math

import pytest

from cairn.errors import ConfigError
from cairn.search.fusion import (
    ORDER_STEP,
    TIEBREAK_SCALE,
    Fused,
    FusionConfig,
    Signals,
    linear,
    make_distinct,
    rrf,
    single,
)

KW = [("A", 10.0), ("B", 8.0), ("C", 5.0)]
SEM = [("C", 0.9), ("A", 0.8), ("D", 0.5)]


def _by_key(items: list[Fused]) -> dict[str, Fused]:
    return {f.key: f for f in items}


def test_rrf_hand_computed() -> None:
    fused = rrf(
        {"keyword": KW, "semantic": SEM},
        k=60,
        weights={"keyword": 0.6, "semantic": 0.4},
        tiebreak=False,
    )
    # A: 0.6/61 + 0.4/62 = 0.009836066 + 0.006451613
    # C: 0.6/63 + 0.4/61 = 0.009523810 + 0.006557377
    # B: 0.6/62 = 0.009677419 ; D: 0.4/63 = 0.006349206
    assert [f.key for f in fused] == ["A", "C", "B", "D"]
    got = _by_key(fused)
    assert got["A"].score == pytest.approx(0.016287679, abs=1e-9)
    assert got["C"].score == pytest.approx(0.016081187, abs=1e-9)
    assert got["B"].score == pytest.approx(0.009677419, abs=1e-9)
    assert got["D"].score == pytest.approx(0.006349206, abs=1e-9)
    assert got["A"].summands == {"rrf_keyword": 0.6 / 61, "rrf_semantic": 0.4 / 62}
    assert got["A"].ranks == {"keyword": 1, "semantic": 2}
    assert got["A"].raw == {"keyword": 10.0, "semantic": 0.8}
    assert got["D"].ranks == {"semantic": 3}


def test_rrf_default_weights_are_used_and_summands_add_up() -> None:
    cfg = FusionConfig()
    assert cfg.rrf_k == 10 and dict(cfg.weights) == {"keyword": 0.5, "semantic": 0.5}
    fused = rrf({"keyword": KW, "semantic": SEM}, k=cfg.rrf_k, weights=cfg.weights)
    for f in fused:
        assert math.fsum(f.summands.values()) == f.score
        assert 0 <= f.summands["tiebreak"] <= TIEBREAK_SCALE
    # tiebreak for A: (0.5 * norm_kw(10) + 0.5 * norm_sem(0.8)) / 1.0
    #   norm_kw(10) = 1, norm_sem(0.8) = (0.8-0.5)/(0.9-0.5) = 0.75
    a = _by_key(fused)["A"]
    assert a.summands["tiebreak"] == pytest.approx(1e-6 * (0.5 * 1 + 0.5 * 0.75))
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


def test_rrf_exact_tie_is_broken_by_key_with_an_order_summand() -> None:
    fused = rrf(
        {"keyword": [("B", 3.0)], "semantic": [("A", 0.7)]},
        k=60,
        weights={"keyword": 0.5, "semantic": 0.5},
    )
    assert [f.key for f in fused] == ["A", "B"]
    a, b = fused
    assert "order" not in a.summands
    assert b.summands["order"] == -ORDER_STEP
    assert b.score < a.score
    assert math.fsum(b.summands.values()) == b.score


def test_make_distinct_many_ties() -> None:
    items = [Fused(k, 0.5, {"x": 0.5}, {}, {}) for k in "edcba"]
    out = make_distinct(items)
    assert [f.key for f in out] == list("abcde")
    scores = [f.score for f in out]
    assert all(x > y for x, y in itertools.pairwise(scores))
    for f in out:
        assert math.fsum(f.summands.values()) == f.score


def test_linear_blend_hand_computed() -> None:
    sig = Signals(
        sim={"A": 0.5},
        graph={"A": 1.0},
        age_days={"A": 0.0, "B": 400.0, "C": None},
        type_weight={"B": 2.0},
    )
    fused = linear([("A", 10.0), ("B", 5.0)], [("B", 0.8), ("C", 0.6)], sig, FusionConfig())
    got = _by_key(fused)
    # A: .45*.5 + .25*1 + .2*1 + .07*exp(0) + .03*1 = .225+.25+.2+.07+.03
    assert got["A"].score == pytest.approx(0.775, abs=1e-12)
    # B: .45*.8 + .25*(5/10) + 0 + .07*exp(-.0025*400) + .03*2
    assert got["B"].score == pytest.approx(0.36 + 0.125 + 0.07 * math.exp(-1) + 0.06, abs=1e-12)
    assert got["B"].summands["time_decay"] == pytest.approx(0.025751561, abs=1e-9)
    # C: .45*.6 + 0 + 0 + 0 (no date) + .03*1
    assert got["C"].score == pytest.approx(0.30, abs=1e-12)
    assert [f.key for f in fused] == ["A", "B", "C"]
    for f in fused:
        assert set(f.summands) == {"sim", "kw", "graph", "time_decay", "type_weight"}
        assert math.fsum(f.summands.values()) == f.score


def test_single_list_scores_are_raw_and_distinct() -> None:
    out = single("bm25", [("x", 2.0), ("y", 2.0), ("z", 1.0)])
    assert [f.key for f in out] == ["x", "y", "z"]
    assert out[0].score == 2.0 and out[1].score < 2.0 and out[2].score == 1.0
    assert out[1].summands == {"bm25": 2.0, "order": -ORDER_STEP}


def test_fusion_config_from_mapping() -> None:
    cfg = FusionConfig.from_mapping(
        {"method": "linear", "weights": {"keyword": 0.7}, "lambda": 0.01, "alpha": 0.5}
    )
    assert cfg.method == "linear" and cfg.decay_lambda == 0.01 and cfg.alpha == 0.5
    assert dict(cfg.weights) == {"keyword": 0.7, "semantic": 0.5}
    with pytest.raises(ConfigError):
        FusionConfig.from_mapping({"method": "magic"})
    with pytest.raises(ConfigError):
        FusionConfig.from_mapping({"rrf_k": "sixty"})


def _list(name: str, n: int, top: float = 0.9) -> list[tuple[str, float]]:
    return [(f"{name}{i}", top - i / 1000) for i in range(n)]


@pytest.mark.parametrize("only", ["keyword", "semantic"])
def test_default_fusion_puts_either_lists_first_unit_on_the_first_page(only: str) -> None:
    """A unit only one list holds, at its first place, is on top although the other list
    is 100 long (with k = 60 and 0.6/0.4 a semantic-only first place came 32nd)."""
    other = "semantic" if only == "keyword" else "keyword"
    cfg = FusionConfig()
    lists = {only: [("solo", 0.95), *_list(only, 99)], other: _list(other, 100)}
    fused = rrf(lists, k=cfg.rrf_k, weights=cfg.weights)
    assert "solo" in [f.key for f in fused[:2]]


def test_default_fusion_keeps_a_keyword_hit_above_units_both_lists_hold_far_down() -> None:
    """A keyword-only unit at #5 stays on the first page when 20 units both lists hold
    sit at ranks 30-49 of each (with k = 60 and 0.6/0.4 it came 25th)."""
    cfg = FusionConfig()
    shared = _list("shared", 20, 0.5)
    kw = [*_list("kw", 4), ("target", 0.85), *_list("kwlow", 25, 0.7), *shared]
    sem = [*_list("sem", 29), *shared]
    fused = rrf({"keyword": kw, "semantic": sem}, k=cfg.rrf_k, weights=cfg.weights)
    assert "target" in [f.key for f in fused[:10]]


def _steep(name: str, n: int, top: float, second: float, tail: float) -> list[tuple[str, float]]:
    """A list whose first unit is far ahead: ``top``, then ``second`` falling to ``tail``."""
    step = (second - tail) / max(1, n - 2)
    return [(f"{name}0", top), *((f"{name}{i}", second - (i - 1) * step) for i in range(1, n))]


def _convex(name: str, n: int, top: float, tail: float) -> list[tuple[str, float]]:
    """A list with no clear head whose scores fall fast and then slowly, as BM25 and
    cosine lists do."""
    return [(f"{name}{i}", tail + (top - tail) / (1 + i / 5)) for i in range(n)]


@pytest.mark.parametrize("clear", ["keyword", "semantic"])
def test_a_lists_clear_first_place_outranks_a_unit_both_lists_hold_at_middling_ranks(
    clear: str,
) -> None:
    """A unit one list puts far ahead of the rest (BM25 30 against 8, cosine 0.8 against
    0.45) comes before a unit both lists hold at ordinary scores (rank 8 of one, 15 of
    the other); ranks alone (``relative`` 0) put the shared unit first."""
    other = "semantic" if clear == "keyword" else "keyword"
    scales = {"keyword": (30.0, 8.0, 1.0), "semantic": (0.8, 0.45, 0.3)}
    _, second, tail = scales[other]
    lists = {clear: _steep(clear, 100, *scales[clear]), other: _convex(other, 100, second, tail)}
    for name, at in ((clear, 7), (other, 14)):  # "shared" at rank 8 and rank 15
        score = lists[name][at][1]
        lists[name][at] = ("shared", score)
    cfg = FusionConfig()
    assert cfg.relative == 0.1
    ranks_only = rrf(lists, k=cfg.rrf_k, weights=cfg.weights)
    assert ranks_only[0].key == "shared"
    fused = rrf(lists, k=cfg.rrf_k, weights=cfg.weights, relative=cfg.relative)
    order = [f.key for f in fused]
    assert order.index(f"{clear}0") < order.index("shared")
    head = next(f for f in fused if f.key == f"{clear}0")
    assert head.summands[f"rel_{clear}"] == pytest.approx(cfg.relative * cfg.weights[clear])
    assert math.fsum(head.summands.values()) == head.score


def test_score_aware_summands_are_listed_and_add_up_with_an_unlistable_unit() -> None:
    """``rel_<list>`` is ``relative · w · norm(raw)`` for each list holding the unit; a
    unit the semantic list cannot hold gets its RRF share but no ``rel_semantic``."""
    fused = rrf({"keyword": KW, "semantic": SEM}, k=10, weights={"keyword": 0.5, "semantic": 0.5},
                unlistable={"semantic": {"B"}}, relative=0.2)
    got = _by_key(fused)
    # norm_kw: A 1, B (8-5)/5 = 0.6, C 0; norm_sem: C 1, A 0.75, D 0
    assert got["A"].summands["rel_keyword"] == pytest.approx(0.2 * 0.5 * 1.0)
    assert got["A"].summands["rel_semantic"] == pytest.approx(0.2 * 0.5 * 0.75)
    assert got["B"].summands["rel_keyword"] == pytest.approx(0.2 * 0.5 * 0.6)
    assert "rrf_semantic_unlistable" in got["B"].summands
    assert not {"rel_semantic", "rel_semantic_unlistable"} & set(got["B"].summands)
    for f in fused:
        assert math.fsum(f.summands.values()) == f.score


def test_relative_is_read_from_the_fusion_table() -> None:
    assert FusionConfig.from_mapping({"relative": 0}).relative == 0.0
    assert FusionConfig.from_mapping({"relative": "0.25"}).relative == 0.25
    with pytest.raises(ConfigError):
        FusionConfig.from_mapping({"relative": "lots"})


def test_score_aware_summands_do_not_depend_on_how_deep_a_list_was_read() -> None:
    """The first 100 of a list get the same ``rel_`` summands whether 100 or 400 were
    read (a search for 150 hits reads deeper lists than one for 10)."""
    kw = [(f"k{i}", 50.0 / (1 + i)) for i in range(400)]
    sem = [(f"s{i}", 0.9 - i / 1000) for i in range(400)]
    short = _by_key(rrf({"keyword": kw[:100], "semantic": sem[:100]}, relative=0.1))
    deep = _by_key(rrf({"keyword": kw, "semantic": sem}, relative=0.1))
    for key, f in short.items():
        assert {n: v for n, v in f.summands.items() if n.startswith("rel_")} == {
            n: v for n, v in deep[key].summands.items() if n.startswith("rel_")}
    assert deep["k399"].summands["rel_keyword"] == 0.0
