"""Root-relative globs as ``.gitignore`` reads them (``--include`` / ``--exclude``):
matching, and the problems that make a pattern unusable."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from cairn.errors import ConfigError


def _class_end(pattern: str, i: int) -> int:
    """The index of the ``]`` closing the character class ``[`` at ``i`` opens, or -1.
    As in POSIX and ``fnmatch``, a ``]`` first in the class (after a ``!``) is a
    literal ``]``, so ``[]]`` matches ``]`` and ``[]`` is unclosed. ``!`` or ``^``
    first negates the class, as in ``.gitignore``."""
    j = i + 1
    if pattern.startswith(("!", "^"), j):
        j += 1
    if pattern.startswith("]", j):
        j += 1
    return pattern.find("]", j)


def _glob_source(pattern: str) -> str:
    """The regex source of a glob (``*``, ``?``, ``[...]``, ``**`` across folders); an
    unclosed ``[`` is a literal ``[`` here (:func:`glob_problem` refuses it)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = _class_end(pattern, i)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                negate = body.startswith(("!", "^"))
                body = body[1:] if negate else body
                # a regex set's own syntax (escapes, nested sets, set operations) is
                # literal in a glob
                body = re.sub(r"([\\\[&~|^])", r"\\\1", body)
                out.append(f"[{'^' if negate else ''}{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out) + r"\Z"


_NEVER = re.compile(r"(?!)")


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob to a regex; a glob no regex can express (a reversed range such as
    ``[z-a]``, which :func:`glob_problem` refuses) matches nothing rather than raising."""
    try:
        return re.compile(_glob_source(pattern))
    except re.error:
        return _NEVER


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable ``--include``/``--exclude`` glob, or ``None``.

    Refused: an empty pattern, an unclosed ``[`` (``[[]`` matches a ``[``), a character
    class with a reversed range (``[z-a]``), and a ``..`` part (paths are relative to
    the folder and never climb out of it): each would match nothing, so as an include
    it would quietly drop every file of the folder.
    """
    pat = pattern.strip()
    if not pat.strip("/"):
        return "an empty pattern matches no file"
    if ".." in pat.strip("/").split("/"):
        return "'..' never matches: patterns are relative to the folder and stay inside it"
    i = 0
    while i < len(pat):
        if pat[i] == "[":
            j = _class_end(pat, i)
            if j == -1:
                return (
                    f"the '[' at position {i + 1} opens a character class that is never "
                    "closed by ']' (write '[[]' to match a '[')"
                )
            i = j
        i += 1
    try:
        re.compile(_glob_source(pat))
    except re.error as exc:
        return f"not a valid character class: {exc.msg}"
    return None


def check_globs(include: Iterable[str] = (), exclude: Iterable[str] = ()) -> None:
    """Refuse unusable globs (:func:`glob_problem`) before anything is registered.

    Raises:
        ConfigError: ``--include '[': the '[' at position 1 opens …``, naming the first
            bad pattern, its option and the reason.
    """
    for option, patterns in (("--include", include), ("--exclude", exclude)):
        for p in patterns:
            why = glob_problem(p)
            if why is not None:
                raise ConfigError(f"{option} {p!r}: {why}; nothing was changed")


def glob_match(relpath: str, pattern: str) -> bool:
    """Whether a root-relative POSIX path matches a glob.

    As in ``.gitignore``: a pattern without a slash matches a file or folder name at any
    depth (``*.tmp``, ``drafts``); a pattern ending in ``/`` names a folder, at any
    depth when it has no other slash (``archive/``), else from the root
    (``notes/archive/``); a folder pattern matches everything under it; a leading
    ``/`` anchors a pattern to the root (``/drafts``: only the top-level one).
    """
    pat = pattern.strip()
    anchored = pat.startswith("/")
    pat = pat.lstrip("/")
    if not pat:
        return False
    if anchored:
        inner = pat.rstrip("/")
        return bool(_glob_regex(inner).match(relpath) or _glob_regex(inner + "/**").match(relpath))
    if pat.endswith("/"):
        inner = pat.rstrip("/")
        if "/" not in inner:
            parts = relpath.split("/")[:-1]  # the folders on the way to the file
            rx = _glob_regex(inner)
            return any(rx.match(p) for p in parts) or bool(rx.match(relpath))
        pat += "**"
    if "/" not in pat:
        return bool(_glob_regex(pat).match(relpath.rsplit("/", 1)[-1])) or bool(
            _glob_regex(pat).match(relpath)
        )
    if _glob_regex(pat).match(relpath):
        return True
    return bool(_glob_regex(pat.rstrip("/") + "/**").match(relpath))
