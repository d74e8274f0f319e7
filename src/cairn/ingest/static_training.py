"""The fast profile's own model: a static model trained on this index.

``cairn embed --train-static`` (:meth:`StaticTrainer.train`) does what
model2vec's tokenlearn does, on the user's own notes: it embeds a random sample of the
index's chunks with the teacher (the int8 MiniLM, about 150 chunks/s; vectors already
stored in the teacher's space are reused, new ones are kept for the next training),
trains the static token table on that sample, starting from the shipped
``minilm-l6-static`` (:func:`cairn.embed.train.fit_static`: chunk texts only, never a
query), and writes the model folder :func:`cairn.embed.profile.fast_model_folder`
beside the index. With
``[embed] provider = "fast"`` (or ``CAIRN_EMBED=fast``) that folder is the index's
model — the shipped static model until it exists — and the index is then embedded with
it at thousands of chunks a second. ``bench/fast_profile.py --train`` measures it.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cairn.embed.profile import FAST, fast_model_folder
from cairn.errors import CairnError

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.embed.base import Embedder
    from cairn.ingest.embed_step import EmbeddingStep, Writing
    from cairn.ingest.embedding import EmbedProgress
    from cairn.model import EmbedStep
    from cairn.model.reliability import Wait
    from cairn.store import Store

DEFAULT_SAMPLE = 3000
"""Chunks the teacher embeds for training by default (``bench/fast_profile.py`` measures
other sizes)."""
MIN_SAMPLE = 20
TEACHER_BATCH = 256
"""Teacher vectors committed together (Ctrl-C keeps the finished ones)."""

TrainProgress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: ``teacher`` (chunks embedded by the teacher) or
``train`` (epochs)."""


class TrainingError(CairnError):
    """The fast profile's model cannot be trained here (the message says why)."""


@dataclass(frozen=True, slots=True)
class StaticTraining:
    """What ``cairn embed --train-static`` did.

    Attributes:
        folder: the model folder written (``<index>.models/fast``).
        sample: training chunks (distinct texts) drawn from ``chunks`` live ones.
        teacher_embedded: of those, embedded by the teacher now (the rest were stored).
        teacher_seconds / train_seconds: wall time of each phase.
        epochs: training epochs run; ``val_loss``: held-out squared error after each.
        texts / tokens: what the training read.
        active: whether the index uses this model (``[embed] provider = "fast"``); then
            ``embedding`` is the embedding step that followed.
        embedding: the :class:`cairn.model.EmbedStep` with the new model, or ``None``.
        notices: what to do next (e.g. how to switch the index to the model).
    """

    folder: str
    chunks: int
    sample: int
    teacher_embedded: int
    teacher_seconds: float
    train_seconds: float
    epochs: int
    val_loss: tuple[float, ...]
    texts: int
    tokens: int
    active: bool
    embedding: EmbedStep | None
    notices: tuple[str, ...] = ()


class StaticTrainer:
    """``cairn embed --train-static``: the fast profile's model, trained on this index.

    Args:
        store: the index.
        config: the configuration (``[embed]``, where the index lives).
        writing: holds the index's writer lock (``writing(wait, on_wait)``).
        embedding: the embedding step (its chunking settings, and the step that
            follows a training the index uses).
        use_embedder: makes search and indexing use the newly trained model.
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        *,
        writing: Writing,
        embedding: EmbeddingStep,
        use_embedder: Callable[[Embedder], None],
    ) -> None:
        self.store = store
        self.config = config
        self.writing = writing
        self.embedding = embedding
        self._use_embedder = use_embedder

    def train(
        self,
        sample: int = DEFAULT_SAMPLE,
        *,
        epochs: int = 12,
        dims: int = 256,
        seed: int = 0,
        progress: TrainProgress | None = None,
        embed_progress: EmbedProgress | None = None,
        wait: Wait = "config",
        on_wait: Callable[[str], None] | None = None,
    ) -> StaticTraining:
        """Train the fast profile's static model on a sample of this index's chunks
        (see the module docstring) and, when ``[embed] provider`` is ``fast``, embed
        the index with it.

        Args:
            sample: chunks (distinct texts) to train on, drawn at random with ``seed``
                (all of them when the index has fewer).
            epochs: at most this many training passes (early stop on 5% held out).
            dims: the model's dimensions (PCA of the teacher's 384).
            progress: ``progress(phase, done, total)`` (see :data:`TrainProgress`).
            embed_progress: the following embedding step's progress.
            wait / on_wait: for the writer lock.

        Returns:
            A :class:`StaticTraining`.

        Raises:
            TrainingError: fewer than 20 chunks, a bad ``sample``/``dims``, or the
                teacher model is not available.
            cairn.store.lock.IndexBusy: another process is writing this index.
        """
        import numpy as np

        from cairn.embed.onnx import OnnxEmbedder
        from cairn.embed.static import StaticEmbedder
        from cairn.embed.train import TrainConfig, fit_static
        from cairn.errors import ProviderUnavailable
        from cairn.ingest.embedding import embed_pass, unit_prefix

        if sample < MIN_SAMPLE:
            raise TrainingError(f"--sample must be at least {MIN_SAMPLE} chunks, not {sample}")
        if not 8 <= dims <= 384:
            raise TrainingError(f"dims must be between 8 and 384, not {dims}")
        try:
            teacher = OnnxEmbedder()
            base = StaticEmbedder()
        except ProviderUnavailable as exc:
            raise TrainingError(f"cannot train the fast profile's model: {exc}") from exc
        store = self.store
        vs = store.vectors
        t0 = time.perf_counter()
        with self.writing(wait, on_wait):
            chunking = self.embedding.settings().chunk_config
            embed_pass(store, None, config=chunking)  # chunk what is unchunked
            texts: dict[str, str] = {}
            for chunk, unit in vs.chunks_missing_vectors("cairn-fast-profile-none"):
                if chunk.hash not in texts:
                    body = unit.body[chunk.window_start : chunk.window_end]
                    texts[chunk.hash] = unit_prefix(unit) + body
            if len(texts) < MIN_SAMPLE:
                raise TrainingError(
                    f"this index has {len(texts)} chunks; the fast profile's model needs "
                    f"at least {MIN_SAMPLE} to train on (index more notes first)"
                )
            hashes = sorted(texts)
            picked = random.Random(seed).sample(hashes, min(sample, len(hashes)))
            space = teacher.fingerprint
            have = vs.has_vectors(space, picked)
            todo = [h for h in picked if h not in have]
            if todo:
                vs.ensure_space(space, teacher.name, teacher.dim)
            for i in range(0, len(todo), TEACHER_BATCH):
                part = todo[i : i + TEACHER_BATCH]
                vecs = teacher.embed([texts[h] for h in part])
                with store.transaction():  # kept: a later training reuses them
                    vs.put_vectors(space, zip(part, vecs, strict=True))
                if progress:
                    progress("teacher", i + len(part), len(todo))
        teacher_s = time.perf_counter() - t0
        targets = []
        for h in picked:
            v = vs.vector(space, h)
            assert v is not None  # stored above
            targets.append(np.asarray(v, dtype=np.float32))
        folder = fast_model_folder(self.config)
        tmp = folder.with_name(f".{folder.name}.tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)

        def on_epoch(epoch: int, _train: float, _val: float) -> None:
            if progress:
                progress("train", epoch, epochs)

        t1 = time.perf_counter()
        try:
            fit = fit_static(
                [texts[h] for h in picked],
                np.stack(targets),
                base,
                tmp,
                dims=dims,
                config=TrainConfig(epochs=epochs, seed=seed),
                progress=on_epoch,
                meta={"teacher": teacher.name, "sample": len(picked), "seed": seed},
            )
            fusion = base.path / "fusion.json"
            if fusion.is_file():
                shutil.copyfile(fusion, tmp / "fusion.json")
            old = folder.with_name(f".{folder.name}.old{os.getpid()}")
            if folder.exists():
                folder.rename(old)
            tmp.rename(folder)
            shutil.rmtree(old, ignore_errors=True)
        except ValueError as exc:
            raise TrainingError(f"cannot train on this index: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        train_s = time.perf_counter() - t1
        active = self.config.embed.get("provider") == FAST and not self.config.embed.get("model")
        embedding = None
        notices: tuple[str, ...] = ()
        if active:
            self._use_embedder(StaticEmbedder(folder=folder))
            embedding = self.embedding.run(progress=embed_progress, wait=wait, on_wait=on_wait)
        else:
            notices = (
                f'the model is in {folder}; to use it set [embed] provider = "fast" in '
                "cairn.toml (or CAIRN_EMBED=fast), then run `cairn embed`",
            )
        return StaticTraining(
            folder=str(folder),
            chunks=len(texts),
            sample=len(picked),
            teacher_embedded=len(todo),
            teacher_seconds=round(teacher_s, 3),
            train_seconds=round(train_s, 3),
            epochs=fit.epochs,
            val_loss=tuple(round(v, 7) for v in fit.val_loss),
            texts=fit.texts,
            tokens=fit.tokens,
            active=active,
            embedding=embedding,
            notices=notices,
        )
