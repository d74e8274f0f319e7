"""How a cold index and a keyword search grow with the corpus (not run by the tests).

    python bench/growth.py [--scales 1,4,16] [--src DIR ...] [--index-once] [--rounds 5]
                           [--json FILE] [ROOT ...]

Builds the corpus (default ``../shared/corpus/org`` and ``../shared/corpus/markdown``)
copied N times for each scale: every copy's files renamed (``name-cK.ext``) and its
internal links rewritten to point within the copy (wikilinks, Markdown links, Org
``file:`` links by their file's name, Org ``:ID:`` properties and ``id:`` links), so the
graph grows as a real vault's would instead of collapsing onto shared names. Then, for
each scale and each ``--src`` tree (default: the ``src`` beside this bench), in a fresh
process each:

* ``cairn index --no-embed`` of the copies: CPU seconds (user + system, the process and
  its parse workers), wall seconds, peak resident memory of the main process, bytes it
  wrote (``write_bytes`` of ``/proc/self/io``), the index's size on disk and the graph
  step's seconds (the run's own ``graph.seconds``);
* a plain indexer of the same files (one FTS5 row per file, text as read): its CPU;
* keyword search in process over a fixed query list (``QUERIES``), warmed once, then
  ``--rounds`` rounds: p50 / p95 ms, wall and the thread's CPU, against the same queries
  on the plain FTS5 index (``MATCH`` and ``ORDER BY rank``, top 10), and the three
  slowest queries (median CPU ms of their rounds). ``bench/query.py
  --db INDEX --growth --work`` counts each query's work on an index built here.

CPU is what to compare across machines and loads; wall times depend on the load, which
is printed. ``--src OLD --src NEW`` runs both trees on the same copies side by side;
with ``--index-once`` only the first tree indexes each scale and both search that index
(the index figures are then the first tree's on every row).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ROOTS = [
    HERE.parents[1] / "shared" / "corpus" / "org",
    HERE.parents[1] / "shared" / "corpus" / "markdown",
]
QUERIES = (
    "agenda", "org mode", "export html", "capture template", "property drawer",
    "emacs", "python", "graph view", "wikilinks", "daily notes", "table formula",
    "clock", "link", "the", "tags search", "plugin settings", "source block",
    "keyboard shortcut", "markdown", "timestamp deadline", "babel", "todo keywords",
    "vault", "canvas", "roam",
)

_BRACKET = re.compile(r"\[\[([^\]\n]+)\]")
_MDLINK = re.compile(r"\]\(([^)\s]+)\)")
_ID_PROP = re.compile(r"^(\s*:ID:\s+)(\S+)", re.MULTILINE | re.IGNORECASE)


def _renamed(target: str, stems: set[str], tag: str) -> str:
    """``target`` (a path or a note name) with its last part renamed when it names a
    file of the tree: ``dir/note.md`` → ``dir/note-c1.md``, ``note`` → ``note-c1``."""
    head, sep, last = target.rpartition("/")
    stem, dot, ext = last.rpartition(".")
    if dot and ext.lower() in ("md", "org") and stem.lower() in stems:
        return f"{head}{sep}{stem}{tag}.{ext}"
    if last.lower() in stems:
        return f"{head}{sep}{last}{tag}"
    return target


def _link(inner: str, stems: set[str], tag: str) -> str:
    """One ``[[...]`` link's first part pointed into copy ``tag``."""
    if inner.lower().startswith("id:"):
        return inner + tag
    if inner.lower().startswith("file:"):
        path, sep, rest = inner[5:].partition("::")
        return "file:" + _renamed(path, stems, tag) + sep + rest
    if "://" in inner:
        return inner
    cut = min((i for i in (inner.find("#"), inner.find("|"), inner.find("^")) if i >= 0),
              default=len(inner))
    return _renamed(inner[:cut], stems, tag) + inner[cut:]


def rewrite(text: str, stems: set[str], tag: str) -> str:
    """``text`` with its internal links and Org ids pointing within copy ``tag``."""
    text = _BRACKET.sub(lambda m: "[[" + _link(m.group(1), stems, tag) + "]", text)
    text = _MDLINK.sub(
        lambda m: m.group(0) if "://" in m.group(1)
        else "](" + _renamed(m.group(1), stems, tag) + ")",
        text,
    )
    return _ID_PROP.sub(lambda m: m.group(1) + m.group(2) + tag, text)


def build_corpus(roots: list[Path], copies: int, out: Path) -> tuple[int, int]:
    """``copies`` renamed copies of ``roots`` under ``out``; (files, bytes)."""
    files = [(r, p) for r in roots for p in sorted(r.rglob("*")) if p.is_file()]
    stems = {p.stem.lower() for _r, p in files}
    n = size = 0
    for k in range(copies):
        tag = f"-c{k}"
        for root, p in files:
            dest = out / f"copy{k}" / root.name / p.relative_to(root)
            dest = dest.with_name(p.stem + tag + p.suffix)
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = p.read_bytes()
            if p.suffix.lower() in (".md", ".org"):
                with contextlib.suppress(UnicodeDecodeError):
                    data = rewrite(data.decode("utf-8"), stems, tag).encode("utf-8")
            dest.write_bytes(data)
            n += 1
            size += len(data)
    return n, size


# ---- the child processes ---------------------------------------------------------


def _io_and_rss() -> dict[str, int]:
    io = {}
    for line in Path("/proc/self/io").read_text().splitlines():
        key, _, value = line.partition(":")
        io[key] = int(value)
    return {
        "write_bytes": io.get("write_bytes", 0),
        "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def child_index(db: str, root: str, report: str) -> None:
    """``cairn index --no-embed`` as the CLI runs it; figures written to ``report``."""
    import atexit

    from cairn.interfaces.cli import app

    def done() -> None:
        Path(report).write_text(json.dumps(_io_and_rss()), "utf-8")

    atexit.register(done)
    sys.argv = ["cairn", "--db", db, "index", root, "--no-embed", "--json", "--quiet"]
    app()


def child_plain(db: str, root: str, report: str) -> None:
    """The plain indexer: one FTS5 row per ``.md``/``.org`` file, the text as read."""
    con = sqlite3.connect(db)
    con.execute("CREATE VIRTUAL TABLE f USING fts5(path UNINDEXED, body)")
    with con:
        for p in sorted(Path(root).rglob("*")):
            if p.suffix.lower() in (".md", ".org") and p.is_file():
                con.execute(
                    "INSERT INTO f VALUES (?, ?)",
                    (str(p), p.read_bytes().decode("utf-8", "replace")),
                )
    con.close()
    Path(report).write_text(json.dumps(_io_and_rss()), "utf-8")


def _times(search: Callable[[str], object], rounds: int) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of each query of each round after one warm-up round (CPU: the
    thread's, which the machine's load does not stretch)."""
    for q in QUERIES:
        search(q)
    wall, cpu = [], []
    for _ in range(rounds):
        for q in QUERIES:
            c0, t0 = time.thread_time(), time.perf_counter()
            search(q)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
    return wall, cpu


def child_query(db: str, plain: str, report: str, rounds: int) -> None:
    """Keyword search in process on ``db`` and plain FTS5 on ``plain``."""
    from cairn.app import Cairn
    from cairn.config import load_config

    con = sqlite3.connect(plain)

    def fts(q: str) -> None:
        match = " ".join('"' + w.replace('"', '""') + '"' for w in q.split())
        con.execute(
            "SELECT path FROM f WHERE f MATCH ? ORDER BY rank LIMIT 10", (match,)
        ).fetchall()

    with Cairn(load_config(db=db), create=False) as c:
        ours, ours_cpu = _times(lambda q: c.search(q, mode="keyword", limit=10), rounds)
    theirs, theirs_cpu = _times(fts, rounds)
    n = len(QUERIES)
    per_query = {q: [statistics.median(ours_cpu[i::n]), statistics.median(theirs_cpu[i::n])]
                 for i, q in enumerate(QUERIES)}
    data = {"cairn": ours, "plain": theirs, "cairn_cpu": ours_cpu, "plain_cpu": theirs_cpu,
            "per_query": per_query}
    Path(report).write_text(json.dumps(data), "utf-8")


# ---- the parent --------------------------------------------------------------------


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def _child(src: Path, args: list[str]) -> tuple[float, float, dict[str, object]]:
    """Run this file as a child with ``src`` first on the path: (CPU s, wall s, report);
    the report holds what the child printed as ``stdout``."""
    report = Path(tempfile.mkstemp(suffix=".json")[1])
    env = dict(os.environ, PYTHONPATH=str(src), CAIRN_EMBED="none", HF_HUB_OFFLINE="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args, "--report", str(report)],
        env=env, check=True, stdout=subprocess.PIPE, text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(report.read_text("utf-8"))
    data["stdout"] = done.stdout
    report.unlink()
    return cpu, wall, data


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def _graph_seconds(printed: str) -> float:
    """The graph step's seconds from ``cairn index --json``'s output."""
    try:
        graph = json.loads(printed).get("graph") or {}
    except ValueError:
        return float("nan")
    return float(graph.get("seconds", float("nan")))


def measure(src: Path, corpus: Path, work: Path, rounds: int,
            built: dict[str, float] | None = None) -> dict[str, float]:
    """Every figure of one source tree on one corpus; ``built``: the index figures of
    the index already in ``work`` (only the searches run)."""
    db = work / "cairn.db"
    plain = work / "plain.db"
    if built is None:
        for p in (*work.glob("cairn.db*"), *work.glob("plain.db*")):
            p.unlink()
        cpu, wall, rep = _child(src, ["--child-index", str(db), str(corpus)])
        pcpu, _pwall, _prep = _child(src, ["--child-plain", str(plain), str(corpus)])
        built = {
            "cpu": cpu,
            "wall": wall,
            "rss_mb": float(rep["rss_kb"]) / 1024,  # type: ignore[arg-type]
            "written_mb": float(rep["write_bytes"]) / 1e6,  # type: ignore[arg-type]
            "size_mb": _size(db) / 1e6,
            "graph": _graph_seconds(str(rep["stdout"])),
            "plain_cpu": pcpu,
        }
    _c, _w, q = _child(
        src, ["--child-query", str(db), str(plain), "--rounds", str(rounds)]
    )
    ours: list[float] = q["cairn"]  # type: ignore[assignment]
    theirs: list[float] = q["plain"]  # type: ignore[assignment]
    ours_cpu: list[float] = q["cairn_cpu"]  # type: ignore[assignment]
    theirs_cpu: list[float] = q["plain_cpu"]  # type: ignore[assignment]
    return {
        **built,
        "p50": statistics.median(ours),
        "p95": _pct(ours, 95),
        "plain_p50": statistics.median(theirs),
        "plain_p95": _pct(theirs, 95),
        "cpu_p50": statistics.median(ours_cpu),
        "cpu_p95": _pct(ours_cpu, 95),
        "plain_cpu_p50": statistics.median(theirs_cpu),
        "plain_cpu_p95": _pct(theirs_cpu, 95),
        "per_query": q.get("per_query", {}),  # type: ignore[dict-item]
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("roots", nargs="*", type=Path, default=DEFAULT_ROOTS)
    ap.add_argument("--scales", default="1,4")
    ap.add_argument("--src", action="append", type=Path, default=[])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--index-once", action="store_true",
                    help="index each scale with the first --src only and search that "
                    "index with every --src (trees that differ only in search)")
    ap.add_argument("--report", default="")
    ap.add_argument("--child-index", nargs=2, default=None)
    ap.add_argument("--child-plain", nargs=2, default=None)
    ap.add_argument("--child-query", nargs=2, default=None)
    args = ap.parse_args()
    if args.child_index:
        db, root = args.child_index
        return child_index(db, root, args.report)
    if args.child_plain:
        db, root = args.child_plain
        return child_plain(db, root, args.report)
    if args.child_query:
        db, plain = args.child_query
        return child_query(db, plain, args.report, args.rounds)
    srcs = args.src or [HERE.parent / "src"]
    rows: list[dict[str, object]] = []
    print(
        "scale | src | files | MB | CPU s | MB/s/core | wall s | graph s | peak RSS MB "
        "| written MB | index MB | plain CPU s | kw p50/p95 ms | plain p50/p95 ms "
        "| kw CPU p50/p95 ms | plain CPU p50/p95 ms"
    )
    with tempfile.TemporaryDirectory(prefix="growth-") as tmp:
        for scale in (int(s) for s in args.scales.split(",")):
            corpus = Path(tmp) / f"x{scale}"
            files, size = build_corpus(args.roots, scale, corpus)
            built: dict[str, float] | None = None
            for i, src in enumerate(srcs):
                work = Path(tmp) / "db"
                work.mkdir(exist_ok=True)
                m = measure(src.resolve(), corpus, work, args.rounds,
                            built if args.index_once and i else None)
                built = {k: m[k] for k in ("cpu", "wall", "rss_mb", "written_mb",
                                           "size_mb", "graph", "plain_cpu")}
                mb = size / 1e6
                rows.append({"scale": scale, "src": str(src), "files": files, "mb": mb, **m})
                print(
                    f"{scale}x | {src} | {files} | {mb:.1f} | {m['cpu']:.1f} | "
                    f"{mb / m['cpu']:.2f} | {m['wall']:.1f} | {m['graph']:.2f} | "
                    f"{m['rss_mb']:.0f} | {m['written_mb']:.0f} | {m['size_mb']:.0f} | "
                    f"{m['plain_cpu']:.1f} | {m['p50']:.1f} / {m['p95']:.1f} | "
                    f"{m['plain_p50']:.1f} / {m['plain_p95']:.1f} | "
                    f"{m['cpu_p50']:.1f} / {m['cpu_p95']:.1f} | "
                    f"{m['plain_cpu_p50']:.1f} / {m['plain_cpu_p95']:.1f}  "
                    f"(load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
                slow = sorted(m["per_query"].items(), key=lambda kv: -kv[1][0])[:3]
                print("    slowest by CPU ms (cairn / plain): " + "; ".join(
                    f"{q} {a:.1f} / {b:.1f}" for q, (a, b) in slow), flush=True)
            shutil.rmtree(corpus)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), "utf-8")


if __name__ == "__main__":
    main()
