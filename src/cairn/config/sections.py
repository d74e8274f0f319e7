"""The sections of ``cairn.toml`` that are checked as they are read: each one's reader
(and, for the doors, its settings type).

:func:`cairn.config.load_config` has checked every section and key name and every
number (``KEYS``) before it hands a section's table to its reader here; a reader checks
what a value must be beyond that (a port, a folder, a template holding ``{path}``, a
known backend and its URL) and raises :class:`~cairn.errors.ConfigError` naming the
file, the section and the key. The readers are the package's own (hence the ``_``):
only :func:`cairn.config.load_config` calls them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cairn.config.locations import (
    BACKEND_SCHEMES,
    FILE_BACKEND,
    server_backend,
    server_url_example,
)
from cairn.errors import ConfigError


def _frozen(value: Any) -> Any:
    """A read-only copy: tables become ``MappingProxyType``, arrays tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """``[serve]``: the HTTP API (``cairn serve``).

    Attributes:
        host / port: the address to bind (loopback by default; any other address needs
            a token).
        token_env: the environment variable holding the bearer token (never the file).
        allowed_hosts: ``Host`` header values accepted besides the loopback names and the
            bound address (DNS rebinding defence).
        cors_origins: browser origins allowed to call the API (none: no CORS headers and
            any request carrying another ``Origin`` is refused).
        max_body_bytes: largest request body accepted (bytes).
        max_query_chars: longest query string (URL) and search query accepted (characters).
    """

    host: str = "127.0.0.1"
    port: int = 8765
    token_env: str = "CAIRN_TOKEN"
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 65536
    max_query_chars: int = 4096


@dataclass(frozen=True, slots=True)
class McpConfig:
    """``[mcp]``: the MCP server (``cairn mcp``).

    Attributes:
        allow_write: list and allow the tools that change the index (default off: an
            agent sees read-only tools only).
        host / port: the address of the streamable HTTP transport (loopback only).
    """

    allow_write: bool = False
    host: str = "127.0.0.1"
    port: int = 8766


def _db_url(
    path: Path, store: Mapping[str, Any], env: Mapping[str, str], db: str | None
) -> str | None:
    """The URL of a database server's index, or ``None`` for the index file: ``--db
    URL`` (an explicit file path means the file), else ``CAIRN_DB_URL`` (which selects
    the backend its scheme names by itself), else ``[store] backend`` and ``url``
    (:mod:`cairn.config.locations` lists the backends and their schemes).

    Raises:
        ConfigError: a server URL that lost a slash (``postgresql:/…``, as a path option
            leaves it), an unknown backend, or a server backend without its URL.
    """
    if db is not None:
        if server_backend(db) is None:
            return None
        if "://" not in db:
            raise ConfigError(f"{db}: a database server's URL lost a slash on the way (a "
                              "path option); give it as CAIRN_DB_URL or [store] url instead")
        return db
    from_env = env.get("CAIRN_DB_URL")
    default = (server_backend(from_env) or _first_server()) if from_env else FILE_BACKEND
    backend = str(store.get("backend", default))
    if backend not in BACKEND_SCHEMES:
        names = " or ".join(f'"{n}"' for n in BACKEND_SCHEMES)
        raise ConfigError(f"{path}: [store] backend must be {names}, not {backend!r}")
    if backend == FILE_BACKEND:
        return None
    url = from_env or store.get("url")
    if not isinstance(url, str) or server_backend(url) != backend or "://" not in url:
        raise ConfigError(f'{path}: [store] backend = "{backend}" needs url = '
                          f'"{server_url_example(backend)}" (or CAIRN_DB_URL)')
    return url


def _first_server() -> str:
    """The first backend that is not :data:`~cairn.config.locations.FILE_BACKEND` (what a
    ``CAIRN_DB_URL`` of no known scheme is read as, so it is refused as that
    backend's URL)."""
    return next(n for n in BACKEND_SCHEMES if n != FILE_BACKEND)


REDACT_MODES = ("mask", "drop-unit", "off")


def _redact(path: Path, redact: Mapping[str, Any]) -> Mapping[str, Any]:
    """``[redact] on_ingest``: one mode for every format, or a table of modes keyed by
    ``chats``, ``notes`` or a format name (``markdown``, ``chatgpt`` …); the value is
    normalised to that table."""
    value = redact.get("on_ingest")
    if value is None:
        return MappingProxyType({})
    table = {"chats": value, "notes": value} if isinstance(value, str) else value
    if not isinstance(table, Mapping) or any(
        not isinstance(v, str) or v not in REDACT_MODES for v in table.values()
    ):
        raise ConfigError(
            f"{path}: [redact] on_ingest must be one of {', '.join(REDACT_MODES)}, or a "
            'table of them keyed by "chats", "notes" or a format name, e.g. '
            '{ chats = "mask", notes = "mask", markdown = "off" }'
        )
    table_: Mapping[str, Any] = _frozen({"on_ingest": dict(table)})
    return table_


def _backup_dir(path: Path, writeback: Mapping[str, Any]) -> Path | None:
    """``[writeback] backup_dir``: a folder path (``~`` expanded), or ``None``."""
    value = writeback.get("backup_dir")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: [writeback] backup_dir must be a folder path")
    return Path(value).expanduser().absolute()


def _keep(path: Path, writeback: Mapping[str, Any], key: str, default: float) -> float:
    """``[writeback] keep_days`` / ``keep_per_file``: a number ≥ 0 (``0``: no limit;
    ``keep_per_file`` a whole number)."""
    value = writeback.get(key, default)
    whole = key == "keep_per_file"
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or (
        whole and not float(value).is_integer()
    ):
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{path}: [writeback] {key} must be {kind} ≥ 0 (0: no limit)")
    return float(value)


def _web(path: Path, web: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``[web]`` section, checked: ``editor_url`` is a string holding ``{path}``."""
    url = web.get("editor_url")
    if url is not None and (not isinstance(url, str) or "{path}" not in url):
        raise ConfigError(f"{path}: [web] editor_url must be a string holding {{path}} "
                          "(and optionally {line}), e.g. \"vscode://file{path}:{line}\"")
    checked: Mapping[str, Any] = _frozen(web)
    return checked


def _doors(
    path: Path, serve: Mapping[str, Any], mcp: Mapping[str, Any]
) -> tuple[ServeConfig, McpConfig]:
    """The ``[serve]`` and ``[mcp]`` sections, checked (a wrong type is a ConfigError)."""

    def strings(value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{key} must be a list of strings")
        return tuple(value)

    def positive(value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TypeError(f"{key} must be a positive integer")
        return value

    def port(value: Any, key: str) -> int:
        if positive(value, key) > 65535:
            raise TypeError(f"{key} must be a TCP port, 1 to 65535")
        return int(value)

    def text(value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise TypeError(f"{key} must be a non-empty string")
        return value

    d = ServeConfig()
    try:
        s = ServeConfig(
            host=text(serve.get("host", d.host), "host"),
            port=port(serve.get("port", d.port), "port"),
            token_env=text(serve.get("token_env", d.token_env), "token_env"),
            allowed_hosts=strings(serve.get("allowed_hosts", ()), "allowed_hosts"),
            cors_origins=strings(serve.get("cors_origins", ()), "cors_origins"),
            max_body_bytes=positive(serve.get("max_body_bytes", d.max_body_bytes),
                                    "max_body_bytes"),
            max_query_chars=positive(serve.get("max_query_chars", d.max_query_chars),
                                     "max_query_chars"),
        )
    except TypeError as exc:
        raise ConfigError(f"{path}: [serve] {exc}") from exc
    m = McpConfig()
    try:
        if not isinstance(mcp.get("allow_write", False), bool):
            raise TypeError("allow_write must be true or false")
        mc = McpConfig(
            allow_write=bool(mcp.get("allow_write", False)),
            host=text(mcp.get("host", m.host), "host"),
            port=port(mcp.get("port", m.port), "port"),
        )
    except TypeError as exc:
        raise ConfigError(f"{path}: [mcp] {exc}") from exc
    return s, mc
