"""Ingest: the indexing pipeline, ids, run records."""
