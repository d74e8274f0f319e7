"""A re-index of a chat export redacts only the conversations that changed: whether a
conversation is unchanged is decided before redaction, from the parsed document and a
fingerprint of redaction (settings, detectors, masking code). A change of that
fingerprint redacts every conversation again, so a secret a new detector reaches is
masked; a conversation gone from the export is removed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import cairn.redact.detectors as detectors
from cairn.app import Cairn
from cairn.config import Config
from cairn.ingest.pipeline import Indexer
from cairn.model import Document
from cairn.redact.fingerprint import index_config_hash
from cairn.redact.service import Redactor

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gen_chats.py"
TOKEN = "ghp_R8x2Kq9LmZ4vT7wY1nB5cD3fH6jP0sU2aE4g"


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _with_token(conv: dict[str, Any]) -> dict[str, Any]:
    """The conversation with the token in its first user message."""
    for node in conv["mapping"].values():
        msg = node.get("message")
        if msg and msg["author"]["role"] == "user":
            msg["content"]["parts"][0] += f" my token is {TOKEN}"
            return conv
    raise AssertionError("no user message")


def _export(tmp_path: Path, n: int) -> tuple[Path, Path, list[dict[str, Any]]]:
    convs = [_with_token(c) for c in _gen().conversations(n, seed=5)]
    root = tmp_path / "chats"
    root.mkdir()
    export = root / "conversations.json"
    export.write_text(json.dumps(convs), encoding="utf-8")
    return root, export, convs


def _conv_id(conv: dict[str, Any]) -> str:
    return str(conv.get("conversation_id") or conv["id"])


def _token_docs(c: Cairn) -> set[str]:
    """Documents whose stored units hold the token in clear."""
    db = c.store.db  # type: ignore[attr-defined]
    rows = db.execute("SELECT document_id FROM units WHERE instr(body, ?) > 0", (TOKEN,))
    return {str(r[0]) for r in rows}


def _docs(c: Cairn) -> set[str]:
    db = c.store.db  # type: ignore[attr-defined]
    return {str(r[0]) for r in db.execute("SELECT id FROM documents")}


class _Counting(Redactor):
    """The real redaction hook, counting the documents it is given."""

    def __init__(self, settings: dict[str, object]) -> None:
        super().__init__(settings)
        self.calls = 0

    def __call__(self, doc: Document) -> Document:
        self.calls += 1
        return super().__call__(doc)


def test_one_changed_conversation_is_the_only_one_redacted_and_rewritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root, export, convs = _export(tmp_path, 6)
    with Cairn(Config(db_path=tmp_path / "a.db")) as c:
        c.index([root])
        assert len(_docs(c)) == 6 and not _token_docs(c)  # masked on ingest
        convs[2]["title"] = "Renamed"
        export.write_text(json.dumps(convs), encoding="utf-8")
        hook = _Counting(dict(c.config.redact))
        run = Indexer(c.store, config_hash=index_config_hash(c.config), redact=hook).run(
            c.store.roots())
        assert hook.calls == 1
        assert "1 of 6 documents changed" in " ".join(w.message for w in run.warnings)
        db = c.store.db  # type: ignore[attr-defined]
        title = db.execute("SELECT title FROM documents WHERE id = ?",
                           (_conv_id(convs[2]),)).fetchone()[0]
        assert title == "Renamed" and not _token_docs(c)
        # nothing changed: nothing redacted, nothing rewritten
        export.write_text(json.dumps(convs) + "\n", encoding="utf-8")
        hook = _Counting(dict(c.config.redact))
        run = Indexer(c.store, config_hash=index_config_hash(c.config), redact=hook).run(
            c.store.roots())
        assert hook.calls == 0
        assert "0 of 6 documents changed" in " ".join(w.message for w in run.warnings)


def test_new_redaction_settings_redact_every_conversation_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root, _, convs = _export(tmp_path, 4)
    ids = {_conv_id(c) for c in convs}
    with Cairn(Config(db_path=tmp_path / "a.db",
                      redact={"on_ingest": {"chats": "off"}})) as c:
        c.index([root])
        assert _token_docs(c) == ids  # kept as written when asked
    with Cairn(Config(db_path=tmp_path / "a.db")) as c:  # the default: chats masked
        c.index([root])
        assert _docs(c) == ids and not _token_docs(c)


def test_a_detector_added_by_an_upgrade_masks_unchanged_conversations(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root, export, convs = _export(tmp_path, 4)
    ids = {_conv_id(c) for c in convs}
    full = detectors.DETECTORS
    with Cairn(Config(db_path=tmp_path / "a.db")) as c:
        # a cairn whose detectors do not know GitHub tokens yet
        monkeypatch.setattr(
            detectors, "DETECTORS", tuple(d for d in full if d.kind != "github-token"))
        c.index([root])
        assert _token_docs(c) == ids
        # the upgrade, and a newer export in which one conversation changed: the
        # other three are as parsed before, but redaction is not
        monkeypatch.setattr(detectors, "DETECTORS", full)
        convs[0]["title"] = "Renamed"
        export.write_text(json.dumps(convs), encoding="utf-8")
        run = c.index([root])
        assert _docs(c) == ids and not _token_docs(c)
        assert "documents changed" not in " ".join(w.message for w in run.warnings)


def test_a_conversation_gone_from_the_export_is_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root, export, convs = _export(tmp_path, 5)
    with Cairn(Config(db_path=tmp_path / "a.db")) as c:
        c.index([root])
        gone = convs.pop(1)
        export.write_text(json.dumps(convs), encoding="utf-8")
        run = c.index([root])
        assert _docs(c) == {_conv_id(x) for x in convs}
        assert _conv_id(gone) not in _docs(c)
        assert "0 of 4 documents changed" in " ".join(w.message for w in run.warnings)
