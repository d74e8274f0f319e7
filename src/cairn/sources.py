"""Discovery of files under source roots, ignore rules, and safe reading.

A source root is a folder the user registered (``cairn index PATH``). Discovery walks it
without following symbolic links: a link that leads outside the root is reported as a
warning and skipped (its target is never read); a link inside the root is skipped with
an informational note because its target is indexed at its real path. Hidden files and
folders, ``.git``, ``node_modules``, ``.obsidian``, ``.trash`` and editor temporary files
are ignored by default (and cairn's own write-back temporary files whose writer died are
removed: :mod:`cairn.model.tempnames`). So are an Obsidian vault's template folders
(:func:`template_folders`: the folder its core Templates plugin or the Templater plugin
names), unless
``skip_templates=False``: a template is a note's skeleton, not a note.

Reading is safe: invalid UTF-8 is replaced and reported, a BOM is removed, CRLF and CR
line ends become LF (line numbers are kept), UTF-16 and UTF-32 with a BOM are decoded,
and a file holding NUL bytes without such a BOM is refused as binary.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cairn.globs import glob_match
from cairn.model import Diagnostic, Failure
from cairn.model.tempnames import is_stale_temp

DEFAULT_IGNORED_DIRS = frozenset({".git", "node_modules", ".obsidian", ".trash", "__pycache__"})
"""Folder names never entered (hidden folders, starting with ``.``, are skipped too)."""

_TEMP_FILE = re.compile(
    r"""(?x)
    ^\.           # hidden files, vim swap files (.x.swp), LibreOffice locks (.~lock.x#)
    | ~$          # backup files: note.md~
    | ^\#.*\#$    # emacs autosave: #note.org#
    | \.(swp|swo|swx|tmp|temp|bak|part|crdownload)$
    | ^4913$      # vim's write-permission probe
    """
)


HIDDEN = "hidden file (its name starts with '.'), not indexed"
"""The info diagnostic of a hidden file in a note format (``.draft.md``, ``..md``):
hidden files are skipped like the editors' own (swap files, locks), and said so."""


def is_ignored_name(name: str, *, is_dir: bool) -> bool:
    """Whether a file or folder name is skipped by default.

    Args:
        name: the base name (no slashes).
        is_dir: ``True`` for folders.
    """
    if is_dir:
        return name.startswith(".") or name in DEFAULT_IGNORED_DIRS
    return bool(_TEMP_FILE.search(name))


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file found under a source root.

    Attributes:
        path: absolute path.
        relpath: POSIX path relative to the root.
        size: bytes; ``mtime``: POSIX seconds (float, nanosecond source).
    """

    path: Path
    relpath: str
    size: int
    mtime: float


@dataclass
class Discovery:
    """The result of walking one root: candidate files, other files, notes.

    ``attachments`` lists root-relative paths of non-note files (images, PDFs …) so that
    links to them can be resolved; ``warnings`` holds skipped symlinks and unreadable
    folders; ``unreadable`` the root-relative prefixes (``""`` or ``"sub/dir/"``) of the
    folders that could not be listed, whose files are unknown, not gone.
    """

    files: list[SourceFile] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


TEMPLATE_SETTINGS = (
    (".obsidian/templates.json", "folder"),
    (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"),
)
"""Where an Obsidian vault names its template folder: the core Templates plugin's
setting, then the Templater plugin's (file relative to the vault, JSON key)."""
_SETTINGS_MAX_BYTES = 1 << 20


def template_folders(vault: Path) -> tuple[str, ...]:
    """The template folders an Obsidian vault's settings name, relative to the vault
    folder ``vault`` (the one holding ``.obsidian/``), without repeats: ``()`` when it
    has none. A setting that cannot be read, is not a string, or leads outside the
    vault (``..``, an absolute path) names nothing."""
    out: list[str] = []
    if (vault / ".obsidian").is_symlink():
        return ()  # settings behind a link may lie outside the root: not read
    for rel, key in TEMPLATE_SETTINGS:
        path = vault / rel
        try:
            if (
                not path.is_file()
                or path.is_symlink()
                or path.parent.is_symlink()
                or path.stat().st_size > _SETTINGS_MAX_BYTES
            ):
                continue
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if not isinstance(value, str):
            continue
        folder = "/".join(p for p in value.replace("\\", "/").split("/") if p not in ("", "."))
        if folder and ".." not in folder.split("/") and not value.startswith("/"):
            out.append(folder)
    return tuple(dict.fromkeys(out))


def in_template_folder(root: Path, relpath: str) -> bool:
    """Whether ``relpath`` (a file under ``root``) lies in a template folder of a vault
    at ``root`` or in a folder of the path on the way to it (:func:`template_folders`)."""
    parts = relpath.split("/")[:-1]
    for i in range(len(parts) + 1):
        vault = "/".join(parts[:i])
        if not (root / vault / ".obsidian").is_dir():
            continue
        inside = "/".join(parts[i:]) + "/"
        if any(inside.startswith(f + "/") for f in template_folders(root / vault)):
            return True
    return False


def discover(
    root: Path,
    *,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    is_note: Callable[[str], bool] | None = None,
    skip_templates: bool = True,
) -> Discovery:
    """Walk ``root`` and list the files to index.

    Args:
        root: an existing folder (absolute).
        include: globs; when given, only files matching one are candidates.
        exclude: globs; matching files and folders are skipped.
        is_note: a callable ``(relpath) -> bool`` telling whether a file name belongs to
            a known format; other files are listed as attachments. Defaults to every
            file being a candidate.
        skip_templates: skip the template folders of Obsidian vaults (a folder
            holding ``.obsidian/``, at any depth; :func:`template_folders`);
            ``False``: index them like any folder.

    Returns:
        A :class:`Discovery`, files sorted by relative path.
    """
    result = Discovery()
    root = root.resolve()
    check: Callable[[str], bool] = is_note or (lambda _p: True)

    skipped: set[str] = set()

    def walk(folder: Path, prefix: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            result.unreadable.append(prefix)
            result.warnings.append(
                Diagnostic(
                    prefix.rstrip("/") or ".",
                    f"folder not readable: {exc.strerror}; the files indexed from it are "
                    "kept as they were",
                )
            )
            return
        if skip_templates and any(e.name == ".obsidian" for e in entries):
            skipped.update(prefix + f for f in template_folders(folder))
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    if not any(glob_match(rel, p) for p in exclude) and (
                        not include or any(glob_match(rel, p) for p in include)
                    ):
                        _note_symlink(root, entry, rel, result)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if is_ignored_name(entry.name, is_dir=True):
                        continue
                    if any(glob_match(rel, p) for p in exclude) or rel in skipped:
                        continue
                    walk(Path(entry.path), rel + "/")
                    continue
                if not entry.is_file(follow_symlinks=False):
                    if check(rel) and not is_ignored_name(entry.name, is_dir=False):
                        result.warnings.append(
                            Diagnostic(rel, "not a regular file (a FIFO, socket or device); "
                                       "skipped")
                        )
                    continue
                if any(glob_match(rel, p) for p in exclude):
                    continue
                if include and not any(glob_match(rel, p) for p in include):
                    continue
                if is_ignored_name(entry.name, is_dir=False):
                    if is_stale_temp(entry.name):  # a killed write-back's leftover
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
                        continue
                    if entry.name.startswith(".") and check(rel) \
                            and not unstorable_name(rel):
                        result.warnings.append(Diagnostic(rel, HIDDEN, severity="info"))
                    continue
                if unstorable_name(rel):
                    result.warnings.append(
                        Diagnostic(
                            printable_path(rel),
                            "file name is not valid UTF-8; rename the file to index it",
                        )
                    )
                    continue
                if not check(rel):
                    result.attachments.append(rel)
                    continue
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # vanished while we looked at it
            except OSError as exc:
                result.warnings.append(Diagnostic(rel, f"not readable: {exc.strerror}"))
                continue
            result.files.append(
                SourceFile(Path(entry.path), rel, st.st_size, st.st_mtime_ns / 1e9)
            )

    walk(root, "")
    result.warnings = [
        Diagnostic(printable_path(w.path), w.message, w.line, w.severity)
        if unstorable_name(w.path)
        else w
        for w in result.warnings
    ]
    result.attachments = [a for a in result.attachments if not unstorable_name(a)]
    return result


def source_file(
    root: Path,
    relpath: str,
    *,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    skip_templates: bool = True,
) -> SourceFile | None:
    """One file of a root by its relative path, by the same rules as :func:`discover`
    (ignored names and folders at any depth, ``exclude``/``include`` globs, template
    folders unless ``skip_templates=False``, no symbolic links, regular files only), or
    ``None`` when the file is gone or not to be indexed.

    Whether it is a note or an attachment is the caller's question, as in ``discover``.
    """
    parts = relpath.split("/")
    if not relpath or ".." in parts or relpath.startswith("/") or unstorable_name(relpath):
        return None
    for i, name in enumerate(parts):
        last = i == len(parts) - 1
        if is_ignored_name(name, is_dir=not last):
            return None
        prefix = "/".join(parts[: i + 1])
        if any(glob_match(prefix, p) for p in exclude):
            return None
    if include and not any(glob_match(relpath, p) for p in include):
        return None
    if skip_templates and in_template_folder(root, relpath):
        return None
    path = root / relpath
    try:
        st = path.lstat()
        for parent in path.parents:  # a folder on the way may be a symlink too
            if parent == root or root not in parent.parents:
                break
            if parent.is_symlink():
                return None
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return SourceFile(path, relpath, st.st_size, st.st_mtime_ns / 1e9)


def _note_symlink(root: Path, entry: os.DirEntry[str], rel: str, result: Discovery) -> None:
    """Record why a symbolic link is skipped (outside the root, or a duplicate path); the
    message names ``root``, since ``rel`` alone is ambiguous when several are indexed."""
    try:
        target = Path(entry.path).resolve(strict=True)
    except (OSError, RuntimeError):
        result.warnings.append(Diagnostic(rel, f"broken or looping symbolic link in {root}; "
                                          "skipped"))
        return
    if target != root and root not in target.parents:
        result.warnings.append(
            Diagnostic(rel, f"symbolic link leads outside the source root {root}; skipped")
        )
        return
    result.warnings.append(
        Diagnostic(
            rel,
            f"symbolic link to {target.relative_to(root).as_posix() or '.'} inside the root "
            f"{root}; "
            "indexed at its real path",
            severity="info",
        )
    )


def is_within(root: Path, path: Path) -> bool:
    """Whether ``path``, after following symbolic links, lies inside ``root``."""
    try:
        real = path.resolve(strict=False)
    except (OSError, RuntimeError):
        return False
    real_root = root.resolve()
    return real == real_root or real_root in real.parents


def read_bytes(sf: SourceFile, *, max_bytes: int = 0) -> bytes | Failure:
    """Read a file's bytes, or a :class:`Failure` saying why it could not be read.

    Args:
        sf: the file (opened as :func:`open_source` does).
        max_bytes: a larger file is refused without being read (``0``: no limit).
    """
    fd = open_source(sf, max_bytes=max_bytes)
    if isinstance(fd, Failure):
        return fd
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1) if max_bytes else fh.read()
        if max_bytes and len(data) > max_bytes:  # it grew while we read it
            return Failure(sf.relpath, too_big(len(data), max_bytes))
        return data
    except OSError as exc:
        return Failure(sf.relpath, f"cannot read: {exc.strerror}")
    finally:
        os.close(fd)


def open_source(sf: SourceFile, *, max_bytes: int = 0) -> int | Failure:
    """An open file descriptor of a regular file (the caller closes it), or a
    :class:`Failure` saying why not.

    The file is opened without following a final symbolic link (``O_NOFOLLOW``) and
    without blocking (``O_NONBLOCK``: a FIFO put in a note's place between discovery and
    reading is refused, not waited on); one larger than ``max_bytes`` (``0``: no limit)
    is refused.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(sf.path, flags)
    except FileNotFoundError:
        return Failure(sf.relpath, "file vanished before it could be read")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Failure(sf.relpath, "replaced by a symbolic link before it could be read")
        if exc.errno == errno.ENXIO:
            return Failure(sf.relpath, "not a regular file (a socket or FIFO)")
        return Failure(sf.relpath, f"cannot open: {exc.strerror}")
    try:
        st = os.fstat(fd)
        why = "not a regular file" if not stat.S_ISREG(st.st_mode) else None
        if why is None and max_bytes and st.st_size > max_bytes:
            why = too_big(st.st_size, max_bytes)
    except OSError as exc:
        why = f"cannot read: {exc.strerror}"
    if why is not None:
        os.close(fd)
        return Failure(sf.relpath, why)
    return fd


def too_big(size: int, limit: int) -> str:
    """The reason given for a file larger than ``[index] max_file_mb``."""
    return (
        f"file is {size / 1048576:.1f} MiB, larger than the {limit / 1048576:g} MiB limit "
        "([index] max_file_mb); not read"
    )


def printable_path(relpath: str) -> str:
    """A path safe to store and print: bytes that are not UTF-8 (kept by Python as
    lone surrogates) become ``\\xNN`` escapes, control characters (a newline in a
    name) ``\\n``-style escapes."""
    raw = relpath.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def unstorable_name(relpath: str) -> bool:
    """Whether a path cannot be stored as text: its name holds bytes that are not
    UTF-8 (e.g. ``bad\\xff.md`` from another system's file names)."""
    try:
        relpath.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def content_hash(data: bytes) -> str:
    """A hex content hash of a file's bytes (BLAKE2b, 128 bits)."""
    import hashlib  # here: a keyword search never hashes (start-up, bench/startup.py)

    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Decoded:
    """Decoded, normalised text and what had to be fixed to get it."""

    text: str
    warnings: tuple[str, ...] = ()


def decode(data: bytes) -> Decoded:
    """Decode file bytes into normalised text.

    UTF-8 (a BOM is dropped); UTF-32 or UTF-16 when it starts with that BOM; invalid UTF-8
    bytes become U+FFFD with a warning. ``\\r\\n`` and lone ``\\r`` become ``\\n``.

    Raises:
        ValueError: the data holds NUL bytes and has no UTF-16/UTF-32 BOM (a binary file).
    """
    warnings: list[str] = []
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):  # before UTF-16:
        text = data.decode("utf-32", errors="replace")  # FF FE 00 00 starts with FF FE
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    else:
        if b"\x00" in data:
            raise ValueError("holds NUL bytes: a binary file, not text")
        if data.startswith(codecs.BOM_UTF8):
            data = data[3:]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            warnings.append(f"invalid UTF-8 at line {line} (byte {exc.start}); replaced")
            text = data.decode("utf-8", errors="replace")
    text = text.lstrip("\ufeff") if text.startswith("\ufeff") else text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return Decoded(text, tuple(warnings))
