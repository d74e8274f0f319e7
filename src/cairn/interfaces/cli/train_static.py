"""``cairn embed --train-static``: the fast profile's own model (calls
:meth:`cairn.ingest.static_training.StaticTrainer.train`, then prints what it did)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import emit_json, err, fail, out
from cairn.interfaces.cli._progress import PlainProgress

if TYPE_CHECKING:
    from cairn.model import EmbedStep

INTERRUPTED = 130


def run_training(
    db: Path | None,
    sample: int,
    as_json: bool,
    quiet: bool,
    wait: float | None,
    embed_line: Callable[[EmbedStep], str],
) -> None:
    """Train, report (a summary line, the embedding step's ``embed_line``, or the
    :class:`StaticTraining` as JSON), and exit 2 on a clear error, 130 after Ctrl-C
    (teacher vectors already committed are kept; the model folder is only replaced by a
    finished training)."""

    def on_wait(message: str) -> None:
        err.print(f"[cyan]note[/cyan] {escape(message)}")

    lines = None if quiet else PlainProgress(as_json=as_json)
    try:
        with common.open_cairn(db, create=False) as cairn:
            res = cairn.training.train(
                sample,
                progress=None if lines is None else lines.training,
                embed_progress=lines,
                wait=wait,
                on_wait=on_wait,
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    except KeyboardInterrupt:
        err.print("[cyan]note[/cyan] interrupted: the model was not replaced")
        raise typer.Exit(INTERRUPTED) from None
    if as_json:
        emit_json(res)
        return
    out.print(
        escape(
            f"trained {res.folder}: {res.sample} of {res.chunks} chunks "
            f"({res.teacher_embedded} embedded by the teacher in {res.teacher_seconds:.1f} s), "
            f"{res.epochs} epochs in {res.train_seconds:.1f} s"
        )
    )
    if res.embedding is not None and res.embedding.space:
        out.print(escape(embed_line(res.embedding)))
    for n in res.notices:
        out.print(f"  [cyan]note[/cyan] {escape(n)}")
