"""What every request to the HTTP API (and the MCP HTTP transport) must pass.

Loopback by default: binding any other address needs a token. The bearer token is
compared in constant time (:func:`hmac.compare_digest`); admin routes always need it.
The Host header must name the server (DNS rebinding) and an Origin, when sent, must be
allowed; request bodies and query strings are bounded.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from cairn.errors import QueryError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback address."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refuse_unless_loopback(host: str, *, what: str) -> None:
    """Raise unless ``host`` is a loopback address.

    Raises:
        QueryError: naming ``what`` and the address.
    """
    if not is_loopback(host):
        raise QueryError(f"{what}: refusing to bind {host}: only a loopback address "
                         "(127.0.0.1, ::1) may be served without a token")


@dataclass(frozen=True, slots=True)
class Policy:
    """The checks of one server.

    Attributes:
        token: the bearer token (``None``: none configured; then only loopback binds,
            and admin routes are refused).
        hosts: accepted ``Host`` header values (names, or ``name:port``).
        origins: accepted ``Origin`` values (CORS origins configured, plus the
            server's own origins).
        max_body_bytes / max_query_chars: size limits.
        cors: the configured CORS origins alone (they get ``Access-Control-*``
            headers and their preflights are answered without the token).
    """

    token: str | None
    hosts: frozenset[str]
    origins: frozenset[str]
    max_body_bytes: int = 65536
    max_query_chars: int = 4096
    cors: frozenset[str] = frozenset()

    @classmethod
    def for_bind(
        cls,
        host: str,
        port: int,
        *,
        token: str | None,
        allowed_hosts: tuple[str, ...] = (),
        cors_origins: tuple[str, ...] = (),
        max_body_bytes: int = 65536,
        max_query_chars: int = 4096,
    ) -> Policy:
        """The policy of a server bound to ``host:port``.

        Raises:
            QueryError: a non-loopback ``host`` without a token, or an empty token.
        """
        if token is not None and not token.strip():
            raise QueryError("the token is empty: set it to a long random string")
        if token is None:
            refuse_unless_loopback(host, what="cairn serve")
        names = {host.lower(), *LOOPBACK_NAMES, *(h.lower() for h in allowed_hosts)}
        if host in ("0.0.0.0", "::"):
            names -= {host}
        hosts = {f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names}
        with_ports = {f"{n}:{port}" for n in hosts}
        own = {f"http://{n}:{port}" for n in hosts}
        return cls(token, frozenset(hosts | with_ports), frozenset(own | set(cors_origins)),
                   max_body_bytes, max_query_chars, frozenset(cors_origins))

    def host_ok(self, host: str | None) -> bool:
        """Whether a request's ``Host`` header names this server."""
        return bool(host) and host is not None and host.lower() in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        """Whether a request's ``Origin`` (absent: not a browser) is allowed."""
        return origin is None or origin in self.origins

    def token_ok(self, authorization: str | None) -> bool:
        """Whether ``Authorization: Bearer <token>`` carries the token (constant time);
        ``False`` when no token is configured."""
        if self.token is None or not authorization:
            return False
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())
