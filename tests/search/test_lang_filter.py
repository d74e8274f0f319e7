"""``lang:LANGUAGE`` finds the units holding code in that language: a Markdown fenced
block (```` ``` ```` or ``~~~``), an Org ``#+begin_src`` block, a chat's code block; not
another language, nor a longer name that starts the same."""

from __future__ import annotations

import json
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config


def _index(tmp_path: Path) -> Cairn:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "fenced.md").write_text(
        "# Fenced\n\nSome text.\n\n```Python title=x\nprint('hi')\n```\n", "utf-8"
    )
    (notes / "tilde.md").write_text("# Tilde\n\n~~~python\nx = 1\n~~~", "utf-8")
    (notes / "rust.md").write_text("# Rust\n\n```rust\nfn main() {}\n```\n", "utf-8")
    (notes / "pythonic.md").write_text("# Pythonic\n\n```pythonic\nno\n```\n", "utf-8")
    (notes / "prose.md").write_text("# Prose\n\nI like python and ```python```.\n", "utf-8")
    (notes / "src.org").write_text(
        "* Org code\n#+BEGIN_SRC python :results output\nprint(2)\n#+END_SRC\n", "utf-8"
    )
    chat = {
        "uuid": "chat-1",
        "name": "Code chat",
        "created_at": "2025-01-01T10:00:00Z",
        "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "show me", "created_at":
             "2025-01-01T10:00:00Z"},
            {"uuid": "m2", "sender": "assistant", "created_at": "2025-01-01T10:01:00Z",
             "text": "Here:\n\n```python\nimport os\n```\n"},
        ],
    }
    (notes / "conversations.json").write_text(json.dumps([chat]), "utf-8")
    c = Cairn(Config(db_path=tmp_path / "i.db"))
    c.index([notes])
    return c


def _found(c: Cairn, query: str) -> set[tuple[str, str]]:
    hits = c.search(query, mode="keyword", limit=50).hits
    return {(Path(h.path).name, h.kind) for h in hits}


def test_lang_finds_fenced_org_and_chat_code_in_that_language(tmp_path: Path) -> None:
    with _index(tmp_path) as c:
        found = _found(c, "lang:python")
        files = {name for name, _ in found}
        assert files == {"fenced.md", "tilde.md", "src.org", "conversations.json"}
        assert ("conversations.json", "code") in found and ("src.org", "code") in found
        assert {n for n, _ in _found(c, "lang:rust")} == {"rust.md"}
        assert {n for n, _ in _found(c, "print lang:python")} == {"fenced.md", "src.org"}
        assert "rust.md" in {n for n, _ in _found(c, "fn -lang:python")}
        assert _found(c, "lang:cobol") == set()
