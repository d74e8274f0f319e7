"""The layout and vocabulary of an agent-memory bundle (``OKF-MEMORY.md``): its folders
and top-level names, the types, scopes and relations its files may hold, and
:class:`Entry`, one file as read. Reading and writing a bundle is
:class:`cairn.memory.bundle.MemoryBundle`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.formats.okf.concepts import MEMORY_STATUSES

MEMORY_TYPES = ("FACT", "INSIGHT", "AXIOM", "CONJECTURE")
"""The ``memory_type`` values of a layer-1 memory."""
SCOPES = ("INCARNATION", "UNIVERSAL", "USER", "PERSONA")
"""The ``scope`` values of a layer-1 memory."""
NODE_TYPES = ("Fact", "Insight", "Decision", "Constraint", "OpenQuestion")
"""The ``node_type`` values of a layer-2 concept."""
RELATION_TYPES = ("refines", "depends_on", "supports", "contradicts", "related")
"""The relation types between concepts."""
STATUSES = MEMORY_STATUSES
"""The ``status`` values of a concept."""
MEMORY_TYPE = "L1 Memory"
CONCEPT_TYPE = "L2 Concept"
PRODUCER = "cairn/memory"
"""The actor written in ``generated.by`` (OKF §7)."""

MEMORY_DIRS = ("memories/active", "memories/subsumed", "memories/archive")
CONCEPT_DIRS = ("concepts/active", "concepts/archive")

INDEX_TEXT = """---
okf_version: "0.2"
---

# Memory

* [Active memories](memories/active/) - layer 1: events not yet consolidated
* [Subsumed memories](memories/subsumed/) - layer 1: events consolidated into concepts
* [Archived memories](memories/archive/) - layer 1: forgotten events
* [Active concepts](concepts/active/) - layer 2: the knowledge graph, one node per file
* [Archived concepts](concepts/archive/) - layer 2: decayed or forgotten concepts

# Log

* [Log](log.md) - maintenance actions, newest first
"""
LOG_MAX_BYTES = 32_768
"""``log.md`` is kept below this size, so indexing it with every operation stays cheap
(parsing costs time linear in its size): the oldest entries beyond it move to a new
``log/<newest date moved>[-n]/log.md`` (OKF allows a ``log.md`` at any level; such a
file is written once and never changed)."""
LOG_ARCHIVE = "log"
"""The folder of the older logs."""


def is_memory_bundle(folder: Path) -> bool:
    """Whether ``folder`` is a memory bundle: it holds ``index.md`` and the
    ``memories/`` and ``concepts/`` folders."""
    return (
        (folder / "index.md").is_file()
        and (folder / "memories").is_dir()
        and (folder / "concepts").is_dir()
    )


LAYOUT_NAMES = frozenset({"index.md", "log.md", "memories", "concepts", LOG_ARCHIVE})
"""The names a bundle's layout puts at its top level."""


def foreign_entries(folder: Path) -> list[str]:
    """The sorted names at the top of ``folder`` that are not part of a bundle's layout
    (:data:`LAYOUT_NAMES`) and not hidden (``.git``, ``.DS_Store``): empty for a new,
    empty or half-made bundle. An unreadable folder gives one entry saying why."""
    try:
        names = os.listdir(folder)
    except OSError as exc:
        return [f"unreadable: {exc.strerror or exc}"]
    return sorted(n for n in names if n not in LAYOUT_NAMES and not n.startswith("."))


@dataclass
class Entry:
    """One file of the bundle as read: ``rel`` is bundle-relative POSIX
    (``concepts/active/concept-1a2b3c4d.md``), ``sha256`` the hash of the bytes read
    (the compare-and-swap base)."""

    rel: str
    meta: dict[str, Any]
    body: str
    sha256: str

    @property
    def target(self) -> str:
        """The bundle-absolute link target of this file (``/concepts/active/x.md``)."""
        return "/" + self.rel

    @property
    def title(self) -> str:
        """The ``title`` field, else the file stem."""
        t = self.meta.get("title")
        return str(t) if t else Path(self.rel).stem

    @property
    def tags(self) -> list[str]:
        """The ``tags`` list (strings only)."""
        t = self.meta.get("tags")
        return [str(x) for x in t] if isinstance(t, list) else []

    @property
    def confidence(self) -> float:
        """The ``confidence`` field as a float (1.0 when missing or malformed)."""
        c = self.meta.get("confidence")
        return float(c) if isinstance(c, int | float) and not isinstance(c, bool) else 1.0

    @property
    def relations(self) -> list[dict[str, Any]]:
        """The well-formed ``relations`` entries (``target`` a string)."""
        r = self.meta.get("relations")
        return (
            [x for x in r if isinstance(x, dict) and isinstance(x.get("target"), str)]
            if (isinstance(r, list))
            else []
        )

    @property
    def source_seals(self) -> list[str]:
        """The seals named by ``sources[].id``."""
        s = self.meta.get("sources")
        if not isinstance(s, list):
            return []
        return [str(x["id"]) for x in s if isinstance(x, dict) and x.get("id")]


def one_line(text: str, limit: int) -> str:
    """The first non-empty line of ``text``, whitespace collapsed, cut at ``limit``
    characters on a word boundary (with ``…``)."""
    for raw in text.splitlines():
        line = " ".join(raw.split()).lstrip("#*- ").strip()
        if line:
            if len(line) <= limit:
                return line
            cut = line[:limit].rsplit(" ", 1)[0]
            return (cut or line[:limit]) + "…"
    return ""
