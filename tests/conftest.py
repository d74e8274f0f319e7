"""Shared fixtures, the ``corpus`` marker and the test tiers.

Tests that read ``../shared`` (the real corpus and the cases) are marked ``corpus``; in a
clone without ``../shared`` beside it they are skipped with that reason.

Tiers: a bare ``pytest`` runs the fast tier, leaving out the tests marked with one of
:data:`SLOW_TIERS` (real server processes under faults, the whole shared corpus, a real
PostgreSQL, Chromium, large generated inputs). ``pytest --tier all`` (what
``scripts/test.sh`` and CI run), ``-m EXPR``, or naming test files or folders runs what
was asked for, every tier included.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

if TYPE_CHECKING:
    from _corpus_index import CorpusIndexes

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
CASES = SHARED / "cases"
HAVE_SHARED = CORPUS.is_dir() and CASES.is_dir()

# the helper modules beside this file (``_corpus_index``) importable by every test
sys.path.insert(0, str(Path(__file__).parent))


SLOW_TIERS = ("slow", "faults", "browser", "postgres", "corpus")
"""Markers of the tests a bare ``pytest`` leaves out (``--tier all`` runs them)."""
POSTGRES_FIXTURES = frozenset({"pg_url", "pg_server_url"})
"""Fixtures that start (or reach) a real PostgreSQL server: a test that uses one is in
the ``postgres`` tier whether or not its module says so."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--tier fast|all``."""
    parser.addoption(
        "--tier", choices=("fast", "all"), default=None,
        help="fast: leave out the tests marked " + ", ".join(SLOW_TIERS) + "; all: run "
             "every tier. Default: fast for a bare run, all when -m, test files or "
             "folders are given.")


def _tier(config: pytest.Config) -> str:
    """The tier asked for: ``--tier``, else ``all`` when the run names its tests (paths
    or ``-m``), else ``fast``."""
    asked: str | None = config.getoption("--tier")
    if asked is not None:
        return asked
    named = config.args_source == pytest.Config.ArgsSource.ARGS
    return "all" if named or config.getoption("markexpr") else "fast"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that need a PostgreSQL server ``postgres``; leave out the slower
    tiers from a fast run; skip ``corpus``-marked tests when ``../shared`` is missing."""
    for item in items:
        if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
    if _tier(config) == "fast":
        left_out = [i for i in items if any(m in i.keywords for m in SLOW_TIERS)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            gone = set(map(id, left_out))
            items[:] = [i for i in items if id(i) not in gone]
    if HAVE_SHARED:
        return
    skip = pytest.mark.skip(reason="../shared (corpus and cases) is not beside this clone")
    for item in items:
        if "corpus" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str:
    """Say which tier runs."""
    if _tier(config) == "fast":
        return ("tier: fast (leaves out tests marked " + ", ".join(SLOW_TIERS)
                + "; --tier all runs them)")
    return "tier: all"


@pytest.fixture(autouse=True, scope="session")
def _keyword_only() -> Iterator[None]:
    """Tests index without embeddings (``CAIRN_EMBED=none``) unless marked ``embed``:
    most tests are about parsing, keyword search and the graph, and embedding every
    test vault would only slow them down. Set for the whole session, so module-scoped
    fixtures see it too."""
    old = os.environ.get("CAIRN_EMBED")
    os.environ["CAIRN_EMBED"] = "none"
    # no test leaves a query daemon behind: only the daemon's own tests start one
    old_daemon = os.environ.get("CAIRN_DAEMON")
    os.environ["CAIRN_DAEMON"] = "0"
    yield
    if old_daemon is None:
        os.environ.pop("CAIRN_DAEMON", None)
    else:
        os.environ["CAIRN_DAEMON"] = old_daemon
    if old is None:
        os.environ.pop("CAIRN_EMBED", None)
    else:
        os.environ["CAIRN_EMBED"] = old


@pytest.fixture(autouse=True)
def _embed_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked ``embed`` run the shipped model through ``Cairn``."""
    if request.node.get_closest_marker("embed") is not None:
        monkeypatch.delenv("CAIRN_EMBED", raising=False)


@pytest.fixture(scope="session")
def corpus_indexes(tmp_path_factory: pytest.TempPathFactory) -> CorpusIndexes:
    """The session's indexes of the shared corpus, each built once
    (:class:`_corpus_index.CorpusIndexes`): ``.over(roots).copy(db)`` for an index of
    the corpus itself, ``.scratch(name, make).checkout(db)`` for one over a copy of the
    notes that a test may write to."""
    from _corpus_index import CorpusIndexes

    return CorpusIndexes(tmp_path_factory)


@pytest.fixture
def cases() -> Path:
    """Path to ``../shared/cases``."""
    return CASES


@pytest.fixture
def corpus() -> Path:
    """Path to ``../shared/corpus``."""
    return CORPUS


@dataclass(frozen=True)
class CliRun:
    """One ``cairn`` command line run in this process: its exit status and output."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """Standard output read as the one JSON document ``--json`` prints."""
        return json.loads(self.stdout)


def run_cli(*args: str, env: Mapping[str, str | None] | None = None,
            cwd: Path | None = None, check: bool = True) -> CliRun:
    """Run ``cairn ARGS`` in this process, as the console script does
    (:func:`cairn.interfaces.cli.main`: the fast path of a plain search, else Typer),
    with the streams and environment isolated by Typer's ``CliRunner``.

    The environment is a user's: every ``CAIRN_*`` variable of the test session is
    unset (``CAIRN_EMBED=none`` included, so an index run embeds; not ``CAIRN_DAEMON``:
    a search starts no query daemon), then ``env`` is
    applied (a ``None`` value unsets); ``COLUMNS=200`` keeps Rich from wrapping lines
    unless ``env`` says otherwise. ``cwd`` is the working
    folder during the run, restored afterwards.

    Raises:
        AssertionError: ``check`` is true and the command exited non-zero.
        Exception: whatever the command raised that the CLI did not turn into an exit
            status (a traceback a user would have seen).
    """
    from cairn.interfaces.cli import main

    unset: dict[str, str | None] = {k: None for k in os.environ
                                    if k.startswith("CAIRN_") and k != "CAIRN_DAEMON"}
    env = {**unset, "COLUMNS": "200", **(env or {})}
    runner = CliRunner()
    old_cwd, old_argv = Path.cwd(), sys.argv
    code = 0
    with runner.isolation(env=env) as (out, err, _):
        sys.argv = ["cairn", *args]
        if cwd is not None:
            os.chdir(cwd)
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = old_argv
            os.chdir(old_cwd)
            sys.stdout.flush()
            sys.stderr.flush()
        result = CliRun(code, out.getvalue().decode(), err.getvalue().decode())
    if check:
        assert code == 0, f"cairn {' '.join(args)} exited {code}: {result.stderr}"
    return result


@pytest.fixture(scope="session")
def cli() -> Callable[..., CliRun]:
    """:func:`run_cli`: the ``cairn`` command run in this process."""
    return run_cli


@pytest.fixture
def cairn_cmd(cli: Callable[..., CliRun]) -> Callable[..., Any]:
    """``cairn ARGS`` in this process, without embeddings, its exit status not checked
    (``env`` adds variables)."""
    def go(*args: str, env: dict[str, str] | None = None, **kw: Any) -> Any:
        env = {"CAIRN_EMBED": "none", "CAIRN_NO_WARM": "1", **(env or {})}
        return cli(*args, env=env, check=False, **kw)
    return go
