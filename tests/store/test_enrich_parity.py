"""Enrichment on the PostgreSQL backend gives what it gives on SQLite: the reply
cache, the summary and insight units (searchable), the llm edges, a cached second run;
and ``cairn store copy`` carries the enrichment over."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.store import open_store, open_url
from cairn.store.copy import copy_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "enrich"))
from enrich_replay import replay_server
from enrich_vault import CONVERSATIONS, chatgpt_export

pytestmark = pytest.mark.postgres


def _vault(base: Path, url: str) -> tuple[Path, Path]:
    chats = base / "chats"
    chats.mkdir()
    export = chatgpt_export(CONVERSATIONS)
    (chats / "conversations.json").write_text(json.dumps(export), encoding="utf-8")
    cfg = base / "cairn.toml"
    cfg.write_text(f'[enrich]\nprovider = "openai"\nurl = "{url}"\nmodel = "replay-1"\n',
                   encoding="utf-8")
    return chats, cfg


def test_enrichment_on_postgres_matches_sqlite(tmp_path: Path, pg_url: str) -> None:
    with replay_server() as server:
        chats, cfg = _vault(tmp_path, server.url)
        conf = load_config(db=tmp_path / "i.db", config_file=cfg, env={"CAIRN_EMBED": "none"})
        lite = Cairn(conf, store=open_store(tmp_path / "i.db"))
        pg = Cairn(conf, store=open_url(pg_url))
        try:
            for c in (lite, pg):
                c.index([chats])
                rep = c.enrich.run()
                assert rep.answered == 3 and rep.insights == 9, rep
                assert c.enrich.run().requests == 0
            assert lite.store.enrichments.counts() == pg.store.enrichments.counts()
            q = "version control"
            hits_l = {(h.kind, h.title) for h in lite.search(q, mode="keyword").hits}
            hits_p = {(h.kind, h.title) for h in pg.search(q, mode="keyword").hits}
            assert hits_l == hits_p and any(k == "insight" for k, _ in hits_l)
            # a re-written export gets its units back on both
            for c in (lite, pg):
                c.index_paths([chats / "conversations.json"])
            export = json.loads((chats / "conversations.json").read_text())
            export[0]["title"] = export[0]["title"] + " (renamed)"
            (chats / "conversations.json").write_text(json.dumps(export), encoding="utf-8")
            for c in (lite, pg):
                c.index()  # the renamed one changed (its title is in the prompt)
                assert c.store.enrichments.counts()["conversations"] == 2
            assert lite.store.enrichments.counts() == pg.store.enrichments.counts()
            target = open_store(tmp_path / "copy.db")
            try:
                copy_store(pg.store, target)
                assert target.enrichments.counts() == pg.store.enrichments.counts()
                assert len(target.enrichments.enrichments()) == 2
                assert target.enrichments.counts()["insights"] == 6
            finally:
                target.close()
        finally:
            lite.close()
            pg.close()


def test_enrich_again_leaves_both_backends_sound_and_repair_mends_a_stray_row(
    tmp_path: Path, pg_url: str
) -> None:
    with replay_server() as server:
        chats, cfg = _vault(tmp_path, server.url)
        conf = load_config(db=tmp_path / "i.db", config_file=cfg, env={"CAIRN_EMBED": "none"})
        for store in (open_store(tmp_path / "i.db"), open_url(pg_url)):
            with Cairn(conf, store=store) as c:
                c.index([chats])
                for _ in range(3):
                    c.enrich.run(relations=False)
                    assert c.notes.check() == []
                assert c.runs.repair() == []  # nothing to mend
                rowid = c.store.db.execute("SELECT max(rowid) FROM units").fetchone()[0] + 1000
                with c.store.transaction():  # a keyword row whose unit is gone
                    if hasattr(c.store, "url"):
                        c.store.db.execute(
                            "INSERT INTO units_fts(rowid, title, outline_path, tags, body, cjk,"
                            " meta) VALUES (?, 'x', '', '', 'stray words', '', '')", (rowid,))
                    else:
                        c.store.db.execute(
                            "INSERT INTO units_fts_text(rowid, title, body) "
                            "VALUES (?, 'x', 'stray words')", (rowid,))
                assert any("1 FTS rows without a unit" in p for p in c.notes.check())
                assert c.runs.repair() == ["removed 1 FTS rows without a unit"]
                assert c.notes.check() == []
