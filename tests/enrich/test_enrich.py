"""``cairn enrich`` end to end against a real HTTP server on loopback that replays
hand-written replies (:mod:`enrich_replay`): the cache (a second run makes no request),
redaction before sending, bad replies retried once then skipped, timeouts and rate
limits, checkpoints, a re-index keeping the insights, and the Anthropic API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from enrich_replay import REPLIES, ReplayServer, replay_server
from enrich_vault import SECRET, make_vault
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.cli import app
from cairn.model.serialize import to_data


def _open(db: Path, cfg: Path, env: dict[str, str] | None = None) -> Cairn:
    return Cairn(load_config(db=db, config_file=cfg, env={"CAIRN_EMBED": "none", **(env or {})}))


def _indexed(tmp_path: Path, server: ReplayServer, extra: str = "") -> tuple[Path, Path, Path]:
    chats, db, cfg = make_vault(tmp_path, server.url, extra)
    with _open(db, cfg) as c:
        run = c.index([chats, chats.parent / "notes"])
        assert run.added == 2 and not run.failures  # files
    return chats, db, cfg


def test_not_configured_says_so_and_changes_nothing(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("", encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db, config_file=cfg, env={"CAIRN_EMBED": "none"})) as c:
        c.index([notes])
    before = db.read_bytes()
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "not configured" in res.output and "nothing was changed" in res.output
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db), "--json"])
    assert json.loads(res.stdout)["configured"] is False
    assert db.read_bytes() == before


def test_enrich_stores_searchable_insights_and_a_second_run_asks_nothing(
    tmp_path: Path, server: ReplayServer
) -> None:
    _, db, cfg = _indexed(tmp_path, server)
    with _open(db, cfg) as c:
        rep = c.enrich.run()
        assert rep.configured and rep.conversations == 3
        assert rep.requests == 3 and rep.answered == 3 and rep.cached == 0 and not rep.skipped
        assert rep.enriched == 3 and rep.insights == 9
        assert rep.input_tokens > 0 and rep.output_tokens > 0
        # insights are units of their own, found by search, citing their messages
        hits = c.search("version control", mode="keyword", limit=20).hits
        kinds = {h.kind for h in hits}
        assert "insight" in kinds, [(h.kind, h.title) for h in hits]
        deploy = next(d for d in c.store.documents_by_format(["chatgpt"])
                      if d.title == "Deploy configuration")
        shown = c.enrich.show(deploy.id)
        assert shown.title == "Deploy configuration"
        assert len(shown.enrichment.insights) == 3
        msgs = [m for i in shown.enrichment.insights for m in i.messages]
        assert msgs and all(c.store.unit(m) is not None for m in msgs)
        assert all(c.store.unit(m).kind == "message" for m in msgs)  # type: ignore[union-attr]
        # tags: the user's vocabulary first (existing), then the alias, then proposals
        got = {(t.tag, t.status) for e in c.store.enrichments.enrichments() for t in e.tags}
        assert ("configuration", "existing") in got  # given as "Configuration"
        assert ("operations", "alias") in got  # given as "ops"
        assert ("compost-sensors", "proposed") in got  # given as "Compost sensors"
        # the user's own tags are untouched: no unit gained a tag
        assert "operations" not in c.store.enrichments.user_tags(100)
    n = len(server.bodies)
    with _open(db, cfg) as c:
        again = c.enrich.run()
    assert len(server.bodies) == n  # the cache: no request at all
    assert again.requests == 0 and again.cached == 3 and again.answered == 0
    assert again.insights == 9


def test_a_planted_secret_never_reaches_the_server(tmp_path: Path, server: ReplayServer) -> None:
    chats, db, cfg = _indexed(tmp_path, server)
    assert SECRET in (chats / "conversations.json").read_text()
    with _open(db, cfg) as c:
        assert any(SECRET in u.body for d in c.store.documents_by_format(["chatgpt"])
                   for u in c.store.units_of(d.id))  # indexed as written (on_ingest off)
        c.enrich.run()
    sent = server.everything_received()
    assert server.bodies and "nightly job" in sent
    assert SECRET not in sent and "SECRET:github-token#1" in sent


def test_bad_replies_are_retried_once_then_skipped_with_a_reason(
    tmp_path: Path, server: ReplayServer
) -> None:
    _, db, cfg = _indexed(tmp_path, server)
    # newest conversation first: c3, c2, c1
    server.script.extend([
        {"content": REPLIES["malformed"]}, {"content": REPLIES["fenced"]},  # c3: retry ok
        {"content": REPLIES["schema_violation"]},  # c2: twice bad → skipped
        {"content": REPLIES["schema_violation"]},
    ])
    with _open(db, cfg) as c:
        rep = c.enrich.run()
    assert rep.requests == 5 and rep.retried == 2 and rep.answered == 2
    assert len(rep.skipped) == 1
    item, reason = rep.skipped[0].item, rep.skipped[0].reason
    assert to_data(rep)["skipped"] == [{"item": item, "reason": reason}]  # the JSON
    assert "Sensor calibration" in item
    assert "invalid reply twice" in reason and "$.insights" in reason
    n = len(server.bodies)
    with _open(db, cfg) as c:
        again = c.enrich.run()
        assert len(server.bodies) == n and again.requests == 0  # the refusal is cached
        assert "invalid reply (cached)" in again.skipped[0].reason
        third = c.enrich.run(retry_invalid=True)  # asked again on request
    assert third.requests == 1 and third.answered == 1 and not third.skipped
    assert third.enriched == 3


def test_timeouts_and_rate_limits_are_waited_out(tmp_path: Path, server: ReplayServer) -> None:
    _, db, cfg = _indexed(tmp_path, server)
    waits: list[float] = []
    server.script.extend([
        {"delay": 3.0},  # longer than timeout = 1.0: the client gives up
        {"status": 429, "headers": {"Retry-After": "2"}},
        {},  # the third attempt gets a valid reply
    ])
    with _open(db, cfg) as c:
        rep = c.enrich.run(sleep=waits.append)
    assert waits == [2.0]
    assert rep.requests == 5 and rep.answered == 3 and not rep.skipped


def test_a_request_failing_every_time_is_skipped_and_asked_again_next_run(
    tmp_path: Path, server: ReplayServer
) -> None:
    _, db, cfg = _indexed(tmp_path, server)
    server.script.extend([{"status": 429, "headers": {"Retry-After": "30"}}] * 3)
    waits: list[float] = []
    with _open(db, cfg) as c:
        rep = c.enrich.run(sleep=waits.append, relations=False)
    assert waits == [5.0, 5.0]  # retry_after_max caps the wait
    assert rep.answered == 2 and len(rep.skipped) == 1
    assert "rate limited" in rep.skipped[0].reason
    with _open(db, cfg) as c:
        again = c.enrich.run(relations=False)
    assert again.requests == 1 and again.answered == 1 and again.cached == 2


def test_an_interrupted_run_resumes_after_the_last_stored_reply(
    tmp_path: Path, server: ReplayServer
) -> None:
    _, db, cfg = _indexed(tmp_path, server)

    def stop_after_two(done: int, total: int, item: str) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with _open(db, cfg) as c, pytest.raises(KeyboardInterrupt):
        c.enrich.run(progress=stop_after_two)
    assert len(server.bodies) == 2
    with _open(db, cfg) as c:
        rep = c.enrich.run()
    assert rep.cached == 2 and rep.requests == 1 and rep.enriched == 3


def test_dry_run_prints_the_estimate_only(tmp_path: Path, server: ReplayServer) -> None:
    _, db, cfg = _indexed(tmp_path, server, "price_input = 3.0\nprice_output = 15.0\n")
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db),
                                   "--dry-run", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["dry_run"] and data["estimate"]["requests"] == 3
    assert data["estimate"]["input_tokens"] > 100 and data["estimate"]["cost"] > 0
    assert server.bodies == []
    with _open(db, cfg) as c:
        assert c.store.enrichments.counts()["conversations"] == 0
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "3 answered" in res.output and "conversations: 3 (0 cached), 3 requests" in res.output


def test_a_reindex_keeps_the_insights_without_asking(tmp_path: Path, server: ReplayServer) -> None:
    chats, db, cfg = _indexed(tmp_path, server)
    with _open(db, cfg) as c:
        c.enrich.run()
    n = len(server.bodies)
    export = json.loads((chats / "conversations.json").read_text())
    export[2]["mapping"]["c3-m1"]["message"]["content"]["parts"] = ["Tomatoes first."]
    (chats / "conversations.json").write_text(json.dumps(export), encoding="utf-8")
    with _open(db, cfg) as c:
        run = c.index()
        assert run.changed == 1
        counts = c.store.enrichments.counts()
        # c1 and c2 are unchanged: their units are back from the stored enrichment;
        # c3 changed and is forgotten until the next `cairn enrich`
        assert counts["conversations"] == 2 and counts["insights"] == 6
        assert any(h.kind == "insight" for h in c.search("version control", mode="keyword").hits)
        rep = c.enrich.run()
        assert rep.requests == 1 and rep.cached == 2 and rep.enriched == 3
    assert len(server.bodies) == n + 1


def test_the_anthropic_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with replay_server("anthropic") as server:
        chats, db, cfg = make_vault(tmp_path, server.url,
                                    'api_key_env = "TEST_ANTHROPIC_KEY"\n', provider="anthropic")
        monkeypatch.setenv("TEST_ANTHROPIC_KEY", "test-key-123")
        with _open(db, cfg) as c:
            c.index([chats])
            server.script.append({"content": REPLIES["malformed"]})
            rep = c.enrich.run()
            assert rep.answered == 3 and rep.retried == 1 and rep.requests == 4
            again = c.enrich.run()
            assert again.requests == 0 and again.cached == 3
    h = {k.lower(): v for k, v in server.headers[0].items()}
    assert h["x-api-key"] == "test-key-123" and h["anthropic-version"] == "2023-06-01"
    body: dict[str, Any] = server.bodies[0]
    assert body["model"] == "replay-1" and "analyse a conversation" in body["system"]
    assert SECRET not in server.everything_received()


def test_a_missing_api_key_is_a_clear_error(tmp_path: Path, server: ReplayServer) -> None:
    _, db, cfg = _indexed(tmp_path, server, 'api_key_env = "NO_SUCH_KEY_VAR_X"\n')
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
    assert res.exit_code == 2 and "NO_SUCH_KEY_VAR_X" in res.output
    assert server.bodies == []


@pytest.mark.embed
def test_similar_conversations_get_typed_llm_edges(tmp_path: Path, server: ReplayServer) -> None:
    chats, db, cfg = make_vault(tmp_path, server.url, 'similarity = -1.0\nmax_pairs = 2\n'
                                '[embed]\nprovider = "static"\n[graph]\nhops = 2\n')
    with Cairn(load_config(db=db, config_file=cfg, env={})) as c:
        c.index([chats])
        rep = c.enrich.run()
        assert rep.pairs == 3 and rep.relations == 3 and rep.llm_edges == 3
        assert rep.requests == 6  # 3 conversations + 3 pairs
        docs = {d.title: d.id for d in c.store.documents_by_format(["chatgpt"])}
        first = c.store.edges.first_units(list(docs.values()))
        # the later conversation builds on the earlier one
        near = c.graph.neighbors(first[docs["Garden planning"]], origins=["llm"])
        vias = [n.via for n in near.neighbors]
        assert {v.relation for v in vias} == {"builds_on"}
        assert {v.origin for v in vias} == {"llm"} and all(v.weight == 0.82 for v in vias)
        assert all(v.forward for v in vias)
        data = json.loads(c.graph.export("json", origins=["llm"]))
        edges = data.get("links") or data.get("edges")
        assert len(edges) == 3
        ev = edges[0]["evidence"][0]
        assert ev["reason"].startswith("Both tune the same deployment")
        assert ev["confidence"] == 0.82 and "similarity" in ev
        # --explain shows the edge and its reason when expansion walks it
        # (message → its conversation → the llm edge → the other conversation: 2 hops)
        res = c.search("tomato beds", mode="keyword", explain=True, expand=True, limit=20)
        walked = [e for h in res.hits for p in h.explain.get("graph", {}).get("paths", [])
                  for e in p["edges"] if e["origin"] == "llm"]
        assert walked and walked[0]["evidence"][0]["reason"]
        shown = c.enrich.show(docs["Garden planning"])
        assert {r.direction for r in shown.relations} == {"out"}
        assert list(to_data(shown)["relations"][0]) == [  # the JSON keeps its keys
            "relation", "direction", "document_id", "title", "confidence", "reason",
            "similarity"]
        # a full graph rebuild (settings changed) drops every edge: the next run's
        # refresh writes the llm edges again, without a request
        n = len(server.bodies)
        c.graph.rebuild()
        assert c.store.enrichments.counts()["llm_edges"] == 0
        c.index()
        assert c.store.enrichments.counts()["llm_edges"] == 3
        again = c.enrich.run()
        assert again.requests == 0 and len(server.bodies) == n
    res2 = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "show", "--db", str(db),
                                    docs["Garden planning"]])
    assert res2.exit_code == 0, res2.output
    assert "builds_on" in res2.output and "decision" in res2.output


def test_without_embeddings_relations_are_skipped_with_a_note(
    tmp_path: Path, server: ReplayServer
) -> None:
    _, db, cfg = _indexed(tmp_path, server)
    with _open(db, cfg) as c:
        rep = c.enrich.run()
    assert rep.pairs == 0 and rep.relations == 0
    assert any("no embeddings" in n for n in rep.notes)


def test_a_bad_enrich_table_does_not_hold_up_indexing(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[enrich]\nprovider = "openai"\n', encoding="utf-8")  # no model
    db = tmp_path / "i.db"
    with _open(db, cfg) as c:
        assert c.index([notes]).added == 1
    res = CliRunner().invoke(app, ["--config", str(cfg), "enrich", "--db", str(db)])
    assert res.exit_code == 2 and "[enrich] model must" in res.output
