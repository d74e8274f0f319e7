"""The documentation site cannot drift from the code (in the manner of datasette's
documentation tests): every CLI command and option (``docs/reference/commands.md``),
every JSON field of the ``--json`` output on the bundled ``sample/``
(``docs/reference/json.md``) and every ``cairn.toml`` key
(``docs/reference/configuration.md``) is checked against the code, in both directions
where the code can say what exists; the generated CLI reference must be what the CLI
prints now; the site builds with ``mkdocs build --strict`` where MkDocs is installed;
the README stays short and its links lead somewhere."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import cairn.config
from cairn.app import Cairn
from cairn.interfaces.cli import app
from cairn.model import Diagnostic, FailedFile, Failure, Timestamp

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
JSON_PAGE = (DOCS / "reference" / "json.md").read_text(encoding="utf-8")
CONFIG_PAGE = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
SAMPLE = ROOT / "sample"


def _section(text: str, title: str, level: int = 2) -> str:
    """The part of ``text`` under the heading ``title`` up to the next heading of that
    level or above."""
    marks = "#" * level
    m = re.search(rf"^{marks} {re.escape(title)}\s*$", text, re.M)
    assert m, f"no section {marks} {title}"
    rest = text[m.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


# --- commands and options ----------------------------------------------------------------
def _commands() -> Iterator[tuple[str, Any]]:
    """``("cairn graph neighbors", click command)`` for the root and every leaf command."""
    root = typer.main.get_command(app)

    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        subs = getattr(cmd, "commands", None)
        if not subs or path == "cairn":
            yield path, cmd
        for name, sub in (subs or {}).items():
            yield from walk(sub, f"{path} {name}")

    yield from walk(root, "cairn")


def _option_names(cmd: Any) -> set[str]:
    return {
        o
        for p in cmd.params
        if p.param_type_name == "option"
        for o in (*p.opts, *p.secondary_opts)
    }


def _bullets() -> dict[str, str]:
    """``docs/reference/commands.md``: ``"cairn index" -> the bullet's text``."""
    out: dict[str, str] = {}
    for item in re.split(r"^- ", _section(COMMANDS, "Commands", level=1), flags=re.M)[1:]:
        head = re.match(r"`(cairn[^`]*)`", item)
        assert head, f"a Commands bullet does not start with `cairn …`: {item[:60]!r}"
        words = [w for w in head.group(1).split() if re.fullmatch(r"[a-z][a-z-]*", w)]
        out[" ".join(words)] = item
    return out


def _documented_options(text: str) -> set[str]:
    return set(re.findall(r"`(--?[A-Za-z][\w-]*)", text)) | set(
        re.findall(r"`/`(-[A-Za-z])`", text)
    )


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    commands = dict(_commands())
    bullets = _bullets()
    assert set(commands) - set(bullets) == set(), "commands missing from commands.md"
    assert set(bullets) - set(commands) == set(), "commands.md documents commands that do not exist"


@pytest.mark.parametrize("path", [p for p, _ in _commands()])
def test_every_option_of_a_command_is_documented(path: str) -> None:
    cmd = dict(_commands())[path]
    text = _bullets()[path]
    have, told = _option_names(cmd), _documented_options(text)
    assert have - told == set(), f"{path}: options missing from its bullet in commands.md"
    assert told - have == set(), f"{path}: commands.md names options it does not have"


@pytest.mark.parametrize("path", [p for p, _ in _commands()])
def test_every_command_and_option_has_help(path: str) -> None:
    cmd = dict(_commands())[path]
    assert path == "cairn" or (cmd.help or "").strip(), f"{path} has no help"
    for p in cmd.params:
        assert (getattr(p, "help", None) or "").strip(), f"{path} {p.name}: no help"


# --- JSON fields ---------------------------------------------------------------------------
def _tables(text: str) -> list[dict[str, str]]:
    """Each Markdown table of ``text``: ``field -> its row`` (a row may name several
    fields in its first column)."""
    tables: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        first = line.split("|")[1]
        if first.strip() in ("field", "---"):
            if current is None:
                current = {}
                tables.append(current)
            continue
        assert current is not None
        for name in re.findall(r"`([\w@]+)`", first):
            current[name] = line
    return tables


def _json_section(title: str) -> list[dict[str, str]]:
    return _tables(_section(JSON_PAGE, title))


def _literals(text: str) -> list[set[str]]:
    """The key sets of JSON object literals written as ``{"a", "b"}`` in prose
    (``"kind": "unit"`` counts as the key ``kind``)."""
    out = []
    for body in re.findall(r"`\{([^`]*)\}`", text.replace("\n", " ")):
        body = re.sub(r'(".*?")\s*:\s*"[^"]*"', r"\1", body)
        out.append(set(re.findall(r'"(\w+)"', body)))
    return out


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _mentioned(row: str) -> set[str]:
    return set(re.findall(r"`(\w+)`", row))


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ``--json`` output of each command on a copy of ``sample/`` (plus a chat
    export of two conversations, for the file view)."""
    folder = tmp_path_factory.mktemp("docs")
    shutil.copytree(SAMPLE, folder / "sample")
    chats = folder / "chats"
    chats.mkdir()
    (chats / "conversations.json").write_text(json.dumps([_claude("c-1"), _claude("c-2")]))
    db = str(folder / "i.db")
    runner = CliRunner()

    def run(*args: str) -> Any:
        res = runner.invoke(app, ["--db", db, *args, "--json"])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)

    data = {"index": run("index", str(folder / "sample"))}
    run("index", str(chats), "--no-embed")
    data["search"] = run("search", "compost")
    data["show document"] = run("show", str(folder / "sample/projects/garden.org"))
    data["show unit"] = run("show", str(folder / "sample/projects/garden.org:15"))
    data["show file"] = run("show", str(chats / "conversations.json"))
    data["stats"] = run("stats")
    data["roots"] = run("roots")
    data["check"] = run("check")
    data["validate"] = run("validate")
    return data


def _claude(cid: str) -> dict[str, Any]:
    msg = {"sender": "human", "text": f"hello {cid}", "content": [], "attachments": []}
    return {
        "uuid": cid,
        "name": f"Chat {cid}",
        "created_at": "2024-06-01T10:00:00Z",
        "updated_at": "2024-06-01T10:00:00Z",
        "chat_messages": [{**msg, "uuid": f"{cid}-m", "created_at": "2024-06-01T10:00:00Z"}],
    }


def test_search_json_fields(out: dict[str, Any]) -> None:
    top, hit = _json_section("`cairn search --json`")
    assert set(top) == set(out["search"])
    assert out["search"]["hits"], "the sample finds compost"
    assert set(hit) == set(out["search"]["hits"][0])
    assert _fields(Timestamp) <= _mentioned(_json_section("`cairn show --json`")[2]["timestamps"])


def test_index_json_fields(out: dict[str, Any]) -> None:
    run, graph, embedding = _json_section("`cairn index --json`")
    assert set(run) == set(out["index"])
    assert out["index"]["embedding"] is not None and out["index"]["graph"] is not None
    assert set(graph) == set(out["index"]["graph"])
    assert set(embedding) == set(out["index"]["embedding"])
    assert _fields(Failure) <= _mentioned(run["failures"])
    assert _fields(Diagnostic) <= _mentioned(run["warnings"])


def test_show_json_fields(out: dict[str, Any]) -> None:
    view, document, unit, link, backlink = _json_section("`cairn show --json`")
    doc = out["show document"]
    assert set(view) == set(doc)
    assert set(document) == set(doc["document"])
    assert set(unit) == set(doc["units"][0]), "document-view units carry every unit field"
    assert set(unit) == set(out["show unit"]["unit"])
    assert doc["links"] and doc["backlinks"]
    assert set(link) == set(doc["links"][0])
    assert set(backlink) == set(doc["backlinks"][0])
    assert _fields(Diagnostic) <= _mentioned(document["warnings"])
    prose = _literals(_section(JSON_PAGE, "`cairn show --json`"))
    for key in ("show document", "show unit", "show file"):
        assert set(out[key]) in prose, f"{key}: {sorted(out[key])} not in json.md"


def test_stats_roots_check_validate_json_fields(out: dict[str, Any]) -> None:
    (stats,) = _json_section("`cairn stats --json`")
    assert set(stats) == set(out["stats"])
    assert _fields(FailedFile) <= _mentioned(stats["failed_files"])
    assert _fields(Diagnostic) | {"root"} <= _mentioned(stats["warnings"])
    assert set(out["stats"]["last_run"]) | {"embedding"} == set(out["index"])
    prose = _literals(_section(JSON_PAGE, "`cairn roots --json`, `cairn check --json`, "
                               "`cairn validate --json`"))
    assert set(out["roots"][0]) in prose
    assert set(out["check"]) in prose
    assert set(out["validate"]) in prose
    assert {"path", "line", "severity", "message"} in prose


# --- cairn.toml ----------------------------------------------------------------------------
def _config_block() -> str:
    block = re.search(r"```toml\n(.*?)```", CONFIG_PAGE, re.S)
    assert block, "docs/reference/configuration.md has no ```toml block"
    return block.group(1)


def _documented_toml() -> dict[str, Any]:
    return tomllib.loads(_config_block())


def test_the_documented_configuration_is_accepted(tmp_path: Path) -> None:
    data = _documented_toml()
    text = _config_block()
    conf = tmp_path / "cairn.toml"
    conf.write_text(text)
    with Cairn.open(db=tmp_path / "i.db", config_file=conf) as c:
        assert c.config.search.limit == data["search"]["limit"]
        assert c.config.org.inherited_property_keys == tuple(
            data["org"]["inherited_property_keys"]
        )


def test_every_configuration_key_is_documented() -> None:
    """Both directions, once ``cairn.config`` names the keys it reads (``KEYS``:
    section -> keys): every key the configuration page's example shows is read, and
    every key read is in the example or named on that page (`` `key` `` or ``key =``)."""
    known = getattr(cairn.config, "KEYS", None)
    if not isinstance(known, Mapping):
        pytest.skip("TODO(issue 10): cairn.config does not expose KEYS yet")
    data = _documented_toml()
    told = {(s, k) for s, table in data.items() for k in table}
    have = {(s, k) for s, keys in known.items() for k in keys}
    assert told - have == set(), "configuration.md shows keys cairn.config does not read"
    missing = {s for s, _ in have} - set(data)
    assert missing == set(), f"configuration.md shows no [{'], ['.join(sorted(missing))}]"
    unnamed = {
        (s, k) for s, k in have - told
        if f"`{k}`" not in CONFIG_PAGE and f"{k} =" not in CONFIG_PAGE
    }
    assert unnamed == set(), "cairn.toml keys configuration.md never names"


# --- the generated CLI reference, the site, the README ------------------------------------
def test_the_cli_reference_is_what_the_cli_prints() -> None:
    """``docs/reference/cli.md`` is generated from the command tree: a command or option
    added, removed or re-described without writing the page again fails here."""
    from cairn.interfaces.cli.reference import render

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert page == render(app), (
        "docs/reference/cli.md is stale: python -m cairn.interfaces.cli.reference "
        "> docs/reference/cli.md"
    )


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the serve extra is not "
                    "installed (pip install -e '.[serve]')")
def test_the_mcp_reference_is_what_the_server_lists() -> None:
    """``docs/reference/mcp.md`` is generated from the tools a client is offered: a tool
    or parameter added, removed or re-described without writing the page again fails."""
    from cairn.interfaces.mcp.reference import render as render_mcp

    page = (DOCS / "reference" / "mcp.md").read_text(encoding="utf-8")
    assert page == render_mcp(), (
        "docs/reference/mcp.md is stale: python -m cairn.interfaces.mcp.reference "
        "> docs/reference/mcp.md"
    )


@pytest.mark.skipif(importlib.util.find_spec("fastapi") is None, reason="the serve extra is "
                    "not installed (pip install -e '.[serve]')")
def test_the_http_reference_is_what_the_server_documents() -> None:
    """``docs/reference/http.md`` is generated from the server's ``/openapi.json``: a
    route or parameter added, removed or re-described without writing the page again
    fails."""
    from cairn.interfaces.api.reference import render as render_http

    page = (DOCS / "reference" / "http.md").read_text(encoding="utf-8")
    assert page == render_http(), (
        "docs/reference/http.md is stale: python -m cairn.interfaces.api.reference "
        "> docs/reference/http.md"
    )


def test_the_generated_reference_names_every_command_and_option() -> None:
    from cairn.interfaces.cli.reference import render

    page = render(app)
    for path, cmd in _commands():
        section = _section(page, f"`{path}`")
        assert _option_names(cmd) - {"--help"} <= set(re.findall(r"--?[\w-]+", section)), path


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="MkDocs is not installed "
                    "(pip install -e '.[docs]')")
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, anchor or nav entry fails the build."""
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    assert len(README.encode("utf-8")) <= 15 * 1024, "README.md is over 15 KB: move it to docs/"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if not re.match(r"[a-z]+:", target):
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash scripts/test.sh" in ci
    assert "bash scripts/test.sh" in README and "bash scripts/demo.sh" in README


def _command_lines(text: str) -> Iterator[str]:
    """Every ``cairn …`` command in the shell blocks (```sh, ```console, plain ```) of
    ``text``, one per command (``a && b`` gives two), a ``$ `` prompt dropped."""
    for block in re.findall(r"^```(?:sh|console|)\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            for part in re.split(r"&&|\|", line.removeprefix("$ ")):
                if part.strip().startswith("cairn "):
                    yield part.strip()


def _check_command_line(line: str, commands: dict[str, Any]) -> str | None:
    """Why ``line`` is not a command line the CLI accepts (``commands``: every path,
    groups included), or None when it is."""
    import shlex

    words = shlex.split(line, comments=True)
    path, rest = "cairn", words[1:]
    while rest[:1] in (["--db"], ["--config"]):  # the root's options before the command
        rest = rest[2:]
    while rest and f"{path} {rest[0]}" in commands:
        path, rest = f"{path} {rest[0]}", rest[1:]
    have = _option_names(commands[path]) | {"--help"}
    for w in rest:
        if w.startswith(">"):
            break
        name = w.split("=", 1)[0]
        if re.fullmatch(r"--?[A-Za-z][\w-]*", name) and name not in have:
            return f"{line!r}: {path} has no option {name}"
    return None


def test_every_command_the_readme_and_the_site_show_exists() -> None:
    """Each ``cairn …`` line in a shell block of the README or a docs page (the generated
    CLI reference aside) names a real command and only options it has."""
    from cairn.interfaces.cli.reference import commands as all_commands

    commands = dict(all_commands(typer.main.get_command(app)))
    pages = {"README.md": README} | {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in DOCS.rglob("*.md")
        if p.name != "cli.md"
    }
    bad = [
        f"{name}: {why}"
        for name, text in pages.items()
        for line in _command_lines(text)
        if (why := _check_command_line(line, commands))
    ]
    assert bad == []
