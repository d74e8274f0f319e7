"""Regression tests of the defects a fresh-user probe found (sixth wave), each on real
files, a real index and the real CLI or API."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config, load_config
from cairn.errors import ConfigError
from cairn.ingest.prepare import _worker_init
from cairn.search.service import NEAREST_BY_MEANING
from cairn.sources import decode

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "PYTHONPATH": str(SRC), "CAIRN_EMBED": "none", "CAIRN_NO_WARM": "1",
         **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", *args],
        capture_output=True, text=True, env=e, timeout=120,
    )


def _vault(folder: Path) -> Path:
    (folder / "plants").mkdir(parents=True)
    (folder / "kitchen").mkdir()
    (folder / "plants" / "compost.md").write_text(
        "# Compost\n\nGreens and browns; turn the heap weekly.\n", "utf-8")
    (folder / "plants" / "tomatoes.md").write_text(
        "# Tomatoes\n\nStake the vines and pinch the side shoots.\n", "utf-8")
    (folder / "kitchen" / "bread.md").write_text(
        "# Sourdough\n\nFeed the starter the night before baking.\n", "utf-8")
    return folder


def test_a_semantic_search_says_no_word_matched_only_when_none_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A semantic list has no keyword side: every semantic search used to carry the
    note "no word of the query matched", also when its words matched."""
    pytest.importorskip("model2vec")
    monkeypatch.setenv("CAIRN_EMBED", "static")
    root = _vault(tmp_path / "v")
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "static"})) as cairn:
        cairn.index([root])
        matched = cairn.search("compost heap", mode="semantic")
        assert matched.hits and NEAREST_BY_MEANING not in matched.notes
        none = cairn.search("xyzzyplugh", mode="semantic")
        assert none.hits and NEAREST_BY_MEANING in none.notes
        filtered = cairn.search("compost path:kitchen/", mode="semantic")  # no match there
        assert NEAREST_BY_MEANING in filtered.notes or not filtered.hits


def test_utf32_with_a_bom_is_decoded_and_indexed(tmp_path: Path) -> None:
    text = "# Title\n\nthirtytwo words\n"
    for codec in ("utf-32", "utf-32-le", "utf-32-be"):
        data = text.encode(codec)
        if codec != "utf-32":  # the explicit byte orders write no BOM: add it
            data = ("\ufeff" + text).encode(codec)
        assert decode(data).text == text, codec
    assert decode(text.encode("utf-16")).text == text
    with pytest.raises(ValueError):
        decode(text.encode("utf-32-le"))  # no BOM: NUL bytes, refused as binary
    folder = tmp_path / "n"
    folder.mkdir()
    (folder / "wide.md").write_bytes(text.encode("utf-32"))
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder], embed=False)
        assert (run.added, run.failed) == (1, 0)
        assert [h.title for h in c.search("thirtytwo", mode="keyword").hits] == ["Title"]


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


def _mount_tmpfs(where: Path) -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                         capture_output=True)
    return res.returncode == 0


def test_an_index_on_read_only_media_answers_reads(tmp_path: Path) -> None:
    """A WAL-mode index on a read-only file system could not even be opened (SQLite
    cannot make its ``-shm`` file there): every command failed with "unable to open
    database file". Now reads work and writes say the index is read-only."""
    media = tmp_path / "media"
    if not _mount_tmpfs(media):
        pytest.skip("needs root and mount to make a read-only file system")
    try:
        root = _vault(tmp_path / "v")
        db = media / "i.db"
        with Cairn.open(db=db) as c:
            c.index([root], embed=False)
        subprocess.run(["mount", "-o", "remount,ro", str(media)], check=True)
        with Cairn.open(db=db) as c:
            assert [h.title for h in c.search("compost", mode="keyword").hits] == ["Compost"]
            assert c.store.integrity_check() == []
        res = _cli("--db", str(db), "search", "sourdough", "--mode", "keyword", "--json")
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["hits"][0]["title"] == "Sourdough"
        assert _cli("--db", str(db), "check").returncode == 0
        res = _cli("--db", str(db), "index", "--no-embed")
        assert res.returncode == 2 and "read-only" in res.stderr
        assert "damaged" not in res.stderr
    finally:
        subprocess.run(["umount", "-l", str(media)], capture_output=True)


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[fusion]\nmethod = "bogus"\n', "[fusion] method"),
        ('[index]\nmax_file_mb = "x"\n', "[index] max_file_mb must be a number, not 'x'"),
        ('[chunking]\ndefault_profile = "nope"\n', "[chunking] default_profile 'nope'"),
        ("[serve]\nport = 99999\n", "[serve] port must be a TCP port"),
        ("[mcp]\nport = 70000\n", "[mcp] port must be a TCP port"),
        ("[search]\nlimit = 0\n", "[search] limit must be 1 or more"),
    ],
)
def test_a_bad_setting_is_refused_before_the_run_naming_the_file(
    tmp_path: Path, toml: str, says: str
) -> None:
    """Some sections' checks did not name the file, ``[chunking]`` was checked only
    after the files had been indexed, and ``port = 99999`` served on port 34463."""
    cfg = tmp_path / "cairn.toml"
    cfg.write_text(toml, "utf-8")
    root = _vault(tmp_path / "v")
    db = tmp_path / "i.db"
    with pytest.raises(ConfigError) as err, Cairn(load_config(db=db, config_file=cfg)) as c:
        c.index([root], embed=False)
    assert str(err.value).startswith(f"{cfg}: ") and says in str(err.value)
    res = _cli("--config", str(cfg), "--db", str(db), "index", str(root))
    assert res.returncode == 2 and str(cfg) in res.stderr.replace("\n", "")
    assert not db.exists() or "0 documents" in _cli("--db", str(db), "stats").stdout


def test_enrich_without_a_model_names_the_section(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    db = tmp_path / "i.db"
    assert _cli("--db", str(db), "index", str(root)).returncode == 0
    res = _cli("--db", str(db), "enrich")
    said = res.stdout.replace("\n", " ")
    assert res.returncode == 0 and "no [enrich] provider in cairn.toml" in said


def test_export_a_folder_inside_a_root_and_only_keyword_hits(tmp_path: Path) -> None:
    """``--root`` naming a folder inside a registered one exported the whole root, and
    ``--query`` counted every semantic neighbour as a hit (``xyzzyplugh`` exported
    every note)."""
    pytest.importorskip("model2vec")
    root = _vault(tmp_path / "v")
    db = tmp_path / "i.db"
    env = {"CAIRN_EMBED": "static"}
    assert _cli("--db", str(db), "index", str(root), env=env).returncode == 0
    res = _cli("--db", str(db), "export", "json", str(tmp_path / "p.json"),
               "--root", str(root / "plants"), "--json", env=env)
    assert res.returncode == 0, res.stderr
    got = json.loads((tmp_path / "p.json").read_text("utf-8"))
    assert sorted(d["path"] for d in got["documents"]) == [
        "plants/compost.md", "plants/tomatoes.md"]
    res = _cli("--db", str(db), "export", "json", str(tmp_path / "q.json"),
               "--query", "xyzzyplugh", "--json", env=env)
    assert res.returncode == 0 and json.loads(res.stdout)["documents"] == 0
    res = _cli("--db", str(db), "export", "json", str(tmp_path / "r.json"),
               "--query", "starter", "--json", env=env)
    assert json.loads(res.stdout)["documents"] == 1
    res = _cli("--db", str(db), "export", "json", str(tmp_path / "s.json"),
               "--root", str(tmp_path), env=env)
    assert res.returncode != 0 and "not a registered source root" in res.stderr.replace("\n", "")


def test_a_watcher_batch_that_needs_a_full_run_reports_its_counts(tmp_path: Path) -> None:
    """A deleted folder makes a full run; its record was replaced by that of a second,
    empty run (``removed`` 0 in ``cairn watch --json``)."""
    root = _vault(tmp_path / "v")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root], embed=False)
        shutil.rmtree(root / "plants")
        done = c.apply_changes([str(root / "plants")], embed=False)
        assert done is not None and done.full
        assert (done.run.removed, done.run.unchanged) == (2, 1)
        assert [d.path for d in c.store.documents_of_root(c.roots()[0].id)] == [
            "kitchen/bread.md"]


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
