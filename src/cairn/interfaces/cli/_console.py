"""The CLI's Rich consoles: as wide as the terminal on a terminal, unlimited on a pipe
or a file.

Rich sizes a console that writes to no terminal by the terminal it finds on another
stream, else ``COLUMNS``, else 80 columns, and wraps text and table cells to it: a piped
``cairn stats`` or ``cairn show`` then had line breaks inside paths and titles, which a
script or ``grep`` reads as other lines. A pipe has no width, so nothing is wrapped
there (``COLUMNS`` describes a terminal); a terminal keeps its own width (Rich's
reading of it).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleDimensions

UNWRAPPED = 1 << 20
"""The width of a console writing to a pipe or a file: more than any line it prints,
so no text or table cell is wrapped (tables are as wide as their cells, not padded to
it)."""


def _on_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed, or no stream a terminal can be
        return False


class CliConsole(Console):
    """A :class:`rich.console.Console` that wraps nothing when it writes to a pipe or a
    file (:data:`UNWRAPPED` columns, whatever ``COLUMNS`` says: a pipe has no columns);
    on a terminal, or given a ``width``, as Rich's. Takes Rich's arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._asked_width = kwargs.get("width") is not None

    @property
    def size(self) -> ConsoleDimensions:
        """The console's ``(width, height)``: Rich's, but unlimited width off a terminal."""
        dims = super().size
        if not self._asked_width and not _on_terminal(self.file):
            return ConsoleDimensions(UNWRAPPED, dims.height)
        return dims

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]
