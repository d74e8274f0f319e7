"""``Cairn.memory.remember(timestamp=...)``: a memory of a past event carries the time
it happened (its file name and its ``timestamp``), and a timestamp that is not a date
is refused before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.memory.bundle import MemoryError_


def test_a_remembered_past_event_keeps_its_time(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        rec = c.memory.remember(
            bundle, "Caroline went to the LGBTQ support group.", timestamp="2023-05-08T13:56:00Z"
        )
        assert rec.timestamp == "2023-05-08T13:56:00Z"
        assert Path(rec.path).name.startswith("20230508_135600_fact_")
        text = (bundle / rec.path).read_text(encoding="utf-8")
        assert "timestamp: '2023-05-08T13:56:00Z'" in text or (
            "timestamp: 2023-05-08T13:56:00Z" in text
        ), text
        hits = c.memory.recall(bundle, "support group", record=False).hits
        assert [h.path for h in hits] == [rec.path]


def test_a_timestamp_that_is_not_a_date_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    with (
        Cairn(load_config(db=tmp_path / "i.db")) as c,
        pytest.raises(MemoryError_, match="not an ISO 8601"),
    ):
        c.memory.remember(bundle, "Something happened.", timestamp="last Saturday")
    active = bundle / "memories" / "active"
    assert not active.exists() or not list(active.iterdir())
