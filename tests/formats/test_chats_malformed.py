"""Malformed chat exports built in tmp_path: truncated and invalid JSON, null content,
unknown content types, missing titles, corrupted entries, odd zip members, zip bombs,
files that are not chat exports at all. Each problem is reported with the conversation
it affects and the rest is imported."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.formats.chats import _stream, parse_file, sniff
from cairn.model import Document, Failure


def _parse(path: Path) -> tuple[list[Document], list[Failure]]:
    docs: list[Document] = []
    fails: list[Failure] = []
    for item in parse_file(path, "export/" + path.name):
        if isinstance(item, Document):
            docs.append(item)
        else:
            fails.append(item)
    return docs, fails


def _node(
    nid: str, parent: str | None, children: list[str], role: str, text: Any, t: float
) -> dict[str, Any]:
    content = (
        text
        if isinstance(text, dict) or text is None
        else {"content_type": "text", "parts": [text]}
    )
    return {
        "id": nid,
        "parent": parent,
        "children": children,
        "message": {
            "id": nid,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": t,
            "content": content,
            "status": "finished_successfully",
            "metadata": {},
            "recipient": "all",
        },
    }


def conversation(
    i: int, title: str | None = None, user: Any = None, answer: Any = None
) -> dict[str, Any]:
    """A small ChatGPT conversation: root → user → assistant."""
    t = 1_700_000_000.0 + i * 100
    return {
        "id": f"conv-{i}",
        "conversation_id": f"conv-{i}",
        "title": title if title is not None else f"Conversation number {i}",
        "create_time": t,
        "update_time": t + 10,
        "current_node": "a",
        "default_model_slug": "gpt-4o",
        "mapping": {
            "root": {"id": "root", "parent": None, "children": ["u"], "message": None},
            "u": _node(
                "u",
                "root",
                ["a"],
                "user",
                user if user is not None else f"question {i} about otters",
                t + 1,
            ),
            "a": _node(
                "a",
                "u",
                [],
                "assistant",
                answer if answer is not None else f"answer {i} about rivers",
                t + 2,
            ),
        },
    }


def _write(tmp_path: Path, data: Any, name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_truncated_json_keeps_conversations_before_the_break(tmp_path: Path) -> None:
    text = json.dumps([conversation(i) for i in range(5)])
    cut = text.index('"conv-3"') + 40  # inside the fourth conversation
    path = tmp_path / "conversations.json"
    path.write_text(text[:cut], encoding="utf-8")
    docs, fails = _parse(path)
    assert [d.key for d in docs] == ["conv-0", "conv-1", "conv-2"]
    (fail,) = fails
    assert fail.path == "export/conversations.json"
    assert fail.reason.startswith("truncated JSON at character ")
    assert "after conversation conv-2" in fail.reason and "3 imported" in fail.reason
    offset = int(fail.reason.split("at character ")[1].split(" ")[0])
    assert text.index('{"id": "conv-3"') <= offset <= cut


def test_a_top_level_entry_nested_too_deep_is_skipped_and_its_siblings_read(
    tmp_path: Path,
) -> None:
    depth = 200_000
    path = tmp_path / "deep.json"
    path.write_bytes(
        b"["
        + json.dumps(conversation(1)).encode()
        + b","
        + b"[" * depth
        + b"]" * depth
        + b","
        + json.dumps(conversation(3)).encode()
        + b"]"
    )
    docs, fails = _parse(path)
    assert [d.key for d in docs] == ["conv-1", "conv-3"]
    (fail,) = fails
    assert fail.reason.startswith("conversation #2 (at character ")
    assert "nested too deep to read; skipped" in fail.reason


def _with_bad_value(tmp_path: Path, bad: str) -> Path:
    convs = [json.dumps(conversation(i)) for i in range(4)]
    # conversation 2: a message part or a create_time the decoder cannot build
    convs[2] = convs[2].replace('"create_time": 1700000201.0', f'"create_time": {bad}', 1)
    assert bad in convs[2]
    path = tmp_path / "conversations.json"
    path.write_text("[" + ",\n".join(convs) + "]", "utf-8")
    return path


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("1" * 100_000, "a value cannot be read (Exceeds the limit (4300 digits)"),
        ("[" * 100_000 + '"x"' + "]" * 100_000, "nested too deep to read"),
        ('{"p": ' * 100_000 + '"a \\" ] } [ {"' + "}" * 100_000, "nested too deep to read"),
    ],
    ids=["100k-digit-create-time", "part-nested-100k-deep", "nested-with-brackets-in-strings"],
)
def test_one_unbuildable_conversation_fails_alone(
    tmp_path: Path, bad: str, reason: str
) -> None:
    docs, fails = _parse(_with_bad_value(tmp_path, bad))
    assert [d.key for d in docs] == ["conv-0", "conv-1", "conv-3"]
    (fail,) = fails
    assert fail.reason.startswith("conversation #3 (at character ")
    assert reason in fail.reason
    assert "skipped, the other conversations are read" in fail.reason


def test_a_deep_value_cut_off_by_the_end_of_the_file_is_truncated_json(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(b"[" + json.dumps(conversation(1)).encode() + b"," + b"[" * 100_000)
    docs, fails = _parse(path)
    assert [d.key for d in docs] == ["conv-1"]
    (fail,) = fails
    assert fail.reason.startswith("truncated JSON at character ")


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    raw = json.dumps([conversation(1, title="Café"), conversation(2)], ensure_ascii=False)
    data = raw.encode("utf-8").replace(b"answer 2 about", b"answer 2 \xff about")
    path = tmp_path / "c.json"
    path.write_bytes(data)
    docs, fails = _parse(path)
    assert fails == [] and [d.key for d in docs] == ["conv-1", "conv-2"]
    assert docs[0].title == "Café"
    answer = [u for u in docs[1].units if u.kind == "message"][-1]
    assert answer.body == "answer 2 \ufffd about rivers"


def test_invalid_json_in_the_middle(tmp_path: Path) -> None:
    text = json.dumps([conversation(i) for i in range(3)])
    bad = text.replace('"conv-2", "conversation_id"', '"conv-2", ,, "conversation_id"', 1)
    path = tmp_path / "c.json"
    path.write_text(bad, encoding="utf-8")
    docs, fails = _parse(path)
    assert [d.key for d in docs] == ["conv-0", "conv-1"]
    assert len(fails) == 1 and fails[0].reason.startswith("invalid JSON at character")


def test_wrapped_conversations_object_is_streamed(tmp_path: Path) -> None:
    path = _write(tmp_path, {"version": 1, "conversations": [conversation(1), conversation(2)]})
    docs, fails = _parse(path)
    assert fails == [] and [d.key for d in docs] == ["conv-1", "conv-2"]


def test_null_content_unknown_type_and_missing_title(tmp_path: Path) -> None:
    null_answer = conversation(1)
    null_answer["mapping"]["a"]["message"]["content"] = None
    unknown = conversation(2, answer={"content_type": "hologram", "parts": ["beam me up"]})
    unknown_empty = conversation(3, answer={"content_type": "hologram", "blob": 7})
    untitled = conversation(4, title="", user="Where do wombats sleep at night in winter")
    null_title = conversation(5)
    null_title["title"] = None
    null_title["mapping"]["u"]["message"]["content"]["parts"] = [""]
    path = _write(tmp_path, [null_answer, unknown, unknown_empty, untitled, null_title])
    docs, fails = _parse(path)
    assert fails == []
    d1, d2, d3, d4, d5 = docs
    assert [u.extra["role"] for u in d1.units if u.kind == "message"] == ["user"]
    assert any(
        w.message.startswith("conversation conv-1:") and "null content" in w.message
        for w in d1.warnings
    )
    salvaged = [u for u in d2.units if u.kind == "message"][-1]
    assert salvaged.body == "beam me up"
    assert any("unknown content type 'hologram'" in w.message for w in d2.warnings)
    assert [u.extra["role"] for u in d3.units if u.kind == "message"] == ["user"]
    assert any("no text" in w.message for w in d3.warnings)
    assert d4.title == "Where do wombats sleep at night in winter"
    assert d5.title == "ChatGPT conversation 2023-11-14"


def test_corrupted_entry_and_unrecognised_entry_fail_alone(tmp_path: Path) -> None:
    broken = {"id": "conv-x", "title": "Corrupted", "create_time": 1.0, "conversation_id": "conv-x"}
    path = _write(tmp_path, [conversation(1), broken, 42, conversation(2)])
    docs, fails = _parse(path)
    assert [d.key for d in docs] == ["conv-1", "conv-2"]
    assert [f.reason.split(":")[0] for f in fails] == [
        'conversation conv-x ("Corrupted")',
        "conversation #3",
    ]


def test_a_mapping_that_is_not_an_object(tmp_path: Path) -> None:
    bad = conversation(2)
    bad["mapping"] = ["not", "a", "tree"]
    docs, fails = _parse(_write(tmp_path, [conversation(1), bad]))
    assert [d.key for d in docs] == ["conv-1"]
    assert fails[0].reason.startswith('conversation conv-2 ("Conversation number 2"): ')


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"name": "cairn", "version": "1.0", "dependencies": {}}', "the file is an object"),
        (b"[1, 2, 3]", "the first entry is a int"),
        (b"", "not JSON"),
        (b"hello world", "not JSON"),
        (b"[]", None),
    ],
)
def test_files_that_are_not_chat_exports(tmp_path: Path, content: bytes, why: str | None) -> None:
    path = tmp_path / "thing.json"
    path.write_bytes(content)
    docs, fails = _parse(path)
    assert docs == []
    if why is None:
        assert fails == []  # an empty export: nothing to import, nothing wrong
        return
    (fail,) = fails
    assert fail.reason.startswith("not a recognised chat export")
    assert why in fail.reason


def test_bom_and_sniff(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b"\xef\xbb\xbf  \n" + json.dumps([conversation(1)]).encode())
    docs, fails = _parse(path)
    assert fails == [] and len(docs) == 1
    assert sniff(b"\xef\xbb\xbf [") and sniff(b"PK\x03\x04") and sniff(b'\n {"a"')
    assert not sniff(b"hello") and not sniff(b"")


def _zip(path: Path, members: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_chatgpt_zip_as_downloaded(tmp_path: Path) -> None:
    data = json.dumps([conversation(1), conversation(2)])
    path = _zip(
        tmp_path / "export.zip",
        {
            "conversations.json": data,
            "user.json": "{}",
            "chat.html": "<html></html>",
            "message_feedback.json": "[]",
            "file-abc123-photo.png": b"\x89PNG",
            "dalle-generations/img.webp": b"RIFF",
            "user-xyz/file_00.png": b"\x89PNG",
            "textdocs/doc.json": "{}",
        },
    )
    docs, fails = _parse(path)
    assert fails == []
    assert [d.key for d in docs] == ["conv-1", "conv-2"]
    assert all(d.path == "export/export.zip" for d in docs)


def test_zip_with_unexpected_and_unsafe_members(tmp_path: Path) -> None:
    path = _zip(
        tmp_path / "odd.zip",
        {
            "conversations.json": json.dumps([conversation(1)]),
            "../escape.txt": "x",
            "payload.exe": b"MZ",
            "nested.zip": b"PK\x05\x06" + b"\0" * 18,
        },
    )
    docs, fails = _parse(path)
    assert [d.key for d in docs] == ["conv-1"]
    reasons = sorted(f.reason for f in fails)
    assert len(reasons) == 3
    assert reasons[0].startswith("zip member '../escape.txt': unsafe member")
    assert "zip member 'nested.zip': unexpected member" in reasons[1]
    assert "zip member 'payload.exe': unexpected member" in reasons[2]


def test_zip_without_an_export_member(tmp_path: Path) -> None:
    path = _zip(tmp_path / "photos.zip", {"a.png": b"x", "setup.exe": b"y", "../z": b"z"})
    docs, fails = _parse(path)
    assert docs == []
    (fail,) = fails
    assert fail.reason.startswith("not a recognised chat export: the zip holds no")


def test_not_a_zip_despite_the_magic(tmp_path: Path) -> None:
    path = tmp_path / "broken.zip"
    path.write_bytes(b"PK\x03\x04 this is not really a zip")
    docs, fails = _parse(path)
    assert docs == [] and fails[0].reason.startswith("not a readable zip archive")


def test_zip_bomb_by_ratio(tmp_path: Path) -> None:
    # 32 MiB of blanks inside a valid JSON array compress about 1000:1
    blob = b"[" + b" " * (32 * 1024 * 1024) + json.dumps(conversation(1)).encode() + b"]"
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", blob)
    docs, fails = _parse(path)
    assert docs == []
    (fail,) = fails
    assert fail.reason.startswith("zip member 'conversations.json': compression ratio")
    assert "possible zip bomb" in fail.reason


def test_zip_bomb_by_size_and_by_overlong_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _zip(tmp_path / "big.zip", {"conversations.json": json.dumps([conversation(1)])})
    monkeypatch.setattr(_stream, "MAX_MEMBER_BYTES", 100)
    docs, fails = _parse(path)
    assert docs == [] and "exceeds the limit of 100" in fails[0].reason
    monkeypatch.undo()

    # a member that decompresses past the size the reader was told to expect
    raw = tmp_path / "c.json"
    raw.write_text(json.dumps([conversation(i) for i in range(50)]))
    with raw.open("rb") as fh:
        items = list(_stream.stream_json(fh, "c.json", "c.json", limit=2000))
    assert isinstance(items[-1], Failure)
    assert "possible zip bomb" in items[-1].reason
    assert all(isinstance(i, Document) for i in items[:-1])


def test_encrypted_member_is_refused(tmp_path: Path) -> None:
    path = _zip(tmp_path / "enc.zip", {"conversations.json": json.dumps([conversation(1)])})
    data = bytearray(path.read_bytes())
    # set the "encrypted" flag bit in the local header and the central directory entry
    data[6] |= 1
    central = data.rfind(b"PK\x01\x02")
    data[central + 8] |= 1
    path.write_bytes(bytes(data))
    docs, fails = _parse(path)
    assert docs == [] and fails[0].reason == "zip member 'conversations.json': encrypted; not read"


def test_gemini_activity_without_gemini_records(tmp_path: Path) -> None:
    records = [
        {
            "header": "Search",
            "title": "Searched for kites",
            "time": "2024-01-01T00:00:00Z",
            "products": ["Search"],
        }
    ]
    docs, fails = _parse(_write(tmp_path, records, "MyActivity.json"))
    assert docs == []
    assert fails[0].reason.startswith("not a recognised chat export: a Google activity file")


def test_duplicate_conversation_ids_keep_the_first(tmp_path: Path) -> None:
    docs, fails = _parse(_write(tmp_path, [conversation(1), conversation(2), conversation(1)]))
    assert [d.key for d in docs] == ["conv-1", "conv-2"]
    (fail,) = fails
    assert fail.reason.startswith('conversation conv-1 ("Conversation number 1"): the same')


_SEED_EXPORT = json.dumps(
    [
        conversation(1, answer="Here:\n```python\nprint('é')\n```"),
        conversation(2, title="Ünïcode 🦦"),
        conversation(3),
    ],
    ensure_ascii=False,
).encode("utf-8")


def _item_ends(data: bytes) -> list[int]:
    """Byte offsets just after each top-level item, found with the json module."""
    text = data.decode("utf-8")
    decoder = json.JSONDecoder()
    ends, pos = [], 1
    while text[pos] != "]":
        _, pos = decoder.raw_decode(text, pos)
        ends.append(len(text[:pos].encode("utf-8")))
        pos += 2 if text[pos] == "," else 0
        while text[pos] == " ":
            pos += 1
    return ends


_SEED_ENDS = _item_ends(_SEED_EXPORT)


@given(cut=st.integers(0, len(_SEED_EXPORT)), junk=st.binary(max_size=8))
@settings(max_examples=150, deadline=None)
def test_any_cut_or_junk_never_raises(
    tmp_path_factory: pytest.TempPathFactory, cut: int, junk: bytes
) -> None:
    """Cut anywhere, junk appended: documents or failures, never an exception, and
    every conversation that ends before the cut is imported."""
    path = tmp_path_factory.mktemp("fuzz") / "c.json"
    data = _SEED_EXPORT[:cut] + junk
    path.write_bytes(data)
    items = list(parse_file(path, "c.json"))
    docs = [i for i in items if isinstance(i, Document)]
    complete = sum(1 for end in _SEED_ENDS if end <= cut)
    # junk can at most complete the conversation the cut fell into
    assert complete <= len(docs) <= complete + 1
    assert [d.key for d in docs][:complete] == ["conv-1", "conv-2", "conv-3"][:complete]
    try:
        json.loads(data)
        valid = True
    except ValueError:
        valid = False
    if len(docs) < 3 and not valid:  # what is missing is always explained
        assert any(isinstance(i, Failure) for i in items)


@pytest.mark.parametrize("bad", [1e30, -5, "soon", None, float("nan")])
def test_a_bad_time_never_makes_a_branch_the_latest(tmp_path: Path, bad: Any) -> None:
    conv = conversation(1)
    del conv["current_node"]
    mapping = conv["mapping"]
    # a second answer to the same question with a bad time, listed first
    mapping["u"]["children"] = ["bad", "a"]
    mapping["bad"] = _node("bad", "u", [], "assistant", "the bad-time answer", bad)
    path = tmp_path / "c.json"
    path.write_text(json.dumps([conv]), "utf-8")  # NaN is written as NaN, read back
    (doc,), fails = _parse(path)
    assert fails == []
    canonical = [u.body for u in doc.units if u.kind == "message" and not u.extra["alternate"]]
    assert canonical == ["question 1 about otters", "answer 1 about rivers"]
    bad_unit = next(u for u in doc.units if u.body == "the bad-time answer")
    assert bad_unit.extra["alternate"] and bad_unit.extra.get("time_estimated")


@pytest.mark.parametrize(
    ("part", "shown"),
    [
        ({"content_type": "image_asset_pointer", "asset_pointer": "file-service://f1"}, "[image]"),
        ({"content_type": "tether_note", "text": "a note kept in a part"}, "a note kept in a part"),
        ({"content_type": "widget"}, "[widget]"),
        ({"x": 1}, "[attachment]"),
    ],
)
def test_an_object_part_of_a_text_message_is_kept_and_warned_by_id(
    tmp_path: Path, part: dict[str, Any], shown: str
) -> None:
    secret_title = "sk-live-1234 my private title"
    conv = conversation(7, title=secret_title)
    content = {"content_type": "text", "parts": [part]}
    conv["mapping"]["a"]["message"]["content"] = content
    (doc,), fails = _parse(_write(tmp_path, [conv]))
    assert fails == []
    answer = [u for u in doc.units if u.kind == "message"][-1]
    assert answer.body == shown
    (warning,) = [w.message for w in doc.warnings]
    assert warning.startswith("conversation conv-7: message 'a': 1 part(s) of a text")
    assert "private title" not in warning


def test_text_and_an_image_pointer_in_one_text_message_are_both_kept(tmp_path: Path) -> None:
    conv = conversation(8)
    parts = ["look at this", {"content_type": "image_asset_pointer", "asset_pointer": "p"}]
    conv["mapping"]["u"]["message"]["content"] = {"content_type": "text", "parts": parts}
    (doc,), _ = _parse(_write(tmp_path, [conv]))
    question = next(u for u in doc.units if u.kind == "message")
    assert question.body == "look at this\n\n[image]"
    assert question.extra["images"] == ["p"]
