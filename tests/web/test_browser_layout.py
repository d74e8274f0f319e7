"""The web UI's layout in headless Chromium at a phone's width (390 px) and a laptop's
(1280 px): on the search, note, conversation, status and graph pages no element is
wider than the viewport, and the facet column never overlaps the hits; ``/`` focuses
the search box without typing a slash. Screenshots go to ``$CAIRN_SCREENSHOTS/screenshots``
(``CAIRN_SCREENSHOTS=docs`` refreshes the committed ones), else a temporary folder."""

from __future__ import annotations

import json
import re
import shutil
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_browser import ARGS, CHROMIUM, DOCS, HOOK
from test_pages import doc_id

from cairn.app import Cairn
from cairn.config import load_config
from conftest import SAMPLE, Serve, Vault, write_branched_chat

LONG = "x" * 150
WIDE_NOTE = f"""# Wide garden note

A word without spaces: supercalifragilistic{LONG}garden, a link
https://example.org/{LONG}/garden and a path /home/someone/{LONG}/garden.md

| column one | column two | column three | column four | column five | column six | seven |
|---|---|---|---|---|---|---|
| garden value {LONG[:60]} | b | c | d | e | f | g |

```
garden_code_line = "{LONG}{LONG}"
```
"""

SHOTS = DOCS / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at "
                       "/usr/bin/chromium (apt-get install chromium)"),
]

OVERFLOW = """() => {
  const w = window.innerWidth;
  const wide = [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.right > w + 1 || r.left < -1) && !e.closest('#cy');
  }).slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' +
                     Math.round(e.getBoundingClientRect().right));
  return {scroll: document.documentElement.scrollWidth, inner: w, wide: wide};
}"""


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Serve, Vault]]:
    """``sample/``, a chat export, and notes, a file name and a chat message with long
    unbreakable words and wide tables, served by a real ``cairn serve``."""
    base = tmp_path_factory.mktemp("wide")
    folder = base / "notes"
    shutil.copytree(SAMPLE, folder)
    write_branched_chat(folder / "chats")
    (folder / f"wide-{LONG}.md").write_text(WIDE_NOTE, encoding="utf-8")
    (folder / "chats" / "claude").mkdir()
    (folder / "chats" / "claude" / "conversations.json").write_text(json.dumps([{
        "uuid": "wide", "name": f"Wide {LONG}", "created_at": "2025-07-01T10:00:00Z",
        "updated_at": "2025-07-01T10:05:00Z", "chat_messages": [
            {"uuid": "w1", "sender": "human", "text": f"garden {LONG}{LONG}",
             "created_at": "2025-07-01T10:00:00Z"},
            {"uuid": "w2", "sender": "assistant", "text": WIDE_NOTE,
             "created_at": "2025-07-01T10:01:00Z"}]}]), encoding="utf-8")
    config = base / "cairn.toml"
    config.write_text("", encoding="utf-8")
    db = base / "i.db"
    with Cairn(load_config(db=db, config_file=config, env={"CAIRN_EMBED": "none"})) as c:
        c.index([folder])
    vault = Vault(folder, db, config)
    srv = Serve(vault)
    yield srv, vault
    srv.stop()


@pytest.fixture(scope="module")
def chromium() -> Any:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _pages(server: Serve, vault: Vault) -> dict[str, str]:
    garden = doc_id(vault, "projects/garden.org")
    note = doc_id(vault, f"wide-{LONG}.md")
    page = server.url
    with urllib.request.urlopen(page + "/conversations", timeout=30) as r:
        listing = r.read().decode()
    cids = re.findall(r'class="conversation-link" href="/conversation/([^"]+)"', listing)
    return {"search": f"{page}/?q=garden", "note": f"{page}/note/{note}",
            "conversation": f"{page}/conversation/{cids[0]}",
            "conversation2": f"{page}/conversation/{cids[-1]}", "status": f"{page}/status",
            "graph": f"{page}/graph/{garden}?hops=2"}


@pytest.mark.parametrize("width", [390, 1280])
def test_no_page_is_wider_than_the_screen_and_facets_never_cover_hits(
        chromium: Any, wide: tuple[Serve, Vault], width: int) -> None:
    server, vault = wide
    context = chromium.new_context(viewport={"width": width, "height": 844})
    context.add_init_script(HOOK)
    page = context.new_page()
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for name, url in _pages(server, vault).items():
            page.goto(url)
            if name == "search":
                page.wait_for_selector("aside.facets li")
                hits = page.locator(".hit-list").bounding_box()
                facets = page.locator("aside.facets").bounding_box()
                assert hits and facets
                apart = (facets["x"] >= hits["x"] + hits["width"] - 1
                         or facets["x"] + facets["width"] <= hits["x"] + 1
                         or facets["y"] >= hits["y"] + hits["height"] - 1
                         or facets["y"] + facets["height"] <= hits["y"] + 1)
                assert apart, (width, hits, facets)
                assert "counts over" in page.inner_text("aside.facets")
            if name == "graph":
                page.wait_for_selector("#cy[data-ready]", state="attached")
            size = page.evaluate(OVERFLOW)
            assert size["scroll"] <= size["inner"], (name, width, size)
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"))
        assert page.evaluate("window.__fired") == []
    finally:
        context.close()


def test_slash_focuses_the_search_box_without_typing_a_slash(chromium: Any,
                                                             server: Serve) -> None:
    context = chromium.new_context(viewport={"width": 1280, "height": 844})
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        assert page.evaluate("document.activeElement.id") == "q"  # focused on load
        page.keyboard.press("/")
        assert page.evaluate("[document.activeElement.id, document.getElementById('q').value]"
                             ) == ["q", ""]
        page.keyboard.type("garden")
        assert page.input_value("#q") == "garden"
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("/")
        assert page.evaluate("[document.activeElement.id, document.getElementById('q').value]"
                             ) == ["q", "garden"]
    finally:
        context.close()
