"""``cairn stats``, ``roots``, ``validate`` and ``check``: the state of the index.

Each calls one method of :class:`cairn.app.Cairn` (``stats``, ``roots`` /
``remove_root``, ``validate``, ``check``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, fail, out, plural
from cairn.interfaces.cli._plain import quote_path
from cairn.model.serialize import to_data


def stats(db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Counts per format, the last run, and files that failed.

    Also how many units are not embedded yet when an embedding step did not finish
    (Ctrl-C, a crash, --no-embed, another model configured): `cairn embed` finishes it.
    """
    from cairn.serving.daemon import running

    try:
        with common.open_cairn(db) as cairn:
            st = cairn.stats()
            daemons = running(cairn.config)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(st))
        return
    out.print(f"index: {escape(st.index)} (schema v{st.schema_version})")
    out.print(
        f"{st.roots} roots, {st.documents} documents, {st.units} units, "
        f"{st.links} links ({st.links_unresolved} unresolved)"
    )
    table = Table("format", "documents", "units", box=None)
    for fmt, c in st.formats.items():
        table.add_row(fmt, str(c.documents), str(c.units))
    out.print(table)
    run = st.last_run
    if run and run.finished is None:
        # A run records itself as started before its first file, so one killed or
        # interrupted (or still going) has no finish and no counts worth printing.
        out.print(f"last run started {run.started} and did not finish (stopped, or still running)")
        for stop in run.failures:
            out.print(f"  {escape(stop.reason)}")
    elif run:
        out.print(
            f"last run {run.finished}: {run.seen} seen, {run.added} added, "
            f"{run.changed} changed, {run.removed} removed, {run.failed} failed"
        )
    if st.units_waiting:  # an embedding step interrupted, killed or skipped
        out.print(
            f"[yellow]{plural(st.units_waiting, 'unit')} not embedded yet[/yellow] (found by "
            "keywords only until then): run `cairn embed` to finish"
        )
    for f in st.failed_files:
        # named as the index run names it: a partial file is indexed, less some parts
        state = "[yellow]partly indexed[/yellow]" if f.status == "partial" else "[red]failed[/red]"
        out.print(f"{state} {escape(f.path)}: {escape(f.reason or '')}")
    if st.warnings:
        out.print(f"{len(st.warnings)} document warnings (see --json)")
    for ad in daemons:
        out.print(f"query daemon running (pid {ad['pid']}); `cairn daemon stop` stops it")


def roots(
    remove: Annotated[
        Path | None,
        typer.Option(
            "--remove",
            help="Forget this folder and everything indexed from it (your files are not touched).",
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the registered source roots, or remove one."""
    try:
        with common.open_cairn(db) as cairn:
            removed = cairn.remove_root(remove) if remove is not None else None
            rs = cairn.roots()
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        listed = to_data(rs)
        if removed is None:
            emit_json(listed)
        else:
            emit_json({"roots": listed, "removed_documents": removed})
        return
    if removed is not None:
        out.print(f"removed {escape(str(remove))}: {removed} documents forgotten")
    if not rs:
        out.print("[dim]no source roots registered; add one with `cairn index FOLDER`[/dim]")
    for r in rs:
        extra = f"  include={list(r.include)}" if r.include else ""
        extra += f"  exclude={list(r.exclude)}" if r.exclude else ""
        out.print(f"{escape(r.path)}{escape(extra)}")


def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Registered folders, or folders and files inside one, to check"
            " (default: every root).",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check notes against types.yaml and OKF bundles.

    OKF bundles are checked against the OKF v0.2 rules.

    Reports, per note, unknown types, missing required fields and malformed values
    (warnings), and OKF conformance failures (errors). Exits 1 when there are errors.
    """
    try:
        with common.open_cairn(db) as cairn:
            found = cairn.notes.validate(paths)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    errors = sum(1 for d in found if d.severity == "error")
    if as_json:
        emit_json({"ok": errors == 0, "errors": errors, "diagnostics": to_data(found)})
    else:
        colour = {"error": "red", "warning": "yellow", "info": "dim"}
        for d in found:
            path = quote_path(d.path)
            where = f"{path}:{d.line}" if d.line else path
            c = colour.get(d.severity, "white")
            out.print(f"[{c}]{d.severity}[/{c}] {escape(where)}: {escape(d.message)}")
        out.print(f"{errors} errors, {len(found) - errors} warnings and notes")
    if errors:
        raise typer.Exit(1)


def check(
    db: DbOpt = None,
    as_json: JsonOpt = False,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Mend the keyword index first (rows without a unit; rebuilt if still "
            "unsound); your files are not read or changed.",
        ),
    ] = False,
) -> None:
    """Check the index's integrity.

    SQLite's own check, the FTS5 keyword index, and cairn's own consistency. With
    --repair, what can be mended from the index itself is mended first (under the
    writer lock), then the index is checked.
    """
    repaired: list[str] = []
    try:
        with common.open_cairn(db) as cairn:
            if repair:
                repaired = cairn.runs.repair()
            problems = cairn.notes.check()
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json({"ok": not problems, "problems": problems, "repaired": repaired})
        if problems:
            raise typer.Exit(1)
        return
    for r in repaired:
        out.print(f"[yellow]repaired[/yellow] {escape(r)}")
    if problems:
        for p in problems:
            out.print(f"[red]problem[/red] {escape(p)}")
    else:
        out.print("[green]ok[/green]")
    if problems:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``stats``, ``roots``, ``validate`` and ``check`` to ``app``."""
    for command in (stats, roots, validate, check):
        app.command()(command)
