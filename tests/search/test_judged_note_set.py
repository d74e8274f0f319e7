"""The judged note set (``bench/notes``) stays well-formed: every query is judged in its
own split, every judged file exists in ``../shared/corpus`` and every ``path#Heading``
anchor names a heading of that file. Others tune on the dev split and score on the test
split, so a dangling id or a mistyped anchor would silently score as a miss."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SET = BENCH / "notes"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def _notes_eval() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notes_eval", BENCH / "notes_eval.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("notes_eval", mod)
    spec.loader.exec_module(mod)
    return mod


def _plain(title: str) -> str:
    """A heading's text as an index shows it: link targets and inline markup dropped."""
    title = re.sub(r"\[\[(?:[^\]]*\]\[)?([^\]]*)\]\]", r"\1", title)  # Org links
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # Markdown links
    return re.sub(r"[`=~*]", "", title)


def _queries() -> list[dict[str, str]]:
    lines = (SET / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _qrels(split: str) -> list[tuple[str, str, int]]:
    with (SET / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    assert rows[0] == ["query-id", "corpus-id", "score"]
    return [(q, d, int(g)) for q, d, g in rows[1:]]


def test_every_query_is_judged_in_its_own_split_only() -> None:
    ne = _notes_eval()
    queries = _queries()
    ids = [q["_id"] for q in queries]
    assert len(ids) == len(set(ids))
    split_of = {q["_id"]: q["split"] for q in queries}
    for q in queries:
        assert q["kind"] in ne.KINDS, q
        assert q["split"] in ("dev", "test"), q
        assert q["text"].strip(), q
    for split in ("dev", "test"):
        rows = _qrels(split)
        assert all(split_of.get(q) == split for q, _, _ in rows), split
        assert all(g in (1, 2) for _, _, g in rows), split
        judged = {q for q, _, _ in rows}
        assert judged == {i for i, s in split_of.items() if s == split}, split
        pairs = [(q, d) for q, d, _ in rows]
        assert len(pairs) == len(set(pairs)), split


def test_query_id_ranges_select_by_number() -> None:
    ne = _notes_eval()
    assert ne.in_ids("n70", "n65-n118")
    assert ne.in_ids("n118", "n65-n118")
    assert not ne.in_ids("n64", "n65-n118")
    assert ne.in_ids("n70", "n01-n64,n70")
    assert not ne.in_ids("n71", "n01-n64,n70")
    with pytest.raises(ValueError, match="not a query id"):
        ne.in_ids("n70", "n65-last")


@pytest.mark.corpus
def test_every_judged_file_and_heading_exists_in_the_corpus() -> None:
    heading = re.compile(r"^(?:\*+|#{1,6})\s+(.*)$")
    missing: list[str] = []
    for split in ("dev", "test"):
        for qid, doc, _ in _qrels(split):
            path, _, anchor = doc.partition("#")
            f = CORPUS / path
            if not f.is_file():
                missing.append(f"{qid}: no file {path}")
                continue
            if anchor:
                text = f.read_text(encoding="utf-8", errors="replace")
                titles = [_plain(m.group(1)) for m in map(heading.match, text.splitlines()) if m]
                if not any(anchor in t for t in titles):
                    missing.append(f"{qid}: no heading {anchor!r} in {path}")
    assert not missing, "\n".join(missing)
