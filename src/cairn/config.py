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
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cairn.errors import ConfigError


def _default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("cairn", appauthor=False))


def _default_config_file() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("cairn", appauthor=False)) / "cairn.toml"


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Keyword search settings.

    ``weights`` are the BM25 column weights for title, outline path, tags and body;
    ``limit`` the default number of hits.
    """

    limit: int = 10
    weights: Mapping[str, float] = field(
        default_factory=lambda: {"title": 10.0, "outline_path": 4.0, "tags": 3.0, "body": 1.0}
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
    """

    db_path: Path
    config_file: Path | None = None
    search: SearchConfig = field(default_factory=SearchConfig)
    org: OrgConfig = field(default_factory=OrgConfig)
    graph: Mapping[str, Any] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """A short hash of the settings that change what indexing produces."""
        data = json.dumps({"org": asdict(self.org)}, sort_keys=True, default=list)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


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
        env: environment to read ``CAIRN_*`` from (default ``os.environ``).

    Raises:
        ConfigError: the config file is unreadable, is not valid TOML, or has a value
            of the wrong type; the message names the file and key.
    """
    env = os.environ if env is None else env
    explicit = config_file or env.get("CAIRN_CONFIG")
    path = Path(explicit).expanduser() if explicit else _default_config_file()
    data: dict[str, Any] = {}
    used: Path | None = None
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read config: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
        used = path
    elif explicit:
        raise ConfigError(f"{path}: config file not found")

    def section(name: str) -> dict[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: [{name}] must be a table")
        return value

    store = section("store")
    db_path: Path
    if db:
        db_path = Path(db).expanduser()
    elif env.get("CAIRN_DB"):
        db_path = Path(env["CAIRN_DB"]).expanduser()
    elif "path" in store:
        db_path = Path(str(store["path"])).expanduser()
    else:
        db_path = _default_data_dir() / "cairn.db"

    s = section("search")
    search = SearchConfig()
    try:
        if "limit" in s:
            search = SearchConfig(limit=int(s["limit"]), weights=search.weights)
        if "weights" in s:
            merged = dict(search.weights)
            merged.update({str(k): float(v) for k, v in dict(s["weights"]).items()})
            search = SearchConfig(limit=search.limit, weights=merged)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: [search] has a value of the wrong type: {exc}") from exc

    o = section("org")
    org = OrgConfig(
        tags_exclude_from_inheritance=tuple(map(str, o.get("tags_exclude_from_inheritance", ()))),
        inherited_property_keys=tuple(map(str, o.get("inherited_property_keys", ()))),
    )
    graph = section("graph")
    try:
        if "expand" in graph and not isinstance(graph["expand"], bool):
            raise TypeError("expand must be true or false")
        if "hops" in graph and int(graph["hops"]) not in (1, 2):
            raise ValueError("hops must be 1 or 2")
        for v in dict(graph.get("weights", {})).values():
            float(v)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: [graph] {exc}") from exc
    return Config(
        db_path=db_path.absolute(), config_file=used, search=search, org=org, graph=graph
    )
