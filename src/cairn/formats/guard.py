"""Checks every text parser makes before reading: text that is not text is refused.

:func:`cairn.sources.decode` already refuses files with NUL bytes and replaces invalid
UTF-8, but the parsers are also called directly (tests, the library API, other tools), so
each text parser runs :func:`check_text` first and fails with one clear
:class:`cairn.errors.ParseError` instead of indexing garbage or failing later in the
store.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator

from cairn.errors import ParseError

__all__ = ["BINARY_SAMPLE", "GC_PAUSE_CHARS", "check_text", "gc_paused"]

BINARY_SAMPLE = 8192
"""Characters looked at for control characters that no text file holds (as git does)."""

_BINARY_CONTROLS = re.compile(r"[\x01-\x08\x0e-\x1a\x1c-\x1f]")


def check_text(text: str, relpath: str) -> None:
    """Refuse ``text`` that a text parser must not read.

    Args:
        text: the decoded file.
        relpath: the file's path, named in the error.

    Raises:
        ParseError: the text holds a NUL character ("binary content"), a lone surrogate
            (bytes that were not valid UTF-8, smuggled in with ``surrogateescape``), or
            its first :data:`BINARY_SAMPLE` characters are more than 10% control
            characters (a binary file with a text extension). The reason names the line.
    """
    nul = text.find("\x00")
    if nul >= 0:
        raise ParseError(
            "binary content (a NUL character): not a text file",
            path=relpath,
            line=text.count("\n", 0, nul) + 1,
        )
    if not text.isascii():  # O(1); encoding is the fastest scan for surrogates
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ParseError(
                "invalid Unicode (a lone surrogate: bytes that are not UTF-8)",
                path=relpath,
                line=text.count("\n", 0, exc.start) + 1,
            ) from None
    head = text[:BINARY_SAMPLE]
    if head and len(_BINARY_CONTROLS.findall(head)) * 10 > len(head):
        raise ParseError("binary content (control characters): not a text file", path=relpath)


GC_PAUSE_CHARS = 1_000_000
"""Texts longer than this are parsed with the cyclic garbage collector paused."""


@contextlib.contextmanager
def gc_paused(chars: int) -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a text of ``chars`` characters is
    parsed, when it is longer than :data:`GC_PAUSE_CHARS`.

    A parse makes millions of short-lived objects without cycles (reference counting
    frees them); the collector's full passes over them grow with the heap and take a
    large share of a big note's parse. The collector is resumed on exit only if it was running.
    """
    pause = chars > GC_PAUSE_CHARS and gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause:
            gc.enable()
