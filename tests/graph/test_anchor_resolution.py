"""Link resolution with anchors, on the real Obsidian help: an ambiguous name
prefers the note that has the anchored heading, and ``[[Note#Missing heading]]``
records why the heading was not found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config

HELP = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "markdown"
HELP = HELP / "obsidian-help-NO-LICENCE"

pytestmark = pytest.mark.corpus


def test_anchor_picks_the_candidate_that_has_it_and_a_missing_one_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    if not HELP.is_dir():
        pytest.skip("the shared corpus is not here")
    root = tmp_path / "help"
    for rel in (
        "en/Plugins/Canvas.md",
        "ja/プラグイン/Canvas.md",
        "en/Editing and formatting/Embed web pages.md",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HELP / rel, root / rel)
    (root / "en" / "mine.md").write_text(
        "# Mine\n\nSee [[Canvas#Add cards from web pages]] and [[Canvas#No such heading]].\n",
        encoding="utf-8",
    )
    with Cairn(Config(db_path=tmp_path / "i.db")) as cairn:
        cairn.index([root])
        links = [
            lk for lk in cairn.store.links_from() if lk.target == "Canvas" and lk.anchor is not None
        ]
        web = [lk for lk in links if lk.anchor == "Add cards from web pages"]
        assert len(web) == 2  # Embed web pages.md and mine.md
        for lk in web:
            assert lk.resolved_unit_id is not None and lk.unresolved_reason is None
            unit = cairn.store.hit_units([lk.resolved_unit_id])[lk.resolved_unit_id]
            assert unit.path == "en/Plugins/Canvas.md" and unit.title == "Add cards from web pages"
        (missing,) = [lk for lk in links if lk.anchor == "No such heading"]
        assert missing.resolved_document_id is not None  # still the note
        assert missing.unresolved_reason is not None
        assert "No such heading" in missing.unresolved_reason
