"""The bench generator's export (bench/gen_chats.py) round-trips through the importer,
plain and zipped, with counts taken from the generated JSON itself."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from cairn.formats.chats import parse_file
from cairn.model import Document

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gen_chats.py"


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_chats", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("zipped", [False, True])
def test_generated_export_round_trips(tmp_path: Path, zipped: bool) -> None:
    gen = _gen()
    out = gen.write_export(tmp_path / ("x.zip" if zipped else "x.json"), 40, seed=3, zipped=zipped)
    if zipped:
        with zipfile.ZipFile(out) as zf:
            data = json.loads(zf.read("conversations.json"))
    else:
        data = json.loads(out.read_text())
    docs = [d for d in parse_file(out, out.name) if isinstance(d, Document)]
    assert [d.key for d in docs] == [c["id"] for c in data]
    for conv, doc in zip(data, docs, strict=True):
        mapping = conv["mapping"]
        # canonical: walk up from current_node; the generator's only hidden node is the
        # system message (its text is empty)
        path, node = [], conv["current_node"]
        while node is not None:
            path.append(node)
            node = mapping[node]["parent"]
        visible = [
            n
            for n in path
            if (mapping[n]["message"] or {}).get("author", {}).get("role") in ("user", "assistant")
        ]
        on_path = set(path)
        dead_ends = [n for n in mapping if n not in on_path]
        msgs = [u for u in doc.units if u.kind == "message"]
        assert sum(not u.extra["alternate"] for u in msgs) == len(visible)
        assert sum(u.extra["alternate"] for u in msgs) == len(dead_ends)
        fences = sum(
            mapping[n]["message"]["content"]["parts"][0].count("```python")
            for n in mapping
            if mapping[n]["message"]
        )
        assert sum(u.kind == "code" for u in doc.units) == fences


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_tiny_read_chunks_give_the_same_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Entries, keys, numbers and multi-byte characters split across reads."""
    gen = _gen()
    out = gen.write_export(tmp_path / "x.json", 12, seed=5)
    text = out.read_text(encoding="utf-8")
    # wrap in an object with other keys around the streamed array, add non-ASCII text
    wrapped = '{"version": 12345, "conversations": ' + text.strip() + ', "extra": [1.5e3, "é"]}'
    wrapped = wrapped.replace('"title": "', '"title": "Ünïcødé ', 3)
    path = tmp_path / "wrapped.json"
    path.write_text(wrapped, encoding="utf-8")
    expected = [d for d in parse_file(path, "w") if isinstance(d, Document)]
    from cairn.formats.chats import _json

    monkeypatch.setattr(_json, "CHUNK", chunk)
    got = list(parse_file(path, "w"))
    assert all(isinstance(d, Document) for d in got)
    assert got == expected
    assert len(got) == 12 and got[0].title.startswith("Ünïcødé ")
