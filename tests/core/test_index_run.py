"""One indexing run, whole: files, graph and embeddings in one report; ``index_paths``
for a watcher; what a failed first run leaves behind."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.errors import CairnError, NotFound
from cairn.model.serialize import to_data


def _vault(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nLinks to [[b]] and [[c]].\n")
    (root / "b.md").write_text("# Beta\n\nBeta body about compost.\n")
    (root / "notes.org").write_text("* TODO Plan\nSee [[file:a.md][alpha]].\n** Step\nDo it.\n")
    return root


def _snapshot(c: Cairn) -> dict[str, Any]:
    """Everything a user can see of the index, through the public API."""
    files = {}
    for r in c.roots():
        for p in sorted(Path(r.path).rglob("*")):
            if p.is_file():
                try:
                    view = c.show(str(p))
                except NotFound:
                    continue
                view = to_data(view)
                doc = view.get("document") or {}
                for k in ("mtime", "size"):
                    doc.pop(k, None)
                files[p.relative_to(r.path).as_posix()] = view
    counts = {k: v for k, v in to_data(c.stats()).items() if k not in ("db", "last_run")}
    return {"files": files, "counts": counts}


def test_index_paths_equals_a_full_build(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        c.index([root])
        (root / "b.md").write_text("# Beta\n\nNow about worms.\n")  # changed
        (root / "c.md").write_text("# Gamma\n\nNew; [[a]] links back.\n")  # added
        (root / "notes.org").unlink()  # removed
        (root / "skip.md~").write_text("editor backup\n")  # ignored name
        run = c.index_paths(root / n for n in ("b.md", "c.md", "notes.org", "skip.md~"))
        assert (run.added, run.changed, run.removed) == (1, 1, 1)
        assert run.graph is not None and run.graph.changed_documents >= 2
        watched = _snapshot(c)
    with Cairn(Config(db_path=tmp_path / "full.db")) as c:
        c.index([root])
        full = _snapshot(c)
    assert watched == full
    assert "c.md" in watched["files"] and "notes.org" not in watched["files"]


def test_index_paths_refuses_a_file_outside_the_roots(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    other = tmp_path / "elsewhere.md"
    other.write_text("# x\n")
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        c.index([root])
        with pytest.raises(NotFound):
            c.index_paths([other])
        with pytest.raises(NotFound):
            c.index_paths([root / ".." / "elsewhere.md"])


def test_an_unchanged_file_given_to_index_paths_costs_nothing(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        c.index([root])
        run = c.index_paths([root / "a.md"])
        assert (run.seen, run.unchanged, run.added, run.changed) == (1, 1, 0, 0)
        assert run.graph is None and run.embedding is None


def test_the_run_reports_graph_and_embedding_steps(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        run = c.index([root])
    assert run.graph is not None and run.graph.edges > 0
    assert run.embedding is not None and run.embedding.chunks_added > 0
    d = to_data(run)
    assert d["embedding"]["chunks_added"] == run.embedding.chunks_added
    assert d["graph"]["edges"] == run.graph.edges
    assert run.seconds >= run.graph.seconds


def test_a_failed_first_run_leaves_no_empty_index(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    c = Cairn(Config(db_path=db))
    with pytest.raises(CairnError):
        c.index([tmp_path / "nonexistent"])
    assert not db.exists() and not Path(f"{db}-wal").exists()


def test_a_failed_run_on_an_existing_index_keeps_it(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    db = tmp_path / "w.db"
    with Cairn(Config(db_path=db)) as c:
        c.index([root])
    with Cairn(Config(db_path=db)) as c:
        with pytest.raises(CairnError):
            c.index([tmp_path / "nonexistent"])
        assert c.stats().documents == 3


def test_an_include_that_matches_nothing_says_what_it_removes(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        c.index([root])
        run = c.index([root], include=["*.nothing"])
    msgs = [w.message for w in run.warnings]
    assert run.removed == 3
    assert any("no file matches" in m and "3 indexed files are removed" in m for m in msgs)


def test_index_paths_through_a_symlinked_folder(tmp_path: Path) -> None:
    root = _vault(tmp_path / "real")
    link = tmp_path / "link"
    os.symlink(root, link)
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        c.index([link])
        (root / "b.md").write_text("# Beta\n\nChanged.\n")
        run = c.index_paths([link / "b.md"])
        assert run.changed == 1


def test_backend_errors_surface_as_store_errors_naming_the_index(tmp_path: Path) -> None:
    import sqlite3

    from cairn.errors import StoreError

    root = _vault(tmp_path / "v")
    db = tmp_path / "w.db"
    with Cairn(Config(db_path=db)) as c:
        c.index([root])
        raw = sqlite3.connect(db)  # damage the index behind cairn's back
        raw.execute("DROP TABLE runs")
        raw.commit()
        raw.close()
        with pytest.raises(StoreError) as exc:
            c.store.last_run()
        assert str(db) in str(exc.value) and "no such table" in str(exc.value)


def test_parallel_parsing_never_runs_the_callers_script_again(tmp_path: Path) -> None:
    """A script without a ``__main__`` guard that indexes many files runs once: the
    parsing workers are forked, not spawned (spawn would import the script again)."""
    import subprocess
    import sys

    root = tmp_path / "many"
    root.mkdir()
    for i in range(80):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nBody {i} links [[n{(i + 1) % 80}]].\n")
    script = tmp_path / "script.py"
    script.write_text(
        "import tempfile\n"
        "from pathlib import Path\n"
        "from cairn.app import Cairn\n"
        "from cairn.config import Config\n"
        f"c = Cairn(Config(db_path=Path(tempfile.mkdtemp(dir={str(tmp_path)!r})) / 'i.db'))\n"
        f"run = c.index([{str(root)!r}], embed=False)\n"
        "print('RAN', run.added)\n"
    )
    env = {**os.environ, "CAIRN_WORKERS": "2", "CAIRN_EMBED": "none"}
    res = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("RAN") == 1 and "RAN 80" in res.stdout


def test_an_export_registered_by_its_file_does_not_block_its_folder(tmp_path: Path) -> None:
    downloads = tmp_path / "Downloads"
    notes = downloads / "notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text("# A\n\nalpha\n")
    export = downloads / "conversations.json"
    export.write_text(
        json.dumps(
            [
                {
                    "uuid": "c1",
                    "name": "Chat one",
                    "created_at": "2024-06-01T10:00:00Z",
                    "updated_at": "2024-06-01T10:00:00Z",
                    "chat_messages": [
                        {
                            "uuid": "m1",
                            "sender": "human",
                            "text": "hello beta",
                            "content": [],
                            "attachments": [],
                            "created_at": "2024-06-01T10:00:00Z",
                        }
                    ],
                }
            ]
        )
    )
    with Cairn(Config(db_path=tmp_path / "w.db")) as c:
        c.index([export])
        c.index([notes])  # refused as "inside the registered folder" before
        assert {h.title for h in c.search("alpha beta", mode="keyword").hits} >= {"A"}
        assert len(c.roots()) == 2
        with pytest.raises(CairnError, match="holds the registered file"):
            c.index([tmp_path])  # would index the export twice
