"""Keyword ranking does not depend on ``limit``: the top ``k`` hits are a prefix of the
top ``k + n`` (a chat's title-only preamble used to rank first at a small limit and,
at a larger one, be shadowed by a message of its conversation ranked far below it, so
the conversation dropped out of the top hits)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
CHAT = CORPUS / "chats" / "librechat" / "api" / "server" / "utils" / "import" / "__data__"
NOTES = Path(__file__).resolve().parents[2] / "bench" / "notes" / "queries.jsonl"


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")


def _vault(tmp_path: Path) -> Path:
    """A real chat export ("Deploying the staging cluster") beside 40 notes that match
    the query better than the conversation's messages but worse than its title."""
    root = tmp_path / "vault"
    root.mkdir()
    chat = CHAT / "chatgpt-modern-export.json"
    if not chat.is_file():
        pytest.skip("the shared corpus is not here")
    shutil.copyfile(chat, root / "chat.json")
    for i in range(40):
        (root / f"ops-{i:02}.md").write_text(
            f"# Runbook {i}\n\nThe staging cluster {i}: deploying it, then the cluster"
            f" checks. Staging notes {i}.\n",
            encoding="utf-8",
        )
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Cairn]:
    root = _vault(tmp_path)
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        yield cairn


def test_top_k_is_a_prefix_of_a_deeper_list(vault: Cairn) -> None:
    query = "deploying the staging cluster"
    deep = vault.search(query, mode="keyword", limit=80).hits
    assert any(h.path.endswith("chat.json") for h in deep)
    for limit in (1, 3, 10, 30, 50):
        top = vault.search(query, mode="keyword", limit=limit).hits
        assert [h.unit_id for h in top] == [h.unit_id for h in deep[:limit]], limit
    # the conversation keeps the place its title earned, held by one of its messages
    first = deep[0]
    assert first.path.endswith("chat.json") and first.kind != "preamble"
    assert sum(h.path.endswith("chat.json") for h in deep) == 2  # two messages match


def test_pages_do_not_overlap_or_skip(vault: Cairn) -> None:
    query = "deploying the staging cluster"
    every = [h.unit_id for h in vault.search(query, mode="keyword", limit=80).hits]
    paged: list[str] = []
    for offset in range(0, len(every), 7):
        paged += [h.unit_id for h in vault.search(query, mode="keyword", limit=7,
                                                  offset=offset).hits]
    assert paged == every


@pytest.mark.corpus
def test_judged_queries_rank_the_same_at_any_limit(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus is not here")
    queries = [json.loads(x)["text"] for x in NOTES.read_text("utf-8").splitlines() if x]
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([CHAT, CORPUS / "org" / "organice", CORPUS / "markdown" / "foam"])
        for q in queries:
            deep = [h.unit_id for h in cairn.search(q, mode="keyword", limit=60).hits]
            top = [h.unit_id for h in cairn.search(q, mode="keyword", limit=10).hits]
            assert top == deep[:10], q


def test_title_only_preambles_are_settled_by_one_search(tmp_path: Path) -> None:
    """Four conversations whose titles match above 40 notes and whose messages match
    below them: each keeps its title's place, held by its best message, and finding
    those messages beyond the list is one keyword search over the four documents, not
    one per conversation."""
    root = _vault(tmp_path)
    for i in range(1, 4):
        shutil.copyfile(root / "chat.json", root / f"chat{i}.json")
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        query = "deploying the staging cluster"
        deep = cairn.search(query, mode="keyword", limit=80).hits
        db = cairn.store.db  # type: ignore[attr-defined]
        seen: list[str] = []
        db.set_trace_callback(seen.append)
        try:
            top = cairn.search(query, mode="keyword", limit=10).hits
        finally:
            db.set_trace_callback(None)
    chats = [h for h in top if h.path.startswith("chat")]
    assert len({h.path for h in chats}) == 4
    assert all(h.kind != "preamble" for h in chats)  # a message holds the title's place
    assert [h.unit_id for h in top] == [h.unit_id for h in deep[:10]]
    # the statements ranking words that name a conversation: the one asking for the
    # best units of all four
    docs = {h.document_id for h in chats}
    inside = [s for s in seen if "MATCH" in s and any(d in s for d in docs)]
    assert len(inside) == 1 and all(d in inside[0] for d in docs), inside
