"""A large chat export is indexed in memory bounded by a conversation, not by the file:
detection and hashing read it in chunks, and the streaming reader reads it entry by
entry. Peak memory is measured in a fresh process (``ru_maxrss``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cairn.ingest.prepare import Job, prepare
from cairn.sources import SourceFile, content_hash

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "gen_chats.py"

_MEASURE = """
import resource, sys
from pathlib import Path
from cairn.formats.chats import parse_file
from cairn.ingest.prepare import Job, prepare
from cairn.sources import SourceFile

path = Path(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
item = prepare(Job(SourceFile(path, path.name, path.stat().st_size, 0.0), None, None, {}))
after_prepare = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
count = sum(1 for _ in parse_file(path, path.name))
after_parse = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(item.outcome, count, (after_prepare - base) * 1024, (after_parse - base) * 1024)
"""


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_60_mb_export_is_prepared_and_read_without_holding_the_file(tmp_path: Path) -> None:
    path = _gen().write_export(tmp_path / "conversations.json", 4000, seed=5)
    size = path.stat().st_size
    assert size > 55 * 1024 * 1024
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.split()
    assert out[:2] == ["export", "4000"]
    prepare_growth, parse_growth = int(out[2]), int(out[3])
    # the whole file held once would be `size`; a conversation is ~15 KB
    assert prepare_growth < size // 8, (prepare_growth, size)
    assert parse_growth < size // 4, (parse_growth, size)


def test_an_export_hashed_in_chunks_has_the_hash_of_its_bytes(tmp_path: Path) -> None:
    path = _gen().write_export(tmp_path / "conversations.json", 30, seed=2)
    item = prepare(Job(SourceFile(path, path.name, path.stat().st_size, 0.0), None, None, {}))
    assert item.outcome == "export"
    assert item.digest == content_hash(path.read_bytes())
    unchanged = prepare(
        Job(SourceFile(path, path.name, path.stat().st_size, 0.0), item.digest, None, {})
    )
    assert unchanged.outcome == "unchanged"


def test_a_text_note_is_still_read_whole_and_limited(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("# Title\n\n" + "word " * 5000, "utf-8")
    sf = SourceFile(note, "n.md", note.stat().st_size, 0.0)
    item = prepare(Job(sf, None, None, {}))
    assert item.outcome == "parsed"
    assert item.digest == content_hash(note.read_bytes())
    assert "word" in item.docs[0].units[-1].body
    refused = prepare(Job(sf, None, None, {}, max_bytes=1000))
    assert refused.outcome == "read-failed"
    assert refused.failure is not None and "larger than" in refused.failure.reason


def test_the_graph_step_holds_a_chat_message_without_its_per_message_fields(
    tmp_path: Path,
) -> None:
    """The graph step may hold every unit of the index at once (a first build): a chat
    message's role, time and keywords are not what the edge builders read, so they are
    not loaded, and a unit costs a few hundred bytes, not kilobytes."""
    import tracemalloc

    from cairn.app import Cairn
    from cairn.config import Config

    folder = tmp_path / "export"
    folder.mkdir()
    _gen().write_export(folder / "conversations.json", 200, seed=3)
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([folder], embed=False)
        stored = c.store.db.execute(
            "SELECT count(*) FROM units WHERE extra LIKE '%\"keywords\"%'"
        ).fetchone()[0]
        tracemalloc.start()
        try:
            docs, units = c.store.edges.graph_sources(None)
            held, _peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(docs) == 200 and len(units) > 2000
    assert stored > 2000  # the index itself keeps every field
    assert all(u.extra == {} for u in units)
    # with each message's fields parsed this was about 1.9 KB a unit
    assert held / len(units) < 600, (held, len(units))
