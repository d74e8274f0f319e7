"""Every chat export in ``shared/corpus/chats`` imports; conversation and message counts
are checked against an independent reading of each file with the plain ``json`` module.

The counting rules below are written out here on purpose, apart from the parser:

* ChatGPT: walk ``parent`` links up from ``current_node`` (or, without one, from the
  leaf with the latest ``create_time``) and count the nodes whose message a reader
  would see: not flagged hidden, not a hidden content type (thoughts, reasoning recap,
  browsing display, custom instructions), a system message only when it is the user's,
  an assistant message only when addressed to ``all`` (or code sent to ``python`` /
  ``canmore.*``), a tool message only for execution output, quotes, web pages, images or
  an unknown type, no thinking preamble, and some content.
* Claude: a message counts when it has text, a text-bearing content block, an
  attachment or a file.
* AI Studio: chunks that are not thoughts and carry text, parts, code, a code result, a
  drive document, an inline file or a video; a chunk followed by one with the same
  ``branchParent`` is an alternate.
* LibreChat: messages with text; the canonical branch follows the last child.
* Open WebUI / Chatbot UI: messages with a non-empty ``content``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cairn.formats.chats import parse_file, sniff
from cairn.model import Document, Failure

CHATS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "chats"
LIBRECHAT = CHATS / "librechat/api/server/utils/import/__data__"

pytestmark = pytest.mark.corpus


def _files() -> list[Path]:
    return sorted(CHATS.rglob("*.json")) if CHATS.is_dir() else []


def _parse(path: Path) -> tuple[list[Document], list[Failure]]:
    docs: list[Document] = []
    fails: list[Failure] = []
    for item in parse_file(path, path.name):
        (docs if isinstance(item, Document) else fails).append(item)  # type: ignore[arg-type]
    return docs, fails


def _messages(doc: Document, alternate: bool = False) -> list[Any]:
    return [u for u in doc.units if u.kind == "message" and u.extra["alternate"] is alternate]


# --- the independent counting rules ---------------------------------------------------

HIDDEN_TYPES = {"thoughts", "reasoning_recap", "tether_browsing_display", "user_editable_context"}
TOOL_SHOWN = {"execution_output", "tether_quote", "sonic_webpage", "multimodal_text"}
KNOWN = TOOL_SHOWN | HIDDEN_TYPES | {"text", "code", "system_error"}


def chatgpt_visible(msg: dict[str, Any] | None) -> bool:
    if not msg or not isinstance(msg.get("content"), dict):
        return False
    meta = msg.get("metadata") or {}
    content = msg["content"]
    ctype = content.get("content_type")
    role = (msg.get("author") or {}).get("role")
    if meta.get("is_visually_hidden_from_conversation") or ctype in HIDDEN_TYPES:
        return False
    if role == "system" and not meta.get("is_user_system_message"):
        return False
    recipient = msg.get("recipient")
    to_code_tool = ctype == "code" and (
        recipient == "python" or str(recipient).startswith("canmore.")
    )
    if role == "assistant" and recipient not in (None, "all") and not to_code_tool:
        return False
    if role == "tool" and ctype in KNOWN and ctype not in TOOL_SHOWN:
        return False
    if msg.get("channel") == "commentary" and meta.get("is_thinking_preamble_message"):
        return False
    parts = content.get("parts") or []
    has = any((isinstance(p, str) and p.strip()) or isinstance(p, dict) for p in parts)
    has = has or any(
        isinstance(content.get(k), str) and content[k].strip() for k in ("text", "result")
    )
    has = has or bool(ctype in ("tether_quote", "sonic_webpage") and content.get("url"))
    return has


def chatgpt_count(conv: dict[str, Any]) -> int:
    mapping = conv["mapping"]
    leaf = conv.get("current_node")
    if leaf not in mapping:
        leaves = [k for k, v in mapping.items() if not set(v.get("children") or []) & set(mapping)]
        leaf = max(leaves, key=lambda k: (mapping[k].get("message") or {}).get("create_time") or 0)
    count, node = 0, leaf
    while node in mapping:
        count += chatgpt_visible(mapping[node].get("message"))
        node = mapping[node].get("parent")
    return count


def claude_count(conv: dict[str, Any]) -> int:
    n = 0
    for m in conv["chat_messages"]:
        blocks = [
            b for b in (m.get("content") or []) if isinstance(b.get("text"), str) and b["text"]
        ]
        if m.get("text") or blocks or m.get("attachments") or m.get("files"):
            n += 1
    return n


def aistudio_counts(obj: dict[str, Any]) -> tuple[int, int]:
    keys = (
        "text",
        "parts",
        "executableCode",
        "codeExecutionResult",
        "driveDocument",
        "inlineFile",
        "youtubeVideo",
    )
    chunks = obj["chunkedPrompt"]["chunks"]
    parents = [(c.get("branchParent") or {}).get("id") for c in chunks]
    canonical = alternate = 0
    for i, c in enumerate(chunks):
        if c.get("isThought") or not any(c.get(k) for k in keys):
            continue
        if parents[i] and i + 1 < len(chunks) and parents[i + 1] == parents[i]:
            alternate += 1
        else:
            canonical += 1
    return canonical, alternate


def librechat_counts(obj: dict[str, Any]) -> tuple[int, int]:
    total = 0
    stack = list(obj["messages"])
    while stack:
        m = stack.pop()
        total += bool(m.get("text"))
        stack.extend(m.get("children") or [])
    canonical, level = 0, obj["messages"]
    while level:
        canonical += bool(level[-1].get("text"))
        level = level[-1].get("children") or []
    return canonical, total - canonical


# --- tests -----------------------------------------------------------------------------


def test_corpus_is_present() -> None:
    assert len(_files()) >= 26


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(CHATS)))
def test_every_file_imports_with_independent_counts(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert sniff(path.read_bytes()[:64])
    docs, fails = _parse(path)
    name = path.name
    if name == "corpus-manifest.json":  # generator manifests, not exports
        assert docs == []
        assert len(fails) == 1
        assert fails[0].reason.startswith("not a recognised chat export")
        return
    entries = data if isinstance(data, list) else [data]
    if isinstance(data, dict) and "history" in data:  # Chatbot UI
        entries = data["history"]
    by_key = {d.key: d for d in docs}
    assert len(by_key) == len(docs), "conversation keys are unique within a file"
    failed_ids = {f.reason.split(" ")[1] for f in fails}
    assert len(docs) + len(fails) == len(entries)
    for entry in entries:
        if "mapping" in entry or "current_node" in entry or "default_model_slug" in entry:
            cid = entry.get("id") or entry.get("conversation_id")
            if "mapping" not in entry:
                assert cid in failed_ids
                continue
            doc = by_key[cid]
            assert doc.format == "chatgpt"
            assert len(_messages(doc)) == chatgpt_count(entry), cid
        elif "chat_messages" in entry:
            doc = by_key[entry["uuid"]]
            assert doc.format == "claude"
            assert len(_messages(doc)) == claude_count(entry)
        elif "chunkedPrompt" in entry:
            doc = by_key[entry["id"]]
            assert doc.format == "gemini"
            canonical, alternate = aistudio_counts(entry)
            assert len(_messages(doc)) == canonical
            assert len(_messages(doc, alternate=True)) == alternate
        elif "conversationId" in entry:
            doc = by_key[entry["conversationId"]]
            assert doc.format == "chat" and doc.metadata["provider"] == "librechat"
            canonical, alternate = librechat_counts(entry)
            assert len(_messages(doc)) == canonical
            assert len(_messages(doc, alternate=True)) == alternate
        elif "chat" in entry:
            doc = by_key[entry["id"]]
            assert doc.metadata["provider"] == "openwebui"
            msgs = entry["chat"]["history"]["messages"].values()
            assert len(_messages(doc)) == sum(1 for m in msgs if m.get("content"))
        else:
            doc = by_key[entry["id"]]
            assert doc.metadata["provider"] == "chatbotui"
            assert len(_messages(doc)) == sum(1 for m in entry["messages"] if m.get("content"))
    for doc in docs:
        _check_document_shape(doc, path.name)


def _check_document_shape(doc: Document, relpath: str) -> None:
    assert doc.path == relpath
    assert doc.key and doc.declared_id == doc.key
    assert doc.title.strip()
    assert doc.units[0].kind == "preamble" and doc.units[0].level == 0
    json.dumps(dict(doc.metadata))
    seen_alternate = False
    for i, unit in enumerate(doc.units):
        assert unit.ordinal == i and unit.id == ""
        json.dumps(dict(unit.extra))
        if unit.kind == "message":
            assert unit.level == 1
            assert unit.body.strip()
            assert unit.extra["role"] in ("user", "assistant", "system", "tool")
            assert unit.extra["kind"] in (
                "question",
                "answer",
                "code",
                "decision",
                "insight",
                "reference",
            )
            assert isinstance(unit.extra["keywords"], list)
            if unit.extra["alternate"]:
                seen_alternate = True
            else:
                assert not seen_alternate, "alternates come after the canonical branch"
            time = unit.extra["time"]
            assert time is None or (time.endswith("Z") and time[10] == "T")
            # no raw JSON in what gets indexed
            assert '"content_type"' not in unit.body and '"parts"' not in unit.body
            assert not unit.body.lstrip().startswith(('{"', "[{"))
        elif unit.kind == "code":
            assert unit.level == 2 and unit.parent is not None
            assert doc.units[unit.parent].kind == "message"
    canon = [u for u in doc.units if u.kind == "message" and not u.extra["alternate"]]
    assert [u.extra["position"] for u in canon] == list(range(len(canon)))
    for t in (doc.created, doc.modified):
        assert t is None or t.endswith("Z")


def test_chatgpt_tree_canonical_branch() -> None:
    """chatgpt-tree.json: current_node sits on the *second* child of both branching
    points; the transcript is read off the file by hand."""
    docs, fails = _parse(LIBRECHAT / "chatgpt-tree.json")
    assert fails == []
    (doc,) = docs
    canon = _messages(doc)
    assert [(u.extra["role"], u.body.split("\n")[0]) for u in canon] == [
        ("user", "hi there"),
        ("assistant", "Hello! How can I assist you today?"),
        ("user", "hi again"),
        ("assistant", "Hey! Welcome back. What's on your mind?"),
        ("user", "tell me a joke"),
        ("assistant", "Sure, here's one for you:"),
    ]
    assert canon[-1].declared_id == "f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8"  # current_node
    alternates = _messages(doc, alternate=True)
    assert {u.body.split("\n")[0] for u in alternates} == {
        "so cool bro",
        "Thanks! What brings you here today?",
        "tell me a story",
        "Sure! Here's a short story for you:",
        "Sure, here's one for you:",
    }
    story = next(u for u in alternates if u.body.startswith("Sure! Here's a short story"))
    assert story.extra["status"] == "in_progress"
    assert story.extra["finish"] == "interrupted"
    # the abandoned first joke (first child of the branching point) is an alternate
    joke = next(u for u in alternates if u.body.startswith("Sure, here's one"))
    assert (joke.declared_id or "").startswith("d0d2a7df")
    assert joke.extra["parent_message_id"] == canon[4].declared_id
    assert doc.metadata["model"] == "text-davinci-002-render-sha"
    assert doc.created == "2024-05-01T17:37:11.148Z"


def test_chatgpt_export_browsing_and_code() -> None:
    docs, _ = _parse(LIBRECHAT / "chatgpt-export.json")
    web, code = docs
    bodies = "\n".join(u.body for u in web.units)
    assert "【" not in bodies and "†" not in bodies  # citation markers stripped
    assert 'search("' not in bodies  # browser tool calls hidden
    answer = next(u for u in _messages(web) if "is reported as follows" in u.body)
    assert answer.extra["role"] == "assistant"
    assert any(link.target.startswith("https://") for link in answer.links)
    quotes = [u for u in _messages(web) if u.extra["role"] == "tool"]
    assert quotes and all(u.extra["kind"] == "reference" for u in quotes)
    code_units = [u for u in code.units if u.kind == "code"]
    assert {u.language for u in code_units} >= {"python", "csharp"}
    assert any("find_intersection" in u.body for u in code_units)


def test_modern_export_hides_custom_instructions_and_reports_corrupted() -> None:
    docs, fails = _parse(LIBRECHAT / "chatgpt-modern-export.json")
    assert [d.title for d in docs] == ["Deploying the staging cluster", "Weeknight pasta"]
    assert len(fails) == 1
    assert fails[0].reason.startswith(
        'conversation 6b0f0d9c-0000-4000-8000-000000000002 ("Corrupted entry"):'
    )
    bodies = [u.body for u in _messages(docs[0])]
    assert bodies == [
        "How do I roll back the deploy?",
        "Run `helm rollback staging`.",
        "And if that fails?",
        "Restore from the last known-good chart.",
    ]
    assert not any("SRE" in u.body for u in docs[0].units)


def test_reasoning_fixtures_keep_answers_hide_thoughts() -> None:
    fixtures = CHATS / "chatgpt-exporter/tests/fixtures"
    docs, _ = _parse(fixtures / "thinking-multi-preamble.json")
    bodies = [u.body for u in _messages(docs[0])]
    assert bodies == ["question 1", "answer 1", "question 2", "answer 2", "question 3", "answer 3"]
    docs, _ = _parse(fixtures / "image-generation.json")
    msgs = _messages(docs[0])
    tool = [u for u in msgs if u.extra["role"] == "tool"]
    assert tool and all(u.body == "[image]" and u.extra["images"] for u in tool)
    assert not any("tool text" in u.body for u in msgs)  # hidden commentary copies


def test_claude_artifacts_and_gemini_aistudio() -> None:
    docs, _ = _parse(CHATS / "claude-to-sqlite/tests/artifacts.json")
    (doc,) = docs
    text = "\n".join(u.body for u in doc.units)
    assert "<antArtifact" not in text and "[artifact:" in text
    assert _messages(doc)[0].extra["role"] == "user"
    docs, _ = _parse(
        CHATS / "polylogue/tests/data/gemini_chunked_prompt/code_execution_prompt.json"
    )
    (doc,) = docs
    assert "I should use code execution." not in "\n".join(u.body for u in doc.units)
    code = [u for u in doc.units if u.kind == "code"]
    assert code[0].body == "print(2+2)" and code[0].language == "python"
    docs, _ = _parse(CHATS / "polylogue/tests/data/gemini_chunked_prompt/branching_session.json")
    alt = _messages(docs[0], alternate=True)
    assert [u.body for u in alt] == ["First (edited) answer."]
