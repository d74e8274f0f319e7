"""Any text is a valid query and is answered: lone surrogates, huge queries, thousands
of filters, random fuzz. How long they take is measured by ``bench/hostile_queries.py``
(``--check`` holds them to 5 s a query, 60 s for 600 fuzzed ones); here the suite's
timeout guards against one that never ends."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from cairn.app import Cairn
from cairn.search.query import MAX_FILTERS, MAX_QUERY_CHARS, MAX_TERMS, parse_query

BENCH = Path(__file__).resolve().parents[2] / "bench" / "hostile_queries.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hostile_queries", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("hostile_queries", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cairn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cairn]:
    folder = tmp_path_factory.mktemp("notes")
    for i in range(30):
        (folder / f"n{i}.md").write_text(
            f"---\ntags: [t{i % 5}]\n---\n# Note {i}\n\nx budget review {i} x x\n", "utf-8"
        )
    c = Cairn.open(db=folder / "i.db")
    c.index([folder])
    yield c
    c.close()


HOSTILE: dict[str, str] = _bench().HOSTILE


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_queries_are_answered(cairn: Cairn, mode: str, name: str) -> None:
    result = cairn.search(HOSTILE[name], mode=mode)
    assert result.hits is not None


def test_bounds_are_said_in_notes() -> None:
    q = parse_query("x" * (MAX_QUERY_CHARS + 10))
    assert any("first 1000 characters" in n for n in q.notes)
    q = parse_query(" ".join(f"w{i}" for i in range(MAX_TERMS + 5)))
    assert len(q.terms) == MAX_TERMS and any("words and phrases" in n for n in q.notes)
    q = parse_query(" ".join(f"tag:t{i}" for i in range(MAX_FILTERS + 5)))
    assert len(q.filters) == MAX_FILTERS and any("filters are used" in n for n in q.notes)
    assert "\ufffd" in parse_query("format:\ud800").text


def test_the_cli_takes_a_byte_that_is_not_utf8(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    src = Path(__file__).resolve().parents[2] / "src"
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text("# A\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(src), "CAIRN_EMBED": "none"}
    db = str(tmp_path / "i.db")
    subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", db, "index", str(tmp_path / "n")],
        env=env,
        check=True,
        capture_output=True,
    )
    res = subprocess.run(
        [
            os.fsencode(sys.executable),
            b"-m",
            b"cairn.interfaces.cli",
            b"--db",
            db.encode(),
            b"search",
            b"format:\xff",
            b"--json",
        ],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert b"Traceback" not in res.stderr


def test_fuzzed_queries_never_raise(cairn: Cairn) -> None:
    for query, mode in _bench().fuzz_queries(600):
        cairn.search(query, mode=mode)


def test_a_real_model_encodes_any_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "static")
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text("# A\n\nbudget review\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([tmp_path / "n"])
        for q in ("budget \ud800", "\udcff", '"x ' * 1667, "x" * 100_000):
            for mode in ("semantic", "hybrid"):
                c.search(q, mode=mode)
