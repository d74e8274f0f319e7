"""The format registry says which formats are notes and which are conversations; every
door asks it, and a format it does not know is neither (never shown as a chat)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import NotFound
from cairn.formats import FORMATS, conversation_formats, lined_formats, note_formats


def test_the_registry_names_notes_conversations_and_line_spans() -> None:
    assert note_formats() == {"org", "markdown", "text", "okf"}
    assert conversation_formats() == {"chat", "chatgpt", "claude", "gemini"}
    assert not note_formats() & conversation_formats()
    assert lined_formats() == note_formats()  # a chat export's units are not line ranges
    chats = next(f for f in FORMATS if f.name == "chats")
    assert chats.conversation and set(chats.document_formats) == {"chatgpt", "claude", "gemini"}


def test_a_document_of_an_unknown_format_is_not_a_conversation(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nbody text\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([notes], embed=False)
        (root,) = c.store.roots()
        (doc,) = c.store.documents_of_root(root.id)
        with c.store.transaction():  # as a later version's format would be stored
            c.store.replace_document(dataclasses.replace(doc, format="future-format"))
        assert c.store.document(doc.id).format == "future-format"  # type: ignore[union-attr]
        assert [d.id for d in c.conversations.list()] == []
        with pytest.raises(NotFound):
            c.conversations.thread(doc.id)
