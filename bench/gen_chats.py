"""Write a synthetic ChatGPT export (``conversations.json``, optionally zipped).

Each conversation has the shape of a real ``conversations.json`` entry (CHAT-FORMATS.md
"ChatGPT"): a ``mapping`` tree with a null-message root, a hidden system message,
alternating user/assistant turns with float ``create_time`` seconds, some assistant
answers holding fenced code blocks, and some regenerated answers (a node with two
children, ``current_node`` on the second branch). Text is drawn from a pseudo-word
vocabulary so it compresses like prose, not like a repeated string.

The file is written conversation by conversation, so memory stays small for any N.

Usage::

    python bench/gen_chats.py OUT.json -n 10000 [--zip] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_SYLLABLE_TEXT = "ka lo mi ne su ta ri vo pe da go fi ru zen bar tel mor quin sal dov"
_SYLLABLES = _SYLLABLE_TEXT.split()


def _uid(rng: random.Random) -> str:
    """A UUID drawn from ``rng``: the same seed writes the same export, byte for byte."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words = {"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(size)}
    return sorted(words)


def _sentence(rng: random.Random, vocab: list[str], n: int) -> str:
    words = [rng.choice(vocab) for _ in range(n)]
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])


def _paragraphs(rng: random.Random, vocab: list[str], count: int) -> str:
    return "\n\n".join(
        " ".join(_sentence(rng, vocab, rng.randint(6, 18)) for _ in range(rng.randint(2, 5)))
        for _ in range(count)
    )


def _code(rng: random.Random, vocab: list[str]) -> str:
    name = rng.choice(vocab)
    lines = [f"def {name}(x):"]
    for _ in range(rng.randint(2, 8)):
        lines.append(f"    x = x + len('{rng.choice(vocab)}')")
    lines.append("    return x")
    return "```python\n" + "\n".join(lines) + "\n```"


def _message(
    mid: str, role: str, text: str, t: float, model: str | None, hidden: bool = False
) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if model:
        metadata["model_slug"] = model
    if hidden:
        metadata["is_visually_hidden_from_conversation"] = True
    return {
        "id": mid,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": None if hidden else t,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": role == "assistant" or None,
        "weight": 0.0 if hidden else 1.0,
        "metadata": metadata,
        "recipient": "all",
        "channel": None,
    }


def conversation(rng: random.Random, vocab: list[str], index: int) -> dict[str, Any]:
    """One synthetic conversation object (see the module docstring)."""
    cid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    model = rng.choice(["gpt-4o", "gpt-4", "o3", "gpt-5-thinking"])
    t = 1_650_000_000.0 + index * 3600.0 + rng.random() * 100
    start = t
    mapping: dict[str, dict[str, Any]] = {
        "client-created-root": {
            "id": "client-created-root",
            "message": None,
            "parent": None,
            "children": [],
        }
    }

    def add(parent: str, msg: dict[str, Any]) -> str:
        nid = msg["id"]
        mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        mapping[parent]["children"].append(nid)
        return nid

    last = add(
        "client-created-root",
        _message(_uid(rng), "system", "", t, None, hidden=True),
    )
    for _turn in range(rng.randint(2, 10)):
        t += rng.uniform(5, 120)
        question = _sentence(rng, vocab, rng.randint(5, 20))
        last = add(last, _message(_uid(rng), "user", question, t, None))
        if rng.random() < 0.15:  # a regenerated answer: the first try is a dead end
            t += rng.uniform(2, 30)
            add(
                last, _message(_uid(rng), "assistant", _paragraphs(rng, vocab, 1), t, model)
            )
        t += rng.uniform(2, 60)
        answer = _paragraphs(rng, vocab, rng.randint(1, 4))
        if rng.random() < 0.3:
            answer += "\n\n" + _code(rng, vocab)
        last = add(last, _message(_uid(rng), "assistant", answer, t, model))
    title = " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 5))).title()
    return {
        "title": title,
        "create_time": start,
        "update_time": t,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": last,
        "plugin_ids": None,
        "conversation_id": cid,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": model,
        "id": cid,
    }


def conversations(n: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """``n`` synthetic conversations, deterministic for a given ``seed``."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    for i in range(n):
        yield conversation(rng, vocab, i)


def write_export(
    out: Path, n: int, seed: int = 7, zipped: bool = False, retitle: int | None = None
) -> Path:
    """Write ``n`` conversations to ``out`` (``conversations.json`` inside a zip when
    ``zipped``); returns ``out``. ``retitle``: the index of one conversation whose title
    is changed (the same export, one conversation edited)."""

    def _write(fh: Any) -> None:
        fh.write(b"[")
        for i, conv in enumerate(conversations(n, seed)):
            if i == retitle:
                conv["title"] = "A title changed by the benchmark"
            if i:
                fh.write(b",\n")
            fh.write(json.dumps(conv, ensure_ascii=False).encode("utf-8"))
        fh.write(b"]\n")

    if zipped:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            with zf.open("conversations.json", "w", force_zip64=True) as fh:
                _write(fh)
            zf.writestr("user.json", "{}")
    else:
        with out.open("wb") as fh:
            _write(fh)
    return out


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("-n", type=int, default=10_000, help="number of conversations")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--zip", action="store_true", help="write a zip holding conversations.json")
    args = ap.parse_args()
    path = write_export(args.out, args.n, args.seed, args.zip)
    print(f"wrote {args.n} conversations to {path} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
