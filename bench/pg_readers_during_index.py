"""``cairn search`` while ``cairn index`` writes the same PostgreSQL index: a throwaway
pgserver database, a first small index of ``sample/``, then an index of the corpus's
Markdown, Org and OKF folders in the background and 12 searches one after another;
prints each search's exit code and whether the index was still running.

    python bench/pg_readers_during_index.py [SRC]   # SRC: the cairn source to run (src/)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
CODE = "import sys; from cairn.interfaces.cli import main; sys.exit(main())"


def main() -> None:
    import pgserver
    import psycopg

    src = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "src")
    server = pgserver.get_server(tempfile.mkdtemp(prefix="cairn-pg-race-"),
                                 cleanup_mode="delete")
    base = server.get_uri()
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("CREATE DATABASE race")
    p = urlsplit(base)
    url = urlunsplit((p.scheme, p.netloc, "/race", p.query, p.fragment))
    env = {**os.environ, "CAIRN_DB_URL": url, "CAIRN_EMBED": "none", "PYTHONPATH": src}
    cli = [sys.executable, "-c", CODE]
    subprocess.run([*cli, "index", str(ROOT / "sample")], env=env, capture_output=True,
                   check=True)
    folders = [str(CORPUS / f) for f in ("markdown", "org", "okf")]
    index = subprocess.Popen([*cli, "index", *folders], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(8)
    runs: list[tuple[int, bool]] = []
    last = ""
    for _ in range(12):
        r = subprocess.run([*cli, "search", "garden"], env=env, capture_output=True,
                           text=True)
        runs.append((r.returncode, index.poll() is None))
        if r.returncode:
            last = (r.stderr.strip().splitlines() or [""])[-1]
    print("(exit code, index still running):", runs)
    print(f"failed: {sum(1 for c, _ in runs if c)} of {len(runs)}; during the index: "
          f"{sum(1 for _, running in runs if running)}")
    if last:
        print(last)
    index.wait()


if __name__ == "__main__":
    main()
