"""The web UI's pages against a real ``cairn serve``: search, note (Org and Markdown
rendering, outline, links, backlinks, editor links), status, headers and guards."""

from __future__ import annotations

import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.web.render import editor_link, render_markdown, render_org, safe_url

sys.path.insert(0, str(Path(__file__).parent))
from html_check import dangers

from conftest import Serve, Vault


def get(srv: Serve, path: str, headers: dict[str, str] | None = None
        ) -> tuple[int, dict[str, str], str]:
    """GET ``path``: (status, lower-cased headers, body); redirects not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(srv.url + path, headers=headers or {})
    try:
        with opener.open(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def doc_id(vault: Vault, rel: str) -> str:
    with Cairn(load_config(db=vault.db), create=False) as c:
        view = c.show(str(vault.folder / rel))
        return view.document.id  # type: ignore[union-attr]


def test_search_page_shows_hits_with_highlights_paths_and_lines(server: Serve) -> None:
    status, headers, html = get(server, "/?q=compost&mode=keyword")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert 'value="compost"' in html  # the URL holds the query
    assert 'value="keyword" checked' in html
    assert "<mark>compost</mark>" in html.lower() or "<mark>Compost</mark>" in html
    assert "reference/composting.md:" in html
    assert re.search(r'<a class="hit-title" href="/note/[^"#]+#u-', html)
    assert dangers(html) == []


def test_hits_fragment_is_what_the_page_fetches(server: Serve) -> None:
    status, _, html = get(server, "/ui/hits?q=tomatoes")
    assert status == 200 and "<html" not in html
    assert "Plant tomatoes" in html and "projects/garden.org:14" in html
    assert 'data-q="tomatoes"' in html
    _, _, empty = get(server, "/ui/hits?q=")
    assert "hit-title" not in empty
    _, _, none = get(server, "/ui/hits?q=zzzqqqnothing")
    assert "No hits" in none


def test_a_bad_mode_is_refused(server: Serve) -> None:
    status, _, _ = get(server, "/ui/hits?q=x&mode=nonsense")
    assert status == 422


def test_org_note_renders_headings_todo_tags_properties_planning_and_links(
    server: Serve, vault: Vault
) -> None:
    status, headers, html = get(server, "/note/" + doc_id(vault, "projects/garden.org"))
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]
    assert '<span class="todo open">NEXT</span>' in html
    assert '<span class="priority">[#A]</span>' in html
    assert '<span class="tag">tomato</span>' in html
    assert "<th>AREA</th><td>north</td>" in html
    assert '<span class="kw">SCHEDULED:</span> <time>&lt;2026-05-10 Sun&gt;</time>' in html
    compost = doc_id(vault, "reference/composting.md")
    assert re.search(rf'<a href="/note/{compost}(#u-[^"]+)?" rel="noopener noreferrer">'
                     "composting guide</a>", html)
    # outline on one side
    assert re.search(r'<nav class="outline".*href="#u-8a1f3c2e-[^"]*">Beds</a>', html, re.S)
    # the open-in-editor link from [web] editor_url
    assert f'href="vscode://file{vault.folder}/projects/garden.org:14"' in html
    # backlinks: the journal links to the Beds heading by its ID
    journal = doc_id(vault, "journal/2026-03-14.org")
    assert f'href="/note/{journal}#u-' in html
    assert dangers(html) == []


def test_org_source_blocks_and_heading_links_to_the_unit(server: Serve, vault: Vault) -> None:
    network = doc_id(vault, "projects/home-network.org")
    _, _, html = get(server, "/note/" + network)
    assert '<code class="language-sh">restic -r sftp:nas:/backups/notes backup ~/notes' in html
    with Cairn(load_config(db=vault.db), create=False) as c:
        router = c.show(f"{vault.folder}/projects/home-network.org:5")
    assert router.unit.title == "Router"  # type: ignore[union-attr]
    href = f"/note/{network}#u-{router.unit.id}"  # type: ignore[union-attr]
    assert f'<a href="{href}" rel="noopener noreferrer">#router</a>' in html


def test_markdown_note_renders_wikilinks_frontmatter_and_backlinks(
    server: Serve, vault: Vault
) -> None:
    kitchen = doc_id(vault, "projects/kitchen-renovation.org")
    _, _, html = get(server, "/note/" + doc_id(vault, "projects/reading-list.md"))
    assert f'<a class="wikilink" href="/note/{kitchen}' in html
    assert "<h1>" in html and 'class="meta"' in html
    _, _, target = get(server, "/note/" + kitchen)
    reading = doc_id(vault, "projects/reading-list.md")
    assert f'href="/note/{reading}#u-' in target  # a backlink
    # an unresolved wikilink is shown, not linked
    _, _, comp = get(server, "/note/" + doc_id(vault, "reference/composting.md"))
    assert 'class="wikilink unresolved"' in comp
    assert "---" not in comp.split("<article", 1)[1]  # the frontmatter is not body text


def test_a_unit_id_redirects_to_its_heading_and_unknown_ids_are_404(
    server: Serve, vault: Vault
) -> None:
    status, headers, _ = get(server, "/note/8a1f3c2e-4b5d-4e6f-9a0b-1c2d3e4f5a6b")
    assert status == 303
    garden = doc_id(vault, "projects/garden.org")
    assert headers["location"] == f"/note/{garden}#u-8a1f3c2e-4b5d-4e6f-9a0b-1c2d3e4f5a6b"
    status, headers, html = get(server, "/note/no-such-note-id")
    assert status == 404 and "Not found" in html
    assert "content-security-policy" in headers
    status, _, html = get(server, "/note/" + urllib.parse.quote("/etc/passwd", safe=""))
    assert status == 404 and "root:" not in html


def test_a_chat_export_file_lists_its_conversations(server: Serve, vault: Vault) -> None:
    with Cairn(load_config(db=vault.db), create=False) as c:
        docs = [d for d in c.doors.recent("36500d", limit=1000)
                if d.path == "xss/conversations.json"]
    assert len(docs) > 50
    status, _, html = get(server, "/note/" + docs[0].document_id)
    assert status == 200 and 'class="unit kind-message role-' in html


def test_status_page(server: Serve, vault: Vault) -> None:
    status, _, html = get(server, "/status")
    assert status == 200
    assert f"<code>{vault.folder}</code>" in html
    assert re.search(r"<th>documents</th><td>\d+</td>", html)
    assert "<th>finished</th>" in html and "Failures" in html


def test_static_files_and_their_types(server: Serve) -> None:
    status, headers, js = get(server, "/static/app.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert "addEventListener" in js
    assert get(server, "/static/app.css")[1]["content-type"].startswith("text/css")
    assert get(server, "/static/..%2Fpyproject.toml")[0] == 404
    assert get(server, "/static/nope.js")[0] == 404


def test_pages_pass_the_api_guard(server: Serve, vault: Vault) -> None:
    assert get(server, "/", {"Host": "evil.example"})[0] == 421
    assert get(server, "/status", {"Origin": "http://evil.example"})[0] == 403
    srv = Serve(vault, env={"CAIRN_TOKEN": "s3cret-token-for-tests"})
    try:
        assert get(srv, "/")[0] == 303  # to the login form (tests/web/test_login.py)
        assert get(srv, "/ui/hits?q=x")[0] == 401
        assert get(srv, "/status", {"Authorization": "Bearer s3cret-token-for-tests"})[0] == 200
    finally:
        srv.stop()


def test_the_web_routes_are_not_in_the_openapi_description(server: Serve) -> None:
    _, _, text = get(server, "/openapi.json")
    assert '"/note/' not in text and '"/ui/hits"' not in text


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "JavaScript:alert(1)", "java\tscript:alert(1)",
    " javascript:alert(1)", "vbscript:x", "data:text/html,x", "file:///etc/passwd",
    "javascript&colon;alert(1)",
])
def test_unsafe_urls_are_dropped(url: str) -> None:
    assert safe_url(url) is None
    assert "href" not in render_markdown(f"[x]({url})", lambda t: None)


def test_safe_urls_and_relative_links_are_kept() -> None:
    for url in ("https://example.org/a?b=1", "mailto:a@example.org", "notes/x.md", "#h"):
        assert safe_url(url) == url


def test_org_rendering_escapes_everything_it_does_not_understand() -> None:
    html = render_org("<b onclick=x>bold</b> *strong* =code=\n#+begin_src html\n<script>"
                      "\n#+end_src\n| a | <i> |", lambda t: None)
    assert "<b onclick" not in html and "&lt;b onclick=x&gt;" in html
    assert "<strong>strong</strong>" in html and "<code>code</code>" in html
    assert "&lt;script&gt;" in html and "<table>" in html


def test_editor_links() -> None:
    assert editor_link("vscode://file{path}:{line}", "/n/a b.org", 3) == \
        "vscode://file/n/a%20b.org:3"
    assert editor_link(None, "/n/a.org", 1) is None
    assert editor_link("javascript:alert({path})", "/n/a.org", 1) is None
    assert editor_link(" data:text/html,{path}", "/n/a.org", 1) is None


def test_web_editor_url_is_checked(tmp_path: Path) -> None:
    from cairn.errors import ConfigError

    conf = tmp_path / "cairn.toml"
    conf.write_text('[web]\neditor_url = "vscode://file{path}:{line}"\n', encoding="utf-8")
    assert load_config(config_file=conf).web["editor_url"] == "vscode://file{path}:{line}"
    for bad in ('editor_url = 3', 'editor_url = "vscode://nothing"', 'editr_url = "x"'):
        conf.write_text(f"[web]\n{bad}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=r"\[web\]|editr_url"):
            load_config(config_file=conf)


def test_graph_page_and_its_json(server: Serve, vault: Vault) -> None:
    garden = doc_id(vault, "projects/garden.org")
    status, headers, html = get(server, f"/graph/{garden}?hops=2")
    assert status == 200 and "<h1>Graph around" in html
    csp = headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp.split("style-src-attr")[0]
    assert '<script src="/static/cytoscape.min.js" defer>' in html
    assert dangers(html) == []
    status, headers, text = get(server, f"/ui/graph.json?node={garden}&hops=1")
    assert status == 200 and headers["content-type"].startswith("application/json")
    assert '"relation"' in text and garden in text
    assert get(server, f"/graph/{garden}?hops=4")[0] == 422
    assert get(server, "/graph/no-such-node")[0] == 404
    assert get(server, "/ui/graph.json?node=%2Fetc%2Fpasswd")[0] in (400, 404)
    assert get(server, "/static/cytoscape-license.txt")[2].startswith("Copyright")
