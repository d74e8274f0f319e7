"""The documented rules of the chat importers: times, code blocks, message kinds,
keywords, HTML to text, Claude content blocks, ChatGPT hiding rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cairn.formats.chats import parse_file
from cairn.formats.chats._common import Message
from cairn.formats.chats._document import message_kind
from cairn.formats.chats._html import html_to_text
from cairn.formats.chats._text import code_blocks, keywords
from cairn.formats.chats._times import iso_from_epoch, iso_from_text
from cairn.model import Document


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-06-01T10:00:00.000000Z", "2024-06-01T10:00:00Z"),
        ("2024-03-02T09:15:00.123Z", "2024-03-02T09:15:00.123Z"),
        ("2024-06-01T12:00:00+02:00", "2024-06-01T10:00:00Z"),
        ("2024-08-08T19:12:06.120414", "2024-08-08T19:12:06.120Z"),
        ("2025-01-01T00:00:00.123456789Z", "2025-01-01T00:00:00.123Z"),
        ("yesterday", None),
        (None, None),
        (1700000001.5, "2023-11-14T22:13:21.500Z"),
    ],
)
def test_iso_from_text(value: Any, expected: str | None) -> None:
    assert iso_from_text(value) == expected


def test_iso_from_epoch() -> None:
    assert iso_from_epoch(1700000000) == "2023-11-14T22:13:20Z"
    assert iso_from_epoch(1700000000123) == "2023-11-14T22:13:20.123Z"  # milliseconds
    assert iso_from_epoch("nope") is None and iso_from_epoch(True) is None
    assert iso_from_epoch(float("nan")) is None and iso_from_epoch(1e300) is None


def test_code_blocks() -> None:
    text = "Intro\n```Python\nprint(1)\n```\ntext\n~~~~\na ``` b\n~~~~\n````sh\nunclosed"
    blocks = code_blocks(text)
    assert [(b.language, b.code) for b in blocks] == [
        ("python", "print(1)"),
        (None, "a ``` b"),
        ("sh", "unclosed"),
    ]
    assert code_blocks("no fences here") == []


def _kind(role: str, body: str, hint: str | None = None) -> str:
    return message_kind(Message(role=role, text=body, kind_hint=hint), body)


def test_message_kind_rule() -> None:
    assert _kind("user", "How do I fix a squeaky chain?") == "question"
    assert _kind("user", "Make it shorter.") == "question"
    assert _kind("user", "[attachment: a.csv]\n1,2", hint="reference") == "reference"
    assert _kind("assistant", "print(1)", hint="code") == "code"
    assert _kind("assistant", "Here:\n```py\nx = compute_everything(1, 2, 3)\n```") == "code"
    assert _kind("user", "OK, we decided to use Postgres.") == "decision"
    assert _kind("assistant", "Let's go with the blue one.") == "decision"
    assert _kind("assistant", "In summary, cache the results.") == "insight"
    assert _kind("assistant", "Paris is the capital of France.") == "answer"
    assert _kind("system", "Answer concisely.") == "reference"


def test_keywords() -> None:
    text = "The otter swims. Otters and the otter's river; river otter otter. https://x.org"
    assert keywords(text) == ["otter", "river", "swims", "otters"]
    assert keywords("") == []
    assert len(keywords("alpha beta gamma delta epsilon zeta eta theta")) == 5


def test_html_to_text() -> None:
    html = (
        "<h2>Title</h2><p>A &amp; B &lt;ok&gt;</p><ol><li>one</li><li>two</li></ol>"
        '<script>alert(1)</script><pre><code class="language-python">x = 1\n  y = 2</code></pre>'
        "<p>line<br>break</p>"
    )
    text = html_to_text(html)
    assert text.split("\n") == [
        "Title",
        "",
        "A & B <ok>",
        "",
        "one",
        "two",
        "",
        "```python",
        "x = 1",
        "  y = 2",
        "```",
        "",
        "line",
        "break",
    ]


def _one(tmp_path: Path, data: Any) -> Document:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    (doc,) = list(parse_file(path, "conversations.json"))
    assert isinstance(doc, Document)
    return doc


def test_claude_content_blocks(tmp_path: Path) -> None:
    conv = {
        "uuid": "c1",
        "name": "Blocks",
        "created_at": "2025-07-01T10:00:00Z",
        "updated_at": "2025-07-01T10:05:00+00:00",
        "summary": "A chat about tides.",
        "chat_messages": [
            {
                "uuid": "m1",
                "sender": "human",
                "text": "Tides?",
                "content": [{"type": "text", "text": "Why are there two tides a day?"}],
            },
            {
                "uuid": "m2",
                "sender": "assistant",
                # the export's text glues the thinking to the answer: never used
                "text": "Let me think about the moon.Because of the moon's pull.",
                "content": [
                    {"type": "thinking", "thinking": "Let me think about the moon."},
                    {"type": "tool_use", "name": "web_search", "input": {"query": "tides moon"}},
                    {
                        "type": "tool_result",
                        "name": "web_search",
                        "content": [
                            {
                                "type": "knowledge",
                                "title": "Tides - NOAA",
                                "url": "https://oceanservice.noaa.gov/tides",
                            }
                        ],
                    },
                    {"type": "text", "text": "Because of the moon's pull."},
                    {
                        "type": "tool_use",
                        "name": "artifacts",
                        "input": {
                            "id": "a1",
                            "title": "Tide table",
                            "command": "create",
                            "content": "| time | height |",
                        },
                    },
                    {"type": "weird", "text": "salvaged words"},
                ],
            },
            {"uuid": "m3", "sender": "human", "text": None, "content": None},
        ],
    }
    doc = _one(tmp_path, [conv])
    assert doc.units[0].body == "Blocks\n\nA chat about tides."
    user, answer = [u for u in doc.units if u.kind == "message"]
    assert user.body == "Why are there two tides a day?"
    assert "Let me think" not in answer.body
    assert answer.body.split("\n\n") == [
        "[tool web_search: tides moon]",
        "Tides - NOAA — https://oceanservice.noaa.gov/tides",
        "Because of the moon's pull.",
        "[artifact: Tide table]\n| time | height |",
        "salvaged words",
    ]
    assert [link.target for link in answer.links] == ["https://oceanservice.noaa.gov/tides"]
    messages = [w.message for w in doc.warnings]
    assert any("unknown content block type 'weird'" in m for m in messages)
    assert any("'m3': null content" in m for m in messages)
    assert doc.modified == "2025-07-01T10:05:00Z"


def _node(
    nid: str, parent: str | None, role: str, content: dict[str, Any], **more: Any
) -> dict[str, Any]:
    msg = {
        "id": nid,
        "author": {"role": role, "name": more.pop("name", None)},
        "create_time": 1.0e9,
        "content": content,
        "metadata": more.pop("metadata", {}),
        "recipient": more.pop("recipient", "all"),
        **more,
    }
    return {"id": nid, "parent": parent, "children": [], "message": msg}


def test_chatgpt_hiding_rules_and_content_types(tmp_path: Path) -> None:
    nodes = [
        _node("sys", None, "system", {"content_type": "text", "parts": ["You are ChatGPT"]}),
        _node(
            "u1",
            "sys",
            "user",
            {
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": "file-service://file-1",
                    },
                    "What is in this picture?",
                ],
            },
            metadata={"attachments": [{"name": "photo.jpg"}]},
        ),
        _node(
            "call",
            "u1",
            "assistant",
            {"content_type": "code", "language": "python", "text": "print(sum(range(5)))"},
            recipient="python",
        ),
        _node(
            "out", "call", "tool", {"content_type": "execution_output", "text": "10"}, name="python"
        ),
        _node(
            "search",
            "out",
            "assistant",
            {"content_type": "code", "language": "unknown", "text": 'search("x")'},
            recipient="browser",
        ),
        _node(
            "think",
            "search",
            "assistant",
            {
                "content_type": "thoughts",
                "thoughts": [{"summary": "s", "content": "secret reasoning"}],
            },
        ),
        _node(
            "canvas",
            "think",
            "assistant",
            {
                "content_type": "code",
                "language": "json",
                "text": json.dumps(
                    {"name": "Plan", "type": "document", "content": "Step one: gather kelp."}
                ),
            },
            recipient="canmore.create_textdoc",
        ),
        _node(
            "ans",
            "canvas",
            "assistant",
            {"content_type": "text", "parts": ["The sum is 10【3†source】."]},
        ),
    ]
    mapping = {}
    for i, n in enumerate(nodes):
        if i + 1 < len(nodes):
            n["children"] = [nodes[i + 1]["id"]]
        mapping[n["id"]] = n
    conv = {
        "id": "h1",
        "title": "Hiding",
        "create_time": 1.0e9,
        "mapping": mapping,
        "current_node": "ans",
    }
    doc = _one(tmp_path, [conv])
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [u.declared_id for u in msgs] == ["u1", "call", "out", "canvas", "ans"]
    user, call, out, canvas, ans = msgs
    assert user.body == "[image]\n\nWhat is in this picture?\n\n[file: photo.jpg]"
    assert user.extra["images"] == ["file-service://file-1"]
    assert user.extra["attachments"] == ["photo.jpg"]
    assert call.extra["kind"] == "code" and call.language == "python"
    assert call.body == "print(sum(range(5)))"
    assert not any(u.kind == "code" and u.parent == call.ordinal for u in doc.units)
    assert out.body == "10" and out.extra["kind"] == "reference" and out.extra["role"] == "tool"
    assert canvas.body == "[canvas: Plan]\n\nStep one: gather kelp."
    assert ans.body == "The sum is 10."
    assert "secret reasoning" not in "\n".join(u.body for u in doc.units)
    assert [u.extra["position"] for u in msgs] == [0, 1, 2, 3, 4]
    assert msgs[1].title == "assistant · 2001-09-09 01:46"
    assert msgs[1].outline_path == ("Hiding", "assistant · 2001-09-09 01:46")


def test_code_units_follow_their_message(tmp_path: Path) -> None:
    conv = {
        "uuid": "c2",
        "name": "Code",
        "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "Show me both"},
            {
                "uuid": "m2",
                "sender": "assistant",
                "text": "Python:\n```python\nprint('hi')\n```\nShell:\n```bash\necho hi\n```",
            },
            {"uuid": "m3", "sender": "human", "text": "thanks"},
        ],
    }
    doc = _one(tmp_path, [conv])
    shape = [(u.ordinal, u.kind, u.level, u.parent, u.language, u.declared_id) for u in doc.units]
    assert shape == [
        (0, "preamble", 0, None, None, None),
        (1, "message", 1, None, None, "m1"),
        (2, "message", 1, None, None, "m2"),
        (3, "code", 2, 2, "python", "m2#code-1"),
        (4, "code", 2, 2, "bash", "m2#code-2"),
        (5, "message", 1, None, None, "m3"),
    ]
    assert doc.units[3].body == "print('hi')" and doc.units[3].title == "python: print('hi')"
    assert doc.units[2].title == "assistant · message 2"


def test_current_node_wins_over_the_latest_leaf(tmp_path: Path) -> None:
    """current_node names the *older* of two leaves: it still decides the branch."""
    root = {"id": "r", "parent": None, "children": ["q"], "message": None}
    q = _node("q", "r", "user", {"content_type": "text", "parts": ["pick a fish"]})
    old = _node("old", "q", "assistant", {"content_type": "text", "parts": ["cod"]})
    new = _node("new", "q", "assistant", {"content_type": "text", "parts": ["hake"]})
    q["children"] = ["old", "new"]
    old["message"]["create_time"] = 1.0e9 + 1
    new["message"]["create_time"] = 1.0e9 + 9
    conv = {
        "id": "k",
        "title": "Fish",
        "mapping": {"new": new, "q": q, "old": old, "r": root},
        "current_node": "old",
    }
    doc = _one(tmp_path, [conv])
    canon = [u.body for u in doc.units if u.kind == "message" and not u.extra["alternate"]]
    alt = [u.body for u in doc.units if u.kind == "message" and u.extra["alternate"]]
    assert canon == ["pick a fish", "cod"] and alt == ["hake"]
    del conv["current_node"]
    doc = _one(tmp_path, [conv])
    canon = [u.body for u in doc.units if u.kind == "message" and not u.extra["alternate"]]
    assert canon == ["pick a fish", "hake"]


def test_librechat_flat_and_openwebui_without_current_id(tmp_path: Path) -> None:
    flat = {
        "conversationId": "lc-1",
        "title": "Flat",
        "recursive": False,
        "options": {"model": "gpt-4o"},
        "messages": [
            {
                "messageId": "m1",
                "parentMessageId": "00000000-0000-0000-0000-000000000000",
                "isCreatedByUser": True,
                "text": "first question",
                "createdAt": "2024-05-01T10:00:00Z",
            },
            {
                "messageId": "m2",
                "parentMessageId": "m1",
                "isCreatedByUser": False,
                "text": "older answer",
            },
            {
                "messageId": "m3",
                "parentMessageId": "m1",
                "isCreatedByUser": False,
                "text": "newer answer",
            },
        ],
    }
    doc = _one(tmp_path, flat)
    assert doc.metadata["provider"] == "librechat" and doc.format == "chat"
    canon = [u.body for u in doc.units if u.kind == "message" and not u.extra["alternate"]]
    assert canon == ["first question", "newer answer"]
    owui = [
        {
            "id": "w1",
            "title": "",
            "chat": {
                "history": {
                    "messages": {
                        "a": {
                            "id": "a",
                            "parentId": None,
                            "role": "user",
                            "content": "tell me about moss",
                            "timestamp": 1700000000,
                        },
                        "b": {
                            "id": "b",
                            "parentId": "a",
                            "role": "assistant",
                            "content": "Moss is small.",
                            "timestamp": 1700000005,
                        },
                        "c": {
                            "id": "c",
                            "parentId": "a",
                            "role": "assistant",
                            "content": "Moss likes shade.",
                            "timestamp": 1700000009,
                        },
                    }
                }
            },
        }
    ]
    doc = _one(tmp_path, owui)
    assert doc.title == "tell me about moss"  # fallback title
    canon = [u.body for u in doc.units if u.kind == "message" and not u.extra["alternate"]]
    assert canon == ["tell me about moss", "Moss likes shade."]


def test_claude_tree_from_web_api_capture(tmp_path: Path) -> None:
    zero = "00000000-0000-4000-8000-000000000000"
    conv = {
        "uuid": "t1",
        "name": "Tree",
        "current_leaf_message_uuid": "m4",
        "chat_messages": [
            {"uuid": "m1", "parent_message_uuid": zero, "sender": "human", "text": "q"},
            {"uuid": "m2", "parent_message_uuid": "m1", "sender": "assistant", "text": "a1"},
            {"uuid": "m3", "parent_message_uuid": "m1", "sender": "assistant", "text": "a2"},
            {"uuid": "m4", "parent_message_uuid": "m3", "sender": "human", "text": "thanks"},
        ],
    }
    doc = _one(tmp_path, [conv])
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [(u.body, u.extra["alternate"]) for u in msgs] == [
        ("q", False),
        ("a2", False),
        ("thanks", False),
        ("a1", True),
    ]
    assert [u.extra["position"] for u in msgs[:3]] == [0, 1, 2]
