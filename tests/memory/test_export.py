"""Export over the shared corpus: the OKF bundle validates with 0 errors, JSON holds what
the API serialises, the Obsidian vault of the Org corpus re-indexes with its
wikilinks, and the round-trip comparison reports what differs (and is exact on a
plain Markdown folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import CairnError

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("export") / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([CORPUS / "markdown" / "kepano-obsidian", CORPUS / "org", CORPUS / "okf"],
                embed=False)
    return db


@pytest.mark.corpus
@pytest.mark.slow
def test_okf_export_validates(indexed: Path, tmp_path: Path) -> None:
    with Cairn(load_config(db=indexed)) as c:
        rep = c.export("okf", tmp_path / "okf")
        assert rep.documents > 1000 and rep.relations > 0
        with pytest.raises(CairnError, match="new or empty"):
            c.export("okf", tmp_path / "okf")  # never overwrites
    with Cairn(load_config(db=tmp_path / "o.db")) as o:
        o.index([tmp_path / "okf"], embed=False)
        diags = o.validate()
        assert [d for d in diags if d["severity"] == "error"] == []
        assert o.stats()["documents"] >= rep.documents


@pytest.mark.corpus
@pytest.mark.slow
def test_json_and_obsidian_exports(indexed: Path, tmp_path: Path) -> None:
    with Cairn(load_config(db=indexed)) as c:
        rep = c.export("json", tmp_path / "okf.json", roots=[CORPUS / "okf"])
        data = json.loads((tmp_path / "okf.json").read_text())
        assert set(data) == {"documents", "units", "links", "edges"}
        assert len(data["documents"]) == rep.documents > 50
        assert {"id", "title", "path"} <= set(data["documents"][0])
        vault = c.export("obsidian", tmp_path / "vault", roots=[CORPUS / "org"])
        assert vault.documents > 1000
    with Cairn(load_config(db=tmp_path / "v.db")) as v:
        v.index([tmp_path / "vault"], embed=False)
        s = v.stats()
        assert s["documents"] == vault.documents
        wiki = [
            link for d in v.store.documents_of_root(v.store.roots()[0].id)
            for u in v.store.units_of(d.id) for link in v.store.links_of([u.id])
            if link.kind == "wikilink"
        ]
        resolved = sum(1 for link in wiki if link.resolved_document_id)
        # every id:/file: link the Org corpus resolves becomes a resolving wikilink
        assert len(wiki) >= vault.links and resolved >= 1
        print(f"obsidian export of the Org corpus: {resolved}/{len(wiki)} wikilinks resolve")


def test_round_trip_of_a_markdown_folder(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text(
        "---\ntags: [x]\n---\n# Alpha\n\nSee [b](sub/b.md).\n\n## Two\n\nmore\n"
    )
    (root / "sub" / "b.md").write_text("# Beta\n\nBack to [a](../a.md).\n")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.compare_export(root)
    assert res["units"][0] == res["units"][1] >= 3
    assert res["links"] == [2, 2] and res["edges"][0] == res["edges"][1]
    assert res["same"], (res["missing"], res["extra"])
