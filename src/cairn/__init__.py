"""cairn: a local-first knowledge engine over plain text.

The public Python API is :class:`cairn.app.Cairn`; see ``docs/reference/python.md``.
"""

__version__ = "0.1.0"
