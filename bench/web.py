"""Browser benchmark of the web UI: page loads and search as you type in headless
Chromium (Debian's ``/usr/bin/chromium`` through Playwright) against a real ``cairn
serve`` over an index of the shared corpus.

Usage::

    cairn index ../shared/corpus --db /tmp/corpus.db      # once
    python bench/web.py --db /tmp/corpus.db [--rounds 3]

The index is copied to a temporary folder (yours is never written) and served on a free
loopback port. Measured, per page kind, ``--rounds`` times over its URLs: the page load
(navigation start to the ``load`` event, from the browser's Navigation Timing) of the
search page with a query, note pages of the hits, the conversations list, conversation
pages and the status page; then search as you type: each query typed key by key
(60 ms apart, like a quick typist) and timed from the last keystroke to its hits on
screen (the 120 ms debounce included), and the same for a facet click. Prints p50/p95
in milliseconds and the machine load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QUERIES = ["zettelkasten", "property inheritance", "weekly review", "backlinks panel",
           "org babel", "callout", "spaced repetition", "export html", "sqlite", "agenda",
           "tag:daily", "todo:open", "format:org capture", "graph view", "refile"]
CHROMIUM = "/usr/bin/chromium"


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * len(s)) - 1))]


def line(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:28s} (no samples)"
    return (f"{name:28s} p50 {statistics.median(values):7.1f} ms  p95 {pct(values, 0.95):7.1f}"
            f" ms  n={len(values)}")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="an index of ../shared/corpus")
    ap.add_argument("--rounds", type=int, default=3, help="times each page is loaded")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="cairn-bench-web-"))
    db = tmp / "i.db"
    with sqlite3.connect(args.db) as a, sqlite3.connect(db) as b:
        a.backup(b)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(tmp / "serve.log", "wb")  # noqa: SIM115
    env = {**os.environ, "CAIRN_EMBED": os.environ.get("CAIRN_EMBED", "none"),
           "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "cairn.interfaces.cli", "serve", "--db",
                             str(db), "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/healthz", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("cairn serve did not start; see " + str(tmp)) from None
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 860})

            def load(path: str) -> float:
                page.goto(url + path, wait_until="load")
                return float(page.evaluate(
                    "(() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return n.loadEventEnd - n.startTime; })()"))

            page.goto(url + "/?q=" + urllib.parse.quote(QUERIES[0]))
            notes = [a for a in re.findall(r'class="hit-title" href="([^"]+)"', page.content())]
            page.goto(url + "/conversations")
            convs = re.findall(r'class="conversation-link" href="([^"]+)"', page.content())
            kinds = {
                "search page (with a query)": ["/?q=" + urllib.parse.quote(q)
                                               for q in QUERIES],
                "note page": [n.split("#")[0] for n in notes[:10]],
                "conversations list": ["/conversations"],
                "conversation page": convs[:10],
                "status page": ["/status"],
            }
            results: dict[str, list[float]] = {}
            for name, paths in kinds.items():
                results[name] = [load(p_) for _ in range(args.rounds) for p_ in paths]
            typed: list[float] = []
            facet: list[float] = []
            page.goto(url + "/")
            for _ in range(args.rounds):
                for q in QUERIES:
                    page.fill("#q", "")
                    page.wait_for_selector('.results[data-q=""]', state="attached")
                    page.type("#q", q, delay=60)
                    t0 = time.perf_counter()
                    page.wait_for_selector(f'.results[data-q="{q}"]', state="attached",
                                           timeout=30000)
                    typed.append((time.perf_counter() - t0) * 1000)
                    link = page.locator("a.facet-value").first
                    if link.count():
                        want = link.get_attribute("data-q") or ""
                        t0 = time.perf_counter()
                        link.click()
                        page.wait_for_function(
                            "w => { const r = document.querySelector('.results');"
                            " return r && r.dataset.q === w; }", arg=want, timeout=30000)
                        facet.append((time.perf_counter() - t0) * 1000)
            browser.close()
        with sqlite3.connect(db) as c:
            docs = c.execute("SELECT count(*) FROM documents").fetchone()[0]
            units = c.execute("SELECT count(*) FROM units").fetchone()[0]
        print(f"index: {docs} documents, {units} units; load: {os.getloadavg()}")
        for name, values in results.items():
            print(line("load " + name, values))
        print(line("typed query → hits", typed))
        print(line("facet click → hits", facet))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
