"""Cookie login for the web UI when the server has a token: a browser cannot send a
bearer token with a link, an ``EventSource`` or a page load, so ``/login`` asks for the
token once and sets a session cookie (``HttpOnly``, ``SameSite=Strict``, ``Path=/``).

:class:`CookieLogin` sits in front of the API's guard. It changes nothing when no token
is configured, nor for a request that brings its own ``Authorization`` header (the API
still takes the bearer token). With the session cookie, a **safe** request (``GET`` or
``HEAD``) outside the admin routes is passed on as if it carried the bearer token; the
cookie never authorises a request that changes anything, so a forged cross-site form
gains nothing (CSRF), and ``SameSite=Strict`` keeps the cookie off cross-site requests
anyway. The login form itself only accepts a ``POST`` whose ``Origin`` is this server's
(or, when ``Origin`` is absent or ``null``, whose ``Sec-Fetch-Site`` is
``same-origin``).

The cookie's value is an HMAC of the token (never the token itself): it stays valid
across restarts and becomes invalid when the token changes. A page load without a
session goes to ``/login?next=…``.
"""

from __future__ import annotations

import hashlib
import hmac
from html import escape
from urllib.parse import parse_qs, quote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.interfaces.api.security import Policy
from cairn.interfaces.web.routes.common import HEADERS

COOKIE = "cairn_session"
PAGES = ("/", "/note/", "/graph/", "/conversation", "/status")
"""Path prefixes of the UI's pages: without a session they redirect to the login form."""
ADMIN = ("/v1/index",)
MAX_FORM_BYTES = 4096


def session_value(token: str) -> str:
    """The session cookie's value for ``token``: ``HMAC-SHA256(token, "cairn web session")``
    as hex."""
    return hmac.new(token.encode(), b"cairn web session", hashlib.sha256).hexdigest()


def _cookie(headers: dict[str, str]) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return None


def _local(next_path: str) -> str:
    """``next_path`` when it is a path on this server, else ``/`` (no open redirect).

    Refused: anything not starting with one ``/`` (``//host`` and ``/\\host`` name
    another server), a backslash anywhere, and any control character (a browser drops
    tabs and newlines from a URL, so ``/\\t/evil.example`` becomes ``//evil.example``;
    CR and LF would also split the ``Location`` header). Non-ASCII is percent-encoded.
    """
    if (not next_path.startswith("/") or next_path[1:2] in ("/", "\\")
            or "\\" in next_path
            or any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in next_path)):
        return "/"
    return quote(next_path, safe="/?&=%#:@!$'()*+,;~-._")


def _form(next_path: str, message: str = "") -> str:
    note = f'<p class="error">{escape(message)}</p>' if message else ""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>Log in · cairn</title><link rel=\"stylesheet\" href=\"/static/app.css\">"
            "</head><body class=\"login-page\"><main><h1>cairn</h1>"
            "<p>This server needs its token (the value of <code>$CAIRN_TOKEN</code> it was "
            "started with).</p>" + note +
            "<form class=\"login\" method=\"post\" action=\"/login\">"
            f"<input type=\"hidden\" name=\"next\" value=\"{escape(next_path)}\">"
            "<input type=\"text\" name=\"username\" value=\"cairn\" autocomplete=\"username\" "
            "hidden>"
            "<label>Token <input id=\"token\" name=\"token\" type=\"password\" "
            "autocomplete=\"current-password\" required autofocus></label> "
            "<button type=\"submit\">Log in</button></form></main></body></html>")


async def _send(send: Send, status: int, body: str = "",
                extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
    headers += [(b"content-type", b"text/html; charset=utf-8"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode()})


class CookieLogin:
    """ASGI middleware in front of :class:`cairn.interfaces.api.guard.Guard` (see the
    module docstring)."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app, self.policy = app, policy
        self.session = session_value(policy.token) if policy.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.session is None:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        path: str = scope.get("path", "")
        method: str = scope.get("method", "GET")
        if "authorization" in headers or not self.policy.host_ok(headers.get("host")):
            await self.app(scope, receive, send)  # the guard decides
            return
        if path == "/login":
            await self._login(scope, receive, send, headers, method)
            return
        if path == "/logout" and method == "POST" and self._same_origin(headers):
            await _send(send, 303, extra=[
                (b"location", b"/login"),
                (b"set-cookie", f"{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; "
                 "Max-Age=0".encode())])
            return
        given = _cookie(headers)
        valid = given is not None and hmac.compare_digest(given, self.session)
        safe = method in ("GET", "HEAD") and not path.startswith(ADMIN)
        if (valid and safe) or (path.startswith("/static/") and method == "GET"):
            scope = dict(scope)
            scope["headers"] = [*scope.get("headers", []),
                                (b"authorization", f"Bearer {self.policy.token}".encode())]
        elif method == "GET" and (path == "/" or path.startswith(PAGES[1:])):
            query = scope.get("query_string", b"").decode("latin-1")
            back = path + (f"?{query}" if query else "")
            await _send(send, 303, extra=[(b"location",
                                           f"/login?next={quote(back, safe='')}".encode())])
            return
        await self.app(scope, receive, send)

    def _same_origin(self, headers: dict[str, str]) -> bool:
        origin = headers.get("origin")
        if origin == f"http://{headers.get('host', '')}":
            return True
        # the pages' Referrer-Policy no-referrer makes a browser send "Origin: null";
        # Sec-Fetch-Site is set by the browser itself and no page can forge it
        return origin in (None, "null") and headers.get("sec-fetch-site") == "same-origin"

    async def _login(self, scope: Scope, receive: Receive, send: Send,
                     headers: dict[str, str], method: str) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if method == "GET":
            await _send(send, 200, _form(_local(query.get("next", ["/"])[0])))
            return
        if method != "POST":
            await _send(send, 405, _form("/", "use the form"))
            return
        if not self._same_origin(headers):
            await _send(send, 403, _form("/", "refused: the form was not sent from this "
                                         "server's own page"))
            return
        body = b""
        while True:
            message: Message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_FORM_BYTES:
                await _send(send, 413, _form("/", "the form is too large"))
                return
            if not message.get("more_body"):
                break
        form = parse_qs(body.decode("utf-8", "replace"))
        token = form.get("token", [""])[0]
        next_path = _local(form.get("next", ["/"])[0])
        if not self.policy.token_ok(f"Bearer {token}"):
            await _send(send, 401, _form(next_path, "wrong token"))
            return
        await _send(send, 303, extra=[
            (b"location", next_path.encode()),
            (b"set-cookie", f"{COOKIE}={self.session}; HttpOnly; SameSite=Strict; "
             "Path=/".encode())])
