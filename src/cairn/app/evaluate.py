"""``Cairn.evaluate``: retrieval quality of this configuration on a BEIR data set."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.app.parts import Parts

if TYPE_CHECKING:
    from cairn.evaluation import EvalReport


class EvaluateMixin(Parts):
    """``evaluate``: this index's model and settings measured on a BEIR folder."""

    def evaluate(
        self,
        folder: str | os.PathLike[str],
        *,
        modes: Sequence[str] = ("keyword", "semantic", "hybrid"),
        split: str = "test",
    ) -> EvalReport:
        """nDCG@10, Recall@100 and MRR@10 per mode on a BEIR-layout data set, indexed
        into a throwaway store (see :mod:`cairn.evaluation`), with this index's model
        and search, fusion and chunking settings.

        Raises:
            CairnError: the folder is not a BEIR data set.
        """
        from cairn.evaluation import evaluate
        from cairn.ingest.chunking import ChunkConfig

        return evaluate(
            Path(folder),
            self.semantic.embedder,
            modes=modes,
            split=split,
            search_config=self.config.search,
            fusion=self.semantic.config.fusion,
            chunk_config=ChunkConfig.from_mapping(self.config.chunking),
        )

