"""A conversation reads in the order its user saw it, the same in ``cairn show``, the
web thread (``Cairn.conversation``), the text of a document and the OKF export: the
message tree (ChatGPT's mapping, Claude's ``parent_message_uuid``), else the export's
list order, never sorted by time (an export's times can be wrong). A hit on an
alternate shows its own branch's messages as context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import Config
from cairn.interfaces.cli import app
from cairn.model import MESSAGE, DocumentView

ZERO = "00000000-0000-4000-8000-000000000000"


def _claude_msg(uuid: str, parent: str, sender: str, text: str, at: str) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "parent_message_uuid": parent,
        "sender": sender,
        "text": text,
        "created_at": at,
        "attachments": [],
        "files": [],
    }


def _claude_export(folder: Path) -> None:
    # stored out of order; a1's time is wrong (years before the question it answers)
    msgs = [
        _claude_msg("a2", "u2", "assistant", "alpha second answer", "2025-03-01T10:03:00Z"),
        _claude_msg("u1", ZERO, "human", "alpha first question", "2025-03-01T10:00:00Z"),
        _claude_msg("u2", "a1", "human", "alpha second question", "2025-03-01T10:02:00Z"),
        _claude_msg("a1", "u1", "assistant", "alpha first answer", "2001-01-01T00:00:00Z"),
    ]
    conv = {
        "uuid": "claude-conv",
        "name": "Claude thread",
        "created_at": "2025-03-01T10:00:00Z",
        "updated_at": "2025-03-01T10:03:00Z",
        "chat_messages": msgs,
    }
    (folder / "claude").mkdir()
    (folder / "claude" / "conversations.json").write_text(json.dumps([conv]), "utf-8")


def _node(nid: str, parent: str | None, kids: list[str], role: str, text: str, t: Any) -> Any:
    return {
        "id": nid,
        "parent": parent,
        "children": kids,
        "message": {
            "id": nid,
            "author": {"role": role},
            "create_time": t,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "metadata": {},
            "recipient": "all",
        },
    }


def _chatgpt_export(folder: Path) -> None:
    t = 1_700_000_000.0
    mapping = {
        "root": {"id": "root", "parent": None, "children": ["u1"], "message": None},
        "u1": _node("u1", "root", ["a1", "b1"], "user", "beta first question", t + 1),
        # a negative time: unknown, it must not move this answer first
        "a1": _node("a1", "u1", ["u2"], "assistant", "beta first answer", -5),
        "u2": _node("u2", "a1", ["a2"], "user", "beta second question", float("nan")),
        "a2": _node("a2", "u2", [], "assistant", "beta second answer", t + 4),
        # a regeneration of a1, and the user's reply to it: an alternate branch
        "b1": _node("b1", "u1", ["v2"], "assistant", "beta regenerated zeppelin", t + 2.5),
        "v2": _node("v2", "b1", [], "user", "beta reply on the side branch", t + 2.7),
    }
    conv = {
        "id": "gpt-conv",
        "title": "GPT thread",
        "create_time": t,
        "update_time": t + 4,
        "current_node": "a2",
        "mapping": mapping,
    }
    (folder / "gpt").mkdir()
    (folder / "gpt" / "conversations.json").write_text(json.dumps([conv]), "utf-8")


def _index(tmp_path: Path) -> Cairn:
    folder = tmp_path / "chats"
    folder.mkdir()
    _claude_export(folder)
    _chatgpt_export(folder)
    c = Cairn(Config(db_path=tmp_path / "i.db"))
    c.index([folder])
    return c


def _bodies(units: Any) -> list[str]:
    return [u.body for u in units if u.kind == MESSAGE]


CLAUDE = ["alpha first question", "alpha first answer", "alpha second question",
          "alpha second answer"]
GPT = ["beta first question", "beta first answer", "beta second question",
       "beta second answer"]


def test_every_view_reads_a_conversation_in_the_order_the_user_saw(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        for doc_id, want in (("claude-conv", CLAUDE), ("gpt-conv", GPT)):
            doc = c.store.document(doc_id) or next(
                d for d in c.conversations.list() if d.key == doc_id
            )
            view = c.show(doc.id)
            assert isinstance(view, DocumentView)
            shown = _bodies(view.units)
            assert [b for b in shown if b in want] == want
            assert _bodies(c.conversations.thread(doc.id).messages) == want
            res = CliRunner().invoke(app, ["show", doc.id, "--db", str(tmp_path / "i.db")])
            assert res.exit_code == 0, res.output
            assert [res.output.index(b) for b in want] == sorted(
                res.output.index(b) for b in want
            )
        report = c.export.write("okf", tmp_path / "okf")
        assert report.documents >= 2
        okf = "\n".join(p.read_text("utf-8") for p in (tmp_path / "okf").rglob("*.md"))
        for want in (CLAUDE, GPT):
            assert [okf.index(b) for b in want] == sorted(okf.index(b) for b in want)


def test_a_bad_time_is_unknown_and_titles_say_so(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        doc = next(d for d in c.conversations.list() if d.key == "gpt-conv")
        msgs = c.conversations.thread(doc.id).messages
        answer = next(m for m in msgs if m.body == "beta first answer")
        assert not str(answer.extra.get("time") or "").startswith("1969")
        assert answer.extra.get("time_estimated") is True


def test_the_thread_shows_alternates_beside_their_branch_and_marked(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        doc = next(d for d in c.conversations.list() if d.key == "gpt-conv")
        thread = c.conversations.thread(doc.id, alternates=True).messages
        bodies = _bodies(thread)
        assert bodies.index("beta regenerated zeppelin") == bodies.index("beta first answer") + 1
        res = CliRunner().invoke(app, ["show", doc.id, "--db", str(tmp_path / "i.db")])
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        at = next(i for i, ln in enumerate(lines) if "beta regenerated zeppelin" in ln)
        line = lines[at - 1]  # the message's header line
        assert "alternate" in line and "assistant" in line
        unit = next(m for m in thread if m.body == "beta second question")
        res = CliRunner().invoke(
            app, ["show", unit.id, "--thread", "--db", str(tmp_path / "i.db")]
        )
        assert res.exit_code == 0, res.output
        assert "beta first question" in res.output and "this message" in res.output


def test_a_hit_on_an_alternate_shows_its_own_branch_as_context(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        hits = c.search("zeppelin", mode="keyword", alternates=True).hits
        (hit,) = [h for h in hits if "zeppelin" in h.snippet]
        assert hit.siblings == (
            "user: beta first question",
            "user: beta reply on the side branch",
        )
        canonical = c.search("\"beta second question\"", mode="keyword").hits[0]
        assert canonical.siblings == (
            "assistant: beta first answer",
            "assistant: beta second answer",
        )
