"""Notes of many long sections (for the tests of memory held while chunking and
embedding: a page of units or texts, not the index)."""

from __future__ import annotations

import random
from pathlib import Path

SECTIONS = 30
NOTES = 10
SECTION_CHARS = 4000


def write_notes(folder: Path) -> int:
    """Write notes of many long sections; returns the characters of their bodies."""
    rng = random.Random(5)
    words = ["".join(rng.choice("aeioulmnrst") for _ in range(rng.randint(3, 9)))
             for _ in range(3000)]
    total = 0
    for n in range(NOTES):
        parts = []
        for s in range(SECTIONS):
            body = []
            size = 0
            while size < SECTION_CHARS:
                line = " ".join(rng.choice(words) for _ in range(12)) + "."
                body.append(line)
                size += len(line) + 1
            total += size
            parts.append(f"## Section {n}.{s}\n\n" + "\n".join(body))
        (folder / f"note{n:02}.md").write_text(f"# Note {n}\n\n" + "\n\n".join(parts) + "\n")
    return total
