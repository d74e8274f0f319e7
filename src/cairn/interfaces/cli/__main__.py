"""``python -m cairn.interfaces.cli``: the ``cairn`` command."""

from cairn.interfaces.cli import main

main()
