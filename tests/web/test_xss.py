"""The XSS corpus (:mod:`payloads`: script tags, event handlers, ``javascript:`` links,
SVG, malformed tags, in Markdown bodies, frontmatter values, Org headings, properties,
link descriptions, file names and chat messages) indexed and served: no page holds
executable markup."""

from __future__ import annotations

import re
import sys
import urllib.parse
from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config

sys.path.insert(0, str(Path(__file__).parent))
from html_check import dangers
from payloads import FILE_NAMES, ORG_LINKS, PAYLOADS
from test_pages import get

from conftest import Serve, Vault


def hostile_documents(vault: Vault) -> list[tuple[str, str]]:
    """(document id, path) of every indexed document under ``xss/``."""
    with Cairn(load_config(db=vault.db), create=False) as c:
        return [(d.document_id, d.path) for d in c.doors.recent("36500d", limit=1000)
                if d.path.startswith("xss/")]


def test_the_corpus_is_large_enough() -> None:
    assert len(PAYLOADS) >= 60 and len(set(PAYLOADS)) == len(PAYLOADS)
    assert ORG_LINKS and FILE_NAMES


def test_every_note_page_of_the_corpus_is_inert(server: Serve, vault: Vault) -> None:
    docs = hostile_documents(vault)
    # every Markdown and Org file, every file name, every conversation
    assert len(docs) >= 2 * len(PAYLOADS) + len(FILE_NAMES) + len(PAYLOADS)
    bad: dict[str, list[str]] = {}
    rendered = 0
    for doc_id, path in docs:
        status, headers, html = get(server, "/note/" + urllib.parse.quote(doc_id, safe=""))
        assert status == 200, path
        assert "script-src 'self'" in headers["content-security-policy"]
        if found := dangers(html):
            bad[path] = found
        rendered += "xsspayload" in html
    assert bad == {}
    assert rendered == len(docs)  # each body was rendered (as text), not dropped


def test_search_pages_over_the_corpus_are_inert(server: Serve) -> None:
    queries = ["xsspayload", "alert", "script", "onerror", "javascript", "svg onload",
               "Heading", "answer", "file name", *PAYLOADS[:20]]
    for q in queries:
        for path in ("/", "/ui/hits"):
            status, _, html = get(server, f"{path}?q={urllib.parse.quote(q)}&mode=keyword")
            assert status == 200
            assert dangers(html) == [], (q, path)
    _, _, html = get(server, "/ui/hits?q=xsspayload&mode=keyword")
    assert html.count('class="hit"') >= 10
    assert "&lt;script&gt;" in html or "&lt;img" in html  # payloads shown as text


def test_conversation_pages_of_the_corpus_are_inert(server: Serve, vault: Vault) -> None:
    status, _, html = get(server, "/conversations")
    assert status == 200 and dangers(html) == []
    ids = re.findall(r'class="conversation-link" href="/conversation/([^"]+)"', html)
    assert len(ids) >= len(PAYLOADS)
    bad: dict[str, list[str]] = {}
    for cid in ids:
        for query in ("", "?q=xsspayload", "?alternates=true&q=answer"):
            status, headers, page = get(server, f"/conversation/{cid}{query}")
            assert status == 200, cid
            assert "script-src 'self'" in headers["content-security-policy"]
            if found := dangers(page):
                bad[cid + query] = found
    assert bad == {}


def test_facets_and_explanations_of_the_corpus_are_inert(server: Serve) -> None:
    _, _, html = get(server, "/ui/hits?q=xsspayload&mode=keyword")
    assert '<section class="facet" data-field="type">' in html
    assert html.count('class="facet-value') >= 10
    assert "<details class=\"explain\">" in html
    assert dangers(html) == []


def test_the_status_page_of_the_corpus_is_inert(server: Serve) -> None:
    _, _, html = get(server, "/status")
    assert dangers(html) == []


def test_only_the_ui_script_is_loaded(server: Serve, vault: Vault) -> None:
    doc_id, _ = hostile_documents(vault)[0]
    _, _, html = get(server, "/note/" + doc_id)
    assert re.findall(r"<script\b[^>]*>", html, re.I) == \
        ['<script src="/static/app.js" defer>']


def test_the_checker_finds_what_it_looks_for() -> None:
    assert dangers('<img src=x onerror="alert(1)">')
    assert dangers('<a href="java\tscript:alert(1)">x</a>')
    assert dangers("<script>alert(1)</script>")
    assert dangers('<svg onload="alert(1)"></svg>')
    assert dangers('<p style="x">') and dangers('<iframe src="/x">')
    assert dangers('<a href="/note/x">ok</a> <script src="/static/app.js"></script>') == []
