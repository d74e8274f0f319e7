"""Parse workers and Ctrl-C: a terminal's Ctrl-C reaches the whole process group, so
the workers ignore it and leave it to the indexing process, which stops them at once
without waiting for a parse in flight. Real worker processes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from cairn.ingest.prepare import _worker_init

SRC = Path(__file__).resolve().parents[2] / "src"


def test_parse_workers_leave_ctrl_c_to_the_indexing_process() -> None:
    """A terminal's Ctrl-C reaches the whole process group: a worker that took it died
    with a KeyboardInterrupt traceback of its own."""
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        1, mp_context=ctx, initializer=_worker_init, initargs=(0, os.getpid())
    ) as pool:
        pid = pool.submit(os.getpid).result(timeout=60)
        assert pool.submit(signal.getsignal, signal.SIGINT).result(timeout=60) == signal.SIG_IGN
        os.kill(pid, signal.SIGINT)
        assert pool.submit(os.getpid).result(timeout=60) == pid  # the same worker, alive


_CTRL_C_SCRIPT = """
import sys, time
from pathlib import Path
from cairn.ingest.prepare import Job, Preparer
from cairn.sources import source_file

root = Path(sys.argv[1])
root.mkdir()
(root / "a-deep.org").write_text("".join("*" * i + " h\\n" for i in range(1, 8001)))
for i in range(70):
    (root / f"n{i:02}.md").write_text(f"# n{i}\\n\\nbody {i}\\n", "utf-8")
jobs = []
for p in sorted(root.iterdir()):
    sf = source_file(root, p.name)
    assert sf is not None
    jobs.append(Job(sf, None, None, {}))
prep = Preparer(2)
outcomes = prep.map(jobs, total=len(jobs))
assert next(outcomes) is None, "the deep file should be parsing in a worker"
pool = prep._pool
assert pool is not None, "no pool was started"
workers = list(pool._processes.values())
assert workers and all(w.is_alive() for w in workers)
try:
    outcomes.throw(KeyboardInterrupt())
except KeyboardInterrupt:
    pass
else:
    raise AssertionError("the interrupt did not reach the caller")
deadline = time.monotonic() + 60
while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
    time.sleep(0.05)
assert not any(w.is_alive() for w in workers), "a worker outlived the interrupt"
assert prep._pool is None
prep.close()
print("stopped")
"""


def test_ctrl_c_stops_the_parse_workers_without_waiting_for_their_parses(
    tmp_path: Path,
) -> None:
    """Workers ignore Ctrl-C (above), so the pool must not wait for a slow parse in
    flight: it is stopped, its workers terminated, the moment the run is interrupted.

    Run in a fresh interpreter: a pool is only forked from a process without native
    thread pools (onnxruntime, tokenizers) loaded, which earlier tests load here."""
    out = subprocess.run(
        [sys.executable, "-c", _CTRL_C_SCRIPT, str(tmp_path / "v")],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "stopped"

