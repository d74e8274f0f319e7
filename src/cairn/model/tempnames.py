"""The names of cairn's own temporary files, and which of them are leftovers.

Safe write-back writes new bytes to ``.<name>.cairn-<PID>-<8 hex>.tmp`` beside the file
and renames it into place; a writer killed in between leaves that file behind. Such a
file whose writer's process is gone is a leftover nothing will finish: write-back (in the
folder it writes to) and indexing (in every folder it walks) remove it. Nothing else is
ever matched: the name must be exactly this shape, and a live PID keeps its file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.cairn-(?P<pid>[1-9]\d{0,9})-[0-9a-f]{8}\.tmp$")
"""A temporary file of cairn's write-back: ``.<name>.cairn-<PID>-<8 hex>.tmp``."""


def temp_path(path: Path) -> Path:
    """A fresh temporary name beside ``path`` for this process (see :data:`TEMP_NAME`)."""
    import secrets  # hashlib and hmac: not for every process that imports sources

    return path.with_name(f".{path.name}.cairn-{os.getpid()}-{secrets.token_hex(4)}.tmp")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running on this machine (``True`` when it
    cannot be told: another user's process keeps its files)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process (or we cannot tell): keep its file
    return True


def is_stale_temp(name: str) -> bool:
    """Whether a file name is a cairn temporary file whose writer process is gone."""
    m = TEMP_NAME.match(name)
    return m is not None and not pid_alive(int(m.group("pid")))


def remove_stale_temps(folder: Path) -> list[Path]:
    """Remove the stale cairn temporary files directly in ``folder`` (not below it);
    the paths removed. A folder that cannot be read, or a file that cannot be removed,
    is left as it is."""
    out: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith(".") and is_stale_temp(entry.name):
            try:
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
                    out.append(Path(entry.path))
            except OSError:
                continue
    return out
