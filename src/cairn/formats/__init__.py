"""Native parsers: bytes or text of one file → :class:`cairn.model.Document` values.

A format never touches the store. Two shapes of parser exist:

* a *text* parser, ``parse(text, relpath) -> Document``, for formats whose file is one
  document (Org, Markdown, OKF, plain text). ``text`` is already decoded and normalised
  by :func:`cairn.sources.decode` (no BOM, ``\\n`` line ends, so line numbers are the
  file's). It may raise :class:`cairn.errors.ParseError`; non-fatal problems go in
  ``Document.warnings``.
* a *file* parser, ``parse_file(path, relpath, max_entry=0) -> Iterator[Document |
  Failure]``, for exports holding many documents (chat exports). It reads the file
  itself (streaming, so the file's size is not limited) and yields a
  :class:`cairn.model.Failure` for each part it cannot read, and for each part larger
  than ``max_entry`` bytes (``0``: no limit), which it skips without holding it.

:func:`detect` picks the format of a file from its extension and, for ambiguous
extensions (``.json``, ``.zip``), from its first bytes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cairn.model import Document, Failure

NOT_THIS_FORMAT = "not a recognised"
"""A file parser that finds a file is not of its format at all (a ``package.json``
beside the chat exports) yields a single :class:`Failure` whose reason starts with this;
the pipeline then skips the file (an informational note) instead of failing it."""

TextParser = Callable[..., Document]
"""``parse(text, relpath, **options) -> Document``."""


class FileParser(Protocol):
    """``parse_file(path, relpath, max_entry=0) -> Iterator[Document | Failure]``."""

    def __call__(
        self, path: Path, relpath: str, max_entry: int = 0
    ) -> Iterator[Document | Failure]: ...


@dataclass(frozen=True, slots=True)
class Format:
    """A registered format.

    Attributes:
        name: the format's name as stored in ``Document.format`` and used by ``format:``.
        extensions: lower-case file extensions with the dot.
        module: module holding ``parse`` (text) or ``parse_file`` (file) and optionally
            ``sniff(head: bytes) -> bool``; imported lazily.
        kind: ``"text"`` or ``"file"``.
        documents: the ``Document.format`` values its documents carry (default: its
            ``name``; a chat export yields ``chatgpt``, ``claude``, ``gemini``).
        conversation: its documents are conversations (messages), not notes.
        lined: its units are line ranges of a text file (a chat export is JSON).
    """

    name: str
    extensions: tuple[str, ...]
    module: str
    kind: str = "text"
    documents: tuple[str, ...] = ()
    conversation: bool = False
    lined: bool = True

    @property
    def document_formats(self) -> tuple[str, ...]:
        """The ``Document.format`` values this format's documents carry."""
        return self.documents or (self.name,)

    def text_parser(self) -> TextParser:
        """Import and return the module's ``parse`` function."""
        parser: TextParser = importlib.import_module(self.module).parse
        return parser

    def file_parser(self) -> FileParser:
        """Import and return the module's ``parse_file`` function."""
        parser: FileParser = importlib.import_module(self.module).parse_file
        return parser

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` (the file's first bytes) looks like this format."""
        mod = importlib.import_module(self.module)
        fn = getattr(mod, "sniff", None)
        return True if fn is None else bool(fn(head))


FORMATS: tuple[Format, ...] = (
    Format("org", (".org",), "cairn.formats.org"),
    # before markdown: a .md (or .html) file with user and assistant role markers is a
    # chat transcript (see cairn.formats.transcript); any other .md is a note
    Format("transcript", (".md", ".markdown", ".html", ".htm"), "cairn.formats.transcript",
           documents=("chat",), conversation=True, lined=False),
    Format("markdown", (".md", ".markdown", ".mdown", ".mkd"), "cairn.formats.markdown"),
    Format("text", (".txt", ".text"), "cairn.formats.text"),
    Format("chats", (".json", ".zip"), "cairn.formats.chats", kind="file",
           documents=("chatgpt", "claude", "gemini"), conversation=True, lined=False),
)

OKF = Format("okf", (), "cairn.formats.okf")
"""Markdown files inside an OKF bundle folder (see :func:`cairn.formats.okf.is_bundle`);
chosen by the pipeline for files under a bundle, never by extension."""


def conversation_formats() -> frozenset[str]:
    """The ``Document.format`` values of conversations (chat exports, transcripts)."""
    return frozenset(d for f in (*FORMATS, OKF) if f.conversation for d in f.document_formats)


def note_formats() -> frozenset[str]:
    """The ``Document.format`` values of notes: one file, one document (Org, Markdown,
    OKF, plain text)."""
    return frozenset(d for f in (*FORMATS, OKF) if not f.conversation for d in f.document_formats)


def lined_formats() -> frozenset[str]:
    """The ``Document.format`` values whose units are line ranges of a text file."""
    return frozenset(d for f in (*FORMATS, OKF) if f.lined for d in f.document_formats)


def by_name(name: str) -> Format | None:
    """The registered format called ``name``, or ``None``."""
    return next((f for f in (*FORMATS, OKF) if f.name == name), None)


def candidates(relpath: str) -> list[Format]:
    """Formats whose extension matches ``relpath`` (case-insensitive), in priority order."""
    lower = relpath.lower()
    return [f for f in FORMATS if any(lower.endswith(ext) for ext in f.extensions)]


def detect(relpath: str, head: bytes = b"") -> Format | None:
    """The format of a file from its name and first bytes, or ``None`` if not ours.

    ``head`` is the first few KiB of the file; formats with a ``sniff`` function are only
    chosen when it accepts ``head``.
    """
    for fmt in candidates(relpath):
        try:
            if fmt.sniff(head):
                return fmt
        except ImportError:  # a format whose optional dependency is missing
            continue
    return None
