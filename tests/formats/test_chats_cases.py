"""The chat-export cases of ``shared/cases`` (029, 030, 032, 034) at the parser level.

Searches are the index's job; here we check that the units the index will see hold the
searched words (and that the words that must not match are absent or only in
alternates), with no raw JSON.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from cairn.formats.chats import parse_file
from cairn.model import Document, Failure, Unit

pytestmark = pytest.mark.corpus


def _parse(path: Path) -> tuple[list[Document], list[Failure]]:
    docs: list[Document] = []
    fails: list[Failure] = []
    for item in parse_file(path, path.name):
        if isinstance(item, Document):
            docs.append(item)
        else:
            fails.append(item)
    return docs, fails


def _messages(doc: Document, alternate: bool = False) -> list[Unit]:
    return [u for u in doc.units if u.kind == "message" and u.extra["alternate"] is alternate]


def _default_text(doc: Document) -> str:
    """What default search sees: every unit but the alternates."""
    return "\n".join(u.body for u in doc.units if not u.extra.get("alternate"))


def test_029_top_level_array_and_single_object(cases: Path) -> None:
    case = cases / "029-chatgpt-export-top-level-array"
    docs, fails = _parse(case / "conversations.json")
    assert fails == []
    assert [d.title for d in docs] == ["Soup planning", "Bike repair"]
    for doc in docs:
        assert doc.format == "chatgpt"
        assert [u.extra["role"] for u in _messages(doc)] == ["user", "assistant"]
    chain = next(u for u in docs[1].units if u.body == "How do I fix a squeaky chain?")
    assert chain.extra["role"] == "user"
    cumin = [u for d in docs for u in d.units if "cumin" in u.body]
    assert len(cumin) == 1
    assert cumin[0].extra["role"] == "assistant"
    assert cumin[0].body == "Try a smoky lentil soup with cumin and lemon."
    for doc in docs:
        for u in doc.units:
            assert not any(t in u.body for t in ('"mapping"', '"parts"', "{", "}"))
    # stable ids: the provider's conversation id, the same on a second import
    assert [d.key for d in docs] == ["conv-0001", "conv-0002"]
    again, _ = _parse(case / "conversations.json")
    assert [d.key for d in again] == [d.key for d in docs]
    assert [u.declared_id for u in again[0].units] == [u.declared_id for u in docs[0].units]
    # a single conversation object is accepted as one conversation
    single, fails = _parse(case / "single-conversation.json")
    assert fails == []
    assert [(d.title, d.key, d.format) for d in single] == [
        ("Soup planning", "conv-0001", "chatgpt")
    ]
    assert len(_messages(single[0])) == 2


def test_030_active_branch_only(cases: Path) -> None:
    docs, fails = _parse(cases / "030-chatgpt-active-branch-only" / "conversations.json")
    assert fails == []
    bakery, no_pointer = docs
    assert bakery.title == "Bakery slogan"
    assert [(u.extra["role"], u.body) for u in _messages(bakery)] == [
        ("user", "Suggest a slogan for the corner bakery."),
        ("assistant", "Rise and shine with every slice."),
        ("user", "Make it shorter."),
        ("assistant", "Rise. Slice. Shine."),
    ]
    assert "quokka" not in _default_text(bakery)
    (old,) = _messages(bakery, alternate=True)
    assert "quokka" in old.body and old.declared_id == "a_old"
    assert old.ordinal > max(u.ordinal for u in _messages(bakery))
    # no current_node: the latest leaf wins
    assert no_pointer.title == "No pointer"
    assert [u.body for u in _messages(no_pointer)] == ["Name a colour.", "Cerulean."]
    assert [u.body for u in _messages(no_pointer, alternate=True)] == ["Vermilion."]


def test_030_cycles_and_dangling_parents_end_with_a_warning(cases: Path, tmp_path: Path) -> None:
    data = json.loads((cases / "030-chatgpt-active-branch-only" / "conversations.json").read_text())
    cyc = data[0]
    cyc["mapping"]["root"]["parent"] = "a2"  # root → … → a2 → root: a cycle
    dangling = data[1]
    dangling["current_node"] = "a_second"
    dangling["mapping"]["u1"]["parent"] = "ghost"  # not in the mapping
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    docs, fails = _parse(path)
    assert fails == []
    assert any("cycle" in w.message for w in docs[0].warnings)
    assert docs[0].warnings[0].message.startswith("conversation conv-0003:")
    assert [u.body for u in _messages(docs[0])][-1] == "Rise. Slice. Shine."
    assert any("'ghost'" in w.message for w in docs[1].warnings)
    assert [u.body for u in _messages(docs[1])] == ["Name a colour.", "Cerulean."]


def test_032_claude_attachment_only_messages(cases: Path, tmp_path: Path) -> None:
    path = cases / "032-claude-attachment-only-message" / "conversations.json"
    docs, fails = _parse(path)
    assert fails == []
    assert len(docs) == 3
    budget, agenda, photo = docs
    assert budget.title == "Budget check" and budget.format == "claude"
    human, answer = _messages(budget)
    assert human.extra["role"] == "user" and answer.extra["role"] == "assistant"
    assert "Feb,515" in human.body and "budget.csv" in human.body
    assert human.extra["kind"] == "reference"
    assert human.extra["time"] == "2024-06-01T10:00:00Z"
    assert budget.created == "2024-06-01T10:00:00Z"
    assert agenda.key == "c-0002"
    assert agenda.title == "pasted.txt"  # fallback: the attachment's name
    assert "kestrel" in _default_text(agenda)
    (img,) = _messages(photo)
    assert "IMG_0001.jpeg" in img.body
    assert img.extra["files"] == ["IMG_0001.jpeg"]
    # the same export, zipped as downloaded
    zpath = tmp_path / "claude-export.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(path, "conversations.json")
        zf.writestr("users.json", "[]")
        zf.writestr("projects.json", "[]")
    zdocs, zfails = _parse(zpath)
    assert zfails == []
    assert [d.key for d in zdocs] == ["c-0001", "c-0002", "c-0003"]


def test_034_gemini_takeout_activity(cases: Path) -> None:
    docs, fails = _parse(cases / "034-gemini-takeout-activity" / "MyActivity.json")
    assert fails == []
    assert len(docs) == 2
    glare, trip = docs
    assert all(d.format == "gemini" for d in docs)
    prompt, answer = _messages(glare)
    assert prompt.body == "How do polarized lenses cut glare?"
    assert glare.title == "How do polarized lenses cut glare?"
    lines = answer.body.split("\n")
    assert "Polarized lenses contain a filter that blocks horizontal glare & reflections." in lines
    i = lines.index("Good for driving")
    assert lines[i + 1] == "Good near water"
    for bad in ("<p>", "<strong>", "&amp;", "<li>"):
        assert bad not in answer.body
    assert prompt.extra["time"] == answer.extra["time"] == "2024-03-02T09:15:00.123Z"
    assert [u.body for u in _messages(trip)] == ["Plan a three-day trip to the coast"]
    assert trip.created == "2024-03-03T18:40:10Z"
    everything = "\n".join(u.body for d in docs for u in d.units)
    assert "glare" in everything and "pancake" not in everything.lower()
    assert "Good response" not in everything
    again, _ = _parse(cases / "034-gemini-takeout-activity" / "MyActivity.json")
    assert [d.key for d in again] == [d.key for d in docs]


def test_034_takeout_zip(cases: Path, tmp_path: Path) -> None:
    src = cases / "034-gemini-takeout-activity" / "MyActivity.json"
    zpath = tmp_path / "takeout-20240305.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(src, "Takeout/My Activity/Gemini Apps/MyActivity.json")
        zf.writestr("Takeout/archive_browser.html", "<html></html>")
        zf.writestr("Takeout/My Activity/Gemini Apps/123-abc.png", b"\x89PNG")
        zf.writestr("Takeout/My Activity/Search/MyActivity.json", "[]")
    docs, fails = _parse(zpath)
    assert fails == []
    assert [d.title for d in docs] == [
        "How do polarized lenses cut glare?",
        "Plan a three-day trip to the coast",
    ]
