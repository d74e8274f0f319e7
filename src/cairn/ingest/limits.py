"""The ``[index]`` settings: per-file limits, the deletion guard, the writer lock.

Example ``cairn.toml``::

    [index]
    file_seconds = 60        # a file whose parse takes longer is reported, not indexed
    file_memory_mb = 2048    # address-space limit of each parsing worker process
    max_file_mb = 100        # larger files are reported without being read
    mass_delete_share = 0.5  # a run that would remove more of a root stops
    wait = 0                 # seconds to wait for another writer (-1: as long as it takes)
    templates = "skip"       # an Obsidian vault's template folders: "skip" or "index"
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.errors import CairnError, ConfigError
from cairn.globs import glob_problem
from cairn.model import Failure, SourceRoot

MASS_DELETE_MIN_FILES = 10
"""Roots with fewer indexed files than this are never guarded (emptying a tiny folder
is an ordinary edit)."""


class MassDelete(CairnError):
    """A run would remove more than ``[index] mass_delete_share`` of a root's files (an
    unmounted drive looks like an empty folder); nothing was removed."""


@dataclass(frozen=True, slots=True)
class IndexLimits:
    """Bounds of one index run.

    Attributes:
        file_seconds: wall-clock seconds one file may take to parse (``0``: no limit).
        file_memory_mb: address-space limit, in MiB, of each parsing worker process
            (``0``: none); the main process is not limited.
        max_file_mb: files larger than this (MiB) are reported, not read (``0``: none).
        mass_delete_share: the share (0–1] of a root's indexed files a run may remove
            before it stops and asks for ``allow_mass_delete`` (``1``: never stops).
        wait: seconds to wait for another writer's lock (``None``: as long as it takes).
        skip_templates: leave out the template folders Obsidian vaults name
            (``[index] templates = "skip"``, the default; ``"index"``: index them).
    """

    file_seconds: float = 60.0
    file_memory_mb: int = 2048
    max_file_mb: float = 100.0
    mass_delete_share: float = 0.5
    wait: float | None = 0.0
    skip_templates: bool = True

    @property
    def max_bytes(self) -> int:
        """:attr:`max_file_mb` in bytes (``0``: no limit)."""
        return int(self.max_file_mb * 1024 * 1024)

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> IndexLimits:
        """Read an ``[index]`` table.

        Raises:
            ConfigError: a value of the wrong type or out of range.
        """
        d = cls()
        try:
            wait = float(table.get("wait", 0))
            out = cls(
                file_seconds=float(table.get("file_seconds", d.file_seconds)),
                file_memory_mb=int(table.get("file_memory_mb", d.file_memory_mb)),
                max_file_mb=float(table.get("max_file_mb", d.max_file_mb)),
                mass_delete_share=float(table.get("mass_delete_share", d.mass_delete_share)),
                wait=None if wait < 0 else wait,
                skip_templates=_templates(table.get("templates", "skip")),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[index] has a value of the wrong type: {exc}") from exc
        if not 0 < out.mass_delete_share <= 1:
            raise ConfigError("[index] mass_delete_share must be in (0, 1]")
        if min(out.file_seconds, out.file_memory_mb, out.max_file_mb) < 0:
            raise ConfigError("[index] limits must be 0 (none) or positive")
        return out


def check_mass_delete(
    root_path: str, known: int, removing: int, share: float, allowed: bool
) -> None:
    """Stop a run that would remove too much of one root.

    Args:
        root_path: the root folder (for the message).
        known: files of the root in the index; ``removing``: how many would go.
        share: :attr:`IndexLimits.mass_delete_share`; ``allowed``: the user said so.

    Raises:
        MassDelete: more than ``share`` of at least :data:`MASS_DELETE_MIN_FILES` files.
    """
    if allowed or known < MASS_DELETE_MIN_FILES or removing <= share * known:
        return
    raise MassDelete(
        f"{root_path}: this run would remove {removing} of its {known} indexed files "
        f"(more than {share:.0%}; is a drive unmounted or a folder moved away?); nothing "
        "was removed. If they are really gone, run again with --allow-mass-delete"
    )


def _templates(value: Any) -> bool:
    """``[index] templates``: ``"skip"`` → ``True``, ``"index"`` → ``False``.

    Raises:
        ConfigError: any other value.
    """
    if value in ("skip", "index"):
        return bool(value == "skip")
    raise ConfigError(f'[index] templates must be "skip" or "index", not {value!r}')


def glob_failure(root: SourceRoot) -> Failure | None:
    """The failure to report for a root registered with an unusable glob (stored before
    globs were checked), or ``None`` when its globs are usable. Such a glob matches
    nothing, so indexing the root would remove every file of it: the caller reports the
    failure and leaves the root as indexed."""
    for option, patterns in (("--include", root.include), ("--exclude", root.exclude)):
        for p in patterns:
            why = glob_problem(p)
            if why is not None:
                return Failure(root.path, f"{option} {p!r}: {why}; the folder is left as "
                               f"indexed: run `cairn index {root.path}` again with usable "
                               "globs (or none)")
    return None
