"""``cairn eval DIR --db FILE``: FILE is the index the data set is built in, measured
and kept; an index of notes is refused and left as it was."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cairn.interfaces import cli
from cairn.store import open_store


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = [
        ("d1", "Sourdough", "Feed the starter before baking bread."),
        ("d2", "Guitar", "Practice scales and chord changes daily."),
        ("d3", "Compost", "Greens and browns make good compost."),
    ]
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs)
    )
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "baking bread starter"}) + "\n"
        + json.dumps({"_id": "q2", "text": "guitar chords"}) + "\n"
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n"
    )
    return folder


def _documents(db: Path) -> int:
    store = open_store(db)
    try:
        return int(store.counts()["documents"])
    finally:
        store.close()


def test_eval_builds_the_data_set_in_the_db_file_and_reuses_it(tmp_path: Path) -> None:
    beir = _beir(tmp_path / "scifact-mini")
    db = tmp_path / "eval.db"
    runner = CliRunner()
    for _ in range(2):  # the second run reuses what the first kept
        r = runner.invoke(cli.app, ["eval", str(beir), "--db", str(db), "--mode", "keyword",
                                    "--json"])
        assert r.exit_code == 0, r.output
        rep = json.loads(r.stdout)
        assert rep["documents"] == 3 and rep["results"][0]["ndcg@10"] == 1.0
        assert _documents(db) == 3


def test_eval_refuses_an_index_of_notes_and_leaves_it_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nBaking bread with a starter.\n")
    db = tmp_path / "notes.db"
    runner = CliRunner()
    assert runner.invoke(cli.app, ["--db", str(db), "index", str(notes)]).exit_code == 0
    before = db.read_bytes()
    for args in (["eval", str(_beir(tmp_path / "b")), "--db", str(db)],
                 ["--db", str(db), "eval", str(tmp_path / "b")]):
        r = runner.invoke(cli.app, [*args, "--mode", "keyword"])
        assert r.exit_code == 2, r.output
        assert str(db) in r.output and "holds other files" in r.output
        assert _documents(db) == 1
    assert db.read_bytes() == before
