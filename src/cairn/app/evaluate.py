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
        keep: bool = False,
    ) -> EvalReport:
        """nDCG@10, Recall@100 and MRR@10 per mode on a BEIR-layout data set, indexed
        into a throwaway store (see :mod:`cairn.evaluation`), with this index's model
        and search, fusion and chunking settings.

        Args:
            keep: index the data set into this Cairn's own index instead and keep it
                there (``cairn eval --db FILE``), so the next evaluation reuses its
                documents and vectors. The index must be empty or hold this data set
                from an earlier evaluation.

        Raises:
            CairnError: the folder is not a BEIR data set; with ``keep``, this index
                holds other files (an index of notes is never written over).
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
            store=self.store if keep else None,
            store_name=str(self.config.db_path),
        )

