"""Plain text (``.txt``): the whole file is one document with one unit.

The title is the first non-empty line (trimmed to 120 characters) or the file stem.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from cairn.formats.guard import check_text
from cairn.model import PREAMBLE, Document, Unit


def parse(text: str, relpath: str) -> Document:
    """Parse plain text into a one-unit :class:`Document`.

    Args:
        text: decoded, normalised file text (``\\n`` line ends).
        relpath: the file's path relative to its source root.

    Returns:
        A document whose single preamble unit spans every line.

    Raises:
        cairn.errors.ParseError: binary content (:func:`cairn.formats.guard.check_text`).
    """
    check_text(text, relpath)
    stem = PurePosixPath(relpath).stem
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    title = first[:120] if first else stem
    nlines = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    unit = Unit(
        ordinal=0,
        level=0,
        kind=PREAMBLE,
        title=title,
        outline_path=(),
        body=text,
        line_start=1,
        line_end=nlines,
    )
    return Document(path=relpath, format="text", title=title, units=(unit,))
