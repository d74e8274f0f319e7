"""The dream cycle on a scratch copy of the shared corpus: every kind of finding, a
sample of each checked by hand against the files, reports that say new / fixed /
persists, and every fix kind applied through safe write-back, byte-compared."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.maintain.dream.edits import add_org_id, normalise_tag
from cairn.writeback.okflog import add_log_entry

pytestmark = pytest.mark.corpus
TODAY = dt.date(2027, 6, 1)
Fresh = Callable[..., tuple[Path, Cairn]]
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _changed_lines(old: bytes, new: bytes) -> tuple[list[str], list[str]]:
    """Lines removed from ``old`` and added in ``new`` (everything else is equal)."""
    a = old.decode().splitlines(keepends=True)
    b = new.decode().splitlines(keepends=True)
    gone: list[str] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            gone += a[i1:i2]
            added += b[j1:j2]
    return gone, added


@pytest.fixture
def _cli(cli: Callable[..., Any]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``_cli(*args, db=...)``: ``cairn ARGS --db DB`` in this process, without embeddings."""
    def run(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
        res = cli(*args, "--db", str(db), env={"CAIRN_EMBED": "none"}, check=False)
        return subprocess.CompletedProcess(args, res.code, res.stdout, res.stderr)
    return run


# --- the report -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report(scratch: Path) -> dict[str, object]:
    with Cairn.open(db=scratch.parent / "index.db") as c:
        return c.maintain.run(today=TODAY).as_data()["report"]  # type: ignore[no-any-return]


def _find(report: dict[str, object], **want: object) -> list[dict[str, object]]:
    return [f for f in report["findings"]  # type: ignore[attr-defined]
            if all(f.get(k) == v for k, v in want.items())]


def test_every_kind_of_finding_is_listed(report: dict[str, object]) -> None:
    counts = dict(report["counts"])  # type: ignore[call-overload]
    assert counts.pop("memory") == 0  # no memory bundle here (tests/memory/test_dream_memory.py)
    assert set(counts) == {"stale", "broken", "orphans", "thin", "duplicates", "entities",
                           "contradictions", "integrity", "tags"}
    assert all(n > 0 for n in counts.values()), counts
    kinds = {f["kind"] for f in report["findings"]}  # type: ignore[attr-defined]
    for kind in ("past-deadline", "past-scheduled", "okf-stale-after", "okf-deprecated-linked",
                 "unresolved-link", "missing-attachment", "fragile-link", "orphan", "thin",
                 "near-duplicate", "entity", "contradicts", "tag-spelling"):
        assert kind in kinds, kind


def test_known_past_deadline_and_repeater(report: dict[str, object], scratch: Path) -> None:
    sample = scratch / "org" / "organice" / "sample.org"
    lines = sample.read_text(encoding="utf-8").splitlines()
    hit = _find(report, kind="past-deadline", relpath="org/organice/sample.org", line=548)
    assert len(hit) == 1
    assert hit[0]["value"] == "<2018-09-10 Mon>"
    assert "Check out the organice agenda view" in lines[547]
    assert "DEADLINE: <2018-09-10 Mon>" in "\n".join(lines[547:550])
    assert hit[0]["path"] == str(sample)
    # a repeating task whose base date passed is not stale
    assert "+" in "\n".join(lines[345:348]) and "DEADLINE" in "\n".join(lines[345:348])
    assert not _find(report, check="stale", relpath="org/organice/sample.org", line=346)


def test_known_broken_link_has_the_renamed_note_first(report: dict[str, object]) -> None:
    hits = [f for f in _find(report, kind="unresolved-link", value="Kevin Kelly")]
    assert len(hits) == 3
    for f in hits:
        best = f["evidence"]["candidates"][0]  # type: ignore[index]
        assert best["path"] == "markdown/kepano-obsidian/References/Kevin J Kelly.md"
        assert f["fix"]["params"]["new"] == "[[Kevin J Kelly]]"  # type: ignore[index]
        text = Path(str(f["path"])).read_text(encoding="utf-8").splitlines()
        line = int(f["line"])  # type: ignore[call-overload]
        assert "[[Kevin Kelly]]" in "".join(text[line - 1 : line + 2])


def test_known_orphan_okf_stale_contradiction(report: dict[str, object], scratch: Path) -> None:
    family = "org/org-roam/tests/roam-files/family.org"
    assert _find(report, kind="orphan", relpath=family)
    assert "[[" not in (scratch / family).read_text(encoding="utf-8")
    rev = _find(report, kind="okf-stale-after",
                relpath="okf/knowledge-catalog/okf/bundles/acme_retail/metrics/revenue.md")
    assert rev and rev[0]["line"] == 10 and rev[0]["value"] == "2026-12-31T00:00:00Z"
    c = _find(report, kind="contradicts")
    assert c and c[0]["relpath"].endswith("2023 Japan Trip.md")  # type: ignore[union-attr]
    assert c[0]["evidence"]["other"].endswith("Steph Ango.md")  # type: ignore[index]


def test_integrity_paths_can_be_opened(report: dict[str, object]) -> None:
    for f in _find(report, check="integrity"):
        assert Path(str(f["path"])).is_file(), f


def test_second_run_is_unchanged_then_says_new_and_fixed(fresh: Fresh) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    first = c.maintain.run(today=TODAY).report
    again = c.maintain.run(today=TODAY).report
    assert again.unchanged and again.id == first.id
    assert {f.key for f in again.findings} == {f.key for f in first.findings}
    # mend one broken link by hand, break another: the next report says so
    kepano = base / "markdown" / "kepano-obsidian"
    (kepano / "References" / "Kevin J Kelly.md").rename(kepano / "References" / "Kevin Kelly.md")
    c.index()
    third = c.maintain.run(today=TODAY).as_data()["report"]
    assert not third["unchanged"] and third["previous"] == first.id
    assert any("Kevin Kelly" in x["message"] for x in third["fixed"])
    assert third["summary"]["fixed"] >= 3


def test_only_and_unknown_check(fresh: Fresh) -> None:
    from cairn.errors import QueryError

    base, c = fresh({"org": ["orgparse"]})
    full = c.maintain.run(today=TODAY).report
    (base / "org" / "orgparse" / "src" / "orgparse" / "tests" / "data" / "new.org").write_text(
        "* TODO late\n  DEADLINE: <2020-01-01 Wed>\n", encoding="utf-8")
    c.index()
    r = c.maintain.run(only=["stale,tags"], today=TODAY).report
    assert r.checks == ("stale", "tags")
    assert [f.kind for f in r.findings if r.status[f.key] == "new"] == ["past-deadline"]
    again = c.maintain.run(today=TODAY).report  # compared with the last full report, not --only
    assert again.previous == full.id
    assert {f.relpath for f in again.findings if again.status[f.key] == "new"} == {
        "org/orgparse/src/orgparse/tests/data/new.org"}
    with pytest.raises(QueryError, match="known checks"):
        c.maintain.run(only=["stael"])


# --- fixes ------------------------------------------------------------------------------


def _apply(
    c: Cairn, kind: str, only: str, *, proposed: bool = False
) -> list[tuple[Path, bytes, bytes]]:
    """Apply one kind of fix; ``(path, old bytes from the backup, new bytes)``."""
    run = c.maintain.run(apply=True, fix_kinds=[kind], only=[only], today=TODAY, proposed=proposed)
    out = []
    for ch in run.changes:
        assert ch.action in ("changed", "created"), ch
        new = Path(ch.path).read_bytes()
        old = c.maintain.backups.read(c.maintain.backups.get(ch.backup)) if ch.backup else b""
        out.append((Path(ch.path), old, new))
    return out


def test_fix_retarget_link(fresh: Fresh) -> None:
    _, c = fresh({"markdown": ["kepano-obsidian"]})
    # a bare wikilink names a note anywhere: a similar name is a proposal, not applied
    assert not [x for x in _apply(c, "retarget_link", "broken") if b"Kevin J" in x[2]]
    changed = _apply(c, "retarget_link", "broken", proposed=True)
    kelly = [x for x in changed if b"Kevin J Kelly" in x[2]]
    assert len(kelly) == 3
    for _, old, new in kelly:
        gone, added = _changed_lines(old, new)
        assert len(gone) == len(added) >= 1
        for g, a in zip(gone, added, strict=True):
            assert a == g.replace("[[Kevin Kelly]]", "[[Kevin J Kelly]]", 1)
    # re-indexed: the links resolve now
    assert not [u for u in c.maintain.unresolved_links() if u.target == "Kevin Kelly"]
    target = c.store.documents_at(c.roots()[0].id, "kepano-obsidian/References/Kevin J Kelly.md")
    assert len(c.store.backlinks(target[0].id)) >= 3


def test_fix_add_org_id(fresh: Fresh) -> None:
    _, c = fresh({"org": ["organice"]})
    changed = _apply(c, "add_org_id", "broken")
    readme = [x for x in changed if x[0].name == "README.org"]
    assert readme
    _, old, new = readme[0]
    gone, added = _changed_lines(old, new)
    assert gone == []
    assert added[0] == ":PROPERTIES:\n" and added[1].startswith(":ID: ") and added[2] == ":END:\n"
    # the file-level drawer goes after the leading comment (org-syntax: zeroth section),
    # so the ``# -*- … -*-`` line Emacs reads only on line 1 stays first
    first = old.split(b"\n", 1)[0]
    assert first.startswith(b"# -*- ") and new.startswith(first + b"\n:PROPERTIES:\n")
    assert new.replace("".join(added).encode(), b"", 1) == old  # every old byte kept
    new_id = added[1].split()[1]
    doc = c.store.documents_at(c.roots()[0].id, "organice/README.org")[0]
    assert doc.declared_id == new_id  # re-indexed: the ID is found
    assert not _find(c.maintain.run(today=TODAY).as_data()["report"], kind="fragile-link",
                     relpath="org/organice/README.org")


def test_fix_mark_status_logs_in_the_bundle(fresh: Fresh) -> None:
    base, c = fresh({"okf": ["knowledge-catalog"]})
    bundle = base / "okf" / "knowledge-catalog" / "okf" / "bundles" / "acme_retail"
    log_before = (bundle / "log.md").read_bytes()
    changed = {p: (o, n) for p, o, n in _apply(c, "mark_status", "stale")}
    old, new = changed[bundle / "metrics" / "revenue.md"]
    assert _changed_lines(old, new) == (["status: stable\n"], ["status: deprecated\n"])
    log = (bundle / "log.md").read_bytes()
    gone, added = _changed_lines(log_before, log)
    assert gone == [] and any("`metrics/revenue.md`" in a for a in added)
    assert f"## {TODAY.isoformat()}\n" in added
    units = c.store.units_of(c.store.documents_at(c.roots()[0].id, str(
        (bundle / "metrics" / "revenue.md").relative_to(base / "okf")))[0].id)
    assert units[0].extra["okf"]["status"] == "deprecated"


def test_fix_create_entity_note(fresh: Fresh) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    assert [u for u in c.maintain.unresolved_links() if u.target == "Published"]
    changed = _apply(c, "create_note", "entities")
    created = {p.name: n for p, o, n in changed}
    assert "Published.md" in created
    note = base / "markdown" / "entities" / "Published.md"
    assert note.read_text(encoding="utf-8").startswith("# Published\n")
    assert not [u for u in c.maintain.unresolved_links() if u.target == "Published"]


def test_fix_normalise_tag(fresh: Fresh) -> None:
    _, c = fresh({"org": ["orgparse"]})
    # Org tags are case-sensitive: a rename that only changes case is never a fix
    found = c.maintain.run(only=["tags"], today=TODAY).report.findings
    assert found and all(f.fix is None for f in found)
    assert _apply(c, "normalise_tag", "tags") == []
    assert _apply(c, "normalise_tag", "tags", proposed=True) == []
    # the edit itself changes only the heading's tag group
    old = "* H :TAG1:x:\nbody :TAG1: here\n"
    new = normalise_tag(old, {"old": "TAG1", "new": "tag1", "format": "org"})
    assert new == "* H :tag1:x:\nbody :TAG1: here\n"


def test_dry_run_writes_nothing_and_refuses_a_changed_file(fresh: Fresh) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    kepano = base / "markdown" / "kepano-obsidian"
    before = {p: p.read_bytes() for p in kepano.rglob("*.md")}
    run = c.maintain.run(dry_run=True, fix_kinds=["retarget_link"], only=["broken"], today=TODAY,
                  proposed=True)
    assert run.changes and all(ch.action == "planned" for ch in run.changes)
    assert any("+" in ch.diff and "[[Kevin J Kelly]]" in ch.diff for ch in run.changes)
    assert {p: p.read_bytes() for p in kepano.rglob("*.md")} == before
    # a file edited after indexing is refused, and left as the user saved it
    victim = kepano / "References" / "Out of Control.md"
    edited = victim.read_bytes() + b"\nedited by hand\n"
    victim.write_bytes(edited)
    run = c.maintain.run(apply=True, fix_kinds=["retarget_link"], only=["broken"], today=TODAY,
                  proposed=True)
    mine = [ch for ch in run.changes if ch.path == str(victim)]
    assert mine and mine[0].action == "refused" and "changed since it was indexed" in mine[0].reason
    assert victim.read_bytes() == edited


def test_cli_dream_restore_and_unresolved(
    fresh: Fresh, tmp_path: Path, _cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    c.close()
    db = tmp_path / "index.db"
    res = _cli("graph", "unresolved", "--json", db=db)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    kelly = [r for r in rows if r["target"] == "Kevin Kelly"]
    assert len(kelly) == 3 and all(r["line"] and Path(r["abs_path"]).is_file() for r in kelly)
    res = _cli("dream", "--only", "broken", "--today", "2027-06-01", db=db)
    assert res.returncode == 0, res.stderr
    assert "# cairn dream" in res.stdout and "Kevin J Kelly" in res.stdout
    res = _cli("dream", "--dry-run", "--proposed", "--fix", "retarget_link", "--only", "broken",
               db=db)
    assert res.returncode == 0 and "+" in res.stdout and "[[Kevin J Kelly]]" in res.stdout
    target = base / "markdown" / "kepano-obsidian" / "References" / "Out of Control.md"
    original = target.read_bytes()
    res = _cli("dream", "--apply", "--proposed", "--fix", "retarget_link", "--only", "broken",
               "--json", db=db)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["applied"] and target.read_bytes() != original
    backup = next(ch["backup"] for ch in data["changes"] if ch["path"] == str(target))
    listed = json.loads(_cli("restore", "--list", "--json", db=db).stdout)
    assert backup in {b["id"] for b in listed}
    res = _cli("restore", backup, db=db)
    assert res.returncode == 0, res.stderr
    assert target.read_bytes() == original  # exact bytes back
    res = _cli("restore", "no-such-backup", db=db)
    assert res.returncode == 1 and "no single backup" in res.stderr


@pytest.mark.slow
def test_sigkill_during_apply_leaves_old_or_new_bytes(fresh: Fresh, tmp_path: Path) -> None:
    import random
    import time

    base, c = fresh({"markdown": ["kepano-obsidian"], "org": ["organice"]})
    plan = c.maintain.run(dry_run=True, only=["broken"], today=TODAY, proposed=True).changes
    c.close()
    originals = {Path(ch.path): Path(ch.path).read_bytes() for ch in plan if ch.action == "planned"}
    assert len(originals) >= 4
    db = tmp_path / "index.db"
    env = {**os.environ, "PYTHONPATH": SRC, "CAIRN_EMBED": "none"}
    rng = random.Random(16)
    finals: dict[Path, bytes] = {}
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-m", "cairn.interfaces.cli", "dream", "--apply", "--proposed",
             "--only", "broken", "--today", "2027-06-01", "--db", str(db)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 2.5))
        proc.kill()
        proc.wait()
        for path, old in originals.items():
            now = path.read_bytes()
            if now != old:
                finals.setdefault(path, now)
                assert now == finals[path], f"{path}: torn or different bytes"
        assert not [p for p in base.rglob(".*.tmp")], "temporary files left beside notes"
        for path, old in originals.items():  # back to the start for the next round
            path.write_bytes(old)
        with Cairn.open(db=db) as again:
            again.index()


# --- pieces ------------------------------------------------------------------------------


def test_log_entry_newest_first() -> None:
    text = "# Log\n\n## 2026-01-02\n\n- **Update** a\n"
    same_day = add_log_entry(text, "2026-01-02", "b")
    assert same_day == "# Log\n\n## 2026-01-02\n\n- b\n- **Update** a\n"
    newer = add_log_entry(text, "2026-02-01", "c")
    assert newer.startswith("# Log\n\n## 2026-02-01\n\n- c\n\n## 2026-01-02")
    assert add_log_entry("", "2026-02-01", "c") == "# Log\n\n## 2026-02-01\n\n- c\n"


def test_edits_keep_crlf_and_refuse_twice() -> None:
    from cairn.maintain.dream.edits import EditRefused

    org = "* TODO a :X:\r\nbody\r\n* b\r\n"
    out = add_org_id(org, {"line": 1}, path="/n.org")
    assert out.startswith("* TODO a :X:\r\n:PROPERTIES:\r\n:ID: ")
    assert out.endswith("body\r\n* b\r\n")
    with pytest.raises(EditRefused):
        add_org_id(out, {"line": 1}, path="/n.org")
    renamed = normalise_tag(org, {"old": "X", "new": "x", "format": "org"})
    assert renamed == org.replace(":X:", ":x:")


def test_dream_on_a_schedule_runs_until_stopped(fresh: Fresh) -> None:
    import threading

    _, c = fresh({"org": ["orgparse"]})
    stop = threading.Event()
    seen: list[str] = []

    def report(r: object) -> None:
        seen.append(getattr(r, "id", ""))
        if len(seen) == 2:
            stop.set()

    assert c.maintain.every(stop, minutes=0.002, on_report=report) == 2
    assert seen and c.maintain.reports()[0].id == seen[0]
