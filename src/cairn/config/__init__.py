"""Configuration: ``cairn.toml`` plus ``CAIRN_*`` environment variables → a frozen Config.

Precedence, highest first: explicit arguments (``--db``), environment (``CAIRN_DB``,
``CAIRN_CONFIG``), the config file, defaults. The config file is ``$CAIRN_CONFIG`` or
``<user config dir>/cairn/cairn.toml`` (``~/.config/cairn/cairn.toml`` on Linux).

Example ``cairn.toml``::

    [store]
    path = "~/notes/.cairn.db"

    [search]
    limit = 10
    weights = { title = 10.0, outline_path = 4.0, tags = 3.0, body = 1.0 }

    [org]
    tags_exclude_from_inheritance = ["project"]
    inherited_property_keys = ["CATEGORY"]

    [graph]
    expand = true                      # search follows links from its top hits
    hops = 2
    weights = { related = 0.4, contradicts = -1.0 }

The file is read once, here: every section and key is checked against :data:`KEYS` (an
unknown one is a :class:`ConfigError` naming the file, the key and the nearest known
spelling), and the sections other layers interpret (``[embed]``, ``[fusion]``,
``[chunking]``, ``[graph]``) are handed on as frozen tables.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cairn.config.locations import server_backend
from cairn.config.sections import (
    REDACT_MODES,
    McpConfig,
    ServeConfig,
    _backup_dir,
    _db_url,
    _doors,
    _frozen,
    _keep,
    _redact,
    _web,
)
from cairn.errors import ConfigError

__all__ = [
    "KEYS", "REDACT_MODES", "Config", "McpConfig", "OrgConfig", "SearchConfig",
    "ServeConfig", "in_file", "load_config",
]

KEYS: Mapping[str, frozenset[str]] = {
    "store": frozenset({"path", "backend", "url"}),
    "search": frozenset({"limit", "weights"}),
    "org": frozenset({"tags_exclude_from_inheritance", "inherited_property_keys"}),
    "embed": frozenset({"provider", "batch_size", "url", "model", "api_key_env", "dim", "threads"}),
    "fusion": frozenset(
        {
            "method",
            "rrf_k",
            "weights",
            "alpha",
            "beta",
            "gamma",
            "delta",
            "epsilon",
            "lambda",
            "decay_lambda",
            "depth",
            "relative",
            "coverage",
            "document",
            "link_hop",
            "per_file",
            "min_similarity",
        }
    ),
    "chunking": frozenset({"default_profile", "profiles"}),
    "rerank": frozenset(
        {"provider", "enabled", "top_k", "path", "max_tokens", "threads", "url", "model",
         "api_key_env", "timeout"}
    ),
    "graph": frozenset({"expand", "hops", "alpha", "reverse", "seeds", "origins", "weights"}),
    "serve": frozenset(
        {
            "host",
            "port",
            "token_env",
            "allowed_hosts",
            "cors_origins",
            "max_body_bytes",
            "max_query_chars",
        }
    ),
    "mcp": frozenset({"allow_write", "host", "port"}),
    "index": frozenset(
        {"file_seconds", "file_memory_mb", "max_file_mb", "mass_delete_share", "wait",
         "templates"}
    ),
    "watch": frozenset({"debounce_ms", "poll", "poll_ms", "recheck_seconds"}),
    "daemon": frozenset({"idle_minutes"}),
    "writeback": frozenset({"backup_dir", "keep_days", "keep_per_file"}),
    "web": frozenset({"editor_url"}),
    "dream": frozenset(
        {
            "old_days",
            "heavily_linked",
            "thin_chars",
            "duplicate_similarity",
            "duplicate_min_chars",
            "entity_min",
            "entity_folder",
            "stale_status",
            "keep_reports",
            "schedule_minutes",
        }
    ),
    "redact": frozenset({"on_ingest"}),
    "enrich": frozenset(
        {
            "provider", "url", "model", "api_key_env", "timeout", "max_tokens", "max_chars",
            "similarity", "max_pairs", "min_confidence", "retries", "retry_after_max",
            "price_input", "price_output", "tag_aliases", "max_tags",
        }
    ),
}
"""Every section of ``cairn.toml`` and the keys it may hold (``docs/reference/configuration.md``
documents each)."""

_INTS = {"search.limit", "embed.batch_size", "embed.dim", "embed.threads", "fusion.depth",
         "fusion.per_file",
         "rerank.top_k", "rerank.max_tokens", "rerank.threads", "graph.hops", "graph.seeds",
         "index.file_memory_mb", "watch.debounce_ms", "watch.poll_ms", "dream.old_days",
         "dream.heavily_linked", "dream.thin_chars", "dream.duplicate_min_chars",
         "dream.entity_min", "dream.keep_reports", "enrich.max_tokens", "enrich.max_chars",
         "enrich.max_pairs", "enrich.retries", "enrich.max_tags"}
_NUMBERS = {*(f"fusion.{k}" for k in ("rrf_k", "alpha", "beta", "gamma", "delta", "epsilon",
                                      "lambda", "decay_lambda", "min_similarity", "relative",
                                      "coverage", "document", "link_hop")),
            "rerank.timeout", "graph.alpha", "graph.reverse", "index.file_seconds",
            "index.max_file_mb", "index.mass_delete_share", "index.wait", "daemon.idle_minutes",
            "watch.recheck_seconds", "dream.duplicate_similarity", "dream.schedule_minutes",
            *(f"enrich.{k}" for k in ("timeout", "similarity", "min_confidence",
                                      "retry_after_max", "price_input", "price_output"))}
"""Keys whose value is a number (``_INTS``: a whole one), checked as the file is read."""


def _check_keys(path: Path, data: Mapping[str, Any]) -> None:
    """Refuse an unknown section or key (naming the nearest spelling) or a non-number."""

    def hint(word: str, known: Any) -> str:
        import difflib

        near = difflib.get_close_matches(word, sorted(known), n=1)
        return f" (did you mean {near[0]!r}?)" if near else ""

    for name, value in data.items():
        if name not in KEYS:
            raise ConfigError(
                f"{path}: unknown section [{name}]{hint(name, KEYS)}; "
                f"known sections: {', '.join(sorted(KEYS))}"
            )
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: [{name}] must be a table")
        for key in value:
            if key not in KEYS[name]:
                raise ConfigError(
                    f"{path}: [{name}] has an unknown key {key!r}{hint(key, KEYS[name])}; "
                    f"known keys: {', '.join(sorted(KEYS[name]))}"
                )
            v, dotted = value[key], f"{name}.{key}"
            whole = dotted in _INTS
            if (whole or dotted in _NUMBERS) and (
                isinstance(v, bool) or not isinstance(v, int | float)
                or (whole and not float(v).is_integer())
            ):
                raise ConfigError(f"{path}: [{name}] {key} must be "
                                  f"{'a whole number' if whole else 'a number'}, not {v!r}")


def _env_embed(env: Mapping[str, str], table: Mapping[str, Any] | None = None) -> Any:
    """The ``[embed]`` table with ``CAIRN_EMBED`` (when set) as its ``provider``; also the
    default of a :class:`Config` built directly, so ``CAIRN_EMBED=none`` holds there too."""
    embed = dict(table or {})
    if env.get("CAIRN_EMBED"):
        embed["provider"] = env["CAIRN_EMBED"]
    return _frozen(embed)


def _default_data_dir() -> Path:
    plain = _xdg("XDG_DATA_HOME", ".local/share")
    if plain is not None:
        return plain
    from platformdirs import user_data_dir

    return Path(user_data_dir("cairn", appauthor=False))


def _default_config_file() -> Path:
    plain = _xdg("XDG_CONFIG_HOME", ".config")
    if plain is not None:
        return plain / "cairn.toml"
    from platformdirs import user_config_dir

    return Path(user_config_dir("cairn", appauthor=False)) / "cairn.toml"


def _xdg(variable: str, under_home: str) -> Path | None:
    """cairn's folder under an XDG base directory on Linux in the plain cases (the
    variable an absolute path, or unset with an absolute ``$HOME``), as
    :mod:`platformdirs` names it; ``None`` for platformdirs to decide (other systems,
    unusual settings). Importing platformdirs costs a new ``cairn search`` more than
    its keyword search does."""
    if sys.platform != "linux":
        return None
    base = os.environ.get(variable, "")
    if os.path.isabs(base):
        return Path(base, "cairn")
    home = os.environ.get("HOME", "")
    if base or not os.path.isabs(home):
        return None
    return Path(home, under_home, "cairn")


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Keyword search settings.

    ``weights`` are the BM25 column weights for title, outline path, tags and body;
    ``limit`` the default number of hits.
    """

    limit: int = 10
    weights: Mapping[str, float] = field(
        default_factory=lambda: {"title": 10.0, "outline_path": 4.0, "tags": 3.0, "body": 1.0}
        | {"meta": 2.0}  # frontmatter, properties, TODO keywords (the meta FTS column)
    )


@dataclass(frozen=True, slots=True)
class OrgConfig:
    """Org parsing options (Org's own defaults when unset)."""

    tags_exclude_from_inheritance: tuple[str, ...] = ()
    inherited_property_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration, frozen.

    Attributes:
        db_path: the SQLite index file.
        config_file: the file it was read from, or ``None``.
        search / org: section settings.
        graph: the ``[graph]`` table as written: ``expand`` (search expands by default),
            ``hops``, ``alpha``, ``reverse``, ``seeds``, ``origins`` and per-relation
            ``weights`` (see :class:`cairn.graph.expand.ExpandConfig`).
        embed / fusion / chunking: the ``[embed]`` (with ``CAIRN_EMBED`` applied as its
            ``provider``), ``[fusion]`` and ``[chunking]`` tables, read-only, for
            :class:`cairn.embed.registry.EmbedConfig`,
            :class:`cairn.search.fusion.FusionConfig` and the chunking settings.
        serve / mcp: the HTTP API's and the MCP server's settings.
        index / watch: the ``[index]`` and ``[watch]`` tables, read-only (see
            :class:`cairn.ingest.limits.IndexLimits` and
            :class:`cairn.serving.watch.WatchSettings`).
        daemon: the ``[daemon]`` table, read-only (:mod:`cairn.serving.daemon`).
        db_url: the PostgreSQL URL when ``[store] backend = "postgres"`` (``url``, or
            ``CAIRN_DB_URL``); ``None`` for the SQLite file at ``db_path``.
        backup_dir: ``[writeback] backup_dir`` (see :attr:`backup_folder`).
        backup_keep_days / backup_keep_per_file: ``[writeback] keep_days`` (default 30)
            and ``keep_per_file`` (default 10), how long and how many backups of a file
            are kept (``0``: no limit; :meth:`cairn.writeback.Backups.prune`).
        dream: the ``[dream]`` table as written (see
            :class:`cairn.maintain.dream.DreamSettings`).
        web: the ``[web]`` table as written: ``editor_url``, the template of the web UI's
            "open in editor" links (``{path}``, ``{line}``).
        enrich: the ``[enrich]`` table as written (see
            :class:`cairn.enrich.settings.EnrichSettings`).
        rerank: the ``[rerank]`` table as written (see
            :class:`cairn.embed.rerank.RerankConfig`).
    """

    db_path: Path
    config_file: Path | None = None
    search: SearchConfig = field(default_factory=SearchConfig)
    org: OrgConfig = field(default_factory=OrgConfig)
    graph: Mapping[str, Any] = field(default_factory=dict)
    embed: Mapping[str, Any] = field(default_factory=lambda: _env_embed(os.environ))
    fusion: Mapping[str, Any] = field(default_factory=dict)
    chunking: Mapping[str, Any] = field(default_factory=dict)
    serve: ServeConfig = field(default_factory=ServeConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    index: Mapping[str, Any] = field(default_factory=dict)
    watch: Mapping[str, Any] = field(default_factory=dict)
    daemon: Mapping[str, Any] = field(default_factory=dict)
    web: Mapping[str, Any] = field(default_factory=dict)
    dream: Mapping[str, Any] = field(default_factory=dict)
    backup_dir: Path | None = None
    db_url: str | None = None
    redact: Mapping[str, Any] = field(default_factory=dict)
    enrich: Mapping[str, Any] = field(default_factory=dict)
    rerank: Mapping[str, Any] = field(default_factory=dict)
    backup_keep_days: float = 30.0
    backup_keep_per_file: int = 10

    @property
    def backup_folder(self) -> Path:
        """Where safe write-back keeps replaced bytes: ``[writeback] backup_dir``, else
        ``<index file>.backups`` beside the index (see :mod:`cairn.writeback`)."""
        if self.backup_dir is not None:
            return self.backup_dir
        if self.db_url is not None:
            return _default_data_dir() / "backups"
        return self.db_path.with_name(self.db_path.name + ".backups")

    @property
    def types_file(self) -> Path | None:
        """A ``types.yaml`` beside the config file (used for roots without their own)."""
        return self.config_file.parent / "types.yaml" if self.config_file else None

    def fingerprint(self) -> str:
        """A short hash of the settings that change what indexing produces."""
        import hashlib

        # the parsers' output (raised when a rule changes: titles, tags, chat order)
        # and what is masked on ingest (the detectors' version) change what is stored
        settings: dict[str, Any] = {"org": asdict(self.org), "parse": 6}
        settings["redact"] = [2, dict(self.redact)]
        data = json.dumps(settings, sort_keys=True, default=list)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def in_file(exc: ConfigError, path: Path | None) -> ConfigError:
    """``exc`` naming the config file it came from: a section's check that does not know
    the file (``[fusion] method must be …``) gets ``PATH: `` in front; an error that
    already names one, or a configuration not read from a file, is returned as it is."""
    msg = str(exc)
    if path is None or not msg.startswith("["):
        return exc
    return ConfigError(f"{path}: {msg}")


def load_config(
    *,
    db: str | os.PathLike[str] | None = None,
    config_file: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Build the configuration.

    Args:
        db: explicit index path (``--db``), overriding everything.
        config_file: explicit config file; else ``CAIRN_CONFIG``; else the user default
            (read only if it exists).
        env: environment to read ``CAIRN_*`` from (default ``os.environ``):
            ``CAIRN_DB``, ``CAIRN_CONFIG``, ``CAIRN_EMBED`` (overrides ``[embed] provider``).

    Raises:
        ConfigError: the config file is unreadable, is not valid TOML, has an unknown
            section or key, or a value of the wrong type; the message names the file
            and key.
    """
    env = os.environ if env is None else env
    explicit = config_file or env.get("CAIRN_CONFIG")
    path = Path(explicit).expanduser() if explicit else _default_config_file()
    data: dict[str, Any] = {}
    used: Path | None = None
    if path.is_file():
        import tomllib  # only when there is a file: start-up (bench/startup.py)

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read config: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
        used = path
    elif explicit and path.is_dir():
        raise ConfigError(f"{path}: a folder, not a config file (name the cairn.toml in it)")
    elif explicit:
        raise ConfigError(f"{path}: config file not found")
    _check_keys(path, data)

    def section(name: str) -> dict[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: [{name}] must be a table")
        return value

    store = section("store")
    db_path: Path
    if db and server_backend(str(db)) is None:
        db_path = Path(db).expanduser()
    elif db:
        db_path = _default_data_dir() / "cairn.db"  # unused: the index is on the server
    elif env.get("CAIRN_DB"):
        db_path = Path(env["CAIRN_DB"]).expanduser()
    elif "path" in store:
        if not isinstance(store["path"], str) or not store["path"].strip():
            raise ConfigError(f'{path}: [store] path must be a file name such as "~/cairn.db", '
                              f"not {store['path']!r}")
        db_path = Path(store["path"]).expanduser()
    else:
        db_path = _default_data_dir() / "cairn.db"

    s = section("search")
    search = SearchConfig()
    if "limit" in s:  # a whole number: _check_keys
        search = SearchConfig(limit=int(s["limit"]), weights=search.weights)
        if search.limit < 1:
            raise ConfigError(f"{path}: [search] limit must be 1 or more, not {search.limit}")
    if "weights" in s:
        merged = dict(search.weights)
        for k, v in dict(s["weights"]).items():
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ConfigError(f"{path}: [search] weights.{k} must be a number, not {v!r}")
            merged[str(k)] = float(v)
        search = SearchConfig(limit=search.limit, weights=merged)

    o = section("org")
    org = OrgConfig(
        tags_exclude_from_inheritance=tuple(map(str, o.get("tags_exclude_from_inheritance", ()))),
        inherited_property_keys=tuple(map(str, o.get("inherited_property_keys", ()))),
    )
    graph = section("graph")
    try:
        if "expand" in graph and not isinstance(graph["expand"], bool):
            raise TypeError("expand must be true or false")
        if graph.get("hops", 1) not in (1, 2):
            raise ValueError("hops must be 1 or 2")
        for k, v in dict(graph.get("weights", {})).items():
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise TypeError(f"weights.{k} must be a number, not {v!r}")
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: [graph] {exc}") from exc
    serve, mcp = _doors(path, section("serve"), section("mcp"))
    return Config(
        db_path=db_path.absolute(),
        config_file=used,
        search=search,
        org=org,
        graph=_frozen(graph),
        embed=_env_embed(env, section("embed")),
        fusion=_frozen(section("fusion")),
        chunking=_frozen(section("chunking")),
        serve=serve,
        mcp=mcp,
        index=_frozen(section("index")),
        watch=_frozen(section("watch")),
        daemon=_frozen(section("daemon")),
        web=_web(path, section("web")),
        dream=_frozen(section("dream")),
        backup_dir=_backup_dir(path, section("writeback")),
        db_url=_db_url(path, store, env, str(db) if db else None),
        redact=_redact(path, section("redact")),
        enrich=_frozen(section("enrich")),
        rerank=_frozen(section("rerank")),
        backup_keep_days=_keep(path, section("writeback"), "keep_days", 30.0),
        backup_keep_per_file=int(_keep(path, section("writeback"), "keep_per_file", 10)),
    )
