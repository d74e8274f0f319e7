"""Exports of the index: the graph (``cairn.export.graph``), Obsidian, OKF, JSON."""
