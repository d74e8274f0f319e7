"""An upgrade of cairn that adds or changes a redaction detector reaches files whose bytes
did not change: the run's configuration hash covers the detectors
(:func:`cairn.redact.fingerprint.index_config_hash`), so the next ``cairn index``
parses and redacts every file once; a run after it, with nothing changed, parses
nothing."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import cairn.redact.detectors as detectors
from cairn.app import Cairn
from cairn.config import load_config
from cairn.redact.fingerprint import index_config_hash

TOKEN = "ghp_R8x2Kq9LmZ4vT7wY1nB5cD3fH6jP0sU2aE4g"


def _message(mid: str, role: str, text: str, parent: str, child: str | None) -> dict[str, Any]:
    return {
        "id": mid,
        "message": {
            "id": mid, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": 1650000140.0, "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "metadata": {}, "recipient": "all",
        },
        "parent": parent, "children": [child] if child else [],
    }


def _export(folder: Path) -> None:
    """A ChatGPT export of one conversation whose user message holds the token."""
    conv = {
        "title": "Deploy keys", "create_time": 1650000045.0, "update_time": 1650000925.0,
        "mapping": {
            "root": {"id": "root", "message": None, "parent": None, "children": ["u1"]},
            "u1": _message("u1", "user", f"my token is {TOKEN} for the deploy", "root", "a1"),
            "a1": _message("a1", "assistant", "Revoke it and make a new one.", "u1", None),
        },
        "current_node": "a1", "conversation_id": "conv-1", "id": "conv-1",
    }
    folder.mkdir()
    (folder / "conversations.json").write_text(json.dumps([conv]), encoding="utf-8")


def _in_clear(db: Path) -> set[str]:
    """Formats of the documents whose stored units hold the token in clear."""
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT DISTINCT d.format FROM units u JOIN documents d ON d.id = u.document_id "
            "WHERE instr(u.body, ?) > 0", (TOKEN,))
        return {str(r[0]) for r in rows}


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A notes folder with one note holding the token, a chat export holding it, and a
    config file that masks findings in every format."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(
        f"# Deploy\n\nThe CI token is {TOKEN} until Friday.\n", encoding="utf-8")
    chats = tmp_path / "chats"
    _export(chats)
    config = tmp_path / "cairn.toml"
    config.write_text('[redact]\non_ingest = "mask"\n', encoding="utf-8")
    return notes, chats, config


def test_a_detector_added_by_an_upgrade_masks_unchanged_notes_and_exports(
        roots: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        cairn_cmd: Callable[..., Any]) -> None:
    notes, chats, config = roots
    db = tmp_path / "i.db"
    env = {"CAIRN_CONFIG": str(config)}
    full = detectors.DETECTORS
    # a cairn whose detectors do not know GitHub tokens yet
    monkeypatch.setattr(
        detectors, "DETECTORS", tuple(d for d in full if d.kind != "github-token"))
    first = cairn_cmd("index", str(notes), str(chats), "--db", str(db), "--json", env=env)
    assert first.code == 0, first.stderr
    assert first.json()["added"] == 2
    assert _in_clear(db) == {"markdown", "chatgpt"}
    # the upgrade; no file changed
    monkeypatch.setattr(detectors, "DETECTORS", full)
    second = cairn_cmd("index", "--db", str(db), "--json", env=env)
    assert second.code == 0, second.stderr
    assert second.json()["changed"] == 2
    assert _in_clear(db) == set()
    # nothing changed since: nothing parsed again
    third = cairn_cmd("index", "--db", str(db), "--json", env=env)
    assert third.code == 0, third.stderr
    assert (third.json()["changed"], third.json()["unchanged"]) == (0, 2)


def test_the_run_records_the_hash_of_settings_and_detectors(
        roots: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes, chats, config = roots
    monkeypatch.setenv("CAIRN_EMBED", "none")
    cfg = load_config(db=tmp_path / "i.db", config_file=config)
    with Cairn(cfg) as c:
        run = c.index([notes, chats])
        assert run.config_hash == index_config_hash(cfg)
        again = c.index()
        assert (again.changed, again.unchanged) == (0, 2)
    full = detectors.DETECTORS
    monkeypatch.setattr(
        detectors, "DETECTORS", tuple(d for d in full if d.kind != "github-token"))
    assert index_config_hash(cfg) != run.config_hash
