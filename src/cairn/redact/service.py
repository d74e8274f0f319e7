"""``cairn.redact``: the ``on_ingest`` mode of each parsed document (the ingest hook),
what a door shows of a file, and ``cairn redact scan`` (:class:`RedactService`).

Defaults: chat exports and transcripts are masked (``mask``), notes are left as written
(``off``); ``[redact] on_ingest`` overrides either or both, or one format.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from cairn.errors import CairnError
from cairn.formats import conversation_formats
from cairn.model import MESSAGE, Document

if TYPE_CHECKING:  # the detectors load only when a document is redacted or scanned
    from cairn.config import Config
    from cairn.redact import Mode, ScanFinding
    from cairn.store import Store

CHAT_FORMATS = conversation_formats()
"""Formats whose documents are conversations (masked by default)."""

DEFAULT_MODES: Mapping[str, Mode] = {"chats": "mask", "notes": "off"}

SCAN_MAX_BYTES = 200_000_000
"""A larger file is not scanned (named in ``skipped``)."""


def is_chat(doc: Document) -> bool:
    """Whether a document is a conversation: a chat format, or made of messages."""
    return doc.format in CHAT_FORMATS or any(u.kind == MESSAGE for u in doc.units)


def mode_for(doc: Document, table: Mapping[str, str]) -> Mode:
    """The ``on_ingest`` mode of one document: its format's entry, else ``chats`` or
    ``notes``, else the default (``mask`` for chats, ``off`` for notes)."""
    return format_mode(doc.format, is_chat(doc), table)


def format_mode(fmt: str, chat: bool, table: Mapping[str, str]) -> Mode:
    """The ``on_ingest`` mode of a format (``chat``: its documents are conversations)."""
    group = "chats" if chat or fmt in CHAT_FORMATS else "notes"
    return cast("Mode", table.get(fmt) or table.get(group) or DEFAULT_MODES[group])


@dataclass(frozen=True, slots=True)
class ScanReport:
    """What ``cairn redact scan`` found: ``files`` scanned, ``findings`` (file, line,
    column, kind, category, placeholder, masked preview — never a value), ``counts``
    per kind, and ``skipped`` files with the reason."""

    files: int
    findings: tuple[ScanFinding, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    skipped: tuple[tuple[str, str], ...] = ()


class RedactService:
    """Redaction over one index: the ingest hook, what doors show, the scan.

    Args:
        store: the index.
        config: the configuration (``[redact] on_ingest``).
    """

    def __init__(self, store: Store, config: Config) -> None:
        self._store = store
        self._config = config

    def redactor(self) -> Redactor:
        """The ingest hook: a parsed document → the document to store, masked (or its
        finding units dropped) by its ``on_ingest`` mode. The user's file is never
        changed; this runs between parsing and storing, so the FTS table, the chunks
        and vectors, snippets, ``show`` and every door see only the masked text."""
        return Redactor(dict(self._config.redact))

    def message_scrubber(self) -> Callable[[str], str]:
        """What every message of an index run passes through before it is printed or
        stored (warnings and failures: the ``runs`` and ``files`` tables, ``stats``,
        ``/v1/stats``): every finding masked, unless every ``on_ingest`` mode is
        ``off``. A chat export's warning may quote a conversation title, which the
        documents' own masking never sees."""
        table: Mapping[str, str] = dict(self._config.redact.get("on_ingest", {}))
        modes = {format_mode(f, f in CHAT_FORMATS, table) for f in (*table, *CHAT_FORMATS)}
        modes |= {format_mode("", False, table)}
        return _unchanged if modes == {"off"} else mask_text

    def shown_text(self, root_id: str, relpath: str, text: str) -> str:
        """A file's text as a door may show it (``read_file``, ``document_text``): with
        every finding masked when its documents were masked or dropped on ingest (a
        file nobody indexed counts as a note); the file is not changed."""
        table: Mapping[str, str] = dict(self._config.redact.get("on_ingest", {}))
        docs = self._store.documents_at(root_id, relpath)
        modes = {format_mode(d.format, False, table) for d in docs} or {
            format_mode("", False, table)
        }
        if modes == {"off"}:
            return text
        from cairn.redact import Masker

        return Masker().mask(text)

    def scan(
        self,
        paths: Iterable[str | os.PathLike[str]] = (),
        *,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> ScanReport:
        """Scan files for secrets and personal data, whatever ``on_ingest`` says.

        Args:
            paths: files or folders (a folder is walked by the indexing rules: ignored
                folders, no symbolic links); none: every registered root.
            progress: ``progress(done, total, path)`` after each file.

        Returns:
            A :class:`ScanReport`; paths in it are as given (or absolute for roots).

        Raises:
            CairnError: a path does not exist.
        """
        plist = list(paths) or [r.path for r in self._store.roots()]
        return scan_paths(plist, progress=progress)


class Redactor:
    """The ingest hook: ``redactor(doc)`` is the document to store, masked (or its
    finding units dropped) by its ``on_ingest`` mode.

    Args:
        settings: the ``[redact]`` table of the configuration.
    """

    def __init__(self, settings: Mapping[str, object]) -> None:
        self._settings = settings
        on_ingest = settings.get("on_ingest", {})
        self._table: Mapping[str, str] = dict(on_ingest) if isinstance(on_ingest, Mapping) else {}
        self._fingerprint: str | None = None

    def __call__(self, doc: Document) -> Document:
        from cairn.redact import redact_document

        return redact_document(doc, mode_for(doc, self._table)).document

    @property
    def fingerprint(self) -> str:
        """A hash of everything that changes this hook's output (the settings, the
        detectors, the masking code: :func:`cairn.redact.fingerprint.redaction_fingerprint`);
        a document seen before with the same fingerprint needs no second pass."""
        if self._fingerprint is None:
            from cairn.redact.fingerprint import redaction_fingerprint

            self._fingerprint = redaction_fingerprint(self._settings)
        return self._fingerprint


def _unchanged(text: str) -> str:
    return text


def mask_text(text: str) -> str:
    """``text`` with every finding of the detectors masked (log lines, messages)."""
    from cairn.redact import Masker

    return Masker().mask(text)


def scan_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    progress: Callable[[int, int, str], None] | None = None,
) -> ScanReport:
    """Scan files or folders (no index needed); see :meth:`RedactService.scan`.

    Raises:
        CairnError: a path does not exist.
    """
    from cairn.sources import decode, discover

    files: list[tuple[str, Path]] = []
    for p in (Path(x).expanduser() for x in paths):
        if not p.exists():
            raise CairnError(f"{p}: no such file or folder")
        if p.is_file():
            files.append((str(p), p))
        else:
            found = discover(p.resolve())
            files.extend((str(p / sf.relpath), sf.path) for sf in found.files)
    findings: list[ScanFinding] = []
    skipped: list[tuple[str, str]] = []
    counts: dict[str, int] = {}
    for i, (shown, path) in enumerate(files):
        try:
            size = path.stat().st_size
            if size > SCAN_MAX_BYTES:
                skipped.append((shown, f"larger than {SCAN_MAX_BYTES // 1_000_000} MB"))
                continue
            if path.suffix.lower() == ".zip":
                skipped.append((shown, "a zip archive (scan the extracted files)"))
                continue
            text = decode(path.read_bytes()).text
        except (OSError, ValueError) as exc:
            skipped.append((shown, f"not readable as text: {exc}"))
            continue
        from cairn.redact import scan_text

        for f in scan_text(text, shown):
            findings.append(f)
            counts[f.kind] = counts.get(f.kind, 0) + 1
        if progress is not None:
            progress(i + 1, len(files), shown)
    return ScanReport(len(files) - len(skipped), tuple(findings), counts, tuple(skipped))
