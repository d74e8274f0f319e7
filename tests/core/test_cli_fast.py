"""The fast path of ``cairn search`` (no Typer, Rich or pydantic in the process): what
it loads, that it prints exactly what the Typer command prints, and which command
lines it leaves to Typer (``test_search_command_lines.py``: which command lines it reads)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.interfaces.cli._fast import parse
from cairn.interfaces.cli._plain import Printer

SAMPLE = Path(__file__).resolve().parents[2] / "sample"

FAST = "from cairn.interfaces.cli import main\nmain()\n"
TYPER = "from cairn.interfaces.cli._app import run\nrun()\n"
LOADED = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules))))\n"
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "FORCE_COLOR"))}
    # a hybrid search would leave a query daemon running after the tests (its own tests
    # are in tests/interfaces/test_query_daemon.py)
    env["CAIRN_DAEMON"] = "0"
    return env


def _run(
    code: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env or _env(),
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fast")
    shutil.copytree(SAMPLE, folder / "sample")
    path = folder / "index.db"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "cairn.interfaces.cli",
            "index",
            str(folder / "sample"),
            "--db",
            str(path),
            "--no-embed",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    assert json.loads(res.stdout)["added"] == 12
    return path


def test_a_keyword_search_loads_no_typer_numpy_parsers_or_graph(db: Path) -> None:
    res = _run(LOADED + FAST, "search", "induction", "hob", "--mode", "keyword", "--db", str(db))
    assert res.returncode == 0, res.stderr
    assert "Order the induction hob" in res.stdout
    loaded = res.stderr.rsplit("MODULES ", 1)[1].split()
    top = {m.split(".")[0] for m in loaded}
    heavy = {
        "typer",
        "click",
        "rich",
        "pydantic",
        "numpy",
        "onnxruntime",
        "tokenizers",
        "model2vec",
        "ruamel",
        "markdown_it",
        "fastapi",
        "mcp",
        "yaml",
        # nothing a keyword search needs: a thread pool (and logging), the user's
        # folders beyond plain XDG paths, a CSV writer
        "concurrent",
        "logging",
        "platformdirs",
        "csv",
    }
    assert not top & heavy, sorted(top & heavy)
    unneeded = [
        m
        for m in loaded
        if m.startswith(
            (
                "cairn.graph",
                "cairn.ingest",
                "cairn.export",
                "cairn.evaluation",
                "cairn.maintain",
                "cairn.formats.org",
                "cairn.formats.markdown",
                "cairn.formats.okf",
                "cairn.formats.chats",
                "cairn.formats.frontmatter",
                # vocabulary a keyword search never builds (cairn.model loads lazily)
                "cairn.model.graph",
                "cairn.model.views",
                "cairn.model.conversations",
                "cairn.model.reports",
                "cairn.model.reliability",
                "cairn.model.facets",
                "cairn.model.agenda",
            )
        )
        or m in ("hashlib", "difflib")  # nothing hashed, no key misspelt
    ]
    assert not unneeded, unneeded


@pytest.mark.parametrize(
    "args",
    [
        ["search", "induction", "hob"],
        ["search", "tag:home", "-tag:project", "--limit", "3"],
        ["search", "todo:open", "--json", "--limit=2"],
        ["search", "garden", "--mode", "keyword", "--alternates", "--no-expand"],
        ["search", "garden", "--expand", "--json"],
        ["search", "garden", "--explain", "--limit", "2"],
        ["search", "zzzqqqx"],
        ["search", "zzzqqqx", "--json"],
        ["search", "x", "--mode", "fuzzy"],
        ["search", "x", "--mode", "fuzzy", "--json"],
        ["search", "garden", "--sort", "title,priority", "--no-rerank", "--json"],
        ["search", "garden", "--files"],
        ["search", "garden", "--files", "--json"],
        ["search", "garden", "--format", "csv", "--fields", "title,path,line,tags"],
        ["search", "garden", "--format=vimgrep", "--limit", "3"],
        ["search", "garden", "--fields", "rank,title", "--json"],
        ["search", "garden", "--format", "json", "--limit", "2"],
        ["search", "garden", "--format", "yaml"],
        ["search", "garden", "--format", "yaml", "--json"],
        ["search", "garden", "--sort", "colour"],
    ],
)
def test_the_fast_path_prints_what_typer_prints(db: Path, args: list[str]) -> None:
    line = ["--db", str(db), *args]
    assert parse(line) is not None  # these run on the fast path
    fast, slow = _run(FAST, *line), _run(TYPER, *line)
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)

    def stable(text: str) -> str:  # the search's own time differs between runs
        if text.startswith("{"):
            data = json.loads(text)
            data.pop("took_ms", None)
            return json.dumps(data)
        return "\n".join(ln for ln in text.splitlines() if " ms" not in ln)

    assert stable(fast.stdout) == stable(slow.stdout)
    assert fast.stdout.strip() or fast.stderr.strip()


def test_errors_on_the_fast_path(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    res = _run(FAST, "search", "x", "--db", str(missing))
    assert res.returncode == 1 and "no index here yet" in res.stderr
    res = _run(FAST, "search", "x", "--db", str(missing), "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["type"] == "NotFound"
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all" * 100)
    res = _run(FAST, "search", "x", "--db", str(broken))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith("error:")


def test_styles_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    p = Printer()
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert p.paint("hob", "bold yellow") == "hob"  # captured: not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert p.paint("hob", "bold yellow") == "\x1b[1;33mhob\x1b[0m"  # as Rich writes it
    assert p.spans("an induction hob", ((3, 12),), "bold") == "an \x1b[1minduction\x1b[0m hob"
    monkeypatch.setenv("NO_COLOR", "1")
    assert p.paint("hob", "bold yellow") == "\x1b[1mhob\x1b[0m"
    # text from notes cannot restyle the terminal or move the cursor
    assert p.paint("a\x1b[31mb\rc\x07", "") == "a[31mbc"
