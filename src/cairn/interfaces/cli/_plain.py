"""What the CLI prints without Typer or Rich: styled lines, one JSON document, errors.

Typer (with pydantic) and Rich cost a new process more than a keyword search itself
(see ``bench/startup.py``), so the output of ``cairn search`` is written here, by both
the fast path (:mod:`._fast`) and the Typer command (:mod:`.search`): one renderer, the
same text. Styles are ANSI codes, as Rich writes them, when the stream is a terminal
(or ``FORCE_COLOR`` is set; ``NO_COLOR`` keeps bold and dim but drops colours;
``TERM=dumb`` none). It imports neither Typer nor Rich.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from cairn.model.serialize import to_json

if TYPE_CHECKING:
    from cairn.app import Cairn

_CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
_COLOURS = frozenset({"red", "yellow", "blue", "magenta", "cyan"})
_STRIP = str.maketrans(dict.fromkeys((7, 8, 11, 12, 13, 27)))
"""Bell, backspace, vertical tab, form feed, carriage return (as Rich strips them) and
escape: text from notes cannot move the cursor or restyle the terminal."""


class Printer:
    """Lines to standard output (or error), styled when that stream is a terminal.

    The stream is looked up at each call (``sys.stdout`` may be replaced, as test
    runners do).
    """

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr

    @property
    def stream(self) -> TextIO:
        """The stream written to now."""
        return sys.stderr if self.stderr else sys.stdout

    def styled(self) -> bool:
        """Whether styles are written (a terminal, or ``FORCE_COLOR``)."""
        if os.environ.get("FORCE_COLOR"):
            return True
        if os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
            return False
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):
            return False

    def paint(self, text: str, style: str = "") -> str:
        """``text`` (control characters removed) in ``style`` (space-separated words
        of ``bold dim red yellow blue magenta cyan``), or plain when not styled."""
        text = text.translate(_STRIP)
        if not text or not style or not self.styled():
            return text
        words = style.split()
        if os.environ.get("NO_COLOR"):
            words = [w for w in words if w not in _COLOURS]
        codes = ";".join(_CODES[w] for w in words if w in _CODES)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text

    def spans(self, text: str, spans: tuple[tuple[int, int], ...], style: str) -> str:
        """``text`` with the character ranges ``spans`` (``[start, end)``) in ``style``."""
        parts: list[str] = []
        at = 0
        for a, b in sorted(spans):
            a, b = max(a, at), min(b, len(text))
            if a >= b:
                continue
            parts += [self.paint(text[at:a]), self.paint(text[a:b], style)]
            at = b
        parts.append(self.paint(text[at:]))
        return "".join(parts)

    def line(self, *parts: str) -> None:
        """Write ``parts`` (already painted) as one line."""
        self.stream.write("".join(parts) + "\n")


out = Printer()
"""Standard output."""
err = Printer(stderr=True)
"""Standard error: notes, warnings, errors."""


def json_text(data: object, *, indent: int | None = 2) -> str:
    """``data`` as one JSON document for standard output: non-ASCII characters escaped
    when that stream's encoding is not UTF-8 (``PYTHONIOENCODING=ascii``, a Latin-1
    locale), so the document stays valid JSON whatever the stream can encode."""
    encoding = str(getattr(sys.stdout, "encoding", None) or "utf-8")
    utf8 = encoding.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig")
    return to_json(data, indent=indent, ascii_only=not utf8)


def emit_json(data: object) -> None:
    """Print ``data`` (typed results allowed, see :mod:`cairn.model.serialize`)
    as one JSON document on standard output (see :func:`json_text`)."""
    sys.stdout.write(json_text(data) + "\n")


def error(exc: Exception, as_json: bool) -> int:
    """Report an error (JSON ``{"error", "type"}`` with ``--json``, else one red line
    on standard error) and return the exit status: 1 for "not found", 2 otherwise."""
    from cairn.errors import NotFound

    code = 1 if isinstance(exc, NotFound) else 2
    if as_json:
        emit_json({"error": str(exc), "type": type(exc).__name__})
    else:
        err.line(err.paint("error:", "red"), " ", err.paint(str(exc)))
    return code


def backend_error(exc: Exception, as_json: bool) -> int | None:
    """A backend error the store did not wrap as StoreError (it should) as one clear
    line, not a traceback: returns the exit status 2, or ``None`` for any other
    exception (to be raised again). Matched by module: no interface imports sqlite3."""
    if type(exc).__module__ != "sqlite3":
        return None
    low = str(exc).lower()
    if "locked" in low or "busy" in low:
        msg = f"another cairn process is writing this index ({exc}); try again"
    elif "full" in low:
        msg = f"the disk is full ({exc}); free some space, then run the command again"
    elif "readonly" in low or "read-only" in low:
        msg = f"the index file or its folder is read-only ({exc})"
    else:
        msg = (
            f"the index file is damaged or not an index ({exc}); run `cairn check`, or "
            "delete it and run `cairn index` again: it is rebuilt from your files"
        )
    if as_json:
        emit_json({"error": msg, "type": "StoreError"})
    else:
        err.line(err.paint("error:", "red"), " ", err.paint(msg))
    return 2


def open_index(db: Path | None, config: Path | None, *, create: bool = False) -> Cairn:
    """Open the index ``db`` (else ``CAIRN_DB`` / ``[store] path`` / the default, see
    :func:`cairn.config.load_config`) with the configuration file ``config``.

    Raises:
        cairn.errors.NotFound: ``create`` is false and there is no index file there.
        cairn.errors.ConfigError / StoreError: bad configuration or index file.
    """
    from cairn.app import Cairn

    return Cairn.open(db=db, config_file=config, create=create)


_C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _control(c: str) -> bool:
    """A C0 or C1 control character (or DEL): what a terminal may act on."""
    o = ord(c)
    return o < 32 or 127 <= o < 160


def quote_path(path: str) -> str:
    """``path`` as one printable token, as git prints it (``core.quotePath``): as it is
    unless it holds a control character (a newline, a tab, an escape …), a ``"`` or a
    ``\\``; then in double quotes with C escapes (``"notes/a\\nb.md"``; other control
    characters as ``\\xNN``), so one hit stays one line."""
    if not any(c in '"\\' or _control(c) for c in path):
        return path
    body = "".join(
        _C_ESCAPES.get(c) or (f"\\x{ord(c):02x}" if _control(c) else c) for c in path
    )
    return f'"{body}"'


def one_line(text: str) -> str:
    """``text`` on one line: runs of whitespace (newlines included) as one space, other
    control characters (escape, bell …) removed."""
    return " ".join("".join(c for c in text if c.isspace() or not _control(c)).split())


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``"1 chunk"``, ``"2 chunks"``."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"
