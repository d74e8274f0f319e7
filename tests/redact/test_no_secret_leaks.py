"""Planted secrets never leave cairn unmasked (``[redact] on_ingest = "mask"``): distinct
secrets and personal data are planted in notes (body and heading) and in chat titles
and messages of a small corpus copy, with a truncated export and a conversation
without a mapping so that warnings quote titles. Then the index is built, enriched
(the replaying server keeps every prompt), exported in every format and read through
every door — CLI, HTTP API, web pages, MCP tools — and every table row, the raw index
file with its ``-wal`` and ``-shm``, every export file, response, printed line, log line
and prompt is searched for each planted value: none may be found."""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from _chat_leaks import ApiServer, broken_exports
from enrich_replay import ReplayServer, replay_server
from enrich_vault import chatgpt_export
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app
from cairn.redact import find

pytestmark = pytest.mark.corpus
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"

# (kind, value, sentence carrying it); every value distinct
NOTE_SECRETS = [
    ("openai-key", "sk-proj-Q7wE9rT2yU4iO6pA8sD0fG3hJ5kL7zX9cV1bN3mQ", "OPENAI_API_KEY={v}"),
    ("aws-access-key", "AKIAQ4W7E2R9T5Y3U8I1", "aws_access_key_id = {v}"),
    ("stripe-key", "sk_live_9fK3mW7qZ2xL5vB8nR4tY6uP", "stripe.api_key = '{v}'"),
    ("password", "Vb7!kQ2zR9pL", "postgres://app:{v}@db.prod.internal:5432/main"),
    ("generic-secret", "Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi9OtA4", "secret: {v}"),
    ("phone", "+33 1 47 58 69 70", "call me on {v} tomorrow"),
    ("card-number", "4539 1488 0343 6467", "my card {v} exp 09/29"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkMSJ9.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9",
     "token {v}"),
]
CHAT_SECRETS = [
    ("github-token", "ghp_Kx9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd8Ef0Gh2", "export GITHUB_TOKEN={v}"),
    ("slack-token", "xoxb-284759302847-918273645019-Qw8Er7Ty6Ui5Op4As3Df2Gh1",
     "SLACK_BOT_TOKEN: {v}"),
    ("google-api-key", "AIzaSyB7q3Kx9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd", "?key={v}&q=maps"),
    ("password", "pl4nt3d!Pw", "my password is {v} for the router"),
    ("email", "marta.quell771@proton.me", "write to {v} please"),
    ("iban", "GB82 WEST 1234 5698 7654 32", "IBAN: {v}"),
    ("us-ssn", "536-22-1834", "SSN {v}"),
    ("bearer-token", "a8F3kL9mQ2xR7vT1nB5cZ0wY4", "Authorization: Bearer {v}"),
]
HEADING_SECRET = ("email", "olek.brzoza552@posteo.de", "# Access for {v}")
TITLE_SECRETS = [  # conversation titles: a good one, no mapping, the last before a cut
    ("openai-key", "sk-proj-Mn3Bv5Cx7Zl9Kj2Hg4Fd6Sa8Qw0Er1Ty3Ui5Op7A", "rotate {v} today"),
    ("email", "ilse.varga613@mailbox.org", "write to {v}"),
    ("github-token", "ghp_Pq8Rs6Tu4Vw2Xy0Za9Bc7De5Fg3Hi1Jk3Lm5", "deploy with {v}"),
]
ALL = [*NOTE_SECRETS, *CHAT_SECRETS, HEADING_SECRET, *TITLE_SECRETS]


def _needles(value: str) -> set[str]:
    """What a leak of ``value`` may look like: as written, without its spaces, and (for
    the raw file, where the keyword index keeps lower-cased words) each long word of it
    that holds a digit."""
    out = {value, value.replace(" ", "")}
    out |= {w.lower() for w in re.findall(r"[A-Za-z0-9]{8,}", value)
            if any(c.isdigit() for c in w)}
    return out


def _plant(root: Path) -> None:
    notes = root / "notes"
    shutil.copytree(CORPUS / "markdown" / "kepano-obsidian" / "References", notes)
    for p in notes.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    lines = [s.format(v=v) for _k, v, s in NOTE_SECRETS]
    (notes / "Ops access.md").write_text(
        HEADING_SECRET[2].format(v=HEADING_SECRET[1]) + "\n\nThe ops notes.\n\n"
        + "\n\n".join(lines) + "\n", encoding="utf-8")
    chats = root / "chats"
    title = TITLE_SECRETS[2][2].format(v=TITLE_SECRETS[2][1])
    texts = [s.format(v=v) for _k, v, s in CHAT_SECRETS]
    convs = chatgpt_export([
        ("k1", "Router setup", 1.70e9, ["How do I set up the router?", *texts[:4]]),
        ("k2", "Bank and mail", 1.71e9, ["Note these for the paperwork.", *texts[4:]]),
        ("k3", title, 1.72e9, ["Is the deploy ready?", "Yes, after the checks pass."]),
    ])
    chats.mkdir()
    (chats / "conversations.json").write_text(json.dumps(convs), encoding="utf-8")
    broken_exports(chats / "broken", key=TITLE_SECRETS[0][1], mail=TITLE_SECRETS[1][1])


def _cli(cfg: Path, *args: str) -> str:
    res = CliRunner().invoke(app, ["--config", str(cfg), *args])
    assert res.exit_code == 0, res.output
    return res.output


def _mcp(c: Cairn, docs: list[str]) -> list[str]:
    from mcp import Client

    from cairn.interfaces.mcp.server import build_server

    async def main() -> list[str]:
        got: list[str] = []
        async with Client(build_server(c)) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("search", {"query": q, "limit": 50}) for q in ("password", "key", "router")]
            calls += [("get", {"ref": d}) for d in docs]
            calls += [("recent", {"since": "3650d"}), ("stats", {}), ("list_roots", {}),
                      ("dream_report", {})]
            for name, args in calls:
                res = await client.call_tool(name, args)
                assert not res.is_error, (name, args, res.content)
                got.append(json.dumps(res.structured_content) + repr(res.content))
        return got

    return anyio.run(main)


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Every place a planted value could leak to, by name, with what it holds."""
    base = tmp_path_factory.mktemp("leaks")
    root = base / "vault"
    root.mkdir()
    _plant(root)
    places: dict[str, str] = {}
    with replay_server("openai") as server:
        cfg = base / "cairn.toml"
        cfg.write_text('[redact]\non_ingest = "mask"\n[enrich]\nprovider = "openai"\n'
                       f'url = "{server.url}"\nmodel = "replay-1"\ntimeout = 30\n',
                       encoding="utf-8")
        db = base / "i.db"
        d = ["--db", str(db)]
        places["cli index"] = _cli(cfg, "index", str(root), *d, "--no-embed")
        places["cli index --json"] = _cli(cfg, "index", str(root), *d, "--no-embed", "--json")
        places["cli enrich"] = _cli(cfg, "enrich", *d)
        places["cli enrich --json"] = _cli(cfg, "enrich", *d, "--json")
        places["cli stats"] = _cli(cfg, "stats", *d, "--json")
        for q in ("password", "key", "router", "proton", "IBAN"):
            places[f"cli search {q}"] = _cli(cfg, "search", q, *d, "--json", "--limit", "50")
        for kind in ("json", "okf", "obsidian"):
            dest = base / f"export-{kind}" / ("out.json" if kind == "json" else "")
            _cli(cfg, "export", kind, str(dest), *d)
            top = dest.parent if kind == "json" else dest
            for p in sorted(top.rglob("*")):
                if p.is_file():
                    places[f"export {kind}: {p.relative_to(top)}"] = p.read_text("utf-8")
        for fmt in ("json", "graphml", "cytoscape"):
            places[f"graph export {fmt}"] = _cli(cfg, "graph", "export", "--format", fmt, *d)
        places["prompts"] = _prompts(server)
        with Cairn(load_config(db=db, config_file=cfg, env={"CAIRN_EMBED": "none"})) as c:
            docs = [doc.id for r in c.store.roots() for p in c.store.file_paths(r.id)
                    for doc in c.store.documents_at(r.id, p)]
            units = [u.id for i in docs for u in c.store.units_of(i)]
            for i in docs:
                places[f"cli show {i}"] = _cli(cfg, "show", i, *d, "--json")
            places["cli enrich show"] = "".join(
                CliRunner().invoke(app, ["--config", str(cfg), "enrich", "show", i, *d,
                                         "--json"]).output for i in docs)
            places.update((f"mcp {n}", t) for n, t in enumerate(_mcp(c, docs)))
            log = logging.getLogger("cairn.http")
            lines: list[str] = []
            handler = logging.Handler()
            handler.emit = lambda rec: lines.append(rec.getMessage())  # type: ignore[method-assign]
            log.addHandler(handler)
            try:
                with ApiServer(c) as url, httpx.Client(base_url=url, timeout=30) as http:
                    for q in ("password", "key", "router", "proton"):
                        places[f"http search {q}"] = http.post(
                            "/v1/search", json={"query": q, "limit": 50}).text
                        places[f"web search {q}"] = http.get("/", params={"q": q}).text
                        places[f"web hits {q}"] = http.get("/ui/hits", params={"q": q}).text
                    for path in ("/v1/stats", "/v1/recent?since=3650d", "/v1/roots", "/status",
                                 "/conversations"):
                        r = http.get(path)
                        assert r.status_code == 200, (path, r.status_code)
                        places[f"http {path}"] = r.text
                    for i in docs:
                        places[f"http document {i}"] = http.get(f"/v1/documents/{i}").text
                        places[f"web note {i}"] = http.get(f"/note/{i}").text
                        places[f"web conversation {i}"] = http.get(f"/conversation/{i}").text
                        places[f"web graph {i}"] = http.get(
                            "/ui/graph.json", params={"node": i, "hops": 2}).text
                    for u in units:
                        places[f"http unit {u}"] = http.get(f"/v1/units/{u}").text
                    # while the server holds the index open: the raw file, -wal and -shm
                    places.update(_raw(db, "open"))
            finally:
                log.removeHandler(handler)
            places["http log"] = "\n".join(lines)
            places["tables"] = "\n".join(c.store.db.iterdump())
        places.update(_raw(db, "closed"))
    assert len(docs) >= 20 and len(units) > 80
    yield places


def _prompts(server: ReplayServer) -> str:
    assert len(server.bodies) >= 5  # the conversations were asked about
    return server.everything_received() + json.dumps(server.bodies)


def _raw(db: Path, when: str) -> dict[str, str]:
    out = {}
    for p in sorted(db.parent.glob(db.name + "*")):
        if p.is_file():
            out[f"raw {p.name} ({when})"] = p.read_bytes().decode("latin-1").lower()
    return out


def test_every_planted_value_is_a_finding_and_is_in_the_files(tmp_path: Path) -> None:
    _plant(tmp_path)
    text = "\n".join(p.read_text("utf-8") for p in tmp_path.rglob("*.*") if p.is_file())
    for kind, value, sentence in ALL:
        assert value in text
        assert [(f.kind, f.value) for f in find(sentence.format(v=value))] == [(kind, value)]
    assert len({v for _k, v, _s in ALL}) == len(ALL) == 20


def _leaks(places: dict[str, str], names: list[str]) -> list[str]:
    found = []
    for name in names:
        raw = name.startswith("raw ")  # lower-cased bytes: the keyword index's words
        for _k, value, _s in ALL:
            needles = _needles(value) if raw else {value, value.replace(" ", "")}
            hit = next((n for n in needles if (n.lower() if raw else n) in places[name]), None)
            if hit is not None:
                found.append(f"{name}: {hit}")
    return found


EXPORTED_NOTES = ("export okf", "export obsidian")


def test_no_planted_value_leaks_through_any_door(seen: dict[str, str]) -> None:
    names = [n for n in seen if not n.startswith(EXPORTED_NOTES)]
    assert len(names) > 150  # every door was read
    assert any(n.startswith("raw i.db-wal") for n in names)
    assert "[SECRET:" in seen["cli search password"] and "[SECRET:" in seen["prompts"]
    assert "no message mapping" in seen["cli index"] and "truncated JSON" in seen["cli index"]
    leaks = _leaks(seen, names)
    assert not leaks, "\n".join(leaks)


def test_no_planted_value_leaks_into_okf_or_obsidian_exports(seen: dict[str, str]) -> None:
    names = [n for n in seen if n.startswith(EXPORTED_NOTES)]
    assert len(names) > 20
    leaks = _leaks(seen, names)
    assert not leaks, "\n".join(leaks)
