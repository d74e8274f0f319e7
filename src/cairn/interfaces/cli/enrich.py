"""``cairn enrich``: summaries, insights, tags and typed relations of conversations by
the ``[enrich]`` model (calls :meth:`cairn.enrich.service.EnrichService.run`); ``cairn enrich show``
prints one conversation's (:meth:`cairn.enrich.service.EnrichService.show`)."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

import cairn.interfaces.cli._common as common
from cairn.errors import CairnError
from cairn.interfaces.cli._common import DbOpt, JsonOpt, WaitOpt, emit_json, err, fail, out
from cairn.interfaces.cli._progress import eta_text, event
from cairn.model.eta import EtaEstimator
from cairn.model.serialize import to_data

if TYPE_CHECKING:
    from cairn.app.results import EnrichReport

Estimate = Any
"""A :class:`cairn.enrich.Estimate` (interfaces import only ``app``)."""

enrich_app = typer.Typer(
    help=(
        "Ask a language model about each conversation.\n\n"
        "The \\[enrich] model gives each conversation's summary, 3-10 insights and tags, "
        "and the relations of similar conversations (kept in the index, never in your "
        "files; every text is masked before it is sent)."
    ),
    invoke_without_command=True,
)


class _Progress:
    """A plain line on stderr every 2 s, terminal or not, with the time left (a range
    while the rate of replies is unstable); with ``--json`` a progress event instead.
    The relation pairs follow the conversations with their own count (``pairs``)."""

    def __init__(self, as_json: bool = False) -> None:
        self.t0 = self.last = time.monotonic()
        self.as_json = as_json
        self.phase, self.started, self.done = "enrich", self.t0, 0
        self.eta = EtaEstimator()

    def __call__(self, done: int, total: int, item: str) -> None:
        now = time.monotonic()
        if done < self.done:  # a new stage (relation pairs): a new rate
            self.phase, self.started, self.eta = "pairs", now, EtaEstimator()
        self.done = done
        self.eta.update(now, done, total)
        if now - self.last >= 2.0 or done == total:
            self.last = now
            e = self.eta.estimate(now)
            if self.as_json:
                ev = event(self.phase, e, now - self.started, e.rate)
                print(json.dumps(ev), file=sys.stderr, flush=True)
                return
            print(f"{self.phase}: {done}/{total} ({now - self.t0:.0f} s, {eta_text(e)}) "
                  f"{item[:70]}", file=sys.stderr)


def _estimate_line(what: str, e: Estimate) -> str:
    cost = f", about ${e.cost:.4f}" if e.cost else ""
    return (f"{what}: {e.tasks} ({e.cached} cached), {e.requests} requests, "
            f"~{e.input_tokens} input + ~{e.output_tokens} output tokens{cost}")


DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the request, token and cost estimate only.")
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", help="At most this many conversations (newest).")
]
NoRelationsOpt = Annotated[
    bool, typer.Option("--no-relations", help="Skip typing relations between conversations.")
]
RetryOpt = Annotated[
    bool, typer.Option("--retry-invalid", help="Ask again where a reply was invalid twice.")
]


@enrich_app.callback()
def enrich(
    ctx: typer.Context,
    dry_run: DryRunOpt = False,
    limit: LimitOpt = None,
    no_relations: NoRelationsOpt = False,
    retry_invalid: RetryOpt = False,
    wait: WaitOpt = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Enrich the index's conversations with a language model (\\[enrich] in cairn.toml:
    any OpenAI-compatible endpoint such as Ollama, vLLM or LM Studio, or Anthropic).
    `cairn enrich` alone is `cairn enrich run`.
    """
    if ctx.invoked_subcommand is None:
        _run(dry_run, limit, no_relations, retry_invalid, wait, db, as_json)


@enrich_app.command("run")
def run(
    dry_run: DryRunOpt = False,
    limit: LimitOpt = None,
    no_relations: NoRelationsOpt = False,
    retry_invalid: RetryOpt = False,
    wait: WaitOpt = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ask the model about every conversation not yet answered.

    Then type the relations of similar ones.

    Replies are cached by (model, prompt version, content hash): a second run asks
    nothing for unchanged conversations, and an interrupted one resumes. The estimate
    is printed before the first request. Without \\[enrich] it says so and changes
    nothing (exit 0). One writer at a time: while another cairn process writes the
    index, it exits with a clear message (or waits, with --wait). Examples:
    `cairn enrich --dry-run`, `cairn enrich --limit 20`, `cairn enrich show PATH-OR-ID`.
    """
    _run(dry_run, limit, no_relations, retry_invalid, wait, db, as_json)


def _run(dry_run: bool, limit: int | None, no_relations: bool, retry_invalid: bool,
         wait: bool, db: Any, as_json: bool) -> None:
    def estimate(e: Estimate) -> None:
        if not as_json:
            err.print(_estimate_line("conversations", e))

    try:
        with common.open_cairn(db) as cairn:
            report = cairn.enrich.run(
                dry_run=dry_run, limit=limit, relations=not no_relations,
                retry_invalid=retry_invalid, progress=_Progress(as_json),
                on_estimate=None if dry_run else estimate,
                wait=None if wait else 0.0, on_wait=lambda m: err.print(escape(m)),
            )
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(report))
        return
    _print(report)


def _print(r: EnrichReport) -> None:
    if not r.configured:
        out.print(escape(r.message), soft_wrap=True)  # a config to copy: no line breaks added
        return
    if r.dry_run:
        if r.estimate is not None:
            out.print(_estimate_line("conversations", r.estimate))
        if r.pair_estimate is not None:
            out.print(_estimate_line("relation pairs", r.pair_estimate))
    else:
        out.print(
            f"{r.conversations} conversations: {r.answered} answered, {r.cached} from the "
            f"cache, {len(r.skipped)} skipped; {r.requests} requests, {r.input_tokens} + "
            f"{r.output_tokens} tokens, {r.seconds:.1f} s ({escape(str(r.model))})"
        )
        out.print(
            f"index: {r.enriched} enriched conversations, {r.insights} insights, "
            f"{r.relations} relations ({r.llm_edges} llm edges)"
        )
    for s in r.skipped:
        err.print(f"[yellow]skipped[/yellow] {escape(s.item)}: {escape(s.reason)}")
    for n in r.notes:
        err.print(f"[dim]{escape(n)}[/dim]")


@enrich_app.command("show")
def show(
    ref: Annotated[str, typer.Argument(help="A conversation: document id, unit id or path.")],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what the model said about one conversation.

    Its summary, insights (with the messages they cite), tags and typed relations.
    """
    try:
        with common.open_cairn(db) as cairn:
            got = cairn.enrich.show(ref)
    except CairnError as exc:
        raise fail(exc, as_json) from None
    if as_json:
        emit_json(to_data(got))
        return
    e = got.enrichment
    out.print(f"[bold]{escape(got.title)}[/bold] [dim]{escape(got.path)} · {escape(e.model)}[/dim]")
    out.print(escape(e.summary))
    for i in e.insights:
        cites = f" [dim]({len(i.messages)} messages)[/dim]" if i.messages else ""
        out.print(f"  [bold]{i.type}[/bold] {escape(i.text)}{cites}")
    if e.tags:
        out.print("tags: " + ", ".join(
            t.tag + ("" if t.status == "existing" else f" ({t.status})") for t in e.tags))
    for r in got.relations:
        arrow = "→" if r.direction == "out" else "←"
        out.print(f"  {arrow} {r.relation} {escape(r.title)} "
                  f"[dim]{r.confidence:.2f} · {escape(r.reason)}[/dim]")


def register(app: typer.Typer) -> None:
    """Add ``enrich`` (and ``enrich show``) to ``app``."""
    app.add_typer(enrich_app, name="enrich")
