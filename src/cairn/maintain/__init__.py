"""Maintenance over the index: validation now; the dream cycle (stale, broken, orphaned
and decayed knowledge) builds here."""
