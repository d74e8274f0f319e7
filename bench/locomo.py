"""LoCoMo long conversations: turn- and session-level recall of cairn's search and of
agent memory recall, beside a plain turn-level FTS5 BM25 baseline run in the same script.

Data: ``../shared/bench/locomo/{26,30,41,42,43}.json`` (half of LoCoMo, see
``../shared/bench/SOURCES.md``): two-person conversations in dated sessions, turns with
``dia_id``, questions with ``evidence`` (dia_ids) and ``category`` (1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).

Each conversation gets its own index, built the way a user would build it:

* ``chat``: every session written as one chat export file (``session-NN.json``, the
  linear ``{id, name, created_at, messages[{id, role, name, content}]}`` layout that
  Chatbot UI and the OpenAI message format use: the session's date on the conversation,
  each turn's speaker in ``name``, the first speaker ``user`` and the other
  ``assistant``, a shared image as a Markdown image whose alt text is LoCoMo's
  caption), the folder indexed with ``Cairn.index`` and every question asked with
  ``Cairn.search`` in each mode;
* ``memory``: every turn remembered into an OKF memory bundle with
  ``Cairn.memory.remember`` (``"Speaker: text"``, the session's time as the memory's
  timestamp), questions asked with ``Cairn.memory.recall``;
* ``bm25``: one FTS5 row per turn (its text only, ``porter unicode61``), the question's
  words OR-ed.

Scores (categories 1–4 together and per category; category 5 apart): turn recall@5/@10
(the share of a question's evidence turns among the first k hits) and session
recall@5/@10 (the share of its evidence sessions with any hit among the first k), and
the mean and p95 latency of the in-process call. A sample of questions is also asked
over MCP (the ``mcp`` SDK's client against ``build_server``) and its hits compared
with the in-process ones.

Split: tune on ``dev`` (conversations 26, 30, 41) only; ``test`` (42, 43) is held out.

Usage::

    python bench/locomo.py --split dev
    python bench/locomo.py --split test --modes keyword,hybrid --json
    python bench/locomo.py --conversations 30 --variants chat --mcp 0
    python bench/locomo.py --split dev --modes hybrid --mcp 0 --misses /tmp/misses.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

DATA = HERE.parent.parent / "shared" / "bench" / "locomo"
SPLITS = {"dev": (26, 30, 41), "test": (42, 43), "all": (26, 30, 41, 42, 43)}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)
_DIA = re.compile(r"D:?(\d+):(\d+)")
_WHEN = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {m: i + 1 for i, m in enumerate((
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december"))}


@dataclass
class Turn:
    """One turn: ``dia`` its ``D<session>:<n>`` id, ``session`` its session number."""

    dia: str
    session: int
    speaker: str
    text: str
    caption: str | None = None
    image: str | None = None


@dataclass
class Session:
    """A dated session and its turns."""

    number: int
    when: datetime
    turns: list[Turn]


@dataclass
class Question:
    """A question with its evidence turns (normalised dia ids) and category."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Locomo:
    """One conversation."""

    number: int
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]


def parse_when(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → a UTC datetime (LoCoMo's times have no zone).

    Raises:
        ValueError: not in that shape.
    """
    m = _WHEN.search(text)
    if not m:
        raise ValueError(f"unreadable session time {text!r}")
    hour, minute, half, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)


def load(number: int, folder: Path = DATA) -> Locomo:
    """Read ``<folder>/<number>.json`` (sessions in order, evidence ids normalised:
    ``D:11:26`` → ``D11:26``, ``"D8:6; D9:17"`` → two ids)."""
    raw = json.loads((folder / f"{number}.json").read_text(encoding="utf-8"))
    sessions: list[Session] = []
    for key in raw:
        m = re.fullmatch(r"session_(\d+)", key)
        if not m or not raw[key]:
            continue
        n = int(m.group(1))
        turns = []
        for t in raw[key]:
            dm = _DIA.fullmatch(str(t["dia_id"]).strip())
            dia = f"D{dm.group(1)}:{dm.group(2)}" if dm else str(t["dia_id"]).strip()
            urls = t.get("img_url") or []
            turns.append(Turn(dia, n, t["speaker"], t.get("text", ""), t.get("blip_caption"),
                              urls[0] if urls else None))
        sessions.append(Session(n, parse_when(raw[f"session_{n}_date_time"]), turns))
    sessions.sort(key=lambda s: s.number)
    questions = []
    for q in raw["qa"]:
        ev = tuple(dict.fromkeys(
            f"D{a}:{b}" for e in q.get("evidence", []) for a, b in _DIA.findall(str(e))))
        questions.append(Question(str(q["question"]), int(q["category"]), ev))
    return Locomo(number, (raw["speaker_a"], raw["speaker_b"]), sessions, questions)


def session_of(dia: str) -> int:
    """The session number of a dia id."""
    m = _DIA.fullmatch(dia)
    return int(m.group(1)) if m else -1


def iso(dt: datetime) -> str:
    """``2023-05-08T13:56:00Z``."""
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def turn_text(t: Turn) -> str:
    """A turn's message text as a chat export holds it: the caption of a shared image
    as the alt text of a Markdown image."""
    if t.image or t.caption:
        return f"{t.text}\n\n![{t.caption or 'image'}]({t.image or 'image'})"
    return t.text


# --- ingest --------------------------------------------------------------------------


def write_chats(conv: Locomo, folder: Path) -> None:
    """One chat export file per session (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    a, b = conv.speakers
    for s in conv.sessions:
        data = {
            "id": f"locomo-{conv.number}-session-{s.number}",
            "name": f"{a} and {b}, session {s.number}",
            "created_at": iso(s.when),
            "messages": [
                {"id": t.dia, "role": "user" if t.speaker == a else "assistant",
                 "name": t.speaker, "content": turn_text(t)}
                for t in s.turns
            ],
        }
        (folder / f"session-{s.number:02d}.json").write_text(
            json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def unit_turns(db: Path) -> dict[str, str]:
    """unit id → dia id of every message unit in the index file (read directly)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT id, declared_id FROM units WHERE kind = 'message' AND declared_id IS NOT NULL")
        return {str(u): str(d) for u, d in rows}
    finally:
        con.close()


_SESSION_FILE = re.compile(r"session-(\d+)\.json$")


def remember_all(cairn: Any, bundle: Path, conv: Locomo) -> dict[str, str]:
    """Remember every turn into ``bundle`` (created with ``index.md`` and ``log.md``);
    returns memory path → dia id."""
    from cairn.memory.bundle import INDEX_TEXT, LOG_TITLE

    (bundle / "memories" / "active").mkdir(parents=True, exist_ok=True)
    (bundle / "concepts" / "active").mkdir(parents=True, exist_ok=True)
    (bundle / "index.md").write_text(INDEX_TEXT, encoding="utf-8")
    (bundle / "log.md").write_text(LOG_TITLE + "\n", encoding="utf-8")
    cairn.index([str(bundle)])
    out: dict[str, str] = {}
    for s in conv.sessions:
        for t in s.turns:
            text = f"{t.speaker}: {t.text}"
            if t.caption:
                text += f" [shared an image: {t.caption}]"
            rec = cairn.memory.remember(bundle, text, timestamp=iso(s.when))
            out[rec.path] = t.dia
    return out


# --- the baseline --------------------------------------------------------------------


class TurnBaseline:
    """Plain turn-level BM25: one FTS5 row per turn (its text), the question's words
    OR-ed."""

    def __init__(self, conv: Locomo) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, body, "
                        "tokenize='porter unicode61 remove_diacritics 2')")
        self.db.executemany("INSERT INTO t(dia, body) VALUES (?, ?)",
                            [(t.dia, t.text) for s in conv.sessions for t in s.turns])

    def search(self, text: str, limit: int) -> list[str]:
        """dia ids of the best turns."""
        words = re.findall(r"\w+", text)
        if not words:
            return []
        match = " OR ".join('"' + w + '"' for w in words)
        rows = self.db.execute("SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?",
                               (match, limit))
        return [r[0] for r in rows]


# --- scoring -------------------------------------------------------------------------


@dataclass
class Tally:
    """Per-question recalls of one system, by category, and its latencies (ms)."""

    rows: dict[int, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    ms: list[float] = field(default_factory=list)

    def add(self, q: Question, turns: Sequence[str | None], sessions: Sequence[int],
            ms: float) -> None:
        """Score one answer: ``turns`` the dia id of each hit (``None``: not a turn),
        ``sessions`` the session of each hit (-1: none)."""
        ev = set(q.evidence)
        evs = {session_of(d) for d in ev}
        row: dict[str, float] = {}
        for k in KS:
            row[f"turn@{k}"] = len(ev & {x for x in turns[:k] if x}) / len(ev)
            row[f"session@{k}"] = len(evs & set(sessions[:k])) / len(evs)
        self.rows[q.category].append(row)
        if q.category in CATEGORIES:
            self.ms.append(ms)


def merge(tallies: Iterable[Tally | None]) -> Tally:
    """The tallies of several conversations as one."""
    out = Tally()
    for t in tallies:
        if t is None:
            continue
        for cat, rows in t.rows.items():
            out.rows[cat].extend(rows)
        out.ms.extend(t.ms)
    return out


def pct(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (0 for none)."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))] if s else 0.0


def summarise(t: Tally) -> dict[str, Any]:
    """Mean recalls per category, ``1-4`` together, ``5`` apart; latency."""
    out: dict[str, Any] = {}

    def mean(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
        keys = [f"{w}@{k}" for w in ("turn", "session") for k in KS]
        return {k: sum(r[k] for r in rows) / len(rows) for k in keys} | {"n": len(rows)}

    for cat, name in CATEGORIES.items():
        if t.rows.get(cat):
            out[name] = mean(t.rows[cat])
    main = [r for c in CATEGORIES for r in t.rows.get(c, [])]
    if main:
        out["1-4"] = mean(main)
    if t.rows.get(5):
        out["adversarial"] = mean(t.rows[5])
    out["mean_ms"] = sum(t.ms) / len(t.ms) if t.ms else 0.0
    out["p95_ms"] = pct(t.ms, 95)
    return out


# --- runs ----------------------------------------------------------------------------


def run_chat(conv: Locomo, work: Path, modes: Sequence[str], tallies: dict[str, Tally],
             mcp_sample: int, misses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Index the sessions as chats and ask every question in each mode; ``misses``
    gains a :func:`miss` record for every question of categories 1–4 whose evidence
    turns are not all among the first 10."""
    from cairn.app import Cairn
    from cairn.config import load_config

    folder = work / f"chats-{conv.number}"
    write_chats(conv, folder)
    db = work / f"chats-{conv.number}.db"
    info: dict[str, Any] = {}
    with Cairn(load_config(db=str(db))) as cairn:
        t0 = time.perf_counter()
        cairn.index([str(folder)])
        info["index_s"] = time.perf_counter() - t0
        turns = unit_turns(db)
        for mode in modes:
            for q in conv.questions:
                if not q.evidence:
                    continue
                t1 = time.perf_counter()
                res = cairn.search(q.text, mode=mode, limit=max(KS))
                ms = (time.perf_counter() - t1) * 1000
                sess = [_session_of_path(h.path) for h in res.hits]
                dias = [turns.get(h.unit_id) for h in res.hits]
                tallies[f"chat {mode}"].add(q, dias, sess, ms)
                if (misses is not None and q.category in CATEGORIES
                        and not set(q.evidence) <= set(dias)):
                    deep = cairn.search(q.text, mode=mode, limit=MISS_DEPTH)
                    misses.append(miss(conv, mode, q, [turns.get(h.unit_id) for h in deep.hits]))
        if mcp_sample:
            info["mcp"] = mcp_check(cairn, conv, modes[-1], mcp_sample)
    return info


MISS_DEPTH = 50
"""How deep a missed question's results are read for its evidence turns' ranks."""


def miss(conv: Locomo, mode: str, q: Question, dias: Sequence[str | None]) -> dict[str, Any]:
    """One missed question as a JSON-ready record: its evidence turns (speaker, text and
    1-based rank among the first :data:`MISS_DEPTH` results, ``None``: not there) and
    the first 10 results' turns."""
    text = {t.dia: t for s in conv.sessions for t in s.turns}

    def turn(d: str | None) -> dict[str, Any]:
        t = text.get(d or "")
        return {"dia": d, "speaker": t.speaker if t else None,
                "text": turn_text(t) if t else None}

    return {"conversation": conv.number, "mode": mode, "category": CATEGORIES[q.category],
            "question": q.text,
            "evidence": [turn(d) | {"rank": dias.index(d) + 1 if d in dias else None}
                         for d in q.evidence],
            "top10": [turn(d) for d in dias[:10]]}


def _session_of_path(path: str) -> int:
    m = _SESSION_FILE.search(path)
    return int(m.group(1)) if m else -1


def run_memory(conv: Locomo, work: Path, modes: Sequence[str],
               tallies: dict[str, Tally]) -> dict[str, Any]:
    """Remember every turn and recall every question in each mode."""
    from cairn.app import Cairn
    from cairn.config import load_config

    bundle = work / f"memory-{conv.number}"
    info: dict[str, Any] = {}
    with Cairn(load_config(db=str(work / f"memory-{conv.number}.db"))) as cairn:
        t0 = time.perf_counter()
        paths = remember_all(cairn, bundle, conv)
        info["remember_s"] = time.perf_counter() - t0
        for mode in modes:
            for q in conv.questions:
                if not q.evidence:
                    continue
                t1 = time.perf_counter()
                res = cairn.memory.recall(bundle, q.text, limit=max(KS), mode=mode,
                                          record=False)
                ms = (time.perf_counter() - t1) * 1000
                dias = [paths.get(h.path) for h in res.hits]
                sess = [session_of(d) if d else -1 for d in dias]
                tallies[f"memory {mode}"].add(q, dias, sess, ms)
    return info


def run_baseline(conv: Locomo, tallies: dict[str, Tally]) -> None:
    """The turn-level BM25 baseline."""
    base = TurnBaseline(conv)
    for q in conv.questions:
        if not q.evidence:
            continue
        t1 = time.perf_counter()
        dias = base.search(q.text, max(KS))
        ms = (time.perf_counter() - t1) * 1000
        tallies["bm25 turns"].add(q, dias, [session_of(d) for d in dias], ms)


def mcp_check(cairn: Any, conv: Locomo, mode: str, n: int) -> dict[str, Any]:
    """Ask ``n`` questions over MCP (in-memory transport, the SDK's client) and compare
    the hits with ``Cairn.search``'s."""
    import anyio
    from mcp import Client

    from cairn.interfaces.mcp.server import build_server

    asked = [q for q in conv.questions if q.evidence and q.category in CATEGORIES][:n]
    same = 0
    ms: list[float] = []

    async def main() -> None:
        nonlocal same
        async with Client(build_server(cairn)) as client:
            for q in asked:
                t0 = time.perf_counter()
                res = await client.call_tool("search", {"query": q.text, "mode": mode,
                                                        "limit": max(KS)})
                ms.append((time.perf_counter() - t0) * 1000)
                data = res.structured_content or {}
                over = [h["unit_id"] for h in data.get("hits", [])]
                local = [h.unit_id for h in cairn.search(q.text, mode=mode, limit=max(KS)).hits]
                same += over == local

    anyio.run(main)
    return {"asked": len(asked), "same_hits": same, "mode": mode,
            "mean_ms": sum(ms) / len(ms) if ms else 0.0}


# --- output --------------------------------------------------------------------------


def print_table(table: Mapping[str, Mapping[str, Any]]) -> None:
    """One block per metric: rows are systems, columns categories."""
    cols = [*CATEGORIES.values(), "1-4", "adversarial"]
    for metric in (f"{w}@{k}" for w in ("turn", "session") for k in KS):
        print(f"\n{metric:18} " + " ".join(f"{c:>11}" for c in cols))
        for name, per in table.items():
            cells = [f"{per[c][metric]:11.3f}" if c in per else " " * 11 for c in cols]
            print(f"{name:18} " + " ".join(cells))
    print("\nlatency ms mean/p95 (categories 1-4): " + ", ".join(
        f"{name} {per['mean_ms']:.1f}/{per['p95_ms']:.1f}" for name, per in table.items()))


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="the LoCoMo folder")
    ap.add_argument("--split", default="dev", choices=tuple(SPLITS))
    ap.add_argument("--conversations", default=None,
                    help="comma-separated conversation numbers (overrides --split)")
    ap.add_argument("--modes", default="keyword,semantic,hybrid")
    ap.add_argument("--variants", default="chat",
                    help="chat, memory or both (memory remembers turn by turn: slow)")
    ap.add_argument("--mcp", type=int, default=10, metavar="N",
                    help="questions asked over MCP per conversation (0: none)")
    ap.add_argument("--work", type=Path, default=None, help="work folder (kept)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--misses", type=Path, default=None, metavar="FILE",
                    help="write every chat question of categories 1-4 missing an evidence "
                         "turn from its first 10 to FILE, one JSON object a line")
    args = ap.parse_args(list(argv) if argv is not None else None)
    numbers = ([int(x) for x in args.conversations.split(",") if x.strip()]
               if args.conversations else list(SPLITS[args.split]))
    modes = [m for m in args.modes.split(",") if m]
    variants = {v for v in args.variants.split(",") if v}
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-locomo-"))
    work.mkdir(parents=True, exist_ok=True)
    per_conv: dict[int, dict[str, Tally]] = {}
    info: dict[str, Any] = {}
    missed: list[dict[str, Any]] | None = [] if args.misses else None
    try:
        for n in numbers:
            conv = load(n, args.data)
            print(f"conversation {n}: {len(conv.sessions)} sessions, "
                  f"{sum(len(s.turns) for s in conv.sessions)} turns, "
                  f"{len(conv.questions)} questions", file=sys.stderr, flush=True)
            tallies = per_conv[n] = defaultdict(Tally)
            run_baseline(conv, tallies)
            if "chat" in variants:
                info[f"chat {n}"] = run_chat(conv, work, modes, tallies, args.mcp, missed)
            if "memory" in variants:
                info[f"memory {n}"] = run_memory(conv, work, modes, tallies)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.misses and missed is not None:
        args.misses.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n"
                                       for m in missed), encoding="utf-8")
    order = ["bm25 turns"] + [f"{v} {m}" for v in ("chat", "memory") for m in modes]
    groups = {"all": numbers}
    for split in ("dev", "test"):
        part = [n for n in numbers if n in SPLITS[split]]
        if part and part != numbers:
            groups[split] = part
    tables = {g: {name: summarise(merge(per_conv[n].get(name) for n in part))
                  for name in order if any(name in per_conv[n] for n in part)}
              for g, part in groups.items()}
    if args.json:
        print(json.dumps({"conversations": numbers, "tables": tables, "runs": info}, indent=1))
        return 0
    for g, part in groups.items():
        print(f"\n== {g}: conversations {','.join(map(str, part))}")
        print_table(tables[g])
    for k, v in info.items():
        print(f"{k}: " + ", ".join(f"{a} {b:.1f}" if isinstance(b, float) else f"{a} {b}"
                                   for a, b in v.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
