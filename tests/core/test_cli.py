"""The ``cairn`` command on the bundled sample, run in this process the way the console
script runs it (the ``cli`` fixture of ``tests/conftest.py``): exit statuses, stdout and
stderr, JSON documents."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample"

Cli = Callable[..., Any]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, cli: Cli) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    shutil.copytree(SAMPLE, folder / "sample")
    path = folder / "index.db"
    run = cli("index", str(folder / "sample"), "--json", env={"CAIRN_DB": str(path)}).json()
    assert run["seen"] == 12 and run["added"] == 12 and run["failed"] == 0
    return path


@pytest.fixture
def cairn(cli: Cli, db: Path) -> Cli:
    """``cairn ARGS`` on the sample's index (``CAIRN_DB``)."""
    def run(*args: str, check: bool = True) -> Any:
        return cli(*args, env={"CAIRN_DB": str(db)}, check=check)
    return run


@pytest.fixture
def as_json(cairn: Cli) -> Cli:
    """``cairn ARGS --json`` on the sample's index, its JSON document."""
    return lambda *args: cairn(*args, "--json").json()


def test_search_json_fields(as_json: Cli) -> None:
    out = as_json("search", "induction", "hob")
    hit = out["hits"][0]
    assert hit["title"] == "Order the induction hob"
    assert hit["todo"] == "TODO"
    assert hit["path"] == "projects/kitchen-renovation.org"
    assert hit["abs_path"].endswith("/sample/projects/kitchen-renovation.org")
    assert Path(hit["abs_path"]).is_file()
    lines = Path(hit["abs_path"]).read_text().splitlines()
    assert "Order the induction hob" in lines[hit["line_start"] - 1]
    assert hit["line_end"] >= hit["line_start"]
    marked = [hit["snippet"][a:b] for a, b in hit["highlights"]]
    assert marked == ["induction", "hob"]
    assert hit["outline_path"] == ["Order the induction hob"]
    assert set(hit["tags"]) == {"home", "project"}
    assert "Budget" in hit["siblings"]


def test_filters_and_cjk_from_the_command_line(as_json: Cli) -> None:
    titles = [h["title"] for h in as_json("search", "tag:garden todo:open")["hits"]]
    assert set(titles) == {"Plant tomatoes", "Build a trellis for the beans"}
    cjk = as_json("search", "清水寺")["hits"]
    assert cjk and cjk[0]["path"] == "reference/travel-japan.md"
    assert as_json("search", "priority:A")["hits"][0]["title"] == "Plant tomatoes"
    odd = as_json("search", '"unbalanced', "C++", "NEAR", "*")
    assert isinstance(odd["hits"], list)


def test_explain(as_json: Cli) -> None:
    hits = as_json("search", "compost", "--explain")["hits"]
    hit = hits[0]
    # the heading titled exactly "Compost" wins over BM25's first ("Composting guide")
    assert hit["title"] == "Compost" and hit["explain"]["summands"]["title_match"] > 0
    assert hits[1]["explain"]["keyword"]["rank"] == 1
    assert hit["explain"]["score"] == hit["score"] > 0
    assert '"compost"' in hit["explain"]["fts_query"]


def test_show_by_path_line_and_id(as_json: Cli) -> None:
    view = as_json("show", "projects/garden.org:15")
    assert view["kind"] == "unit"
    assert view["unit"]["title"] == "Plant tomatoes"
    assert view["unit"]["priority"] == "A"
    assert any(t["role"] == "scheduled" for t in view["unit"]["timestamps"])
    doc = as_json("show", "projects/garden.org")
    assert doc["document"]["title"] == "Garden"
    assert [u["title"] for u in doc["units"]][:3] == ["Garden", "Beds", "Plant tomatoes"]
    beds = as_json("show", "8a1f3c2e-4b5d-4e6f-9a0b-1c2d3e4f5a6b")
    assert beds["unit"]["title"] == "Beds"
    journal = {b["source_path"] for b in doc["backlinks"]}
    assert "journal/2026-03-14.org" in journal


def test_show_file_line_prints_the_siblings_the_json_holds(cairn: Cli, as_json: Cli) -> None:
    siblings = as_json("show", "projects/garden.org:15")["siblings"]
    assert siblings == ["Build a trellis for the beans", "Test the soil pH"]
    text = cairn("show", "projects/garden.org:15").stdout
    line = next(x for x in text.splitlines() if x.startswith("siblings:"))
    assert line == "siblings: Build a trellis for the beans · Test the soil pH"


def test_stats_and_roots(as_json: Cli) -> None:
    stats = as_json("stats")
    assert stats["documents"] == 12
    assert set(stats["formats"]) == {"org", "markdown", "text"}
    assert stats["last_run"]["added"] == 12
    roots = as_json("roots")
    assert len(roots) == 1 and roots[0]["path"].endswith("/sample")
    assert as_json("check") == {"ok": True, "problems": [], "repaired": []}


def test_errors_are_clear_and_exit_nonzero(cairn: Cli, tmp_path: Path) -> None:
    res = cairn("show", "no/such/file.org", check=False)
    assert res.code == 1
    assert "no document, unit or indexed file" in res.stderr
    res = cairn("index", str(tmp_path / "missing"), "--json", check=False)
    assert res.code == 2
    assert "no such file or folder" in json.loads(res.stdout)["error"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[search\n")
    res = cairn("--config", str(bad), "stats", check=False)
    assert res.code != 0 and "invalid TOML" in res.stderr


def test_help_teaches(cli: Cli) -> None:
    res = cli("--help")
    for word in ("index", "search", "show", "stats", "Quick start"):
        assert word in res.stdout
    res = cli("search", "--help")
    assert "tag:" in res.stdout and "--explain" in res.stdout


def test_db_before_the_command_beats_cairn_db(cli: Cli, tmp_path: Path) -> None:
    shutil.copytree(SAMPLE / "reference", tmp_path / "notes")
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    env_a = {"CAIRN_DB": str(a)}
    res = cli("--db", str(b), "index", str(tmp_path / "notes"), "--no-embed", "--json",
              env=env_a, check=False)
    assert res.code == 0, res.stderr
    assert b.exists() and not a.exists()
    stats = cli("--db", str(b), "stats", "--json", env=env_a).json()
    assert stats["db"] == str(b) and stats["documents"] == 6
    assert not a.exists()
    # --db after the command beats the one before it
    res = cli("--db", str(a), "stats", "--db", str(b), "--json", env=env_a)
    assert res.json()["db"] == str(b)


def test_show_through_a_symlinked_root_and_odd_refs_never_trace(
    cli: Cli, tmp_path: Path
) -> None:
    shutil.copytree(SAMPLE, tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    db = tmp_path / "i.db"
    assert cli("--db", str(db), "index", "link", "--no-embed", cwd=tmp_path).code == 0
    for ref in ("link/typo.md", "link/projects/garden.org:abc", "projects/garden.org:abc",
                str(tmp_path / "link" / "nope" / "x.org:3")):
        for extra in ((), ("--json",)):
            # a traceback would escape the in-process run and fail the test
            res = cli("--db", str(db), "show", ref, *extra, cwd=tmp_path, check=False)
            assert res.code == 1, (ref, res.stderr)
            assert "Traceback" not in res.stderr
            if extra:
                assert json.loads(res.stdout)["type"] == "NotFound"
    res = cli("--db", str(db), "show", "link/projects/garden.org:15", "--json", cwd=tmp_path)
    assert res.json()["unit"]["title"] == "Plant tomatoes"
    res = cli("--db", str(db), "show", "link/projects/garden.org", cwd=tmp_path)
    assert res.code == 0 and "Plant tomatoes" in res.stdout


def _claude_export(messages: list[tuple[str, str, str]]) -> str:
    return json.dumps([{
        "uuid": "c-1", "name": "Soup plan", "created_at": "2024-06-01T10:00:00Z",
        "updated_at": "2024-06-01T10:05:00Z",
        "chat_messages": [
            {"uuid": f"m-{i}", "sender": who, "text": text, "content": [],
             "created_at": at, "attachments": [], "files": []}
            for i, (who, at, text) in enumerate(messages)
        ],
    }])


def test_show_of_a_chat_gives_its_messages_in_the_exports_order(
    cli: Cli, tmp_path: Path
) -> None:
    """An official Claude export has no message tree: its list order is the thread's
    (the web page and the OKF export use it too); the times are not used to reorder."""
    (tmp_path / "chats").mkdir()
    (tmp_path / "chats" / "conversations.json").write_text(_claude_export([
        ("assistant", "2024-06-01T10:00:05Z", "Try a lentil soup with cumin."),
        ("human", "2024-06-01T10:00:00Z", "Give me a soup idea."),
        ("human", "2024-06-01T10:01:00Z", "And a bread to go with it?"),
    ]))
    db = tmp_path / "i.db"
    cli("--db", str(db), "index", str(tmp_path / "chats"), "--no-embed", check=False)
    ref = str(tmp_path / "chats" / "conversations.json")
    text = cli("--db", str(db), "show", ref, check=False).stdout
    order = [text.index(s) for s in ("lentil soup", "soup idea", "bread to go")]
    assert order == sorted(order), text
    view = cli("--db", str(db), "show", ref, "--json", check=False).json()
    bodies = [u["body"] for u in view["units"] if u["kind"] == "message"]
    assert bodies == ["Try a lentil soup with cumin.", "Give me a soup idea.",
                      "And a bread to go with it?"]


@pytest.mark.corpus
def test_show_marks_chat_alternates(cli: Cli, cases: Path, tmp_path: Path) -> None:
    src = cases / "030-chatgpt-active-branch-only" / "conversations.json"
    if not src.exists():
        pytest.skip("the shared corpus is not beside the clone")
    (tmp_path / "c").mkdir()
    shutil.copy(src, tmp_path / "c" / "conversations.json")
    db = tmp_path / "i.db"
    cli("--db", str(db), "index", str(tmp_path / "c"), "--no-embed", check=False)
    files = cli("--db", str(db), "show", str(tmp_path / "c/conversations.json"), "--json",
                check=False).json()
    docs = files["documents"] if files["kind"] == "file" else [files["document"]]
    bakery = next(d for d in docs if d["title"] == "Bakery slogan")
    text = cli("--db", str(db), "show", bakery["id"], check=False).stdout
    assert "(alternate)" in text and "quokka" in text.casefold()


def test_priority_planning_and_code_headings_are_shown(cairn: Cli, as_json: Cli) -> None:
    text = cairn("search", "tomatoes", "--mode", "keyword").stdout
    assert "[#A]" in text and "SCHEDULED: <" in text
    unit = cairn("show", "projects/garden.org:15").stdout
    assert "priority: A" in unit and "SCHEDULED: <" in unit
    doc = cairn("show", "projects/home-network.org").stdout
    assert "sh code block under Backups" in doc and "[#C]" in doc
    hit = as_json("search", "tomatoes", "--mode", "keyword")["hits"][0]
    assert hit["priority"] == "A" and hit["planning"][0]["role"] == "scheduled"


def test_document_view_units_have_body(as_json: Cli) -> None:
    doc = as_json("show", "projects/garden.org")
    assert all("body" in u for u in doc["units"])
    assert any("San Marzano" in u["body"] for u in doc["units"])


def test_index_reports_embedding_figures_in_words_and_json(cli: Cli, tmp_path: Path) -> None:
    from types import SimpleNamespace

    from cairn.interfaces.cli.index import embed_line

    report = SimpleNamespace(chunks_added=11, embedded=1, cached=10, seconds=0.25)
    assert embed_line(report).startswith("11 new chunks: 10 from cache, 1 embedded in ")
    one = SimpleNamespace(chunks_added=1, embedded=1, cached=0, seconds=0.1)
    assert embed_line(one).startswith("1 new chunk: 0 from cache, 1 embedded")
    shutil.copytree(SAMPLE / "reference", tmp_path / "notes")
    env = {"CAIRN_DB": str(tmp_path / "x.db")}
    run = cli("index", str(tmp_path / "notes"), "--json", env=env).json()
    e = run["embedding"]
    assert e["chunks_added"] > 0 and e["chunks_added"] == e["cached"] + e["embedded"]
    (tmp_path / "notes" / "extra.md").write_text("# Extra\n\nA new note on sourdough.\n")
    text = cli("index", env=env).stdout
    assert re.search(r"\d+ new chunks?: \d+ from cache, \d+ embedded in ", text), text


def test_roots_says_when_there_are_none(cli: Cli, tmp_path: Path) -> None:
    shutil.copytree(SAMPLE / "reference", tmp_path / "notes")
    env = {"CAIRN_DB": str(tmp_path / "i.db")}
    cli("index", str(tmp_path / "notes"), "--no-embed", env=env)
    cli("roots", "--remove", str(tmp_path / "notes"), env=env)
    res = cli("roots", env=env)
    assert "no source roots registered" in res.stdout and "cairn index" in res.stdout
    assert cli("roots", "--json", env=env).json() == []


def test_exclude_without_folders_is_refused_with_advice(cairn: Cli) -> None:
    res = cairn("index", "--exclude", "docs/", check=False)
    assert res.code == 2
    assert "--exclude" in res.stderr and "cairn index FOLDER" in res.stderr


def test_help_calls_hybrid_the_default(cli: Cli) -> None:
    main = cli("--help", check=False).stdout
    assert "BM25 keyword search" not in main and "hybrid" in main
    search = cli("search", "--help", check=False).stdout
    assert "hybrid" in search.split("Arguments")[0]


def test_show_returns_typed_views(db: Path) -> None:
    from cairn.app import Cairn
    from cairn.model import DocumentView, StoredUnit, UnitView

    with Cairn.open(db=db, create=False) as c:
        doc = c.show("projects/garden.org")
        assert isinstance(doc, DocumentView)
        assert all(isinstance(u, StoredUnit) for u in doc.units)
        assert doc.document.title == "Garden"
        assert "journal/2026-03-14.org" in {b.source_path for b in doc.backlinks}
        unit = c.show("projects/garden.org:15")
        assert isinstance(unit, UnitView) and unit.unit.priority == "A"
        assert unit.unit.planning and unit.unit.planning[0].role == "scheduled"


def test_the_cli_package_has_no_import_cycles() -> None:
    """One module per command group; none imports the package or forms a cycle."""
    import ast

    src = Path(__file__).resolve().parents[2] / "src"
    pkg = src / "cairn" / "interfaces"
    mods = {
        ".".join(p.relative_to(src).with_suffix("").parts).removesuffix(".__init__"): p
        for p in pkg.rglob("*.py")
    }
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods
                    else node.module
                    for a in node.names
                ]
            edges[name] |= {t for t in targets if t in mods and t != name}
    for name in mods:
        if name.startswith("cairn.interfaces.cli.") and not name.endswith("__main__"):
            assert "cairn.interfaces.cli" not in edges[name], f"{name} imports its package"
    seen: set[str] = set()

    def visit(m: str, stack: tuple[str, ...]) -> None:
        assert m not in stack, "import cycle: " + " → ".join((*stack, m))
        if m in seen:
            return
        for t in edges[m]:
            visit(t, (*stack, m))
        seen.add(m)

    for m in mods:
        visit(m, ())
    assert len([m for m in mods if m.startswith("cairn.interfaces.cli.")]) >= 7
