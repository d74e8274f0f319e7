"""``cairn watch``: index, then follow edits live (calls
:func:`cairn.serving.watch.watch`, which hands each batch to
:meth:`cairn.app.Cairn.index_paths`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import (
    DbOpt,
    JsonOpt,
    WaitOpt,
    err,
    fail,
    mass_delete_option,
    out,
    plural,
)
from cairn.interfaces.cli._plain import json_text
from cairn.model.serialize import to_data


def emit_json(data: object) -> None:
    """One JSON document on one line (a stream of them: one per event)."""
    sys.stdout.write(json_text(data, indent=None) + "\n")
    sys.stdout.flush()


def watch(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Folders to register and watch. Without any, every registered folder.",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress while catching up (line or --json events)."
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="One line per batch indexed.")
    ] = False,
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="Skip embeddings: keyword search only.")
    ] = False,
    poll: Annotated[
        bool,
        typer.Option(
            "--poll",
            help="Poll the folders instead of using file system events (network and "
            "FUSE drives); also \\[watch] poll.",
        ),
    ] = False,
    wait: WaitOpt = False,
    allow_mass_delete: Annotated[bool, mass_delete_option()] = False,
) -> None:
    """Index the folders, then follow their changes (Ctrl-C stops).

    The index is kept current as files change.

    Events are hints: each batch is re-read from disk, so the index always equals what
    `cairn index` would build. Editor temporary and swap files are ignored. With --json
    one JSON document per batch is printed (one per line).
    """
    import dataclasses

    from cairn.serving import watch as watcher

    def on_wait(message: str) -> None:
        err.print(f"[cyan]note[/cyan] {escape(message)}")

    def on_ready(run: object) -> None:
        if as_json:
            emit_json({"event": "ready", "run": to_data(run)})
        elif not quiet:
            err.print("[dim]watching for changes (Ctrl-C stops)[/dim]")

    def on_batch(batch: watcher.WatchBatch) -> None:
        if as_json:
            emit_json({"event": "batch", **to_data(batch)})
            return
        if batch.error:
            err.print(f"[red]error:[/red] {escape(batch.error)}")
            return
        run = batch.run
        if run is None:
            return
        if verbose:
            out.print(
                f"{plural(len(batch.paths), 'file')}: {run.added} added, {run.changed} changed, "
                f"{run.removed} removed, {run.failed} failed in {batch.seconds:.2f} s"
            )
        for f in run.failures:
            where = f"{f.path}:{f.line}" if f.line else f.path
            err.print(f"  [red]failed[/red] {escape(where)}: {escape(f.reason)}")

    from cairn.interfaces.cli._progress import PlainProgress, eta_text
    from cairn.model.eta import EtaEstimator

    # the catch-up run: a line redrawn in place on a terminal; in a log or a pipe the
    # index run's plain lines; with --json its progress events (standard error)
    lines = None if quiet or (err.is_terminal and not as_json) else PlainProgress(
        as_json=as_json
    )
    eta = EtaEstimator()

    def progress(done: int, total: int, rel: str) -> None:
        if lines is not None:
            lines.files(done, total, rel)
            return
        if quiet:
            return
        now = time.monotonic()
        eta.update(now, done, total)
        if done % 50 == 0 or done == total:
            err.print(f"catching up: {done}/{total} files, {eta_text(eta.estimate(now))}",
                      end="\r")

    import signal
    import threading

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops as Ctrl-C does: between embedder calls

    main = threading.current_thread() is threading.main_thread()
    old_term = signal.signal(signal.SIGTERM, interrupt) if main else None
    try:
        from cairn.serving.warm import advertise

        with common.open_cairn(db, create=True) as cairn, advertise(
            cairn, "watch", warm_up=not no_embed
        ):
            settings = watcher.WatchSettings.from_mapping(cairn.config.watch)
            if poll:
                settings = dataclasses.replace(settings, poll=True)
            watcher.watch(
                cairn,
                paths,
                settings=settings,
                on_batch=on_batch,
                on_ready=on_ready,
                progress=progress,
                wait=None if wait else 0.0,
                on_wait=on_wait,
                embed=not no_embed,
                allow_mass_delete=allow_mass_delete,
            )
    except KeyboardInterrupt:
        if not as_json:
            err.print("stopped")
        return
    except CairnError as exc:
        raise fail(exc, as_json) from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, old_term)


def register(app: typer.Typer) -> None:
    """Add ``watch`` to ``app``."""
    app.command()(watch)
