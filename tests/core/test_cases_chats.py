"""The chat-export cases through the index: what a user searching their chats sees."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn

pytestmark = pytest.mark.corpus

CASES = Path(__file__).resolve().parents[3] / "shared" / "cases"


@pytest.fixture(autouse=True)
def _importer() -> None:
    pytest.importorskip("cairn.formats.chats")


def _index(case: str, tmp_path: Path, *names: str) -> Cairn:
    dst = tmp_path / "in"
    dst.mkdir()
    for name in names:
        shutil.copy(CASES / case / name, dst / name)
    c = Cairn.open(db=tmp_path / "i.db")
    c.index([dst])
    return c


def test_029_chatgpt_top_level_array(tmp_path: Path) -> None:
    c = _index("029-chatgpt-export-top-level-array", tmp_path, "conversations.json")
    titles = {r[0] for r in c.store.db.execute("SELECT title FROM documents")}
    assert titles == {"Soup planning", "Bike repair"}
    hit = c.search("cumin").hits[0]
    assert hit.doc_title == "Soup planning"
    assert hit.format == "chatgpt"
    assert not any(ch in hit.snippet for ch in "{}") and '"mapping"' not in hit.snippet
    assert hit.siblings == ("user: Give me a lentil soup idea.",)  # the message before
    user = c.search("squeaky chain role:user").hits
    assert user and user[0].doc_title == "Bike repair"
    assert c.search("cumin role:user").hits == ()


def test_030_only_the_active_branch_is_a_normal_hit(tmp_path: Path) -> None:
    c = _index("030-chatgpt-active-branch-only", tmp_path, "conversations.json")
    assert c.search("quokka").hits == ()
    alt = c.search("quokka", alternates=True).hits
    assert alt and alt[0].doc_title == "Bakery slogan"
    assert c.search("Cerulean").hits[0].doc_title == "No pointer"


def test_032_claude_attachments(tmp_path: Path) -> None:
    c = _index("032-claude-attachment-only-message", tmp_path, "conversations.json")
    assert c.store.counts()["documents"] == 3
    assert c.search("515").hits[0].doc_title == "Budget check"
    kestrel = c.search("kestrel").hits
    assert kestrel and kestrel[0].doc_title.strip()
    assert c.search("format:claude after:2024-06-01 before:2024-06-02 515").hits


def test_034_gemini_takeout(tmp_path: Path) -> None:
    c = _index("034-gemini-takeout-activity", tmp_path, "MyActivity.json")
    assert c.store.counts()["documents"] == 2
    glare = c.search("glare").hits
    assert glare and glare[0].doc_title == "How do polarized lenses cut glare?"
    assert c.search("pancake").hits == ()
    answer = c.search("horizontal reflections").hits[0]
    assert "<" not in answer.snippet and "&amp;" not in answer.snippet
    assert c.search("source:gemini glare").hits
