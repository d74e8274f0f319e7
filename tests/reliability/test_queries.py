"""Any text is a valid query, answered in bounded time (issue 11: lone surrogates,
huge queries, thousands of filters)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.search.query import MAX_FILTERS, MAX_QUERY_CHARS, MAX_TERMS, parse_query


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


HOSTILE = {
    "lone surrogate filter": "format:\ud800",
    "surrogate-escaped byte": "format:\udcff",
    "lone surrogate word": "budget \udfff",
    "1,000 chars of quotes": '"x ' * 334,
    "5,000 chars of quotes": '"x ' * 1667,
    "100,000 characters": "x" * 100_000,
    "989 filters": " ".join(f"tag:t{i}" for i in range(989)),
    "5,000 words": "budget " * 5000,
    "a 3,000-token phrase": '"' + "x " * 1500 + '"',
    "nested quotes": '"""' * 500,
    "control characters": "\x00\x01\x1b[31m budget",
    "1,000 open parentheses": "(" * 1000,
    "500 nested groups": "(budget " * 250 + ")" * 250,
    "500 alternatives": "(" + " OR ".join(f"w{i}" for i in range(400)) + ")",
}


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_queries_answer_quickly(cairn: Cairn, mode: str, name: str) -> None:
    t0 = time.perf_counter()
    result = cairn.search(HOSTILE[name], mode=mode)
    assert time.perf_counter() - t0 < 5.0
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
    rng = random.Random(11)
    alphabet = [
        '"',
        "-",
        ":",
        "tag",
        "x",
        " ",
        "(",
        ")",
        "*",
        "\\",
        "\ud800",
        "é",
        "の",
        "prop:",
        "before:",
        "path:",
        "NEAR",
        "OR",
        "AND",
        "^",
        "'",
        "\n",
        "\t",
    ]
    t0 = time.perf_counter()
    for i in range(600):
        q = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        cairn.search(q, mode=("keyword", "hybrid")[i % 2])
    assert time.perf_counter() - t0 < 60


def test_a_real_model_encodes_any_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "static")
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text("# A\n\nbudget review\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([tmp_path / "n"])
        for q in ("budget \ud800", "\udcff", '"x ' * 1667, "x" * 100_000):
            for mode in ("semantic", "hybrid"):
                c.search(q, mode=mode)
