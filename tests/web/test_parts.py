"""The search page's facets and explain view, the conversations pages, live updates
(Server-Sent Events) and Obsidian callouts, against a real ``cairn serve``; the facet
counts of the store and ``Cairn.facets`` on a real index."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import sys
import urllib.parse
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import NotFound, QueryError
from cairn.interfaces.web.render import render_markdown

sys.path.insert(0, str(Path(__file__).parent))
from html_check import dangers
from test_pages import get

from conftest import SAMPLE, Serve, Vault


def open_cairn(vault: Vault) -> Cairn:
    return Cairn(load_config(db=vault.db, env={"CAIRN_EMBED": "none"}), create=False)


# --- facets --------------------------------------------------------------------------
def test_facet_counts_match_the_candidates(vault: Vault) -> None:
    with open_cairn(vault) as c:
        facets = c.fields.facets("tomatoes OR garden", mode="keyword")
        ids = c.semantic.candidates("tomatoes OR garden", mode="keyword", limit=200)
        assert facets.candidates == len(ids) > 0
        units = [c.store.unit(i) for i in ids]
        docs = {u.document_id: c.store.document(u.document_id) for u in units if u}
        formats: dict[str, int] = {}
        for u in units:
            assert u is not None
            fmt = docs[u.document_id].format  # type: ignore[union-attr]
            formats[fmt] = formats.get(fmt, 0) + 1
        assert {v.value: v.count for v in facets.fields["format"]} == formats
        todos = [u.todo for u in units if u and u.todo]
        assert sum(v.count for v in facets.fields["todo"]) == len(todos)
        tags = {v.value: v.count for v in facets.fields["tag"]}
        assert tags.get("garden", 0) == sum(
            1 for u in units if u and "garden" in {t.casefold() for t in
                                                   (*u.tags, *u.inherited_tags)})
        root = facets.fields["root"][0]
        assert root.value == str(vault.folder) and root.filter == f"source:{vault.folder}"
        # each value's filter keeps exactly the units it counted (within the candidates)
        fmt = facets.fields["format"][0]
        kept = c.search(f"tomatoes OR garden {fmt.filter}", mode="keyword", limit=200)
        assert len(kept.hits) == fmt.count


def test_facet_counts_refuse_an_unknown_field_and_count_nothing_for_no_ids(
        vault: Vault) -> None:
    with open_cairn(vault) as c:
        with pytest.raises(QueryError, match="unknown facet field"):
            c.store.facet_counts(["x"], ["colour"])
        assert c.store.facet_counts([], ["tag"]) == {"tag": {}}
        assert c.fields.facets("").candidates >= 0


def test_search_page_shows_facets_that_add_and_remove_filters(server: Serve) -> None:
    status, _, html = get(server, "/ui/hits?q=garden&mode=keyword")
    assert status == 200
    groups = re.findall(r'<section class="facet" data-field="(\w+)">', html)
    assert "format" in groups and "tag" in groups and "root" in groups
    links = re.findall(r'<a class="facet-value[^"]*" href="([^"]+)" data-q="([^"]+)"', html)
    assert ("/?q=garden%20format%3Aorg&amp;mode=keyword", "garden format:org") in links
    _, _, filtered = get(server, "/ui/hits?q=" + urllib.parse.quote("garden format:org")
                         + "&mode=keyword")
    assert '<a class="facet-value active"' in filtered  # applied: a click takes it away
    assert 'data-q="garden"' in filtered
    assert "reference/garden-soil.md" not in filtered and "garden.org" in filtered
    assert dangers(html) == [] and dangers(filtered) == []


def test_each_hit_has_an_explain_view_whose_summands_add_up(server: Serve) -> None:
    _, _, html = get(server, "/ui/hits?q=compost&mode=keyword")
    blocks = re.findall(r'<details class="explain">(.*?)</details>', html, re.S)
    assert blocks
    for block in blocks:
        score = float(re.search(r"score ([-0-9.e+]+)</summary>", block).group(1))  # type: ignore[union-attr]
        table = re.search(r'<table class="summands">(.*?)</table>', block, re.S).group(1)  # type: ignore[union-attr]
        values = [float(v) for name, v in re.findall(r"<tr><th>([^<]+)</th><td>([^<]+)</td>",
                                                    table) if name != "score"]
        assert values and abs(sum(values) - score) <= 1e-4 * max(1.0, abs(score))
        assert "<th>keyword</th>" in block and "bm25" in block and "fts_query" in block


def test_graph_expansion_explains_the_paths_walked(server: Serve) -> None:
    _, _, html = get(server, "/ui/hits?q=tomatoes&mode=keyword&expand=true")
    assert "graph_expansion" in html
    assert 'class="graph-path"' in html and "rank before expansion" in html


# --- conversations -------------------------------------------------------------------
def test_conversations_page_lists_every_conversation(server: Serve) -> None:
    status, _, html = get(server, "/conversations")
    assert status == 200
    titles = re.findall(r'class="conversation-link" href="/conversation/[^"]+">([^<]*)<', html)
    assert "Sourdough starter care" in titles and len(titles) >= 61
    assert dangers(html) == []


def test_a_conversation_is_a_thread_with_roles_times_code_and_alternates(
        server: Serve) -> None:
    status, _, html = get(server, "/conversation/conv-sourdough")
    assert status == 200
    roles = re.findall(r'<li class="message role-(\w+)', html)
    assert roles == ["user", "assistant", "user", "assistant"]
    assert '<time datetime="2025-07-01T' in html
    assert "<pre><code class=\"language-python\">feed(flour=50, water=50)" in html
    assert "branchpayload old" not in html and "Show alternates" in html
    _, _, alt = get(server, "/conversation/conv-sourdough?alternates=true")
    assert "branchpayload old" in alt and 'class="message role-assistant alternate' in alt
    # the alternate answer stands beside the answer it was regenerated into
    order = re.findall(r'<li class="message role-\w+( alternate)?[^"]*" id="u-([^"]+)"', alt)
    assert [i for _, i in order] == ["q1", "a_new", "a_old", "q2", "a2"]
    assert "Hide alternates" in alt


def test_search_within_a_conversation_marks_the_messages_found(server: Serve) -> None:
    _, _, html = get(server, "/conversation/conv-sourdough?q=fridge")
    assert re.findall(r'<li class="message role-(\w+) match"', html) == ["user", "assistant"]
    assert "2 messages match <code>fridge</code>" in html
    _, _, none = get(server, "/conversation/conv-sourdough?q=branchpayload")
    assert "0 messages match" in none  # the alternate is not shown, so not found
    _, _, alt = get(server, "/conversation/conv-sourdough?q=branchpayload&alternates=true")
    assert "1 message match" in alt


def test_unknown_conversations_and_note_documents_are_404(server: Serve, vault: Vault
                                                          ) -> None:
    assert get(server, "/conversation/nope")[0] == 404
    with open_cairn(vault) as c:
        doc = c.show(str(vault.folder / "projects" / "garden.org")).document  # type: ignore[union-attr]
        with pytest.raises(NotFound):
            c.conversations.thread(doc.id)
    assert get(server, "/conversation/" + urllib.parse.quote(doc.id))[0] == 404


# --- callouts -------------------------------------------------------------------------
def test_obsidian_callouts_are_rendered_and_foldable() -> None:
    html = render_markdown("> [!note] My <b>title</b>\n> body *x*\n\n> [!warning]-\n> folded"
                           "\n\n> [!tip]+ Open\n> shown\n\n> plain", lambda t: None)
    assert '<div class="callout callout-note">\n<p class="callout-title">My &lt;b&gt;title' \
        in html
    assert "<p>body <em>x</em></p>" in html
    assert '<details class="callout callout-warning">\n<summary class="callout-title">' \
        "Warning</summary>" in html
    assert '<details class="callout callout-tip" open="">' in html
    assert "<blockquote>\n<p>plain</p>" in html


# --- live updates ---------------------------------------------------------------------
def read_events(url: str, until: float) -> http.client.HTTPResponse:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=until)
    conn.request("GET", "/ui/events", headers={"Accept": "text/event-stream"})
    return conn.getresponse()


def next_event(resp: http.client.HTTPResponse) -> tuple[str, dict[str, object] | None]:
    name, data = "", ""
    while True:
        line = resp.readline().decode()
        if not line:
            raise EOFError("the stream ended")
        line = line.rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and name:
            return name, json.loads(data)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    """A copy of ``sample/`` of its own (the live tests change it)."""
    base = tmp_path_factory.mktemp("live")
    folder = base / "notes"
    shutil.copytree(SAMPLE, folder)
    config = base / "cairn.toml"
    config.write_text("", encoding="utf-8")
    db = base / "i.db"
    with Cairn(load_config(db=db, config_file=config, env={"CAIRN_EMBED": "none"})) as c:
        c.index([folder])
    return Vault(folder, db, config)


def test_the_event_stream_says_changed_after_a_reindex(small: Vault) -> None:
    srv = Serve(small)
    try:
        resp = read_events(srv.url, 30)
        assert resp.status == 200 and resp.getheader("Content-Type", "").startswith(
            "text/event-stream")
        name, hello = next_event(resp)
        assert name == "hello" and hello is not None
        (small.folder / "reference" / "live.md").write_text("# Live\n\nlivepayload\n",
                                                           encoding="utf-8")
        with Cairn(load_config(db=small.db, env={"CAIRN_EMBED": "none"})) as c:
            c.index_paths([small.folder / "reference" / "live.md"])
        name, changed = next_event(resp)  # the stream's 30 s read timeout guards a hang
        assert name == "changed" and changed is not None
        assert changed["run"] != hello["run"] and changed["added"] == 1
        resp.close()
    finally:
        srv.stop()
