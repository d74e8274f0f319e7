"""A hostile-file corpus, generated (never committed as binaries), and a run over it.

    python bench/hostile.py [--work DIR] [--big]

Writes one file (or a few) of every kind in :data:`KINDS` into ``DIR/vault`` beside good
notes, indexes it with ``cairn index --json`` in a child process and prints, per kind,
whether each file was indexed or reported (a failure, warning or skip naming it), the
run's wall time and the child's peak memory (``VmHWM``). ``--big`` adds the 50 MB
note and the 10 MB single line (large; off by default); ``--quick`` leaves out the
kinds whose cost is the parsers' (:data:`PARSER_SLOW`). The test
``tests/reliability/test_hostile.py`` runs the same generator.
"""

from __future__ import annotations

import argparse
import codecs
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

Maker = Callable[[Path], list[str]]
"""Writes a kind's files into the vault; returns their root-relative names (as
cairn reports them: bytes that are not UTF-8 as ``\\xNN``)."""


def _w(vault: Path, name: str, data: bytes) -> list[str]:
    (vault / name).write_bytes(data)
    return [name]


def _text(body: str) -> str:
    return f"# Title\n\n{body}\n"


def _zip_bomb(vault: Path) -> list[str]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", b"[" + b" " * 200_000_000 + b"]")
    return _w(vault, "bomb.zip", buf.getvalue())


def _truncated_zip(vault: Path) -> list[str]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps([{"title": "t", "mapping": {}}] * 50))
    data = buf.getvalue()
    return _w(vault, "truncated.zip", data[: len(data) // 2])


def _fifo(vault: Path) -> list[str]:
    os.mkfifo(vault / "fifo.md")
    return ["fifo.md"]


def _socket(vault: Path) -> list[str]:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(vault / "socket.md"))
    _SOCKETS.append(s)
    return ["socket.md"]


_SOCKETS: list[socket.socket] = []


def _dangling(vault: Path) -> list[str]:
    os.symlink(vault / "nowhere.md", vault / "dangling.md")
    return ["dangling.md"]


def _loop(vault: Path) -> list[str]:
    os.symlink("loop-b.md", vault / "loop-a.md")
    os.symlink("loop-a.md", vault / "loop-b.md")
    return ["loop-a.md", "loop-b.md"]


def _unreadable(vault: Path) -> list[str]:
    (vault / "unreadable.md").write_text(_text("secret"), "utf-8")
    os.chmod(vault / "unreadable.md", 0)
    return ["unreadable.md"]


def _newline_name(vault: Path) -> list[str]:
    (vault / "two\nlines.md").write_text(_text("newline in the name"), "utf-8")
    return ["two\nlines.md"]


def _bad_name(vault: Path) -> list[str]:
    with open(os.fsencode(vault) + b"/bad\xff.md", "wb") as fh:
        fh.write(_text("undecodable name").encode())
    return ["bad\\xff.md"]


def _nfd(vault: Path) -> list[str]:
    nfd = unicodedata.normalize("NFD", "Résumé.md")
    (vault / nfd).write_text(_text("nfd name"), "utf-8")
    (vault / "links-to-resume.md").write_text(_text("see [[Résumé]]"), "utf-8")
    return [nfd]


KINDS: dict[str, Maker] = {
    "invalid UTF-8": lambda v: _w(v, "invalid-utf8.md", b"# Bad\n\ncaf\xe9 \xff\xfe ok\n"),
    "UTF-16 LE with BOM": lambda v: _w(
        v, "utf16le-bom.md", codecs.BOM_UTF16_LE + _text("sixteen").encode("utf-16-le")
    ),
    "UTF-16 BE with BOM": lambda v: _w(
        v, "utf16be-bom.md", codecs.BOM_UTF16_BE + _text("sixteen").encode("utf-16-be")
    ),
    "UTF-16 without BOM": lambda v: _w(v, "utf16-nobom.md", _text("sixteen").encode("utf-16-le")),
    "UTF-32 with BOM": lambda v: _w(v, "utf32-bom.md", _text("thirtytwo").encode("utf-32")),
    "UTF-32 without BOM": lambda v: _w(v, "utf32-nobom.md", _text("thirtytwo").encode("utf-32-le")),
    "NUL bytes": lambda v: _w(v, "nul.md", b"# Nul\n\nbefore\x00after\n"),
    "0-byte file": lambda v: _w(v, "empty.md", b""),
    "10,000-deep Org nesting": lambda v: _w(
        v, "deep.org", "".join("*" * i + f" h{i}\n" for i in range(1, 10_001)).encode()
    ),
    "unclosed Org block": lambda v: _w(
        v, "unclosed-block.org", b"* H\n#+begin_src python\nprint(1)\n* Next\ntext\n"
    ),
    "unclosed Org drawer": lambda v: _w(
        v, "unclosed-drawer.org", b"* H\n:PROPERTIES:\n:ID: x\n* Next\nbody\n"
    ),
    "YAML alias bomb": lambda v: _w(
        v,
        "alias-bomb.md",
        (
            "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
                for i in range(9)
            )
            + "---\n# Bomb\n\nbody\n"
        ).encode(),
    ),
    "huge frontmatter": lambda v: _w(
        v,
        "huge-frontmatter.md",
        ("---\n" + "".join(f"k{i}: {'v' * 50}\n" for i in range(100_000)) + "---\n# T\n").encode(),
    ),
    "malformed JSON export": lambda v: _w(
        v, "conversations.json", b'[{"title": "x", "mapping": {"a": {"message": }}}]'
    ),
    "truncated JSON export": lambda v: _w(
        v,
        "chats/conversations.json",
        json.dumps(
            [
                {
                    "title": f"c{i}",
                    "create_time": 1.0,
                    "mapping": {
                        "r": {"id": "r", "parent": None, "children": ["m"], "message": None},
                        "m": {
                            "id": "m",
                            "parent": "r",
                            "children": [],
                            "message": {
                                "id": "m",
                                "author": {"role": "user"},
                                "create_time": 1.0,
                                "content": {"content_type": "text", "parts": [f"hello {i}"]},
                            },
                        },
                    },
                    "current_node": "m",
                }
                for i in range(20)
            ]
        ).encode()[:-300],
    ),
    "truncated zip": _truncated_zip,
    "zip bomb": _zip_bomb,
    "FIFO": _fifo,
    "socket": _socket,
    "dangling symlink": _dangling,
    "symlink loop": _loop,
    "unreadable file": _unreadable,
    "newline in a file name": _newline_name,
    "invalid UTF-8 in a file name": _bad_name,
    "NFD file name (macOS)": _nfd,
    "binary file named .md": lambda v: _w(v, "binary.md", bytes(range(256)) * 64),
}

BIG: dict[str, Maker] = {
    "50 MB note": lambda v: _w(
        v, "big.md", ("# Big\n\n" + "lorem ipsum dolor sit amet\n" * 1_950_000).encode()
    ),
    "10 MB single line": lambda v: _w(v, "one-line.md", b"# One\n\n" + b"word " * 2_000_000),
}

PARSER_SLOW = ("10,000-deep Org nesting", "huge frontmatter")
"""Kinds whose time and memory are the parsers' to bound (tens of seconds, GiBs today)."""

RACES = ("deleted between discovery and reading", "truncated between discovery and reading")
"""Kinds made while the run is under way (see :func:`race_progress`)."""


def generate(vault: Path, *, big: bool = False) -> dict[str, list[str]]:
    """Write every kind (and good notes) into ``vault``; ``{kind: [relpath]}``."""
    (vault / "chats").mkdir(parents=True, exist_ok=True)
    for i in range(5):
        (vault / f"good {i}.md").write_text(_text(f"good note {i} lapis"), "utf-8")
    made = {kind: make(vault) for kind, make in KINDS.items()}
    if big:
        made.update({kind: make(vault) for kind, make in BIG.items()})
    (vault / "zz-vanish.md").write_text(_text("about to vanish"), "utf-8")
    (vault / "zz-truncate.md").write_text(_text("about to be truncated " * 100), "utf-8")
    made[RACES[0]] = ["zz-vanish.md"]
    made[RACES[1]] = ["zz-truncate.md"]
    return made


def race_progress(vault: Path) -> Callable[[int, int, str], None]:
    """A progress callback that, after the first file, deletes and truncates the two
    race files (discovery has listed them; they are read later in the run)."""
    fired: list[bool] = []

    def progress(_done: int, _total: int, _rel: str) -> None:
        if not fired:
            fired.append(True)
            (vault / "zz-vanish.md").unlink(missing_ok=True)
            (vault / "zz-truncate.md").write_bytes(b"")

    return progress


def outcome(run: dict[str, object], names: list[str], indexed: set[str]) -> str:
    """``indexed``, ``reported`` (a failure, warning or skip names the file) or
    ``silent`` (neither: a defect)."""
    said = {
        str(x.get("path"))
        for key in ("failures", "warnings")
        for x in run.get(key, [])  # type: ignore[union-attr]
        if isinstance(x, dict)
    }
    if any(n in indexed for n in names):
        return "indexed"
    if any(n in said or unicodedata.normalize("NFC", n) in said for n in names):
        return "reported"
    return "silent"


_CHILD = """
import json, resource, sys, time
def peak_mb():
    # VmHWM: this process image's peak (ru_maxrss would count the parent it forked from)
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
sys.path.insert(0, {bench!r})
import hostile
from pathlib import Path
from cairn.app import Cairn
from cairn.ingest.snapshot import index_snapshot
from cairn.model.serialize import to_data
vault = Path({vault!r})
t0 = time.perf_counter()
with Cairn.open(db={db!r}) as c:
    run = c.index([vault], progress=hostile.race_progress(vault), embed=False)
    indexed = sorted({{d[2] for d in index_snapshot(c.store, c.graph.fresh()).documents}})
print(json.dumps({{"run": to_data(run), "indexed": indexed,
                  "seconds": time.perf_counter() - t0,
                  "peak_mb": peak_mb()}}))
"""


def run_child(vault: Path, db: Path, timeout: float = 600) -> dict[str, object]:
    """Index ``vault`` in a child process; its run, indexed paths, time and peak MiB."""
    code = _CHILD.format(bench=str(ROOT / "bench"), vault=str(vault), db=str(db))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "CAIRN_EMBED": "none",
        "CAIRN_WORKERS": "1",
    }
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout
    )
    if res.returncode != 0:
        raise RuntimeError(f"the run failed ({res.returncode}): {res.stderr[-2000:]}")
    data: dict[str, object] = json.loads(res.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    """Generate, index, print a table and the counts."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--big", action="store_true", help="add the 50 MB and 10 MB files")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"leave out the parser-level slow kinds ({', '.join(PARSER_SLOW)})",
    )
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-hostile-"))
    vault = work / "vault"
    vault.mkdir(parents=True)
    made = generate(vault, big=args.big)
    if args.quick:
        for kind in PARSER_SLOW:
            for name in made.pop(kind, []):
                (vault / name).unlink()
    t0 = time.perf_counter()
    data = run_child(vault, work / "hostile.db")
    indexed = set(data["indexed"])  # type: ignore[call-overload]
    counts: dict[str, int] = {}
    for kind, names in made.items():
        got = outcome(data["run"], names, indexed)  # type: ignore[arg-type]
        counts[got] = counts.get(got, 0) + 1
        print(f"{kind:42} {got}")
    print(
        f"\n{len(made)} kinds: {counts.get('indexed', 0)} indexed, "
        f"{counts.get('reported', 0)} reported, {counts.get('silent', 0)} silent; "
        f"run {data['seconds']:.1f} s (wall {time.perf_counter() - t0:.1f} s), "
        f"peak {data['peak_mb']:.0f} MiB"
    )


if __name__ == "__main__":
    main()
