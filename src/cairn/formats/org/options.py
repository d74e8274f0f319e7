"""Options of the Org parser and TODO keyword sequences.

TODO sequences follow the Org manual (*TODO Extensions*, *Per-file keywords*) and
org-syntax *Headings* (KEYWORD is a member of ``org-todo-keywords-1``, set per file):
``#+TODO:``, ``#+SEQ_TODO:`` and ``#+TYP_TODO:`` lines anywhere in the file, each one
sequence; ``|`` separates open from done states (without ``|`` the last word is the only
done state); a fast-access / logging suffix ``(w@/!)`` is not part of the keyword. When a
file defines no sequence, :attr:`OrgOptions.todo_keywords` applies (Org's default
``TODO | DONE``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Properties whose inheritance Org hard-codes (Org manual, *Property Inheritance*).
ORG_INHERITED_PROPERTIES: tuple[str, ...] = ("COLUMNS", "CATEGORY", "ARCHIVE", "LOGGING")

_SUFFIX_RE = re.compile(r"\(.*\)$")


@dataclass(frozen=True, slots=True)
class OrgOptions:
    """How to read Org files where Org itself is configurable.

    Attributes:
        todo_keywords: default TODO sequences, each written like a ``#+TODO:`` value
            (``"TODO | DONE"``); used only when the file defines none.
        tags_exclude_from_inheritance: tags never inherited (``org-tags-exclude-from-
            inheritance``; Org's default: none). Applies to ancestors' tags and FILETAGS.
        inherited_property_keys: property keys inherited from ancestors, the file-level
            drawer and ``#+PROPERTY`` (``org-use-property-inheritance`` as a list; ``"*"``
            means every key). Org's hard-coded ones (:data:`ORG_INHERITED_PROPERTIES`)
            and every key given by ``#+PROPERTY`` are always inherited.
        code_units: whether ``#+begin_src`` blocks become their own ``code`` units.
    """

    todo_keywords: tuple[str, ...] = ("TODO | DONE",)
    tags_exclude_from_inheritance: frozenset[str] = frozenset()
    inherited_property_keys: tuple[str, ...] = ()
    code_units: bool = True


@dataclass(frozen=True, slots=True)
class TodoKeywords:
    """The TODO keywords known in one file: ``open`` and ``done`` states, in order."""

    open: tuple[str, ...]
    done: tuple[str, ...]

    def state(self, keyword: str) -> str | None:
        """``"open"``, ``"done"`` or ``None`` for a word that is not a keyword."""
        if keyword in self.done:
            return "done"
        if keyword in self.open:
            return "open"
        return None

    def all(self) -> frozenset[str]:
        """Every keyword of the file."""
        return frozenset(self.open) | frozenset(self.done)


def parse_todo_sequences(values: Iterable[str]) -> TodoKeywords:
    """Parse ``#+TODO:``-style values into the file's keyword sets.

    ``"NEXT(n) STARTED(s!) | DONE(d)"`` gives open ``NEXT, STARTED``, done ``DONE``;
    ``"A B C"`` (no ``|``) gives open ``A, B`` and done ``C``. Empty values are ignored.
    """
    open_: list[str] = []
    done: list[str] = []
    for value in values:
        words = [_SUFFIX_RE.sub("", w) for w in value.split()]
        words = [w for w in words if w]
        if not words:
            continue
        if "|" in words:
            k = words.index("|")
            o, d = words[:k], [w for w in words[k + 1 :] if w != "|"]
        else:
            o, d = words[:-1], words[-1:]
        for w in o:
            if w not in open_ and w not in done:
                open_.append(w)
        for w in d:
            if w not in open_ and w not in done:
                done.append(w)
    return TodoKeywords(tuple(open_), tuple(done))
