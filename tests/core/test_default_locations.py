"""The default config file and index folder are where :mod:`platformdirs` puts them,
without importing it for the plain XDG cases (a new ``cairn search`` pays for every
import)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from platformdirs import user_config_dir, user_data_dir

from cairn.config import _default_config_file, _default_data_dir

SETTINGS = [
    {},
    {"XDG_CONFIG_HOME": "/srv/conf", "XDG_DATA_HOME": "/srv/data/"},
    {"XDG_CONFIG_HOME": "", "XDG_DATA_HOME": ""},
    {"XDG_CONFIG_HOME": "   ", "XDG_DATA_HOME": "\t"},
    {"XDG_CONFIG_HOME": "relative/conf", "XDG_DATA_HOME": "~/data"},
    {"HOME": "/home/someone/"},
    {"HOME": "//double"},
    {"HOME": "relative-home"},
    {"HOME": ""},
    {"XDG_CONFIG_HOME": "/a/../b", "HOME": "/h"},
]


@pytest.mark.parametrize("env", SETTINGS, ids=str)
def test_the_defaults_are_where_platformdirs_puts_them(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _default_config_file() == Path(user_config_dir("cairn", appauthor=False),
                                          "cairn.toml")
    assert _default_data_dir() == Path(user_data_dir("cairn", appauthor=False))


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG rules are Linux's")
def test_reading_the_default_config_imports_no_platformdirs(tmp_path: Path) -> None:
    code = ("import sys\nfrom cairn.config import load_config\n"
            f"load_config(db={str(tmp_path / 'i.db')!r})\n"
            "print('platformdirs' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                              "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
                         check=True)
    assert res.stdout.strip() == "False"
