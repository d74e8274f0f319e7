"""The enrichment tests' vault: a chat export with three conversations (one holding a
planted GitHub token), a note with the user's tags, and a ``cairn.toml`` pointing at a
replaying server (:mod:`enrich_replay`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SECRET = "ghp_" + "Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi"

CONVERSATIONS = [
    ("c1", "Deploy configuration", 1.70e9, [
        "How should I keep the deploy configuration for the compost sensor service?",
        "Keep it in one file under version control and restart the service after a change.",
        f"Done. The nightly job still uses GITHUB_TOKEN={SECRET}; does it need its own?",
    ]),
    ("c2", "Sensor calibration", 1.71e9, [
        "The compost sensor reads two degrees high after the firmware update.",
        "Calibrate against a reference thermometer and store the offset in the config file.",
        "The offset fixed it; the readings match now.",
    ]),
    ("c3", "Garden planning", 1.72e9, [
        "Which beds should get the finished compost this spring?",
        "Put it on the tomato beds first; they feed heavily.",
    ]),
]


def chatgpt_export(convs: list[tuple[str, str, float, list[str]]]) -> list[dict[str, Any]]:
    """A ChatGPT ``conversations.json`` of linear conversations (alternating roles)."""
    out = []
    for cid, title, t, texts in convs:
        mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "children": [],
                                            "message": None}}
        prev = "root"
        for i, text in enumerate(texts):
            nid = f"{cid}-m{i}"
            mapping[nid] = {
                "id": nid, "parent": prev, "children": [],
                "message": {
                    "id": nid, "author": {"role": "user" if i % 2 == 0 else "assistant"},
                    "create_time": t + 60 * i,
                    "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully", "recipient": "all", "metadata": {},
                },
            }
            mapping[prev]["children"] = [nid]
            prev = nid
        out.append({"id": cid, "conversation_id": cid, "title": title, "create_time": t,
                    "update_time": t + 600, "current_node": prev, "mapping": mapping})
    return out


def make_vault(base: Path, server_url: str, extra: str = "",
               provider: str = "openai", timeout: float = 1.0) -> tuple[Path, Path, Path]:
    """``(chats folder, index file, cairn.toml)``; masking on ingest is off, so only
    the enrichment's own redaction stands between the token and the server; ``extra``
    is appended to the ``[enrich]`` table (keys not already set there)."""
    chats = base / "chats"
    chats.mkdir(parents=True)
    (chats / "conversations.json").write_text(json.dumps(chatgpt_export(CONVERSATIONS)),
                                              encoding="utf-8")
    notes = base / "notes"
    notes.mkdir()
    (notes / "ops.md").write_text("---\ntags: [configuration, garden]\n---\n# Ops\n\nNotes.\n",
                                  encoding="utf-8")
    cfg = base / "cairn.toml"
    cfg.write_text(
        '[redact]\non_ingest = "off"\n'
        f'[enrich]\nprovider = "{provider}"\nurl = "{server_url}"\nmodel = "replay-1"\n'
        f"timeout = {timeout}\nretries = 2\nretry_after_max = 5\n"
        'tag_aliases = { ops = "operations" }\n' + extra,
        encoding="utf-8",
    )
    return chats, base / "i.db", cfg
