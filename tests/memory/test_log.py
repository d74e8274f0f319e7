"""``log.md`` of a memory bundle: indexed by the operation that appended to it, and kept
small (older entries move to ``log/<date>/log.md``, written once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.memory import bundle as bundle_mod
from cairn.memory.bundle import LOG_TITLE, split_log


def _log_text(c: Cairn, folder: Path, rel: str = "log.md") -> str:
    """The indexed text of one of the bundle's files (all its units)."""
    (root,) = [r for r in c.store.roots() if Path(r.path) == folder.resolve()]
    (doc,) = [d for d in c.store.documents_of_root(root.id) if d.path == rel]
    return "\n".join(u.body for u in c.store.units_of(doc.id))


def test_remember_indexes_the_log_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.memory.remember(folder, "The kiln needs a new thermocouple", tags=["kiln"])
        rec = c.memory.remember(folder, "Glaze batches fire at cone six", tags=["glaze"])
        text = _log_text(c, folder)
        # the second remember's own log line is searchable right after it returns
        assert rec.title in text and "Remember" in text
        hits = c.search("thermocouple", limit=20).hits
        assert any(h.path == "log.md" for h in hits), [h.path for h in hits]


def test_split_log_keeps_the_newest_entries_and_every_date() -> None:
    entries = "".join(f"* **Remember**: event {i:03d}\n" for i in range(60))
    text = f"{LOG_TITLE}\n## 2026-12-02\n{entries}\n## 2026-12-01\n* **Creation**: first\n"
    kept, older = split_log(text, 1000)
    assert len(kept.encode()) <= 1000 and kept.startswith(LOG_TITLE)
    assert kept.count("## 2026-12-02") == 1 and "event 000" in kept  # newest first
    # the cut section repeats its heading; nothing is lost or doubled
    assert older.startswith("## 2026-12-02\n") and older.rstrip().endswith("* **Creation**: first")
    lines = [x for x in (kept + older).splitlines() if x.startswith("* ")]
    assert lines == [x for x in text.splitlines() if x.startswith("* ")]
    assert split_log(text, 100_000) == (text, "")
    # one huge entry is kept rather than split
    huge = f"{LOG_TITLE}\n## 2026-12-02\n* {'x' * 5000}\n"
    assert split_log(huge, 1000) == (huge, "")


def test_the_log_rotates_and_stays_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a small limit, remembering past it moves the oldest entries to a new
    ``log/<date>/log.md``; both logs are indexed (as OKF logs) and the bundle
    validates."""
    monkeypatch.setattr(bundle_mod, "LOG_MAX_BYTES", 2_000)
    folder = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        for i in range(30):
            c.memory.remember(folder, f"Event number {i} about the oncall rotation")
        log = (folder / "log.md").read_text()
        older = sorted(folder.glob("log/*/log.md"))
        assert older and len(log.encode()) <= 2_000
        assert "Event number 29" in log and "Event number 0 " not in log
        moved = "".join(p.read_text() for p in older)
        for i in range(30):  # every remember is in exactly one log
            assert (log + moved).count(f"Event number {i} ") == 1
        for p in older:
            rel = p.relative_to(folder).as_posix()
            assert p.read_text().startswith(LOG_TITLE + "\n## ")
            assert "Event number" in _log_text(c, folder, rel)
        assert "Event number 29" in _log_text(c, folder)
        errors = [d for d in c.notes.validate() if d.severity == "error"]
        assert errors == []
