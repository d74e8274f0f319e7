"""Every fix kind the dream cycle can make, over a copy of the whole shared corpus: the
file still parses, every unit the fix does not target keeps its bytes, and the index of
the result differs from the original only where the fix says.

Each corpus format folder (``org``, ``markdown``, ``okf``, ``chats``) is one root, as in
``conftest.make_scratch``: the widest roots, where same-named notes of different projects
meet. The kinds come from :data:`FIX_KINDS`, so a new kind is a new case here: it must
say below what it may change, or its case fails.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _corpus_index import FORMATS, CorpusIndexes
from cairn.app import Cairn
from cairn.maintain.dream.base import FIX_KINDS, Finding
from cairn.maintain.dream.fixes import apply_fixes
from cairn.model import Document
from cairn.model.views import StoredUnit

pytestmark = [pytest.mark.corpus, pytest.mark.slow, pytest.mark.timeout(900)]  # indexes all

TODAY = dt.date(2027, 6, 1)

UNIT_FIELDS = ("kind", "level", "title", "outline_path", "tags", "properties", "todo",
               "org_id", "body")
"""What a unit is compared by (line numbers move when a fix inserts lines)."""
MAY_CHANGE: dict[str, set[str]] = {
    "retarget_link": {"body"},  # the link as written, in its unit's text
    "add_org_id": {"org_id", "properties"},
    "mark_status": {"properties", "body"},
    "normalise_tag": {"tags", "body"},  # an inline ``#tag`` is in the text
    "create_note": set(),  # a new file; no existing unit changes
}
"""Per text-edit kind, the fields of its targeted units the fix may change."""
NOT_TEXT_EDITS = {"memory_maintain": "a memory maintenance cycle (tests/memory), not an edit"}


@dataclass
class Corpus:
    cairn: Cairn
    base: Path
    findings: list[Finding]


@pytest.fixture(scope="module")
def corpus(corpus_indexes: CorpusIndexes) -> Iterator[Corpus]:
    """A pristine copy of the corpus (the session's, shared with
    ``tests/graph/test_chunked_build.py``), its index and the dream cycle's findings."""
    built = corpus_indexes.copy_of(FORMATS, embed=False)
    base = built.checkout(built.notes.parent / "index.db")
    c = Cairn.open(db=base.parent / "index.db")
    findings = list(c.maintain.run(today=TODAY).report.findings)
    yield Corpus(c, base, findings)
    c.close()


def _doc(c: Cairn, path: Path) -> Document | None:
    for r in c.roots():
        root = Path(r.path)
        if root in path.parents:
            found = c.store.documents_at(r.id, path.relative_to(root).as_posix())
            return found[0] if found else None
    return None


def _snapshot(c: Cairn, path: Path) -> dict[str, Any] | None:
    doc = _doc(c, path)
    if doc is None:
        return None
    units = c.store.units_of(doc.id)
    return {
        "doc": (doc.format, doc.title, tuple(doc.tags), tuple(doc.aliases), doc.declared_id),
        "units": units,
        "links": [(x.unit_id, x.kind, x.target, x.raw, x.resolved_document_id)
                  for x in c.store.links_from([doc.id])],
    }


def _unit_at(units: list[StoredUnit], line: int | None) -> int:
    """The ordinal of the unit holding ``line`` (the first unit for the file level)."""
    if not line:
        return 0
    hits = [u.ordinal for u in units if u.line_start <= line <= u.line_end]
    return max(hits) if hits else 0


def _targets(kind: str, fixes: list[Finding], units: list[StoredUnit]) -> set[int]:
    """The ordinals of the units the fixes of one file say they change."""
    out: set[int] = set()
    for f in fixes:
        assert f.fix is not None
        if kind == "retarget_link":
            out.add(_unit_at(units, f.fix.params.get("line")))
        elif kind == "add_org_id":
            out.add(_unit_at(units, int(f.fix.params.get("line") or 0)))
        elif kind == "mark_status":
            out.add(0)
        elif kind == "normalise_tag":
            old = str(f.fix.params["old"])
            out.add(0)  # #+filetags / front matter
            out.update(u.ordinal for u in units if old in u.tags or f"#{old}" in u.body)
    return out


def _lines(data: bytes, u: StoredUnit) -> bytes:
    return b"".join(data.splitlines(keepends=True)[u.line_start - 1 : u.line_end])


@pytest.mark.parametrize("kind", FIX_KINDS)
def test_every_fix_changes_only_what_it_says(corpus: Corpus, kind: str) -> None:
    if kind in NOT_TEXT_EDITS:
        pytest.skip(NOT_TEXT_EDITS[kind])
    assert kind in MAY_CHANGE, f"fix kind {kind!r}: say in MAY_CHANGE what it may change"
    c = corpus.cairn
    mine = [f for f in corpus.findings if f.fix is not None and f.fix.kind == kind]
    if not mine:
        pytest.skip(f"the corpus gives no {kind} fix")
    by_path: dict[Path, list[Finding]] = {}
    for f in mine:
        assert f.fix is not None
        by_path.setdefault(Path(f.fix.path), []).append(f)
    before = {p: _snapshot(c, p) for p in by_path}
    old_bytes = {p: p.read_bytes() if p.exists() else None for p in by_path}
    changes = apply_fixes(c.store, mine, backups=c.maintain.backups, today=TODAY, proposed=True)
    written = [Path(ch.path) for ch in changes if ch.action in ("changed", "created")]
    for ch in changes:  # a log.md's bytes before: from its backup
        if ch.backup and Path(ch.path) not in old_bytes:
            old_bytes[Path(ch.path)] = c.maintain.backups.read(c.maintain.backups.get(ch.backup))
    try:
        assert written, [ch.reason for ch in changes][:5]
        assert not [ch.reason for ch in changes if ch.reason]  # no fix skipped or refused
        logs = {p for p in written if p not in by_path}
        assert all(p.name == "log.md" for p in logs), logs  # an OKF bundle's change log
        run = c.index_paths(written, embed=False)
        assert run.failed == 0
        for p in logs:
            _only_added(old_bytes.get(p) or b"", p)
        for path in written:
            if path not in logs:
                _check_file(c, kind, path, by_path[path], before[path], old_bytes[path])
    finally:
        for ch in changes:  # back to the corpus as it was, for the next kind
            if ch.action == "created":
                Path(ch.path).unlink()
            elif ch.action == "changed":
                Path(ch.path).write_bytes(old_bytes[Path(ch.path)])
        c.index_paths(written, embed=False)


def _only_added(old: bytes, path: Path) -> None:
    import difflib

    a, b = old.splitlines(keepends=True), path.read_bytes().splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    assert all(tag in ("equal", "insert") for tag, *_ in ops), path


def _check_file(c: Cairn, kind: str, path: Path, fixes: list[Finding],
                before: dict[str, Any] | None, old: bytes | None) -> None:
    after = _snapshot(c, path)
    assert after is not None, f"{path}: no longer parses into a document"
    new = path.read_bytes()
    if kind == "create_note":
        assert before is None and old is None and after["units"], path
        return
    assert before is not None and old is not None
    units_a: list[StoredUnit] = before["units"]
    units_b: list[StoredUnit] = after["units"]
    assert len(units_a) == len(units_b), f"{path}: units added or lost"
    targets = _targets(kind, fixes, units_a)
    for ua, ub in zip(units_a, units_b, strict=True):
        fields = {f for f in UNIT_FIELDS if getattr(ua, f) != getattr(ub, f)}
        if ua.ordinal in targets:
            assert fields <= MAY_CHANGE[kind], (path, ua.ordinal, fields)
        else:
            assert not fields, (path, ua.ordinal, fields)
            assert _lines(old, ua) == _lines(new, ub), (path, ua.ordinal, "bytes changed")
    doc_a, doc_b = before["doc"], after["doc"]
    if kind == "add_org_id":
        doc_a, doc_b = doc_a[:-1], doc_b[:-1]  # a file-level :ID: is its declared id
    if kind == "normalise_tag":
        doc_a, doc_b = doc_a[:2] + doc_a[3:], doc_b[:2] + doc_b[3:]
    assert doc_a == doc_b, path
    ids = {u.id: u.ordinal for u in units_a} | {u.id: u.ordinal for u in units_b}
    links_a = sorted((ids[u], k, t, r) for u, k, t, r, _ in before["links"])
    links_b = sorted((ids[u], k, t, r) for u, k, t, r, _ in after["links"])
    if kind != "retarget_link":
        assert links_a == links_b, path
        return
    olds = {str(f.fix.params["old"]) for f in fixes if f.fix is not None}
    news = {str(f.fix.params["new"]) for f in fixes if f.fix is not None}
    gone = [x for x in links_a if x not in links_b]
    came = [x for x in links_b if x not in links_a]
    assert {x[3] for x in gone} <= olds and {x[3] for x in came} <= news, path
    assert len(gone) == len(came) == len(fixes), path
    resolved = {r for _u, _k, _t, r, d in after["links"] if d}
    assert news <= resolved, (path, "a retargeted link does not resolve")
