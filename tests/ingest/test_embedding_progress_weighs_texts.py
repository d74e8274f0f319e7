"""The embedding pass tells a progress callback that wants it (``WeighsWork``) the
characters embedded, before each count: texts go shortest first, so a count alone would
promise too early an end."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config


class Recorder:
    """A ``progress`` callback that also takes the work: every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, float, str]] = []

    def __call__(self, done: int, total: int, phase: str) -> None:
        self.calls.append(("count", done, total, phase))

    def work(self, done: float, total: float, phase: str) -> None:
        self.calls.append(("work", done, total, phase))


def test_embed_progress_starts_at_zero_and_weighs_texts_by_characters(
    tmp_path: Path,
) -> None:
    pytest.importorskip("model2vec")
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(80):  # bodies from a few words to a few hundred
        body = " ".join(f"word{j}" for j in range(3 + i * 4))
        (root / f"n{i}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    config = Config(db_path=tmp_path / "i.db", embed={"provider": "static", "batch_size": 4})
    rec = Recorder()
    with Cairn(config) as cairn:
        run = cairn.index([root], embed_progress=rec)
    assert run.embedding is not None and run.embedding.embedded > 64
    embed = [c for c in rec.calls if c[3] == "embed"]
    counts = [c for c in embed if c[0] == "count"]
    works = [c for c in embed if c[0] == "work"]
    assert len(works) == len(counts) >= 3  # one commit of 64 texts at least, and more
    assert [c[0] for c in embed] == ["work", "count"] * len(counts)  # work first
    assert counts[0][1] == 0 and works[0][1] == 0  # the phase starts before the model
    assert counts[-1][1] == counts[-1][2] == run.embedding.embedded
    assert works[-1][1] == works[-1][2] > 10 * counts[-1][2]  # characters, not texts
    # shortest first: mid-way, less of the characters are done than of the texts
    _, cdone, ctotal, _ = counts[1]
    _, wdone, wtotal, _ = works[1]
    assert wdone / wtotal < 0.8 * cdone / ctotal
