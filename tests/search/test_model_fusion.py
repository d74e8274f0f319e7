"""A model's recommended fusion (``fusion.json`` in its folder): a weak model's list
weighs less in RRF, unless ``cairn.toml`` says otherwise."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import SearchConfig, load_config
from cairn.embed.base import read_fusion
from cairn.embed.locator import PACKAGE_MODELS
from cairn.errors import ProviderUnavailable
from cairn.search.fusion import FusionConfig
from cairn.search.rank import Ranker
from cairn.store import open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REC = {"weights": {"semantic": 0.25}, "rrf_k": 20, "note": "tuned on bench/notes dev"}


def test_recommendation_fills_only_what_the_configuration_left_unset() -> None:
    unset = FusionConfig.from_mapping({})
    got = unset.with_model(REC)
    assert got.weights == {"keyword": 0.5, "semantic": 0.25} and got.rrf_k == 20.0
    assert got.min_similarity == unset.min_similarity
    # the user's own values win, key by key
    mine = FusionConfig.from_mapping({"rrf_k": 60, "weights": {"semantic": 0.4}})
    assert mine.with_model(REC) == mine
    half = FusionConfig.from_mapping({"weights": {"keyword": 0.5}}).with_model(REC)
    assert half.weights == {"keyword": 0.5, "semantic": 0.25} and half.rrf_k == 20.0
    # a config built in code is taken as given; no or a broken recommendation: unchanged
    assert FusionConfig().with_model(REC) == FusionConfig()
    assert unset.with_model(None) is unset and unset.with_model({}) is unset
    assert unset.with_model({"rrf_k": "many"}) is unset
    assert unset.with_model({"weights": ["semantic"]}) is unset
    assert unset.with_model({"weights": {"graph": 9}}) is unset  # not a list we fuse


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the shipped static model, with ``REC`` as its ``fusion.json``."""
    out = tmp_path / "model"
    shutil.copytree(PACKAGE_MODELS / "minilm-l6-static", out)
    (out / "fusion.json").write_text(json.dumps(REC), encoding="utf-8")
    return out


def test_a_static_model_folder_states_its_fusion(folder: Path, tmp_path: Path) -> None:
    from cairn.embed.static import StaticEmbedder

    emb = StaticEmbedder(folder=folder)
    assert emb.fusion == REC
    # the recommendation changes the ranking, not the vectors: same space without it
    bare = tmp_path / "bare"
    shutil.copytree(folder, bare)
    (bare / "fusion.json").unlink()
    plain = StaticEmbedder(folder=bare)
    assert plain.fusion is None and plain.fingerprint == emb.fingerprint
    store = open_store(tmp_path / "i.db")
    try:
        fusion = Ranker(store, SearchConfig(), emb).fusion
        assert fusion.rrf_k == 20.0 and fusion.weights["semantic"] == 0.25
        assert Ranker(store, SearchConfig(), plain).fusion.rrf_k == 10.0
    finally:
        store.close()
    (folder / "fusion.json").write_text("[1, 2", encoding="utf-8")
    with pytest.raises(ProviderUnavailable, match=r"fusion\.json"):
        StaticEmbedder(folder=folder)
    (folder / "fusion.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ProviderUnavailable, match="JSON object"):
        read_fusion(folder)


NOTES = {
    "cat.md": "# Our cat\n\nThe kitten naps on the warm windowsill every afternoon.\n",
    "sill.md": "# Windowsill garden\n\nBasil and thyme grow on the windowsill.\n",
    "dog.md": "# The dog\n\nWalks in the park twice a day; loves chasing balls.\n",
}


@pytest.mark.embed
@pytest.mark.parametrize("toml", ["", "[fusion]\nrrf_k = 60\nweights = { semantic = 0.4 }\n"])
def test_hybrid_search_uses_the_models_fusion(folder: Path, tmp_path: Path, toml: str) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text(f'[embed]\nprovider = "static"\nmodel = "{folder}"\n{toml}', encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db", config_file=cfg)) as cairn:
        cairn.index([root])
        res = cairn.search("windowsill cat", mode="hybrid", explain=True)
    top = res.hits[0].explain
    assert res.hits and top["mode"] == "hybrid", (res.notes, top)
    w, k = (0.4, 60) if toml else (0.25, 20)
    assert top["rrf_k"] == k and top["list_weights"] == {"keyword": 0.5, "semantic": w}
    rank = top["semantic"]["rank"]
    assert top["summands"]["rrf_semantic"] == pytest.approx(w / (k + rank))
    assert top["summands"]["rrf_keyword"] == pytest.approx(0.5 / (k + top["keyword"]["rank"]))


def test_a_model_tuned_on_ranks_alone_keeps_ranks_alone() -> None:
    """A ``fusion.json`` whose ``rrf_k`` or weights apply but which states no
    ``relative`` was tuned without the score-aware summands: they are off for it,
    unless the model or ``cairn.toml`` states ``relative``."""
    unset = FusionConfig.from_mapping({})
    assert unset.relative == 0.1
    assert unset.with_model(REC).relative == 0.0
    assert unset.with_model({**REC, "relative": 0.05}).relative == 0.05
    assert FusionConfig.from_mapping({"relative": 0.2}).with_model(REC).relative == 0.2
    # the user's own rrf_k and weights: the model's recommendation does not apply
    mine = FusionConfig.from_mapping({"rrf_k": 60, "weights": {"semantic": 0.4}})
    assert mine.with_model(REC).relative == 0.1
    assert unset.with_model({"min_similarity": 0.2}).relative == 0.1
