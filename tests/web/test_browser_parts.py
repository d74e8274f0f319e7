"""The search page's facets and explain view, the conversations pages, Obsidian
callouts and live updates in headless Chromium against a real ``cairn serve``, with
``alert``/``console`` hooked; screenshots into ``$CAIRN_SCREENSHOTS``."""

from __future__ import annotations

import re
import shutil
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_browser import CHROMIUM, DOCS, Watched, browser, watched  # noqa: F401  (fixtures)
from test_xss import hostile_documents

from cairn.app import Cairn
from cairn.config import load_config
from conftest import SAMPLE, Serve, Vault

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at "
                       "/usr/bin/chromium (apt-get install chromium)"),
]


def test_click_a_facet_and_open_an_explanation(watched: Watched, server: Serve) -> None:  # noqa: F811 (the fixture)
    page = watched.page
    page.goto(server.url + "/?q=garden&mode=keyword")
    page.wait_for_selector('.results[data-q="garden"] li.hit')
    before = page.locator("li.hit").count()
    page.click('section.facet[data-field="format"] a.facet-value:text-is("org")')
    page.wait_for_selector('.results[data-q="garden format:org"] li.hit')
    assert page.input_value("#q") == "garden format:org"
    assert "format%3Aorg" in page.url or "format:org" in urllib.parse.unquote(page.url)
    assert page.locator("li.hit").count() <= before
    assert all(t.strip() == "org" for t in page.locator("li.hit .fmt").all_inner_texts())
    assert page.locator("a.facet-value.active").count() == 1
    page.locator("details.explain summary").first.click()
    assert page.locator("details.explain[open] table.summands tr").count() >= 2
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / "web-facets.png"))
    page.click("a.facet-value.active")  # a click on an applied filter takes it away
    page.wait_for_selector('.results[data-q="garden"] li.hit')
    assert watched.fired() == []


def test_read_a_conversation_with_its_alternates_and_search_within(
        watched: Watched, server: Serve) -> None:  # noqa: F811 (the fixture)
    page = watched.page
    page.goto(server.url + "/")
    page.click("header.top a[href='/conversations']")
    page.wait_for_selector("table.conversations")
    page.click("a.conversation-link:text-is('Sourdough starter care')")
    page.wait_for_url("**/conversation/**")
    assert page.locator("li.message").count() == 4
    assert page.locator("li.message pre code").count() == 1
    assert page.inner_text("li.message .role >> nth=0").lower() == "user"
    page.click("a.show-alternates")
    page.wait_for_selector("li.message.alternate")
    assert page.locator("li.message").count() == 5
    page.fill("#within", "fridge")
    page.press("#within", "Enter")
    page.wait_for_selector("li.message.match")
    assert page.locator("li.message.match").count() == 2
    page.screenshot(path=str(DOCS / "web-conversation.png"))
    assert watched.fired() == []


def test_hostile_conversations_and_callouts_run_nothing(
        watched: Watched, server: Serve, vault: Vault) -> None:  # noqa: F811 (the fixture)
    page = watched.page
    page.goto(server.url + "/conversations")
    ids = re.findall(r'class="conversation-link" href="/conversation/([^"]+)"',
                     page.content())
    assert len(ids) > 60
    for cid in ids:
        page.goto(f"{server.url}/conversation/{cid}?alternates=true&q=xsspayload")
        assert page.locator("li.message").count() >= 1
        page.mouse.move(400, 300)
    md = [d for d, p in hostile_documents(vault) if p.startswith("xss/md-")]
    for doc_id in md[:20]:
        page.goto(f"{server.url}/note/{urllib.parse.quote(doc_id, safe='')}")
        page.locator("details.callout summary").first.click()  # unfold the callout
        assert page.locator("details.callout[open]").count() == 1
    assert watched.fired() == []


@pytest.fixture
def live(tmp_path: Path) -> Any:
    folder = tmp_path / "notes"
    shutil.copytree(SAMPLE, folder)
    config = tmp_path / "cairn.toml"
    config.write_text("", encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db, config_file=config, env={"CAIRN_EMBED": "none"})) as c:
        c.index([folder])
    srv = Serve(Vault(folder, db, config))
    yield folder, db, srv
    srv.stop()


def test_open_pages_refresh_when_the_index_changes(watched: Watched, live: Any) -> None:  # noqa: F811 (the fixture)
    folder, db, srv = live
    page = watched.page
    page.goto(srv.url + "/?q=zeppelinword&mode=keyword")
    page.wait_for_selector('.results[data-q="zeppelinword"] p.empty')
    page.wait_for_selector("body[data-live=on]", state="attached")
    note = folder / "reference" / "zeppelin.md"
    note.write_text("# Zeppelin\n\nzeppelinword first\n", encoding="utf-8")
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "none"})) as c:
        c.index_paths([note])
    page.wait_for_selector('.results[data-q="zeppelinword"] li.hit', timeout=10000)
    assert page.locator("#live").is_visible()
    page.click("a.hit-title")
    page.wait_for_url("**/note/**")
    page.wait_for_selector("body[data-live=on]", state="attached")
    note.write_text("# Zeppelin\n\nzeppelinword second edit\n", encoding="utf-8")
    with Cairn(load_config(db=db, env={"CAIRN_EMBED": "none"})) as c:
        c.index_paths([note])
    page.wait_for_selector("text=second edit", timeout=10000)  # the note reloaded
    assert watched.fired() == []
