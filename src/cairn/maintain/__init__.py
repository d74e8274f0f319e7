"""Maintenance over the index: validation (:mod:`.validate`) and the dream cycle
(:mod:`.dream`: stale, broken, orphaned, thin, duplicated and decayed knowledge, and its
safe fixes)."""
