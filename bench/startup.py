"""New-process latency of ``cairn search``, beside a plain-Python FTS5 query as the floor.

Usage: python bench/startup.py [--rounds N] [--query Q] [--db PATH] [--hybrid-db PATH]
       [--model-db PATH] [--src SRC]... [--check-same]

Each row starts a new Python process N times (default 20) and reports the wall time
from launch to exit, p50 and p95, and the p50 of its CPU time (user + system), in
milliseconds; rows answered by a warm server or the query daemon also give that
process's own CPU per search (``server``: its mean over the runs, from ``/proc``, after
its model warm-up has settled):

- ``floor``: ``python -c`` opening the index with :mod:`sqlite3` and running one FTS5
  MATCH with BM25 (no cairn at all): what any Python tool pays;
- ``python -c pass``: the interpreter alone;
- ``keyword``: ``cairn search Q --mode keyword --db DB`` as the installed ``cairn``
  script runs it (``python -c "from cairn.interfaces.cli import main; …"``; ``python -m``
  would add ``runpy`` and ``importlib.util`` to every row), ``CAIRN_NO_WARM=1``: local;
  then the same looking for a warm process first (none runs) and with the query daemon
  running for ``DB`` (the thin client of :mod:`cairn.interfaces.cli._thin` where the
  tree has one);
- ``hybrid (static)``: the same with ``--mode hybrid``, ``CAIRN_EMBED=static``, over an
  index embedded with the static model (the model is loaded in every process);
- ``hybrid (static, warm server)``: the same command while a ``cairn serve`` runs for
  that index (started by this script, stopped after): the CLI sends the query to it
  (:mod:`cairn.serving.warm`) instead of loading the model;
- ``hybrid (static, query daemon)``: the same while the query daemon the CLI starts
  (:mod:`cairn.serving.daemon`) runs for that index (started by this script, stopped
  after); the CLI's side is the same for any mode, so this row is also what a keyword
  search sent to a warm process would cost the CLI;
- with ``--model-db`` (an index embedded with the default ONNX model, e.g. of the whole
  shared corpus): ``hybrid (default model)`` cold, with a warm server and with the
  query daemon;
- ``--help``: ``cairn --help`` (Typer and Rich load here).

With ``--src`` (given once per tree, e.g. ``--src /tmp/old/src --src src``) every
``cairn`` row runs once per tree, one after the other (the same load), each labelled with
its tree's number; a warm server or daemon is started from the same tree as the CLI it answers.

Every row runs with ``TMPDIR`` set to a folder of this script's (so the per-user
socket folder is its own: daemons of other indexes of the same user, which a thin
client would also ask, do not count here).

The processes read cached bytecode, as an installed package does: each run sets
``PYTHONPYCACHEPREFIX`` to a folder of its own and lifts ``PYTHONDONTWRITEBYTECODE``
(without cached bytecode every new process compiles every module it imports, the
standard library's too, which multiplies the CPU of a new process).

``--check-same`` only compares, for 8 queries in hybrid and semantic mode, the query
daemon's ``--json`` answer (20 hits, scores included) with a local search's.

Then one instrumented keyword run (and one hybrid run) gives the split: Python start
(launch to the first line of the script), imports (the CLI, the app, the store and
search modules), opening the store (:meth:`Cairn.open`), the model (hybrid only), the
query (search and printing the hits), and exit.

The indexes are built once if missing (``cairn index ../shared/corpus/org
../shared/corpus/markdown``: ``--no-embed`` for ``--db``; with ``CAIRN_EMBED=static``
for ``--hybrid-db``). Not part of the test suite. The machine's load counts: run it on a
quiet machine for the figures of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
CORPUS = HERE.parents[1] / "shared" / "corpus"
ROOTS = [CORPUS / "org", CORPUS / "markdown"]

FLOOR = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute(
    "SELECT u.title, snippet(units_fts, 3, '', '', '…', 24) FROM units_fts f "
    "JOIN units u ON u.rowid = f.rowid WHERE units_fts MATCH ? "
    "ORDER BY bm25(units_fts) LIMIT 10", (sys.argv[2],)).fetchall()
for title, snip in rows:
    print(title, snip, sep="\\n   ")
"""

SPLIT = """
import time
t_start = time.time()
import contextlib, io, json, sys
from pathlib import Path
import cairn.interfaces.cli
import cairn.interfaces.cli._fast
from cairn.interfaces.cli._hits import run_search
from cairn.interfaces.cli._plain import open_index
from cairn.model import SearchRequest
import cairn.app  # imported lazily by open_index: counted as imports here
import cairn.store.sqlite  # imported by open_store
import platformdirs  # the default config file's folder (load_config)
t_imports = time.time()
cairn = open_index(Path(sys.argv[1]), None)
t_open = time.time()
if sys.argv[3] != "keyword":
    cairn.semantic.embedder
t_model = time.time()
with contextlib.redirect_stdout(io.StringIO()):
    run_search(lambda db: cairn, None, SearchRequest.of(sys.argv[2], mode=sys.argv[3]))
t_query = time.time()
sys.stderr.write(json.dumps([t_start, t_imports, t_open, t_model, t_query]))
"""


PYCACHE = Path("/tmp/cairn-startup-pyc")
"""Where the measured processes keep their bytecode (one folder for every tree: the
cache is keyed by each file's path)."""
TMP = Path("/tmp/cairn-startup-tmp")
"""``TMPDIR`` of every measured process: the per-user socket folder is this script's."""
CONSOLE = ("import sys\nfrom cairn.interfaces.cli import main\nsys.argv[0] = 'cairn'\n"
           "sys.exit(main())")
"""What the installed ``cairn`` console script runs."""


def _env(src: Path = SRC, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env["TMPDIR"] = str(TMP)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", CONSOLE, *args]


def _ensure(db: Path, *, static: bool) -> None:
    if db.exists():
        return
    missing = [p for p in ROOTS if not p.is_dir()]
    if missing:
        raise SystemExit(f"{missing[0]} is not beside this clone: pass --db of an index")
    args = ["index", *map(str, ROOTS), "--db", str(db), "--quiet", "--json"]
    env = _env(CAIRN_EMBED="static") if static else _env()
    if not static:
        args.append("--no-embed")
    print(f"building {db} …", file=sys.stderr)
    subprocess.run(_cli(*args), env=env, check=True, stdout=subprocess.DEVNULL)


def _time(cmd: list[str], env: dict[str, str], rounds: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) milliseconds of ``rounds`` new processes running
    ``cmd`` (after one warm-up: page cache, ``.pyc`` files). On a shared machine the CPU
    column moves much less with the load than the wall column."""
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall.append((time.perf_counter() - t0) * 1000)
        if status:
            raise SystemExit(f"{' '.join(cmd)} failed ({status})")
        cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
    return wall, cpu


@contextlib.contextmanager
def _warm_server(db: Path, env: dict[str, str]) -> Iterator[int | None]:
    """A ``cairn serve`` for ``db`` until the block ends, once its advert is written
    and it has answered one hybrid search (its model is loaded)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder = db.resolve().with_name(db.resolve().name + ".servers")
    proc = subprocess.Popen(_cli("serve", "--db", str(db), "--port", str(port)), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (folder / f"{proc.pid}.json").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("cairn serve did not start")
            time.sleep(0.1)
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(30)


@contextlib.contextmanager
def _query_daemon(db: Path, env: dict[str, str]) -> Iterator[int | None]:
    """The query daemon for ``db`` until the block ends, once its advert is written: the
    one the tree's CLI starts (with thin clients, where it has them)."""
    folder = db.resolve().with_name(db.resolve().name + ".servers")
    src = Path(env["PYTHONPATH"].split(os.pathsep)[0])
    thin = (src / "cairn" / "interfaces" / "cli" / "_answer.py").exists()
    module = "cairn.interfaces.cli._answer" if thin else "cairn.serving.daemon"
    proc = subprocess.Popen([sys.executable, "-m", module, "--db", str(db.resolve())],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (folder / f"{proc.pid}.json").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the query daemon did not start (is one running already?)")
            time.sleep(0.1)
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(30)


def _cpu_ms(pid: int | None) -> float:
    """CPU (user + system) the process ``pid`` has used so far, in milliseconds (0
    without ``/proc``)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _settle(pid: int | None, limit: float = 120.0) -> None:
    """Wait until the process ``pid`` uses no CPU for half a second (at most ``limit``
    seconds)."""
    deadline = time.monotonic() + limit
    last = -1.0
    while pid is not None and time.monotonic() < deadline:
        now = _cpu_ms(pid)
        if now == last:
            return
        last = now
        time.sleep(0.5)


def _p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[18] if len(xs) > 1 else xs[0]


def _split(db: Path, query: str, mode: str, env: dict[str, str]) -> dict[str, float]:
    """One instrumented run: milliseconds per phase."""
    t_launch = time.time()
    res = subprocess.run(
        [sys.executable, "-c", SPLIT, str(db), query, mode],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    t_end = time.time()
    start, imports, opened, model, queried = json.loads(res.stderr.strip().splitlines()[-1])
    phases = {
        "python start": start - t_launch,
        "imports": imports - start,
        "open store": opened - imports,
        "model": model - opened,
        "query + print": queried - model,
        "exit": t_end - queried,
    }
    return {k: v * 1000 for k, v in phases.items()}


SAME_QUERIES = ("budget review", "org mode tables", "capture templates", "agenda view",
                "export to html", "babel source blocks", "meeting notes",
                "spreadsheet formulas")
"""The queries of ``--check-same``."""


def _check_same(db: Path, tree: Path) -> None:
    """Print, per query and mode, whether the query daemon's ``--json`` answer (20 hits,
    scores included, ``took_ms`` left out) is a local search's (static model)."""
    env = _env(tree, CAIRN_EMBED="static", CAIRN_DAEMON="0")
    differ = 0
    with _query_daemon(db, env) as pid:
        _settle(pid)
        for q in SAME_QUERIES:
            for mode in ("hybrid", "semantic"):
                cmd = _cli("search", q, "--mode", mode, "--json", "--limit", "20", "--db",
                           str(db))
                there, here = (json.loads(subprocess.run(
                    cmd, env=e, capture_output=True, check=True).stdout)
                    for e in (env, {**env, "CAIRN_NO_WARM": "1"}))
                there.pop("took_ms"), here.pop("took_ms")
                differ += there != here
                print(f"{q!r} {mode}: {'same' if there == here else 'DIFFERENT'} "
                      f"({len(here['hits'])} hits)", flush=True)
    print(f"{2 * len(SAME_QUERIES) - differ} of {2 * len(SAME_QUERIES)} the same")


def main() -> None:
    """Print the latency table and the split (see the module docstring)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--query", default="budget review")
    ap.add_argument("--db", type=Path, default=Path("/tmp/cairn-startup.db"))
    ap.add_argument("--hybrid-db", type=Path, default=Path("/tmp/cairn-startup-static.db"))
    ap.add_argument("--model-db", type=Path, default=None,
                    help="an index embedded with the default model: its hybrid rows too")
    ap.add_argument("--no-hybrid", action="store_true", help="skip the hybrid rows")
    ap.add_argument("--check-same", action="store_true",
                    help="only compare the query daemon's --json answers (hits, scores) "
                    "with local searches' on --hybrid-db, for the last --src")
    ap.add_argument("--src", type=Path, action="append", default=None,
                    help="a tree's src folder to run the cairn rows from (repeat it to "
                    "compare trees side by side; default: this clone's src)")
    args = ap.parse_args()
    TMP.mkdir(mode=0o700, exist_ok=True)
    trees = [p.resolve() for p in args.src] if args.src else [SRC]
    if args.check_same:
        _ensure(args.hybrid_db, static=True)
        _check_same(args.hybrid_db, trees[-1])
        return
    _ensure(args.db, static=False)
    if not args.no_hybrid:
        _ensure(args.hybrid_db, static=True)
    # no row starts a query daemon of its own (that would warm the rows after it)
    env = _env(CAIRN_NO_WARM="1", CAIRN_DAEMON="0")
    q, db, hdb = args.query, str(args.db), str(args.hybrid_db)
    Row = tuple[str, list[str], dict[str, str], tuple[str, Path] | None]
    rows: list[Row] = [
        ("floor: python + sqlite3 FTS5", [sys.executable, "-c", FLOOR, db, q], env, None),
        ("python -c pass", [sys.executable, "-c", "pass"], env, None),
    ]
    keyword = _cli("search", q, "--mode", "keyword", "--db", db)
    hybrid = _cli("search", q, "--mode", "hybrid", "--db", hdb)
    model = _cli("search", q, "--mode", "hybrid", "--db", str(args.model_db))
    cairn_rows: list[Row] = []
    for tree in trees:
        label = f" [{trees.index(tree) + 1}]" if len(trees) > 1 else ""
        local = _env(tree, CAIRN_NO_WARM="1", CAIRN_DAEMON="0")
        warm = _env(tree, CAIRN_DAEMON="0")
        cairn_rows += [
            ("cairn search (keyword)" + label, keyword, local, None),
            ("  … looking for a warm process first" + label, keyword, warm, None),
            ("  … with the query daemon" + label, keyword, warm, ("daemon", args.db)),
        ]
        if not args.no_hybrid:
            static = _env(tree, CAIRN_EMBED="static", CAIRN_NO_WARM="1", CAIRN_DAEMON="0")
            warm_static = _env(tree, CAIRN_EMBED="static", CAIRN_DAEMON="0")
            cairn_rows += [
                ("cairn search (hybrid, static)" + label, hybrid, static, None),
                ("  … with a warm server" + label, hybrid, warm_static,
                 ("serve", args.hybrid_db)),
                ("  … with the query daemon" + label, hybrid, warm_static,
                 ("daemon", args.hybrid_db)),
            ]
        if args.model_db is not None:
            cairn_rows += [
                ("cairn search (hybrid, default model)" + label, model, local, None),
                ("  … with a warm server" + label, model, warm, ("serve", args.model_db)),
                ("  … with the query daemon" + label, model, warm,
                 ("daemon", args.model_db)),
            ]
        cairn_rows.append(("cairn --help" + label, _cli("--help"), local, None))
    # each row once per tree in turn: the trees' figures of a row come from the same load
    per_tree = len(cairn_rows) // len(trees)
    rows += [cairn_rows[t * per_tree + i] for i in range(per_tree) for t in range(len(trees))]
    print(f"load average: {os.getloadavg()[0]:.2f}; {args.rounds} runs each; query {q!r}")
    for number, tree in enumerate(trees if len(trees) > 1 else (), 1):
        print(f"[{number}] {tree}")
    print(f"{'':42} {'p50 ms':>8} {'p95 ms':>8} {'CPU p50':>8} {'÷ floor':>8} "
          f"{'server':>8}")
    floor_cpu = 0.0
    for name, cmd, e, served in rows:
        if served is None:
            ctx: contextlib.AbstractContextManager[int | None] = contextlib.nullcontext()
        else:
            ctx = (_warm_server if served[0] == "serve" else _query_daemon)(served[1], e)
        with ctx as pid:
            _settle(pid)  # the server's model warm-up is not a search's cost
            before = _cpu_ms(pid)
            xs, cpu = _time(cmd, e, args.rounds)
            # the server's own CPU per search (its warm-up search and the first run too)
            server = (_cpu_ms(pid) - before) / (args.rounds + 1) if pid else None
        floor_cpu = floor_cpu or statistics.median(cpu)
        print(f"{name:42} {statistics.median(xs):8.1f} {_p95(xs):8.1f} "
              f"{statistics.median(cpu):8.1f} {statistics.median(cpu) / floor_cpu:8.2f} "
              f"{'' if server is None else f'{server:8.1f}'}", flush=True)
    static = _env(trees[-1], CAIRN_EMBED="static", CAIRN_NO_WARM="1", CAIRN_DAEMON="0")
    env = _env(trees[-1], CAIRN_NO_WARM="1", CAIRN_DAEMON="0")
    splits = [("keyword", args.db, env)]
    if not args.no_hybrid:
        splits.append(("hybrid", args.hybrid_db, static))
    for mode, path, e in splits:
        parts = _split(path, q, mode, e)
        total = sum(parts.values())
        shown = ", ".join(f"{k} {v:.1f}" for k, v in parts.items() if k != "model" or v >= 0.05)
        print(f"split ({mode}, one run, ms): {shown}; total {total:.1f}")


if __name__ == "__main__":
    main()
