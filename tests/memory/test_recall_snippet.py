"""A memory's recall snippet says its text once: ``remember`` writes the first line as
the OKF ``description``, and the parser no longer puts a description before a body
that already opens with it (the snippet read "X. X.")."""

from __future__ import annotations

from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config
from cairn.formats.okf import parse as parse_okf

TEXT = "The staging cluster deploys on Fridays after the standup. Rollbacks use helm."
LONG = "Backups " + "run nightly and copy the database offsite " * 6 + "before dawn."


def test_recall_snippet_does_not_repeat(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.memory.remember(bundle, TEXT, tags=["deploy"])
        c.memory.remember(bundle, LONG, tags=["backup"])  # description cut with "…"
        hits = c.memory.recall(bundle, "staging cluster", record=False).hits
        assert hits and hits[0].snippet.count("Rollbacks use helm") == 1, hits[0].snippet
        hits = c.memory.recall(bundle, "database offsite", record=False).hits
        assert hits and hits[0].snippet.count("Backups run nightly") == 1, hits[0].snippet


def test_a_description_that_says_more_is_still_indexed() -> None:
    text = (
        "---\ntitle: Revenue\ntype: Metric\ndescription: Net revenue per store and day.\n"
        "---\n\nComputed from the ledger.\n"
    )
    doc = parse_okf(text, "metrics/revenue.md")
    assert doc.units[0].body.startswith("Net revenue per store and day.\n\nComputed")
    same = text.replace("Computed from the ledger.", "Net revenue per store and day. More.")
    doc = parse_okf(same, "metrics/revenue.md")
    assert doc.units[0].body == "Net revenue per store and day. More."
