"""An entry in an OKF bundle's ``log.md`` (OKF §log.md: date-grouped ``## YYYY-MM-DD``
headings, newest first, prose bullets with a leading bold verb)."""

from __future__ import annotations

import re

_DATE_H = re.compile(r"^## (\d{4}-\d{2}-\d{2})\b")


def add_log_entry(text: str, date: str, entry: str) -> str:
    """``text`` (a ``log.md``, may be empty) with ``- entry`` added under ``## date``.

    The bullet goes first under an existing heading of that date; otherwise a new
    heading goes before the first (newest) date heading, or at the end. Every other
    line is kept byte for byte (line ends follow the file's first line end).

    Args:
        text: the current ``log.md`` text.
        date: ``YYYY-MM-DD``.
        entry: the bullet's text (``"**Update** set status: deprecated on x.md"``).
    """
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    bullet = f"- {entry}{eol}"
    for i, line in enumerate(lines):
        m = _DATE_H.match(line)
        if not m:
            continue
        if m.group(1) == date:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            return "".join([*lines[:i + 1], eol, bullet, *lines[j:]]) if j == i + 1 \
                else "".join([*lines[:j], bullet, *lines[j:]])
        return "".join([*lines[:i], f"## {date}{eol}", eol, bullet, eol, *lines[i:]])
    if not text:
        return f"# Log{eol}{eol}## {date}{eol}{eol}{bullet}"
    tail = "" if text.endswith("\n") else eol
    return text + tail + f"{eol}## {date}{eol}{eol}{bullet}"
