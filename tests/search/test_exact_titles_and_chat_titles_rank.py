"""Ranking on real corpus files: an exact heading title wins ("Clocking Work Time"),
and chat messages do not each get the conversation title's weight (a one-word "lol"
does not top the conversation's own question)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config, SearchConfig
from cairn.ingest.embedding import embed_pass
from cairn.search.hits import summands_add_up
from cairn.search.service import SearchService, SemanticConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
ORG_DOC = CORPUS / "org" / "org-mode" / "doc"
CHAT = CORPUS / "chats" / "librechat" / "api" / "server" / "utils" / "import" / "__data__"

pytestmark = pytest.mark.corpus


@pytest.fixture(autouse=True)
def _no_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Cairn]:
    if not ORG_DOC.is_dir():
        pytest.skip("the shared corpus is not here")
    root = tmp_path / "vault"
    root.mkdir()
    shutil.copyfile(ORG_DOC / "org-manual.org", root / "org-manual.org")
    shutil.copyfile(ORG_DOC / "org-guide.org", root / "org-guide.org")
    shutil.copyfile(CHAT / "librechat-tree.json", root / "librechat-tree.json")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        yield cairn


def test_exact_title_wins_in_keyword_and_hybrid(vault: Cairn) -> None:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    emb = StaticEmbedder()
    embed_pass(vault.store, emb)
    s = SearchService(vault.store, SearchConfig(), SemanticConfig(), embedder=emb)
    for mode in ("keyword", "hybrid"):
        res = s.search("Clocking Work Time", mode=mode, limit=5, explain=True)
        titles = [h.title for h in res.hits]
        # both manuals' "Clocking Work Time" headings come before their sub-sections
        assert titles[:2] == ["Clocking Work Time", "Clocking Work Time"], (mode, titles)
        assert "title_match" in res.hits[0].explain["summands"]
        assert all(summands_add_up(h.explain) for h in res.hits)
        scores = [h.score for h in res.hits]
        assert scores == sorted(scores, reverse=True)
    # case and punctuation aside
    assert vault.search("clocking work-time", mode="keyword").hits[0].title == (
        "Clocking Work Time"
    )


def test_chat_messages_do_not_share_the_conversation_title(vault: Cairn) -> None:
    hits = vault.search("python virtual environment not activating", mode="keyword").hits
    assert hits and hits[0].path == "librechat-tree.json"
    bodies = [h.snippet.strip() for h in hits[:3]]
    assert "lol" not in bodies, bodies
    # the conversation is still found by its title
    top = hits[0]
    assert top.kind == "preamble" or "venv" in top.snippet or "virtual" in top.snippet.lower()
