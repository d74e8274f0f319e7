"""What every command module prints with: the consoles, one JSON document, an error.

Shared by :mod:`cairn.interfaces.cli`, :mod:`~cairn.interfaces.cli_graph` and
:mod:`~cairn.interfaces.cli_search`, so errors look and exit the same everywhere.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from cairn.errors import NotFound

out = Console(highlight=False, soft_wrap=True, emoji=False)
"""Standard output (no emoji codes: Org tags like ``:tomato:`` stay text)."""
err = Console(stderr=True, highlight=False, emoji=False)
"""Standard error: notes, warnings, errors."""


def emit_json(data: Any) -> None:
    """Print ``data`` as one JSON document on standard output."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def fail(exc: Exception, as_json: bool) -> typer.Exit:
    """Report an error (JSON ``{"error", "type"}`` with ``--json``, else one red line)
    and return the exit to raise: status 1 for "not found", 2 otherwise."""
    code = 1 if isinstance(exc, NotFound) else 2
    if as_json:
        emit_json({"error": str(exc), "type": type(exc).__name__})
    else:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
    return typer.Exit(code)
