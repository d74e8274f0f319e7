"""``cairn index``: register folders and index them (calls :meth:`Cairn.index`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError, IndexInterrupted
from cairn.interfaces.cli._common import (
    DbOpt,
    JsonOpt,
    WaitOpt,
    emit_json,
    err,
    fail,
    mass_delete_option,
    out,
    plural,
)
from cairn.model import EmbedStep, Run
from cairn.model.serialize import to_data

if TYPE_CHECKING:
    from cairn.app import Cairn

QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress (bar, lines or --json events).")
]


def index(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Folders (or a single export file) to register and index. "
            "Without any, re-index every registered folder.",
            show_default=False,
        ),
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include",
            "-i",
            help="Only files matching this glob (repeatable); kept with the folders given.",
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            "-x",
            help="Skip files and folders matching this glob (repeatable); kept with the "
            "folders given.",
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Name every hidden file left out (not only their count)."
        ),
    ] = False,
    no_embed: Annotated[
        bool,
        typer.Option(
            "--no-embed",
            help="Skip embeddings: keyword search only until a later run embeds.",
        ),
    ] = False,
    wait: WaitOpt = False,
    allow_mass_delete: Annotated[
        bool, mass_delete_option(" (else the run stops first).")
    ] = False,
) -> None:
    """Index folders of notes; only what changed is parsed again.

    Hidden folders, .git, node_modules, .obsidian and .trash are skipped. Hidden files
    (names starting with '.', like .draft.md) are not indexed either: the summary counts
    those in a note format, --verbose names them (and --json lists them in "warnings").

    Files that cannot be read or parsed are listed with the reason; everything else is
    indexed. --include/--exclude need the folders they apply to. One writer at a time:
    a second run exits with a clear message (or waits, with --wait).

    Chat exports (ChatGPT, Claude, Gemini …; a .zip, its conversations.json, or a
    folder of them) give one document per conversation and one unit per message. A
    Claude message's thinking blocks (the model's reasoning before it answers) are
    left out: they are drafts the answer often corrects, not what was said; the
    answer's text, tool calls and attachments are indexed.
    """
    lock = {"wait": None if wait else 0.0, "allow_mass_delete": allow_mass_delete}
    try:
        with common.open_cairn(db, create=True) as cairn:
            run = _run(
                cairn, paths, include or [], exclude or [], quiet, no_embed, lock, as_json
            )
            report = run.embedding
    except CairnError as exc:
        raise fail(exc, as_json) from None
    except KeyboardInterrupt as exc:  # before the embedding step, which reports its own
        if as_json:
            emit_json({"error": f"interrupted: {interrupted_line(exc)}",
                       "type": "KeyboardInterrupt"})
        else:
            err.print(f"interrupted: {interrupted_line(exc)}; run `cairn index` again to finish")
        raise typer.Exit(INTERRUPTED) from None
    if as_json:
        # the pass's notices are already in the run's warnings (severity info)
        embedding = to_data(report)
        if isinstance(embedding, dict):
            embedding.pop("notices", None)
        emit_json({**to_data(run), "embedding": embedding})
    else:
        _print_run(run, report, verbose)
    if report is not None and report.interrupted:  # Ctrl-C stopped the embedding step
        raise typer.Exit(INTERRUPTED)


def interrupted_line(exc: KeyboardInterrupt) -> str:
    """What an index run stopped by Ctrl-C kept: ``0 of 809 files were committed``,
    ``600 of 809 files stay indexed and searchable``; nothing more when the run was
    stopped before or after storing files (it says no count then)."""
    if not isinstance(exc, IndexInterrupted):
        return "the run stopped before it finished"
    if exc.kept == 0:
        return f"0 of {plural(exc.total, 'file')} were committed"
    verb = "stays" if exc.kept == 1 else "stay"
    return f"{exc.kept} of {plural(exc.total, 'file')} {verb} indexed and searchable"


INTERRUPTED = 130
"""Exit status after Ctrl-C stopped the embedding step (128 + SIGINT, as shells do)."""


def embed(
    db: DbOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    wait: WaitOpt = False,
    train_static: Annotated[
        bool,
        typer.Option(
            "--train-static",
            help="The fast profile: train a static model on a sample of this index's "
            "chunks (the MiniLM embeds the sample, ~150 chunks/s), save it beside the "
            "index (<index>.models/fast) and, with \\[embed] provider = \"fast\", embed "
            "everything with it (thousands of chunks/s).",
        ),
    ] = False,
    sample: Annotated[
        int,
        typer.Option(
            "--sample",
            help="With --train-static: chunks to train on (more: better model, slower).",
        ),
    ] = 3000,  # cairn.ingest.static_training.DEFAULT_SAMPLE (not imported: --help stays fast)
) -> None:
    """Finish embedding what an earlier run left without vectors.

    Resumes what an interrupted (Ctrl-C), killed or --no-embed run left, without
    looking at the files again.

    With --train-static, first train the fast profile's own model on this index (see
    docs/guides/semantic.md, "The fast profile").

    Only chunks without a vector in the configured model's space are embedded; vectors
    already stored are kept. Vectors are committed every few seconds, so Ctrl-C keeps
    the finished batches (exit status 130) and a later `cairn embed` or `cairn index`
    goes on from there. Meanwhile every note is found by keywords, and semantic and
    hybrid searches rank by the vectors that exist and say how many units still wait.
    """
    if train_static:
        from cairn.interfaces.cli.train_static import run_training

        run_training(db, sample, as_json, quiet, None if wait else 0.0, embed_line)
        return
    try:
        with common.open_cairn(db, create=False) as cairn:
            step = _embed(cairn, quiet, None if wait else 0.0, as_json)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(step)
    else:
        if step.space:
            out.print(escape(embed_line(step)))
        for n in step.notices:
            out.print(f"  [cyan]note[/cyan] {escape(n)}")
    if step.interrupted:
        raise typer.Exit(INTERRUPTED)


def _embed(cairn: Cairn, quiet: bool, wait: float | None, as_json: bool = False) -> EmbedStep:
    def on_wait(message: str) -> None:
        err.print(f"[cyan]note[/cyan] {escape(message)}")

    if quiet:
        return cairn.embedding.run(wait=wait, on_wait=on_wait)
    if as_json or not err.is_terminal:  # a log or a pipe: a line every few seconds
        from cairn.interfaces.cli._progress import PlainProgress

        lines = PlainProgress(as_json=as_json)
        return cairn.embedding.run(progress=lines, wait=wait, on_wait=on_wait)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from cairn.interfaces.cli._bars import Bars, EtaColumn

    with Progress(
        TextColumn("[bold]{task.fields[what]}"),
        BarColumn(),
        MofNCompleteColumn(),
        EtaColumn(),
        console=err,
        transient=True,
    ) as bar:
        bars = Bars(bar, labels={"chunk": "chunking", "embed": "embedding"})
        bars.embed_task = bars.add(what="embedding")
        return cairn.embedding.run(progress=bars, wait=wait, on_wait=on_wait)


def _run(
    cairn: Cairn,
    paths: list[Path] | None,
    include: list[str],
    exclude: list[str],
    quiet: bool,
    no_embed: bool,
    lock: dict[str, Any],
    as_json: bool = False,
) -> Run:
    def on_wait(message: str) -> None:
        err.print(f"[cyan]note[/cyan] {escape(message)}")

    if quiet:
        return cairn.index(
            paths, include=include, exclude=exclude, embed=not no_embed, on_wait=on_wait,
            **lock,
        )
    if as_json or not err.is_terminal:  # a log or a pipe: a line every few seconds
        from cairn.interfaces.cli._progress import PlainProgress

        lines = PlainProgress(as_json=as_json)
        return cairn.index(
            paths,
            include=include,
            exclude=exclude,
            progress=lines.files,
            embed=not no_embed,
            embed_progress=lines,
            on_wait=on_wait,
            **lock,
        )
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from cairn.interfaces.cli._bars import Bars, EtaColumn

    with Progress(
        TextColumn("[bold]{task.fields[what]}"),
        BarColumn(),
        MofNCompleteColumn(),
        EtaColumn(),
        TextColumn("{task.fields[file]}", style="dim"),
        console=err,
        transient=True,
    ) as bar:
        bars = Bars(bar, labels={"chunk": "chunking", "embed": "embedding"})
        task = bars.add(what="indexing", file="")
        bars.embed_task = bars.add(what="embedding", file="", visible=False)

        def progress(done: int, total: int, rel: str) -> None:
            bars.move(task, done, total, file=rel[-50:])

        return cairn.index(
            paths,
            include=include,
            exclude=exclude,
            progress=progress,
            embed=not no_embed,
            embed_progress=bars,
            on_wait=on_wait,
            **lock,
        )


class EmbedFigures(Protocol):
    """What :func:`embed_line` reads of an embedding report."""

    @property
    def chunks_added(self) -> int: ...
    @property
    def cached(self) -> int: ...
    @property
    def embedded(self) -> int: ...
    @property
    def seconds(self) -> float: ...


def embed_line(e: EmbedFigures) -> str:
    """One line on the embedding pass: ``11 new chunks: 10 from cache, 1 embedded in
    0.3 s`` (``embedded`` counts distinct texts sent to the model), with the model's
    rate when it embedded much, and what still waits after an interrupted pass."""
    line = (
        f"{plural(e.chunks_added, 'new chunk')}: {e.cached} from cache, "
        f"{e.embedded} embedded in {e.seconds:.1f} s"
    )
    if e.embedded >= 100 and e.seconds > 0:
        line += f" ({e.embedded / e.seconds:.0f} texts/s)"
    if getattr(e, "interrupted", False):  # an EmbedStep says; other figures may not
        line += f"; interrupted, {getattr(e, 'pending', 0)} chunks still waiting"
    return line


def _print_run(run: Run, report: EmbedFigures | None, verbose: bool = False) -> None:
    graph_s = run.graph.seconds if run.graph is not None else 0.0
    embed_s = report.seconds if report is not None else 0.0
    files_s = max(run.seconds - graph_s - embed_s, 0.0)
    out.print(
        f"[bold]{run.seen}[/bold] {'file' if run.seen == 1 else 'files'}: "
        f"[green]{run.added} added[/green], "
        f"{run.changed} changed, {run.unchanged} unchanged, {run.removed} removed, "
        f"[red]{run.failed} failed[/red], {run.skipped} skipped "
        f"in {files_s:.2f} s"
    )
    for f in run.failures:
        where = f"{f.path}:{f.line}" if f.line else f.path
        out.print(f"  [red]failed[/red] {escape(where)}: {escape(f.reason)}")
    if report is not None and (
        report.chunks_added or report.embedded or getattr(report, "interrupted", False)
    ):
        out.print(f"  {escape(embed_line(report))}")
    for w in run.warnings:
        if w.severity == "info" and not w.path:
            out.print(f"  [cyan]note[/cyan] {escape(w.message)}")
    skipped = [w for w in run.warnings if w.severity == "info" and w.path and _is_skip(w.message)]
    for w in skipped[:20]:
        out.print(f"  [cyan]skipped[/cyan] {escape(w.path)}: {escape(w.message)}")
    if len(skipped) > 20:
        out.print(f"  … and {len(skipped) - 20} more skipped files (cairn index --json)")
    # an export read again: how much of it was recognised unchanged
    kept = [w for w in run.warnings
            if w.severity == "info" and w.path and "kept as indexed" in w.message]
    for w in kept[:20]:
        out.print(f"  [cyan]note[/cyan] {escape(w.path)}: {escape(w.message)}")
    if len(kept) > 20:
        out.print(f"  … and {len(kept) - 20} more exports read again (cairn index --json)")
    hidden = [w.path for w in run.warnings if w.message.startswith("hidden file (")]
    if hidden:
        out.print(
            f"  [cyan]note[/cyan] {plural(len(hidden), 'hidden file')} (names starting with"
            " '.') not indexed" + ("" if verbose else "; --verbose names them")
        )
        for path in hidden if verbose else ():
            out.print(f"  [cyan]hidden[/cyan] {escape(path)}")
    warns = [w for w in run.warnings if w.severity == "warning"]
    for w in warns[:20]:
        where = f"{w.path}:{w.line}" if w.line else w.path
        head = f"{escape(where)}: " if where else ""  # a root's own warning has no path
        out.print(f"  [yellow]warning[/yellow] {head}{escape(w.message)}")
    if len(warns) > 20:
        out.print(f"  … and {len(warns) - 20} more warnings (cairn stats --json)")
    if run.graph is not None or report is not None:
        out.print(
            f"  total {run.seconds:.2f} s: files {files_s:.2f} s, graph {graph_s:.2f} s, "
            f"embedding {embed_s:.2f} s"
        )


def _is_skip(message: str) -> bool:
    """Whether an info diagnostic says its file was skipped (vanished, not a format)."""
    return message.endswith("skipped") or "vanished" in message


def register(app: typer.Typer) -> None:
    """Add ``index`` and ``embed`` to ``app``."""
    app.command()(index)
    app.command()(embed)
