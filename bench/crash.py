"""Crash safety: SIGKILL cairn at random moments of indexing, watching and embedding.

    python bench/crash.py [--kills 60] [--seed 1] [--work DIR]

Each trial changes a few notes of a scratch vault (corpus notes: the kepano Obsidian
vault and org-roam), starts ``cairn index --no-embed``, ``cairn index`` with the static
model (``CAIRN_EMBED=static``: the embedding pass) or ``cairn watch`` (which then sees
more edits), kills it with SIGKILL after a random delay, then checks the index it left:

1. ``PRAGMA integrity_check`` says ``ok``;
2. ``Cairn.notes.check()`` (``cairn check``) finds no problem;
3. a search still answers (the last committed state);
4. a converging run (``Cairn.index`` with the static model) gives exactly what a clean
   build of the same files gives (:meth:`cairn.app.Cairn.snapshot`: files, documents,
   units, links, edges, chunks) and leaves no chunk without its vector.

Prints one line per trial and the counts: kills, corrupt, check problems, search
errors, divergent. ``tests/reliability/test_crash.py`` runs a few trials by default and
this whole bench in the ``slow`` tier.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
KINDS = ("index", "embed", "watch")


@dataclass
class Tally:
    """What the trials found."""

    kills: int = 0
    corrupt: int = 0
    check_problems: int = 0
    search_errors: int = 0
    divergent: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No trial found a problem."""
        return not (self.corrupt or self.check_problems or self.search_errors or self.divergent)


def make_vault(dst: Path) -> Path:
    """A scratch copy of corpus notes (about 120 notes: enough for the parsing pool)."""
    shutil.copytree(CORPUS / "markdown" / "kepano-obsidian", dst)
    shutil.copytree(CORPUS / "org" / "org-roam", dst / "org-roam")
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def mutate(vault: Path, rng: random.Random, trial: int) -> None:
    """A few edits of the kinds users make: change, add, delete, rename."""
    notes = sorted(vault.rglob("*.md")) + sorted(vault.rglob("*.org"))
    for p in rng.sample(notes, min(4, len(notes))):
        with open(p, "a", encoding="utf-8") as fh:
            fh.write(f"\n\nedit {trial}: crash trial words {rng.random():.6f}\n")
    (vault / f"crash-{trial}.md").write_text(
        f"# Crash {trial}\n\nLinks to [[crash-{trial - 1}]] and [[Home]].\n", encoding="utf-8"
    )
    old = vault / f"crash-{trial - 3}.md"
    if old.exists():
        if rng.random() < 0.5:
            old.unlink()
        else:
            old.rename(vault / f"renamed-{trial}.md")


def _env(embed: str) -> dict[str, str]:
    env = {**os.environ, "CAIRN_EMBED": embed, "CAIRN_WORKERS": "2"}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _command(kind: str, db: Path, vault: Path) -> tuple[list[str], dict[str, str]]:
    cli = [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(db)]
    if kind == "index":
        return [*cli, "index", str(vault), "-q", "--no-embed"], _env("none")
    if kind == "embed":
        return [*cli, "index", str(vault), "-q"], _env("static")
    return [*cli, "watch", str(vault), "-q", "--no-embed"], _env("none")


def integrity(db: Path) -> str:
    """SQLite's own check of the file (``ok`` when sound)."""
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def clean_snapshot(vault: Path, work: Path) -> object:
    """What a clean build (static model) of the vault holds."""
    from cairn.app import Cairn
    from cairn.ingest.snapshot import index_snapshot

    db = work / "clean.db"
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with Cairn.open(db=db) as c:
        c.index([vault])
        return index_snapshot(c.store, c.graph.fresh())


def trial(
    kind: str, db: Path, vault: Path, work: Path, rng: random.Random, n: int, tally: Tally
) -> str:
    """One kill and the checks after it; returns a one-line summary."""
    from cairn.app import Cairn
    from cairn.ingest.snapshot import index_snapshot

    if n % 5 == 0:  # now and then a cold build is killed
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    mutate(vault, rng, n)
    cmd, env = _command(kind, db, vault)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    delay = rng.uniform(0.3, 2.5 if kind != "watch" else 4.0)
    if kind == "watch":  # edits while it watches, then the kill
        time.sleep(delay * 0.6)
        mutate(vault, rng, n + 10_000)
        time.sleep(delay * 0.4)
    else:
        time.sleep(delay)
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # the parsing pool's workers die with their parent's pipes; give them a moment
    tally.kills += 1
    tally.by_kind[kind] = tally.by_kind.get(kind, 0) + 1
    problems: list[str] = []
    if not db.exists():
        return f"{n:3} {kind:6} killed at {delay:4.2f}s before the index existed"
    state = integrity(db)
    if state != "ok":
        tally.corrupt += 1
        problems.append(f"integrity_check: {state}")
    with Cairn.open(db=db) as c:
        found = c.notes.check()
        if found:
            tally.check_problems += 1
            problems.append(f"check: {found[:3]}")
        try:
            c.search("note", mode="keyword")
        except Exception as exc:
            tally.search_errors += 1
            problems.append(f"search: {type(exc).__name__}: {exc}")
    old = os.environ.get("CAIRN_EMBED")
    os.environ["CAIRN_EMBED"] = "static"
    try:
        want = clean_snapshot(vault, work)
        with Cairn.open(db=db) as c:
            if kind == "index" and c.semantic.has_vectors():
                # a --no-embed run repairs what a killed run left unchunked
                c.index([vault], wait=30, embed=False)
                short = index_snapshot(c.store, c.graph.fresh()).chunks != want.chunks  # type: ignore[attr-defined]
                if short:
                    problems.append("a --no-embed run left chunks missing")
            c.index([vault], wait=30)
            got = index_snapshot(c.store, c.graph.fresh())
            vectors = c.store.vectors
            missing = [
                f"{k} chunks without a vector in {sp.space}"
                for sp in vectors.spaces()
                if (k := vectors.missing_vectors(sp.space))
            ]
    finally:
        if old is None:
            os.environ.pop("CAIRN_EMBED", None)
        else:
            os.environ["CAIRN_EMBED"] = old
    diff = got.differences(want)  # type: ignore[attr-defined]
    if diff or missing or any(p.startswith("a --no-embed") for p in problems):
        tally.divergent += 1
        problems.append(f"diverged: {diff} {missing}")
    line = (
        f"{n:3} {kind:6} killed at {delay:4.2f}s"
        + (" (had finished)" if finished else "")
        + (": " + "; ".join(problems) if problems else ": ok")
    )
    if problems:
        tally.details.append(line)
    return line


def run_trials(
    work: Path, kills: int, seed: int = 1, log: Callable[[str], None] | None = None
) -> Tally:
    """``kills`` trials cycling through :data:`KINDS`; the counts."""
    rng = random.Random(seed)
    vault = make_vault(work / "vault")
    db = work / "crash.db"
    tally = Tally()
    for n in range(1, kills + 1):
        line = trial(KINDS[(n - 1) % len(KINDS)], db, vault, work, rng, n, tally)
        if log is not None:
            log(line)
    return tally


def main() -> None:
    """Run the bench and print the counts."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--kills", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    os.environ.setdefault("CAIRN_WORKERS", "1")
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-crash-"))
    t0 = time.perf_counter()
    tally = run_trials(work, args.kills, args.seed, log=lambda s: print(s, flush=True))
    print(
        f"\n{tally.kills} kills ({', '.join(f'{k} {v}' for k, v in tally.by_kind.items())}): "
        f"{tally.corrupt} corrupt, {tally.check_problems} with check problems, "
        f"{tally.search_errors} search errors, {tally.divergent} divergent "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    raise SystemExit(0 if tally.ok else 1)


if __name__ == "__main__":
    main()
