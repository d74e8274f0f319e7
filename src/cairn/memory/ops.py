"""The file operations of agent memory: remember, pin, forget, relate and supersede;
consolidation is :mod:`cairn.memory.consolidate` (re-exported here, with the other
operations), maintenance :mod:`cairn.memory.maintain`.

Each takes a :class:`MemoryBundle` whose lock the caller holds, writes through it and
returns a typed result; indexing what changed is the caller's job
(:class:`cairn.memory.service.MemoryService`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.memory.bundle import MemoryBundle, MemoryError_, now_iso, render_file, seal
from cairn.memory.consolidate import Consolidated as Consolidated
from cairn.memory.consolidate import consolidate as consolidate
from cairn.memory.files import link_label
from cairn.memory.layout import (
    CONCEPT_DIRS,
    MEMORY_TYPE,
    MEMORY_TYPES,
    RELATION_TYPES,
    SCOPES,
    one_line,
)


@dataclass(frozen=True)
class Remembered:
    """A memory written: its bundle-relative ``path``, ``seal`` (SHA-256 hex),
    ``title`` and ``timestamp``."""

    path: str
    seal: str
    title: str
    timestamp: str


def make_memory(
    text: str,
    *,
    memory_type: str = "FACT",
    scope: str = "INCARNATION",
    tags: Sequence[str] = (),
    title: str | None = None,
    timestamp: str | None = None,
) -> tuple[str, bytes, Remembered]:
    """The file name, bytes and record of a new layer-1 memory (nothing written).

    Raises:
        MemoryError_: empty text, unknown memory type or scope, a ``timestamp`` that is
            not ISO 8601.
    """
    body = text.strip()
    if not body:
        raise MemoryError_("nothing to remember: the text is empty")
    mtype = memory_type.upper()
    if mtype not in MEMORY_TYPES:
        raise MemoryError_(f"memory type {memory_type!r}: use one of {', '.join(MEMORY_TYPES)}")
    sc = scope.upper()
    if sc not in SCOPES:
        raise MemoryError_(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    stamp = timestamp or now_iso()
    try:
        datetime.fromisoformat(stamp.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise MemoryError_(f"timestamp {stamp!r}: not an ISO 8601 date and time") from None
    clean_tags = list(dict.fromkeys(t.strip().lstrip("#") for t in tags if t.strip()))
    meta: dict[str, Any] = {
        "type": MEMORY_TYPE,
        "title": title or one_line(body, 80),
        "description": one_line(body, 160),
        "tags": clean_tags,
        "timestamp": stamp,
        "scope": sc,
        "memory_type": mtype,
    }
    s = seal(meta, body)
    meta["hash"] = s
    digits = re.sub(r"\D", "", stamp)[:14].ljust(14, "0")
    name = f"{digits[:8]}_{digits[8:14]}_{mtype.lower()}_{secrets.token_hex(4)}.md"
    return name, render_file(meta, body), Remembered("", s, str(meta["title"]), stamp)


def remember(bundle: MemoryBundle, text: str, **kwargs: Any) -> Remembered:
    """Write a new layer-1 memory into ``memories/active/`` and log it.

    Args:
        text: the event, in prose. kwargs: as for :func:`make_memory`.

    Raises:
        MemoryError_: see :func:`make_memory`.
    """
    for _ in range(5):  # a name clash (same second, same random id) is retried
        name, data, rec = make_memory(text, **kwargs)
        rel = f"memories/active/{name}"
        if not bundle.abs(rel).exists():
            break
    bundle.create(rel, data)
    kind = kwargs.get("memory_type", "FACT")
    bundle.note(f"**Remember**: [{link_label(rec.title)}](/{rel}) ({kind})")
    bundle.flush_log()
    return Remembered(rel, rec.seal, rec.title, rec.timestamp)


# --- small edits ---------------------------------------------------------------------
def set_pinned(bundle: MemoryBundle, name: str, pinned: bool = True) -> str:
    """Pin (never decays) or unpin a concept; returns its path.

    Raises:
        MemoryError_: no such concept.
    """
    c = bundle.read(bundle.find(name, CONCEPT_DIRS))
    meta = dict(c.meta)
    meta["pinned"] = pinned
    if bundle.update(c, meta, c.body, "memory: pin"):
        bundle.note(f"**{'Pin' if pinned else 'Unpin'}**: [{link_label(c.title)}](/{c.rel})")
        bundle.flush_log()
    return c.rel


def forget(bundle: MemoryBundle, name: str) -> str:
    """Move a memory to ``memories/archive/`` or a concept to ``concepts/archive/``
    (``status: archived``); never deletes. Returns the new path.

    Raises:
        MemoryError_: no such memory or concept, or it is archived already.
    """
    rel = bundle.find(name, ("memories/active", "memories/subsumed", "concepts/active"))
    e = bundle.read(rel)
    if rel.startswith("concepts/"):
        meta = dict(e.meta)
        meta["status"] = "archived"
        new = bundle.move(e, "concepts/archive", render_file(meta, e.body))
    else:
        new = bundle.move(e, "memories/archive")
    bundle.note(f"**Deprecation**: forgot [{link_label(e.title)}](/{new})")
    bundle.flush_log()
    return new


def relate(
    bundle: MemoryBundle, source: str, rtype: str, target: str, confidence: float = 1.0
) -> dict[str, Any]:
    """Add (or update) the typed relation ``source --rtype--> target`` between two
    concepts; returns ``{"source", "type", "target", "confidence"}``.

    Raises:
        MemoryError_: unknown relation type, a missing concept, a confidence outside
            0–1, or a relation of a concept to itself.
    """
    if rtype not in RELATION_TYPES:
        raise MemoryError_(f"relation type {rtype!r}: use one of {', '.join(RELATION_TYPES)}")
    if not 0.0 <= confidence <= 1.0:
        raise MemoryError_(f"confidence {confidence}: must be between 0 and 1")
    src = bundle.read(bundle.find(source, ("concepts/active",)))
    dst = bundle.find(target, CONCEPT_DIRS)
    if dst == src.rel:
        raise MemoryError_(f"{src.rel}: a concept cannot relate to itself")
    meta = dict(src.meta)
    rels = [
        r for r in src.relations if not (r["target"].lstrip("/") == dst and r.get("type") == rtype)
    ]
    rels.append({"target": "/" + dst, "type": rtype, "confidence": confidence})
    meta["relations"] = rels
    if bundle.update(src, meta, src.body, "memory: relate"):
        bundle.note(f"**Update**: [{link_label(src.title)}](/{src.rel}) {rtype} [{dst}](/{dst})")
        bundle.flush_log()
    return {"source": src.rel, "type": rtype, "target": dst, "confidence": confidence}


def supersede(bundle: MemoryBundle, name: str) -> str:
    """Mark a concept ``status: superseded`` (maintenance then supersedes what
    ``depends_on`` it); returns its path.

    Raises:
        MemoryError_: no such active concept.
    """
    c = bundle.read(bundle.find(name, ("concepts/active",)))
    meta = dict(c.meta)
    meta["status"] = "superseded"
    if bundle.update(c, meta, c.body, "memory: supersede"):
        bundle.note(f"**Deprecation**: superseded [{link_label(c.title)}](/{c.rel})")
        bundle.flush_log()
    return c.rel
