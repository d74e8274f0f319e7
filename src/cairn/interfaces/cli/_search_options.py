"""The command line of ``cairn search``, declared once: its options, and the one reading
of their values into a search (:class:`SearchArgs`).

The Typer command (:mod:`.search`) builds its options from :data:`OPTIONS`; the fast
path (:mod:`._fast`) reads a command line with :func:`read_argv`, which walks the same
declarations the way Click does. Both hand their values to :meth:`SearchArgs.of`, so a
command line means the same search on either path. Imports neither Typer nor Click
(a new process would pay for them before searching).

:func:`read_argv` reads ``--`` as Click does (every word after it is a query word)
and only reads what it is certain of: ``--help``, an unknown or misspelt option, a
value Click would refuse or might read otherwise — it returns ``None`` and Typer takes
the command line, so every usage error and every help text still comes from Typer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cairn.model.search_request import MAX_LIMIT

Kind = Literal["flag", "switch", "int", "text", "path"]
"""``flag``: ``--x`` (off unless given); ``switch``: ``--x/--no-x`` (unset unless
given); ``int``, ``text``, ``path``: ``--x VALUE`` or ``--x=VALUE``."""


class Option:
    """One option: the Typer parameter's name, its flags, what it takes, its help."""

    __slots__ = ("dest", "help", "kind", "maximum", "minimum", "names", "show_default")

    def __init__(self, dest: str, names: tuple[str, ...], kind: Kind, help: str = "", *,
                 minimum: int | None = None, maximum: int | None = None,
                 show_default: bool = True) -> None:
        self.dest = dest
        """The Typer parameter (and key of the values)."""
        self.names = names
        """``("--limit",)``; a switch: ``("--expand", "--no-expand")``."""
        self.kind = kind
        self.help = help
        """The help text (empty: the option is shared, its help is in :mod:`._common`)."""
        self.minimum = minimum
        """The least ``int`` value Click accepts."""
        self.maximum = maximum
        """The greatest ``int`` value Click accepts."""
        self.show_default = show_default

    @property
    def default(self) -> bool | None:
        """The value when the option is not given."""
        return False if self.kind == "flag" else None


MODE_HELP = (
    "keyword (BM25), semantic (embeddings) or hybrid (both, fused); "
    "default: hybrid when the index has embeddings, else keyword."
)

QUERY_HELP = (
    'Words (any may match), "phrases", -exclusions and filters: tag:, '
    "todo:, priority:, path:, format:, source:, type:, prop:KEY=VALUE, before:, "
    "after:, role:, kind:, file:, heading:, section:, level:, lang: (a code block's "
    "language); dates: scheduled:, "
    "deadline:, closed:, ts:, ts-inactive:, created:, modified: (2024-03, "
    "2024-03..2024-04, <2024-06-01, today, +7d, this-week, soon; a repeating "
    "timestamp counts on each repeat, ts:=2024-03 only on its written date). "
    "A comma list "
    "is an OR (tag:work,home). Quote values with spaces: type:\"Big Table\". "
    "Relative dates count from $CAIRN_TODAY when set."
)

OPTIONS: tuple[Option, ...] = (
    Option("limit", ("--limit",), "int", "Number of hits (default: config, 10).", minimum=1,
           maximum=MAX_LIMIT),
    Option("explain", ("--explain",), "flag", "Show each hit's score and how it was made."),
    Option("alternates", ("--alternates",), "flag",
           "Include chat messages off the canonical branch."),
    Option("mode", ("--mode",), "text", MODE_HELP, show_default=False),
    Option("expand", ("--expand", "--no-expand"), "switch",
           "Graph expansion: follow links 1-2 hops from the top hits and re-rank; "
           "--explain then names the edges walked (default: \\[graph] expand, off).",
           show_default=False),
    Option("rerank", ("--rerank", "--no-rerank"), "switch",
           "Re-rank the top hits (default 30) with the \\[rerank] cross-encoder or "
           "/rerank endpoint, blended with their fused rank; --explain shows each hit's "
           "relevance and rank before (default: \\[rerank] enabled, off).",
           show_default=False),
    Option("sort", ("--sort",), "text",
           "Order by fields, comma-separated, compared in turn: relevance, deadline, "
           "scheduled, priority, modified (newest first), title; e.g. --sort "
           "priority,deadline (default: relevance).", show_default=False),
    Option("files", ("--files",), "flag",
           "Group hits per file: each file once, then its hits."),
    Option("fmt", ("--format",), "text",
           "text (default), json (as --json), csv (a table; --fields, else "
           "rank,title,path,line,root: path is relative to root, the registered folder) "
           "or vimgrep (path:line:col:text, for editors).",
           show_default=False),
    Option("fields", ("--fields",), "text",
           "Print a table of these fields, comma-separated: title, doc_title, path, "
           "abs_path, root, line, rank, score, kind, format, todo, priority, tags, "
           "deadline, scheduled, closed, prop:KEY (a property or frontmatter value).",
           show_default=False),
    Option("db", ("--db",), "path"),
    Option("as_json", ("--json",), "flag"),
)
"""The options of ``cairn search``, in the order of its ``--help``."""

GLOBAL_OPTIONS: tuple[Option, ...] = (
    Option("db", ("--db",), "path"),
    Option("config", ("--config",), "path"),
)
"""The options before the command (``cairn --db X --config Y search …``) the fast path
reads; any other one goes to Typer."""

_REQUEST = ("limit", "mode", "explain", "alternates", "expand", "rerank", "sort")
"""The options that are :class:`cairn.model.SearchRequest` fields (the rest say where
to search and how to print)."""


def option(dest: str) -> Option:
    """The declared option of ``cairn search`` named ``dest``.

    Raises:
        KeyError: no such option.
    """
    for opt in OPTIONS:
        if opt.dest == dest:
            return opt
    raise KeyError(dest)


@dataclass(frozen=True)
class SearchArgs:
    """A ``cairn search`` command line, read: the search, where to run it, how to print."""

    fields: Mapping[str, Any]
    """The :class:`cairn.model.SearchRequest` fields it gives (checked when the
    request is made, so a bad value is reported as a search error)."""
    outer_db: Path | None = None
    """``--db`` before the command."""
    config: Path | None = None
    search_db: Path | None = None
    """``--db`` after the command (it wins)."""
    as_json: bool = False
    files: bool = False
    fmt: str | None = None
    columns: str | None = None
    """``--fields``: the table's columns."""
    words: tuple[str, ...] = field(default=(), compare=False)
    """The query words as given (the Typer command checks none looks like an option)."""

    @classmethod
    def of(cls, outer: Mapping[str, Any], values: Mapping[str, Any]) -> SearchArgs:
        """The search that the values of the options before the command (``outer``:
        ``db``, ``config``) and of the command's parameters (``values``: ``query``, a
        sequence of words, and each of :data:`OPTIONS` by its ``dest``; a missing one
        is unset) give."""
        words = tuple(values.get("query") or ())
        fields = {"query": " ".join(words)}
        fields.update((k, values.get(k, option(k).default)) for k in _REQUEST)
        return cls(fields, outer_db=_path(outer.get("db")), config=_path(outer.get("config")),
                   search_db=_path(values.get("db")), as_json=bool(values.get("as_json")),
                   files=bool(values.get("files")), fmt=values.get("fmt"),
                   columns=values.get("fields"), words=words)


def _path(value: Any) -> Path | None:
    return None if value is None else Path(value)


def read_argv(argv: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``argv`` (without the program name) as ``(the values of the options before the
    command, the values of the search's parameters)`` as Click gives them (a missing
    option absent), or ``None`` when it is not a ``search`` command line read for
    certain (Typer takes it then)."""
    i, outer = _read_options(argv, 0, GLOBAL_OPTIONS, stop="search")
    if outer is None or i >= len(argv):
        return None
    _, values = _read_options(argv, i + 1, OPTIONS, stop=None)
    if values is None or not values.get("query") or conflict(values) is not None:
        return None
    return outer, values


def conflict(values: Mapping[str, Any]) -> str | None:
    """Why two of the given layout options cannot go together (each prints the hits its
    own way, so one would be ignored), naming both: ``"--json and --format csv …"``;
    ``None`` when they can. ``values`` as Click gives them, by ``dest``."""
    fmt = values.get("fmt")
    shown = f"--format {fmt}"
    as_json = bool(values.get("as_json"))
    fields, files, explain = values.get("fields"), values.get("files"), values.get("explain")
    pair: tuple[str, str] | None = None
    if as_json and fmt in ("text", "csv", "vimgrep"):  # an unknown one: its own error
        pair = ("--json", shown)
    elif files and (fields or fmt in ("csv", "vimgrep")):
        pair = ("--files", "--fields" if fields else shown)
    elif fields and fmt == "vimgrep":
        pair = ("--fields", shown)
    elif explain and (fields or fmt in ("csv", "vimgrep")):
        pair = ("--explain", "--fields" if fields else shown)
    elif explain and files and not as_json and fmt != "json":
        return ("--explain and --files cannot be used together (with --json they can: "
                "each hit then carries its explanation)")
    if pair is None:
        return None
    return f"{pair[0]} and {pair[1]} cannot be used together (each prints the hits its own way)"


def literal_words(args: Sequence[str]) -> int:
    """How many of the last words of ``args`` (a ``search`` command's arguments) come
    after the ``--`` that ends its options, as Click reads them (a ``--`` that is an
    option's value, ``--sort --``, ends nothing); 0 without one. Those are query words
    even when they look like options (``cairn search -- --limit 3``)."""
    valued = {name for opt in OPTIONS if opt.kind in ("int", "text", "path") for name in opt.names}
    i = 0
    while i < len(args):
        if args[i] == "--":
            return len(args) - i - 1
        i += 2 if args[i] in valued else 1
    return 0


def _read_options(argv: Sequence[str], i: int, options: Sequence[Option], stop: str | None
                  ) -> tuple[int, dict[str, Any] | None]:
    """Read ``argv[i:]`` up to the word ``stop`` (``None``: to the end, words are query
    words); ``(where it stopped, the values)``, the values ``None`` when Typer must
    read this command line."""
    by_name = {name: opt for opt in options for name in opt.names}
    values: dict[str, Any] = {}
    words: list[str] = []
    while i < len(argv):
        arg = argv[i]
        if stop is not None and arg == stop:
            break
        if stop is None and arg == "--":  # the end of the options: the rest are words
            words += argv[i + 1 :]
            i = len(argv)
            break
        if not arg.startswith("--"):  # ``-tag:done`` is a query word (no short options)
            if stop is not None:
                return i, None
            words.append(arg)
            i += 1
            continue
        name, eq, value = arg.partition("=")
        opt = by_name.get(name)
        if opt is None:  # --help, --, an unknown or misspelt option: Typer says
            return i, None
        if opt.kind in ("flag", "switch"):
            if eq:
                return i, None
            values[opt.dest] = name == opt.names[0]
            i += 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                return i, None
            i, value = i + 1, argv[i + 1]
            if value.startswith("-"):  # Click might read it as an option
                return i, None
        if opt.kind == "int":
            if not value.isascii() or not value.isdigit():
                return i, None
            try:
                number = int(value)
            except ValueError:  # more digits than int() reads: Click refuses it
                return i, None
            if (opt.minimum is not None and number < opt.minimum) or (
                opt.maximum is not None and number > opt.maximum
            ):
                return i, None
            values[opt.dest] = number
        else:
            values[opt.dest] = Path(value) if opt.kind == "path" else value
        i += 1
    if stop is None:
        values["query"] = words
    return i, values
