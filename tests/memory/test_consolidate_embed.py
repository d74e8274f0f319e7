"""Consolidation by embedding similarity (the static model): paraphrases that share no
word become one concept, unrelated memories stay apart; without a model, word overlap
alone keeps them apart (the deterministic fallback); a proposer's clusters are checked
by the same rules."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.memory.layout import Entry
from cairn.memory.similarity import Cluster
from cairn.model.serialize import to_data

CAT = ("The cat sleeps on the sofa all afternoon", "My kitten naps on the couch after lunch")
BACKUP = "The nightly backup job copies the database to the offsite bucket"


@pytest.fixture(scope="module")
def static():  # type: ignore[no-untyped-def]
    pytest.importorskip("model2vec")
    from cairn.embed.registry import EmbedConfig, make_embedder

    emb = make_embedder(EmbedConfig(provider="static"))
    assert emb is not None
    return emb


def _remember_all(c: Cairn, bundle: Path) -> None:
    for text in (*CAT, BACKUP):
        c.memory.remember(bundle, text)


def test_paraphrases_merge_by_embedding(tmp_path: Path, static) -> None:  # type: ignore[no-untyped-def]
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db"), embedder=static) as c:
        _remember_all(c, bundle)
        res, _ = c.memory.consolidate(bundle)
    groups = sorted(len(g.memories) for g in res.clusters)
    assert groups == [1, 2] and len(res.created) == 2
    both = next(g for g in res.clusters if len(g.memories) == 2)
    text = (bundle / both.concept).read_text()
    assert "sofa" in text and "couch" in text and "backup" not in text


def test_without_a_model_word_overlap_decides(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        _remember_all(c, bundle)
        res, _ = c.memory.consolidate(bundle, embed=False)
    assert len(res.created) == 3  # no shared words: three concepts


class _Proposer:
    """Proposes everything as one new concept, plus a memory that does not exist."""

    def propose(self, memories: Sequence[Entry], concepts: Sequence[Entry]) -> list[Cluster]:
        ghost = Entry("memories/active/ghost.md", {}, "", "")
        cat = [m for m in memories if "backup" not in m.body]
        return [Cluster([*cat, ghost], None, [])]


def test_a_proposal_is_checked_by_the_same_rules(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        _remember_all(c, bundle)
        res, _ = c.memory.consolidate(bundle, embed=False, proposer=_Proposer())
        rep = c.memory.maintain(bundle, decay=False)
    # the ghost is dropped; the backup memory, left out, is clustered deterministically
    assert sorted(len(g.memories) for g in res.clusters) == [1, 2]
    assert len(res.subsumed) == 3 and rep.unsourced == [] and rep.pending == 0


UNRELATED = (
    "Alice leads the payments team",
    "The build pipeline needs Python 3.12 on the runner",
    "Deploys to production happen on Tuesdays",
    "The nightly backup copies the database offsite",
)


def test_a_shared_tag_alone_never_merges(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        for text in UNRELATED:
            c.memory.remember(bundle, text, tags=["team"])
        res, _ = c.memory.consolidate(bundle, embed=False, llm=False)
    assert len(res.created) == 4 and sorted(len(g.memories) for g in res.clusters) == [1] * 4
    titles = sorted(
        line.removeprefix("title: ")
        for p in res.created
        for line in (bundle / p).read_text().splitlines()
        if line.startswith("title: ")
    )
    assert titles == sorted(UNRELATED)


def test_a_true_duplicate_pair_with_a_shared_tag_merges(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.memory.remember(bundle, UNRELATED[0], tags=["team"])
        c.memory.remember(bundle, UNRELATED[1], tags=["team"])
        c.memory.remember(bundle, "Alice leads the payments team since May", tags=["team"])
        res, _ = c.memory.consolidate(bundle, embed=False, llm=False)
    assert sorted(len(g.memories) for g in res.clusters) == [1, 2]
    pair = next(g for g in res.clusters if len(g.memories) == 2)
    assert "since May" in (bundle / pair.concept).read_text()
    assert to_data(pair) == {"concept": pair.concept, "memories": list(pair.memories),
                             "new": True, "by": "rules"}  # the JSON
