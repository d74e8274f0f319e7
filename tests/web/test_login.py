"""Cookie login when the server has a token: the form, the HttpOnly SameSite=Strict
session cookie, what it opens (safe requests only) and what it never does (admin routes,
POSTs, forged forms, open redirects); the bearer token keeps working."""

from __future__ import annotations

import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_browser import CHROMIUM, Watched, browser, watched  # noqa: F401  (fixtures)
from test_pages import get

from cairn.interfaces.web.login import COOKIE, session_value
from conftest import Serve, Vault

TOKEN = "s3cret-token-for-login-tests"


@pytest.fixture(scope="module")
def guarded(vault: Vault) -> Iterator[Serve]:
    srv = Serve(vault, env={"CAIRN_TOKEN": TOKEN})
    yield srv
    srv.stop()


def post(srv: Serve, path: str, form: dict[str, str], headers: dict[str, str]
         ) -> tuple[int, dict[str, str], str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    data = urllib.parse.urlencode(form).encode()
    req = urllib.request.Request(srv.url + path, data=data, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded", **headers})
    try:
        with urllib.request.build_opener(NoRedirect).open(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def test_a_page_without_a_session_goes_to_the_login_form(guarded: Serve) -> None:
    status, headers, _ = get(guarded, "/?q=garden")
    assert status == 303 and headers["location"] == "/login?next=%2F%3Fq%3Dgarden"
    status, headers, html = get(guarded, "/login?next=/status")
    assert status == 200 and 'name="token" type="password"' in html
    assert "script-src 'self'" in headers["content-security-policy"]
    assert 'name="next" value="/status"' in html
    assert get(guarded, "/static/app.css")[0] == 200  # the form's stylesheet


def test_login_sets_an_httponly_samesite_strict_cookie(guarded: Serve) -> None:
    own = {"Origin": guarded.url}
    assert post(guarded, "/login", {"token": "wrong", "next": "/"}, own)[0] == 401
    status, headers, _ = post(guarded, "/login", {"token": TOKEN, "next": "/status"}, own)
    assert status == 303 and headers["location"] == "/status"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={session_value(TOKEN)};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert TOKEN not in cookie


def test_the_session_opens_safe_requests_only(guarded: Serve) -> None:
    jar = {"Cookie": f"{COOKIE}={session_value(TOKEN)}"}
    assert get(guarded, "/status", jar)[0] == 200
    assert get(guarded, "/ui/hits?q=garden", jar)[0] == 200
    assert get(guarded, "/v1/stats", jar)[0] == 200
    # nothing that changes anything: the admin route and POSTs still need the bearer token
    assert post(guarded, "/v1/index", {}, jar)[0] == 401
    assert post(guarded, "/v1/search", {}, jar)[0] == 401
    assert get(guarded, "/status", {"Cookie": f"{COOKIE}=forged"})[0] == 303
    assert get(guarded, "/v1/stats", {"Cookie": f"{COOKIE}={TOKEN}"})[0] == 401
    # the API still takes the bearer token
    assert get(guarded, "/v1/stats", {"Authorization": f"Bearer {TOKEN}"})[0] == 200


def test_forged_login_forms_and_open_redirects_are_refused(guarded: Serve) -> None:
    form = {"token": TOKEN, "next": "/"}
    assert post(guarded, "/login", form, {"Origin": "http://evil.example"})[0] == 403
    assert post(guarded, "/login", form, {})[0] == 403  # neither Origin nor Sec-Fetch-Site
    assert post(guarded, "/login", form, {"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert post(guarded, "/login", form, {"Sec-Fetch-Site": "same-origin"})[0] == 303
    assert post(guarded, "/login", form, {"Origin": "null",
                                          "Sec-Fetch-Site": "same-origin"})[0] == 303
    assert post(guarded, "/login", form, {"Origin": "null"})[0] == 403
    for bad in ("//evil.example/x", "https://evil.example", "/\\evil.example"):
        status, headers, _ = post(guarded, "/login", {"token": TOKEN, "next": bad},
                                  {"Origin": guarded.url})
        assert status == 303 and headers["location"] == "/"
    assert get(guarded, "/login", {"Host": "evil.example"})[0] == 421
    assert post(guarded, "/logout", {}, {"Origin": guarded.url})[1]["set-cookie"].startswith(
        f"{COOKIE}=;")


def test_a_next_with_control_characters_goes_home(guarded: Serve) -> None:
    own = {"Origin": guarded.url}
    for bad in ("/\t/evil.example", "/\r\nSet-Cookie: x=1", "/\n/evil.example",
                "/ok\x7f", "/a\\b", "/\x85x"):
        status, headers, _ = post(guarded, "/login", {"token": TOKEN, "next": bad}, own)
        assert (status, headers["location"]) == (303, "/"), repr(bad)
        status, _, html = get(guarded, "/login?next=" + urllib.parse.quote(bad, safe=""))
        assert status == 200 and 'name="next" value="/"' in html, repr(bad)
    status, headers, _ = post(guarded, "/login", {"token": TOKEN, "next": "/note/é?q=a b"},
                              own)
    assert (status, headers["location"]) == (303, "/note/%C3%A9?q=a%20b")


def test_head_answers_wherever_get_does(guarded: Serve) -> None:
    jar = {"Cookie": f"{COOKIE}={session_value(TOKEN)}"}
    for path in ("/status", "/", "/v1/stats", "/healthz"):
        req = urllib.request.Request(guarded.url + path, method="HEAD", headers=jar)
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200 and r.read() == b"", path
    assert get(guarded, "/status", jar)[0] == 200


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_log_in_with_the_browser(watched: Watched, guarded: Serve) -> None:  # noqa: F811
    page = watched.page
    page.goto(guarded.url + "/status")
    page.wait_for_url("**/login**")
    page.fill("#token", "wrong")
    page.press("#token", "Enter")
    page.wait_for_selector("p.error")
    page.fill("#token", TOKEN)
    page.press("#token", "Enter")
    page.wait_for_url("**/status")
    assert page.inner_text("h1") == "Status"
    assert page.evaluate("document.cookie") == ""  # HttpOnly: no script can read it
    page.goto(guarded.url + "/?q=garden")
    page.wait_for_selector("li.hit")
    page.wait_for_selector("body[data-live=on]", state="attached")  # the event stream too
    # the 401 of the wrong token is logged by the browser; nothing else is
    assert [e for e in watched.fired() if "status of 401" not in e] == []
