"""``[index] max_file_mb`` limits what is read into memory as one piece: a note file,
or one conversation of a chat export. An export is streamed a conversation at a time,
so the export file itself may be larger than the limit; a conversation larger than it
is skipped without being held, and reported with the file, its place and the setting.
"""

from __future__ import annotations

import importlib.util
import io
import json
import tracemalloc
from pathlib import Path
from types import ModuleType

from cairn.app import Cairn
from cairn.formats.chats._json import BadEntry, TextBuffer

ROOT = Path(__file__).resolve().parents[2]


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", ROOT / "bench" / "gen_chats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config(tmp_path: Path, mb: float) -> Path:
    cfg = tmp_path / "cairn.toml"
    cfg.write_text(f"[index]\nmax_file_mb = {mb}\n", "utf-8")
    return cfg


def test_a_chat_export_larger_than_max_file_mb_is_indexed_but_a_note_is_not(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    export = _gen().write_export(folder / "conversations.json", 150, seed=4)
    assert export.stat().st_size > 2 * 1024 * 1024
    (folder / "big.md").write_bytes(b"# Big\n\n" + b"word " * 400_000)
    with Cairn.open(db=tmp_path / "i.db", config_file=_config(tmp_path, 1)) as c:
        run = c.index([folder], embed=False)
        assert c.stats().documents == 150
    assert [f.path for f in run.failures] == ["big.md"]
    assert "larger than the 1 MiB limit ([index] max_file_mb)" in run.failures[0].reason


def test_a_conversation_larger_than_max_file_mb_is_skipped_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    convs = list(_gen().conversations(12, seed=6))
    convs[4]["padding"] = "x" * (3 * 1024 * 1024)  # the fifth conversation: 3 MiB
    (folder / "conversations.json").write_text(json.dumps(convs), "utf-8")
    with Cairn.open(db=tmp_path / "i.db", config_file=_config(tmp_path, 1)) as c:
        run = c.index([folder], embed=False)
        assert c.stats().documents == 11
    assert not run.failures  # the file is indexed, in part: a warning names the rest
    (part,) = [w for w in run.warnings if w.message.startswith("partly indexed")]
    assert part.path == "conversations.json"
    assert part.message.startswith("partly indexed: conversation #5 (at character ")
    assert "larger than 1 MiB ([index] max_file_mb); skipped" in part.message
    # without a limit the same conversation is read
    with Cairn.open(db=tmp_path / "all.db", config_file=_config(tmp_path, 0)) as c:
        assert not c.index([folder], embed=False).failures
        assert c.stats().documents == 12


def test_an_entry_over_the_limit_is_skipped_without_being_held() -> None:
    """An entry of 24 MB of text full of escapes and brackets inside strings is skipped
    in a few times the limit, not in its size; the entries around it are read."""
    inner = 'y\\"z{[' * 4_000_000
    raw = ('[{"a": 1}, {"b": ["' + inner + '", {"c": "]"}]}, "' + inner + '", {"d": "[{"}]'
           ).encode()
    stream = io.BytesIO(raw)
    tracemalloc.start()
    try:
        buf = TextBuffer(stream, max_value=1024 * 1024)
        got = list(buf.array_items())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got[0] == {"a": 1} and got[3] == {"d": "[{"}
    assert [type(g) for g in got[1:3]] == [BadEntry, BadEntry]
    assert isinstance(got[1], BadEntry) and got[1].offset == len('[{"a": 1}, ')
    assert peak < len(raw) // 4, (peak, len(raw))  # one entry alone is len(raw) / 2
