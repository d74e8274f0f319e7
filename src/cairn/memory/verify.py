"""``verify``: what a memory bundle's files say about themselves, checked without
writing anything: every layer-1 memory's seal, each memory in one place only, every
memory a concept names as a source present, and no write left half done
(:mod:`cairn.memory.journal`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cairn.memory import journal
from cairn.memory.bundle import MemoryBundle, MemoryError_, seal
from cairn.memory.layout import CONCEPT_DIRS, MEMORY_DIRS, Entry

_SEAL = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class SealProblem:
    """A memory whose seal does not match: ``path``, the ``expected`` seal (its
    ``hash`` field, ``None`` when missing), the ``actual`` one recomputed, or a
    ``reason`` when the file cannot be read at all."""

    path: str
    expected: str | None
    actual: str | None
    reason: str


def verify(bundle: MemoryBundle) -> tuple[int, list[SealProblem]]:
    """Recompute the seal of every layer-1 memory and check the bundle's
    :func:`consistency` (never fixes anything).

    Returns:
        ``(memories checked, problems)``.
    """
    checked, out, read = verify_entries(bundle)
    return checked, out + consistency(bundle, read)


def verify_entries(
    bundle: MemoryBundle,
) -> tuple[int, list[SealProblem], dict[str, list[Entry]]]:
    """:func:`verify`, also giving the memories read (layout folder → its readable
    entries), so a maintenance cycle reads each file once."""
    checked = 0
    out: list[SealProblem] = []
    read: dict[str, list[Entry]] = {}
    for folder in MEMORY_DIRS:
        kept = read.setdefault(folder, [])
        for rel in bundle.listing(folder):
            checked += 1
            try:
                e = bundle.read(rel)
            except MemoryError_ as exc:
                out.append(SealProblem(rel, None, None, str(exc).split(": ", 1)[-1]))
                continue
            kept.append(e)
            expected = e.meta.get("hash")
            actual = seal(e.meta, e.body)
            if not isinstance(expected, str) or not expected:
                out.append(SealProblem(rel, None, actual, "no seal (hash field)"))
            elif expected != actual:
                out.append(
                    SealProblem(rel, expected, actual, "changed outside cairn: seal mismatch")
                )
    return checked, out, read


def consistency(bundle: MemoryBundle, read: dict[str, list[Entry]]) -> list[SealProblem]:
    """The problems beyond seals, given the memories read (:func:`verify_entries`): a
    memory in more than one memory folder (a move interrupted by a crash), a memory a
    concept names as a source (by seal, under ``/memories/``) that is in no memory
    folder (deleted), and a journal left by an interrupted write."""
    out: list[SealProblem] = []
    where: dict[str, str] = {}
    for folder in MEMORY_DIRS:
        for rel in bundle.listing(folder):
            name = rel.rsplit("/", 1)[1]
            if name in where:
                why = f"the same memory is also in {where[name]}"
                out.append(SealProblem(rel, None, None, why))
            else:
                where[name] = rel
    seals = {str(e.meta.get("hash") or "") for es in read.values() for e in es}
    for folder in CONCEPT_DIRS:
        for c in bundle.entries(folder):
            raw = c.meta.get("sources")
            for s in raw if isinstance(raw, list) else []:
                if not isinstance(s, dict):
                    continue
                sid, res = str(s.get("id") or ""), str(s.get("resource") or "")
                if not (_SEAL.match(sid) or res.startswith("/memories/")) or sid in seals:
                    continue
                if res.startswith("/memories/") and bundle.abs(res).is_file():
                    continue
                out.append(SealProblem(res.lstrip("/") or sid, sid or None, None,
                                       f"missing: {c.rel} names it as a source"))
    op = journal.pending(bundle.folder)
    if op is not None:
        out.append(SealProblem(journal.JOURNAL, None, None,
                               f"an interrupted {op}: the next write of the bundle finishes it"))
    return out
