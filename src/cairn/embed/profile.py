"""The fast profile's model: ``[embed] provider = "fast"`` uses the static model
trained on this index (``cairn embed --train-static``,
:mod:`cairn.ingest.static_training`), kept beside the index, and the shipped static
model until it exists."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cairn.config import Config

FAST = "fast"
"""The ``[embed] provider`` of the fast profile."""
def fast_model_folder(config: Config) -> Path:
    """Where the fast profile's trained model lives: ``<index file>.models/fast``
    beside the index; for a PostgreSQL index, one folder per database under the backup
    folder's parent, ``models/pg-<dbname>-<key>/fast`` (:func:`database_key`), so two
    databases never share a model."""
    if config.db_url is not None:
        return config.backup_folder.parent / "models" / database_key(config.db_url) / FAST
    return config.db_path.with_name(config.db_path.name + ".models") / FAST


def database_key(url: str) -> str:
    """A folder name for one PostgreSQL database: ``pg-<dbname>-<12 hex digits>``, the
    digits a SHA-256 of the URL without its password (user, host, port, database and
    the other parameters), so changing the password keeps the folder and the name
    shows no secret. ``postgres://`` and ``postgresql://`` name the same database."""
    import hashlib
    import re
    from urllib.parse import parse_qsl, urlencode, urlsplit

    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")
    user = netloc[0].partition(":")[0]
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query) if k != "password"))
    ident = f"postgresql://{user}@{netloc[2].lower()}{parts.path}?{query}"
    digest = hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", parts.path.strip("/"))[:40].strip("._") or "db"
    return f"pg-{name}-{digest}"


def _legacy_folder(config: Config) -> Path | None:
    """The one folder every PostgreSQL index shared before :func:`database_key`; a
    model trained there is still used until this database trains its own."""
    if config.db_url is None:
        return None
    return config.backup_folder.parent / "models" / FAST


def fast_embed(config: Config) -> Mapping[str, Any]:
    """The ``[embed]`` table search and indexing use: for provider ``fast`` without a
    ``model``, the trained folder :func:`fast_model_folder` when it holds a model
    (else the table is unchanged: the shipped static model)."""
    table = config.embed
    if table.get("provider") != FAST or table.get("model"):
        return table
    for folder in (fast_model_folder(config), _legacy_folder(config)):
        if folder is not None and (folder / "model.safetensors").is_file():
            return {**table, "model": str(folder)}
    return table
