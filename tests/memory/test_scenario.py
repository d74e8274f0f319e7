"""The agent-memory scenario on a scratch bundle under git: two agents (two real
processes) remember 50 events at once, recall, consolidate, supersede, decay until an
archive, tamper and verify. After every step the bundle validates as OKF (``cairn
validate``) and ``git status`` names exactly the files that step had to touch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.model.serialize import to_data

SRC = Path(__file__).resolve().parents[2] / "src"
TOPICS = {
    "build": "The build pipeline needs Python 3.12 and the uv installer on the runner",
    "tea": "Alice drinks green tea every morning before the standup meeting",
    "deploy": "Deploys to production happen on Tuesdays after the release review",
    "backup": "The nightly backup job copies the database to the offsite bucket",
    "oncall": "The oncall rotation changes every Monday at nine in the morning",
}
AGENT = """
import sys
from cairn.app import Cairn
from cairn.config import load_config
agent, bundle, db = sys.argv[1], sys.argv[2], sys.argv[3]
topics = {topics!r}
names = sorted(topics)
with Cairn(load_config(db=db)) as c:
    for i in range(25):
        t = names[i % len(names)]
        c.memory.remember(bundle, f"{{topics[t]}} (agent {{agent}}, event {{i}})",
                          tags=[t, "agent-" + agent],
                          memory_type="INSIGHT" if i % 4 == 0 else "FACT")
"""


def _git(bundle: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(bundle), *args], capture_output=True, text=True, check=True
    ).stdout


def _commit(bundle: Path) -> None:
    _git(bundle, "add", "-A")
    _git(bundle, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "step",
         "--allow-empty")


def _status(bundle: Path) -> set[str]:
    """Paths git sees changed, added or removed since the last commit."""
    _git(bundle, "add", "-A")
    out = _git(bundle, "diff", "--cached", "--name-only", "--no-renames")
    return set(out.split())


def _validate(db: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db), "validate", "--json"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    data = json.loads(res.stdout)
    assert data["errors"] == 0, [d for d in data["diagnostics"] if d["severity"] == "error"]


@pytest.mark.slow
def test_memory_scenario(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    db = tmp_path / "index.db"
    cairn = Cairn(load_config(db=db))
    # the bundle exists (and is registered) before the agents start
    cairn.memory.remember(bundle, TOPICS["build"] + " (seed)", tags=["build"])
    _git(bundle, "init", "-q")
    _commit(bundle)

    # 1. two agents, two processes, 50 events at once
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    code = AGENT.format(topics=TOPICS)
    procs = [
        subprocess.Popen([sys.executable, "-c", code, a, str(bundle), str(db)], env=env,
                         stderr=subprocess.PIPE, text=True)
        for a in ("a", "b")
    ]
    for p in procs:
        _, errs = p.communicate(timeout=600)
        assert p.returncode == 0, errs
    active = sorted((bundle / "memories/active").glob("*.md"))
    assert len(active) == 51  # nothing lost
    log = (bundle / "log.md").read_text()
    assert log.count("**Remember**") == 51
    changed = _status(bundle)
    assert changed == {"log.md"} | {f"memories/active/{p.name}" for p in active[:]} - {
        f"memories/active/{p.name}" for p in active if "(seed)" in p.read_text()
    }
    _validate(db)
    _commit(bundle)

    # 2. consolidate: every memory becomes a source of a concept
    res, change = cairn.memory.consolidate(bundle)
    assert len(res.subsumed) == 51 and not list((bundle / "memories/active").glob("*.md"))
    assert len(res.created) == len(TOPICS)
    assert _status(bundle) == set(change.touched) | {"log.md"}
    rep = cairn.memory.maintain(bundle, decay=False)
    assert rep.unsourced == [] and rep.missing_sources == [] and rep.pending == 0
    assert rep.integrity == []
    _validate(db)
    _commit(bundle)

    # 3. recall: counts rise at the next cycle; recall itself touches no file
    by_tag = {}
    for p in (bundle / "concepts/active").glob("*.md"):
        text = p.read_text()
        tag = next(t for t in TOPICS if f"- {t}\n" in text)
        by_tag[tag] = f"concepts/active/{p.name}"
    got = cairn.memory.recall(bundle, "green tea morning")
    assert got.hits[0].path == by_tag["tea"] and got.recorded >= 1
    cairn.memory.recall(bundle, "green tea standup")
    assert _status(bundle) == set()

    # 4. relations and truth maintenance: deploy depends_on build, backup depends_on
    #    deploy; superseding build supersedes both (transitively); a cycle is reported
    cairn.memory.relate(bundle, by_tag["deploy"], "depends_on", by_tag["build"])
    cairn.memory.relate(bundle, by_tag["backup"], "depends_on", by_tag["deploy"])
    cairn.memory.relate(bundle, by_tag["oncall"], "related", by_tag["tea"], confidence=0.8)
    assert _status(bundle) == {by_tag["deploy"], by_tag["backup"], by_tag["oncall"], "log.md"}
    _commit(bundle)
    expanded = cairn.memory.recall(bundle, "oncall rotation Monday", record=False)
    (tea,) = [h for h in expanded.hits if h.path == by_tag["tea"] and h.via]
    assert tea.via is not None and (tea.via.source, tea.via.type) == (by_tag["oncall"], "related")
    assert to_data(tea)["via"] == {"from": by_tag["oncall"], "type": "related"}  # the JSON
    cairn.memory.supersede(bundle, by_tag["build"])
    cairn.memory.pin(bundle, by_tag["oncall"])
    _commit(bundle)
    rep = cairn.memory.maintain(bundle)
    assert sorted(rep.superseded) == sorted([by_tag["deploy"], by_tag["backup"]])
    assert rep.recalled[by_tag["tea"]] == 2  # two recalls (others may have come along)
    assert all(c.concept not in rep.recalled for c in rep.decayed)
    tea = (bundle / by_tag["tea"]).read_text()
    assert "retrieval_count: 2" in tea and "confidence: 1.0" in tea
    assert _status(bundle) == set(rep.changed)
    _validate(db)
    _commit(bundle)

    # 5. decay cycles until the tea concept is archived (pinned oncall never decays)
    archived: list[str] = []
    for _ in range(10):
        rep = cairn.memory.maintain(bundle)
        assert _status(bundle) == set(rep.changed)
        _commit(bundle)
        if rep.archived:
            archived = rep.archived
            break
    assert archived == [by_tag["tea"].replace("concepts/active", "concepts/archive")]
    # the relation to it follows it to the archive: nothing dangles
    assert rep.dangling == []
    assert f"target: /{archived[0]}" in (bundle / by_tag["oncall"]).read_text()
    assert "confidence: 1.0" in (bundle / by_tag["oncall"]).read_text()
    assert "status: archived" in (bundle / archived[0]).read_text()
    _validate(db)

    # 6. tamper with one memory by hand: verify names it
    victim = sorted((bundle / "memories/subsumed").glob("*.md"))[7]
    victim.write_text(victim.read_text().rstrip("\n") + " (edited by hand)\n")
    ver = cairn.memory.verify(bundle)
    assert not ver.ok and [p.path for p in ver.problems] == [
        f"memories/subsumed/{victim.name}"
    ]
    cli = subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db), "memory", "verify",
         "-b", str(bundle)], capture_output=True, text=True, env=env,
    )
    assert cli.returncode == 1 and victim.name in cli.stdout
    cairn.close()
