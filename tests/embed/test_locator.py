"""The model locator: package data → installed package → user cache → hub (a seam)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.embed.locator import ModelLocator, ModelSpec
from cairn.errors import ProviderUnavailable

SPEC = ModelSpec(name="tiny", required=("model.bin", "tokenizer.json"), repo_id="org/tiny")


def _make(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.bin").write_bytes(b"w")
    (folder / "tokenizer.json").write_text("{}")
    return folder


def test_order_package_then_cache_then_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("CAIRN_OFFLINE", raising=False)
    calls: list[tuple[str, Path]] = []

    def fetch(repo: str, dest: Path) -> Path:
        calls.append((repo, dest))
        return _make(dest)

    pkg, cache = tmp_path / "pkg", tmp_path / "cache"
    loc = ModelLocator(package_dir=pkg, cache_dir=cache, fetch=fetch)
    folder, origin = loc.locate(SPEC)  # nothing anywhere: the hub seam is called
    assert origin == "hub" and calls == [("org/tiny", cache / "tiny")]
    assert folder == cache / "tiny"
    folder, origin = loc.locate(SPEC)  # now cached: no second download
    assert origin == "cache" and len(calls) == 1
    _make(pkg / "tiny")
    assert loc.locate(SPEC) == (pkg / "tiny", "package")


def test_incomplete_folder_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "tiny").mkdir(parents=True)
    (tmp_path / "pkg" / "tiny" / "model.bin").write_bytes(b"w")
    loc = ModelLocator(package_dir=tmp_path / "pkg", cache_dir=tmp_path / "c", allow_download=False)
    with pytest.raises(ProviderUnavailable, match="not found"):
        loc.locate(SPEC)


def test_offline_never_calls_the_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def fetch(repo: str, dest: Path) -> Path:
        raise AssertionError("downloaded while offline")

    loc = ModelLocator(package_dir=tmp_path / "p", cache_dir=tmp_path / "c", fetch=fetch)
    with pytest.raises(ProviderUnavailable, match="offline"):
        loc.locate(SPEC)


def test_installed_package_step(tmp_path: Path) -> None:
    import sys
    import types

    folder = _make(tmp_path / "shipped")
    mod = types.ModuleType("fake_model_pkg")
    mod.get_path = lambda: folder  # type: ignore[attr-defined]
    sys.modules["fake_model_pkg"] = mod
    try:
        spec = ModelSpec(name="tiny", required=SPEC.required, package="fake_model_pkg:get_path")
        loc = ModelLocator(
            package_dir=tmp_path / "p", cache_dir=tmp_path / "c", allow_download=False
        )
        assert loc.locate(spec) == (folder, "installed")
    finally:
        del sys.modules["fake_model_pkg"]
