"""Non-note files (images, ``.base``, PDFs …) in an export: where each is copied, and
where a link that resolved to one must point."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.export.results import Skipped
from cairn.writeback import create_file

if TYPE_CHECKING:
    from cairn.export.notes import ExportReport


def safe_part(part: str) -> str:
    """A path segment safe on every file system (``_`` for what is not)."""
    part = re.sub(r"[\x00-\x1f/\\:*?\"<>|]", "_", part).strip(" .")
    return part[:120] or "_"


def attachment_rel(root_name: str, relpath: str) -> str:
    """The dest-relative path an attachment (a non-note file) is copied to."""
    parts = [safe_part(p) for p in relpath.split("/")]
    if root_name:
        parts.insert(0, safe_part(root_name))
    return "/".join(parts)


def attachment_of(reason: str | None) -> str | None:
    """The root-relative path of the existing attachment a link resolved to (the
    resolver records ``attachment: <path>`` as its reason), else ``None``."""
    if reason and reason.startswith("attachment: "):
        return reason[len("attachment: ") :]
    return None


def copy_attachments(
    dest: Path, attachments: Sequence[tuple[str, str, str]], used: set[str], rep: ExportReport
) -> None:
    """Copy ``(root name, relpath, absolute path)`` files byte for byte to the same
    place under ``dest`` (a path in ``used``, lower-cased, is not overwritten), so
    links and embeds to them keep resolving; a file that cannot be read is named in
    ``rep.skipped``."""
    for root_name, relpath, source in attachments:
        out = attachment_rel(root_name, relpath)
        if out.lower() in used:
            continue
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            rep.skipped.append(Skipped(relpath, f"cannot read: {exc.strerror or exc}"))
            continue
        used.add(out.lower())
        create_file(dest / out, data)
        rep.files.append(out)
