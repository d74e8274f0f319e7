"""Search modes and graph expansion through ``Cairn``, with the shipped model."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn

SAMPLE = Path(__file__).resolve().parents[2] / "sample"


@pytest.fixture(scope="module")
def sample_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("modes") / "sample"
    shutil.copytree(SAMPLE, folder)
    return folder


@pytest.mark.embed
def test_hybrid_is_the_default_once_embedded(sample_copy: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([sample_copy])
        assert run.failed == 0
        assert run.embedding is not None and run.embedding.chunks_added > 0
        # words that appear in no note: keyword search finds nothing, meaning does
        assert c.search("earthworm dirt chemistry", mode="keyword").hits == ()
        sem = c.search("earthworm dirt chemistry", mode="semantic", limit=3)
        assert sem.hits and "soil" in sem.hits[0].doc_title.lower()
        res = c.search("worms eating garbage", limit=5, explain=True)
        assert res.hits and res.hits[0].explain["mode"] == "hybrid"
        assert res.hits[0].doc_title == "Composting guide"
        for h in res.hits:
            parts = h.explain["summands"].values()
            assert math.isclose(math.fsum(parts), h.explain["score"], rel_tol=1e-12)
            assert h.score == h.explain["score"]
        # a no-change run neither re-embeds nor loads anything new
        again = c.index()
        assert again.changed == 0 and again.embedding is None


def test_no_embed_degrades_to_keyword_with_one_notice(sample_copy: Path, tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([sample_copy], embed=False)
        notes = [w.message for w in run.warnings if w.severity == "info" and not w.path]
        assert len(notes) == 1 and "keyword" in notes[0]
        res = c.search("compost", mode="hybrid")
        assert res.hits and any("keyword" in n for n in res.notes)
        assert res.hits[0].title in ("Composting guide", "Compost")


def test_expansion_brings_in_the_linked_answer(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text(
        "# Kiln firing\n\nFire the kiln slowly. The glaze recipe is in [[Glaze notes]].\n"
    )
    (vault / "glaze.md").write_text(
        "---\naliases: [Glaze notes]\n---\n# Celadon\n\nTwo parts feldspar, one part silica.\n"
    )
    (vault / "other.md").write_text("# Other\n\nA kiln shelf and a kiln wash.\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        plain = [h.path for h in c.search("kiln firing", mode="keyword").hits]
        assert "glaze.md" not in plain
        res = c.search("kiln firing", mode="keyword", expand=True, explain=True)
        paths = [h.path for h in res.hits]
        assert "glaze.md" in paths
        glaze = res.hits[paths.index("glaze.md")]
        walked = str(glaze.explain["graph"])
        assert "Glaze notes" in walked or "references" in walked
        assert glaze.explain["graph"]["rank_before"] is None
        for h in res.hits:  # the expansion boost is one more summand of the score
            parts = h.explain["summands"]
            assert "graph_expansion" in parts
            assert math.isclose(math.fsum(parts.values()), h.score, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.embed
def test_linear_blend_takes_its_graph_term_from_the_links(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text("# Kiln firing\n\nFire the kiln slowly. See [[Glaze]].\n")
    (vault / "Glaze.md").write_text("# Glaze\n\nTwo parts feldspar, one part silica.\n")
    (vault / "other.md").write_text("# Other\n\nNothing about ovens here.\n")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[fusion]\nmethod = "linear"\n')
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        c.index([vault])
        res = c.search("kiln firing", mode="hybrid", explain=True, limit=5)
        by_path = {h.path: h for h in res.hits}
        glaze = by_path["Glaze.md"].explain["summands"]
        other = by_path.get("other.md")
        assert glaze["graph"] > 0
        assert other is None or other.explain["summands"]["graph"] == 0
        for h in res.hits:
            assert math.isclose(
                math.fsum(h.explain["summands"].values()), h.explain["score"], rel_tol=1e-12
            )


def test_graph_section_turns_expansion_on_and_sets_weights(tmp_path: Path) -> None:
    from cairn.errors import ConfigError

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text("# Kiln firing\n\nFire the kiln slowly. See [[Glaze]].\n")
    (vault / "Glaze.md").write_text("# Glaze\n\nTwo parts feldspar, one part silica.\n")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[graph]\nexpand = true\n")
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        c.index([vault])
        assert "Glaze.md" in [h.path for h in c.search("kiln firing", mode="keyword").hits]
        assert "Glaze.md" not in [
            h.path for h in c.search("kiln firing", mode="keyword", expand=False).hits
        ]
    cfg.write_text("[graph]\nexpand = true\nweights = { references = 0 }\n")
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        assert "Glaze.md" not in [h.path for h in c.search("kiln firing", mode="keyword").hits]
    cfg.write_text("[graph]\nhops = 3\n")
    with pytest.raises(ConfigError, match="hops"):
        Cairn.open(db=tmp_path / "i.db", config_file=cfg)
