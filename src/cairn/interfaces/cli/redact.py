"""``cairn redact scan``: secrets and personal data in files (calls
:meth:`cairn.redact.service.RedactService.scan`, or
:func:`cairn.redact.service.scan_paths` for paths
given outside any index). Prints file, line, kind and a masked preview — never a value."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, emit_json, err, fail, out
from cairn.interfaces.cli._progress import eta_text, event
from cairn.model.eta import EtaEstimator
from cairn.model.serialize import to_data

redact_app = typer.Typer(
    help=(
        "Find secrets and personal data in your files.\n\n"
        "`\\[redact] on_ingest` masks them in the index (chat exports by default); your "
        "files are never changed."
    ),
    no_args_is_help=True,
)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Progress:
    """One plain line on stderr every 2 s with the time left (and none for a quick
    scan); with ``as_json`` a progress event (phase ``scan``) instead of the line."""

    def __init__(self, as_json: bool = False, clock: Callable[[], float] = time.monotonic,
                 write: Callable[[str], None] = _stderr) -> None:
        self.clock, self.write, self.as_json = clock, write, as_json
        self.t0 = self.last = clock()
        self.eta = EtaEstimator()

    def __call__(self, done: int, total: int, path: str) -> None:
        now = self.clock()
        self.eta.update(now, done, total)
        if now - self.last >= 2.0 or (done == total and now - self.t0 >= 2.0):
            self.last = now
            e = self.eta.estimate(now)
            if self.as_json:
                self.write(json.dumps(event("scan", e, now - self.t0, e.rate)))
            else:
                self.write(f"scan: {done}/{total} files, {now - self.t0:.0f} s, {eta_text(e)}")


@redact_app.command("scan")
def scan(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files or folders to scan (default: every registered root)."),
    ] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the secrets and personal data in files or the index.

    Secrets (API keys, tokens, private keys, passwords in URLs) and personal data
    (e-mail, phone, card numbers, IBANs, SSNs, IP addresses), with file, line, kind and
    a masked preview such as `token = [SECRET:github-token#1]`.

    Examples: `cairn redact scan ~/exports/conversations.json`, `cairn redact scan --json`.
    Exit status 0 either way; the count of findings is in the last line (or `counts`).
    """
    try:
        if paths:
            from cairn.app.results import scan_paths

            report = scan_paths(paths, progress=_Progress(as_json))
        else:
            with common.open_cairn(db) as cairn:
                report = cairn.redact.scan(progress=_Progress(as_json))
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(report))
        return
    for f in report.findings:
        out.print(
            f"[blue]{escape(f.path)}:{f.line}[/blue]  [bold]{f.kind}[/bold]  {escape(f.preview)}"
        )
    for path, reason in report.skipped:
        err.print(f"[yellow]skipped[/yellow] {escape(path)}: {escape(reason)}")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.counts.items()))
    out.print(
        f"{len(report.findings)} findings in {report.files} files"
        + (f" ({kinds})" if kinds else "")
    )


def register(app: typer.Typer) -> None:
    """Add ``redact`` (``redact scan``) to ``app``."""
    app.add_typer(redact_app, name="redact")
