"""Incremental reading of the top level of a large JSON file, one entry at a time.

The top-level array (or the ``conversations`` array of a top-level object) is walked
by hand, and each entry is decoded by the standard library's C decoder
(``json.JSONDecoder.raw_decode``) from a sliding text buffer. Memory is bounded by the
largest single entry (plus one read chunk), positions are exact character offsets, and
an entry the decoder cannot build (nested past the recursion limit, a 100,000-digit
number) is skipped by counting brackets and reported as a :class:`BadEntry`, so its
siblings are still read, instead of exhausting memory (an
``ijson`` event stream builds one prefix string per level, so its memory grows with the
square of the depth: ~1 GB at depth 20,000).

Bytes are decoded as UTF-8 with replacement characters for invalid sequences (one bad
byte must not cost the rest of an export).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

CHUNK = 1 << 20
"""Bytes read at a time (an entry larger than the buffer doubles the next read)."""

_WS = re.compile(r"[ \t\n\r]*")
# possessive: the regex engine keeps no backtracking state per escape of a long string
_SKIP_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{}"]')
_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+')
_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*")
_DECODER = json.JSONDecoder(strict=False)


class JsonStop(Exception):
    """Reading cannot go on; ``offset`` is the character offset in the file."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class JsonTruncated(JsonStop):
    """The file ends inside a value."""


class JsonInvalid(JsonStop):
    """The text is not valid JSON at ``offset``."""


class JsonTooDeep(JsonStop):
    """An entry is nested deeper than the decoder's recursion limit."""


class EntryUnreadable(JsonStop):
    """One value is valid JSON the decoder cannot build (nested past the recursion
    limit, an integer past Python's 4300-digit limit); the buffer has moved past it, so
    the entries after it can still be read."""


@dataclass(frozen=True, slots=True)
class BadEntry:
    """An array item that was skipped: ``reason`` says why, ``offset`` where it began."""

    reason: str
    offset: int


class SizeLimit(Exception):
    """More bytes were read than the reader's ``limit`` allows."""


class TextBuffer:
    """A sliding window of decoded text over a binary stream.

    ``limit`` caps the bytes read (:class:`SizeLimit` beyond it); ``bytes_read`` counts
    them. ``max_value`` (``0``: none) caps the characters of one value: a longer one is
    skipped without being held (:class:`EntryUnreadable`), so one huge entry cannot cost
    memory in proportion to the file. A UTF-8 BOM at the start is dropped.
    """

    def __init__(self, raw: IO[bytes], limit: int | None = None, max_value: int = 0) -> None:
        self.raw = raw
        self.limit = limit
        self.max_value = max_value
        self.bytes_read = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf = ""
        self.pos = 0
        self.base = 0  # characters dropped before buf[0]
        self.eof = False
        self.first = True
        self.start = 0  # where the value last returned by value() begins in buf

    @property
    def offset(self) -> int:
        """Character offset of the read position in the whole file."""
        return self.base + self.pos

    def fill(self, want: int = CHUNK) -> bool:
        """Read at least ``want`` more bytes (or to the end); False at end of file."""
        if self.eof:
            return False
        data = self.raw.read(max(want, CHUNK))
        self.bytes_read += len(data)
        if self.limit is not None and self.bytes_read > self.limit:
            raise SizeLimit(f"the member decompressed past its declared {self.limit} bytes")
        if not data:
            self.eof = True
            self.buf += self.decoder.decode(b"", final=True)
            return False
        text = self.decoder.decode(data)
        if self.first:
            self.first = False
            text = text.removeprefix("\ufeff")
        if self.pos > CHUNK and self.pos * 2 > len(self.buf):  # drop consumed text
            self.base += self.pos
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += text
        return True

    def peek(self) -> str:
        """The next non-blank character (not consumed), or ``""`` at end of file."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return ""

    def take(self, char: str) -> None:
        """Consume ``char`` as the next non-blank character, else :class:`JsonInvalid`."""
        found = self.peek()
        if found != char:
            if not found:
                raise JsonTruncated(f"the file ends where {char!r} was expected", self.offset)
            raise JsonInvalid(f"expected {char!r}, found {found!r}", self.offset)
        self.pos += 1

    def value(self) -> Any:
        """Decode the next JSON value, reading more as needed."""
        if not self.peek():
            raise JsonTruncated("the file ends where a value was expected", self.offset)
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                incomplete = (
                    exc.msg.startswith("Unterminated string") or exc.pos >= len(self.buf) - 32
                )
                if incomplete and self.max_value and len(self.buf) - self.pos > self.max_value:
                    self._skip(f"larger than {self.max_value / 1048576:g} MiB "
                               "([index] max_file_mb)")
                if incomplete and self.fill(len(self.buf) - self.pos):
                    continue
                where = self.base + exc.pos
                if incomplete:
                    raise JsonTruncated(
                        f"the file ends inside a value ({exc.msg})", where
                    ) from None
                raise JsonInvalid(exc.msg, where) from None
            except RecursionError:
                self._skip("nested too deep to read")
            except ValueError as exc:  # an integer past Python's digit limit
                self._skip(f"a value cannot be read ({str(exc).split(':')[0]})")
            if end == len(self.buf) and not self.eof and self.fill():
                continue  # a number may go on in the next chunk
            self.start, self.pos = self.pos, end
            return obj

    def last_text(self) -> str:
        """The text of the value :meth:`value` returned last, as written in the file
        (valid until the next read: the buffer slides)."""
        return self.buf[self.start : self.pos]

    def _skip(self, reason: str) -> None:
        """Move past the value at the read position without building it (brackets
        counted, strings jumped over, no recursion, scanned text let go) and raise
        :class:`EntryUnreadable`; :class:`JsonTruncated` when the file ends inside it."""
        start = self.offset
        if self.buf[self.pos] not in '[{"':
            m = _NUMBER.match(self.buf, self.pos)
            while m and m.end() == len(self.buf) and self.fill():
                m = _NUMBER.match(self.buf, self.pos)
            if not m:
                raise JsonInvalid(reason, start)
            self.pos = m.end()
            raise EntryUnreadable(reason, start)
        depth = 0
        in_string = False
        while True:
            if in_string:  # up to the closing quote, or a chunk's end (or lone backslash)
                self.pos = _STRING_REST.match(self.buf, self.pos).end()  # type: ignore[union-attr]
                if self.pos < len(self.buf) and self.buf[self.pos] == '"':
                    self.pos += 1
                    in_string = False
                    if depth == 0:
                        raise EntryUnreadable(reason, start)
                    continue
            else:
                m = _SKIP_TOKEN.search(self.buf, self.pos)
                if m is not None:
                    self.pos = m.end()
                    token = m.group()
                    if token == '"':
                        in_string = True
                    elif token[0] == '"':  # a whole string
                        if depth == 0:
                            raise EntryUnreadable(reason, start)
                    elif token in "[{":
                        depth += 1
                    elif token in "]}":
                        depth -= 1
                        if depth == 0:
                            raise EntryUnreadable(reason, start)
                    continue
                self.pos = len(self.buf)
            if not self.fill():  # the scanned text is dropped as the buffer slides
                raise JsonTruncated(f"the file ends inside a value ({reason})", start)

    def array_items(self) -> Iterator[Any]:
        """Decode the items of the array whose ``[`` is next, one at a time; an item
        that cannot be built (:class:`EntryUnreadable`) comes as a :class:`BadEntry`."""
        self.take("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            try:
                yield self.value()
            except EntryUnreadable as exc:
                yield BadEntry(str(exc), exc.offset)
            sep = self.peek()
            if sep == ",":
                self.pos += 1
                continue
            if sep == "]":
                self.pos += 1
                return
            if not sep:
                raise JsonTruncated("the file ends inside the top-level array", self.offset)
            raise JsonInvalid(f"expected ',' or ']', found {sep!r}", self.offset)
