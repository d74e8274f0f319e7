"""Ctrl-C during an embedding pass keeps every vector the embedder made before it, also
those not yet committed (vectors are committed in groups of calls): only the call the
signal interrupted is dropped, and the next pass embeds only the rest."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.embed.base import Embedder


class StopsAfter:
    """Wraps an embedder: after ``calls`` calls, raises ``KeyboardInterrupt`` as Ctrl-C
    arriving during a model call would."""

    def __init__(self, inner: Embedder, calls: int | None) -> None:
        self.inner, self.calls, self.texts = inner, calls, 0
        self.name, self.dim, self.fingerprint = inner.name, inner.dim, inner.fingerprint

    def embed(self, texts: Sequence[str]) -> Any:
        if self.calls is not None:
            if self.calls == 0:
                raise KeyboardInterrupt
            self.calls -= 1
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_ctrl_c_keeps_the_vectors_of_the_calls_before_it(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    from cairn.embed.static import StaticEmbedder

    root = tmp_path / "notes"
    root.mkdir()
    for i in range(60):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nAbout topic number {i}.\n\n"
                                       f"## More {i}\n\nObservation {i * 7}.\n",
                                       encoding="utf-8")
    static = StaticEmbedder()
    stopping = StopsAfter(static, calls=5)
    config = Config(db_path=tmp_path / "i.db", embed={"provider": "static", "batch_size": 4})
    with Cairn(config, embedder=stopping) as cairn:
        run = cairn.index([root])
        step = run.embedding
        assert step is not None and step.interrupted
        counts = cairn.store.vectors.counts()
        # five calls of four texts: fewer than one commit's worth, all kept
        assert counts["vectors"] == stopping.texts == 5 * 4
        assert step.embedded == 20 and step.pending == counts["chunks"] - 20 > 0
        resume = StopsAfter(static, calls=None)
        cairn.semantic._embedder = resume  # the same space, counted
        again = cairn.embedding.run()
        assert not again.interrupted and again.pending == 0
        assert resume.texts == counts["chunks"] - 20
