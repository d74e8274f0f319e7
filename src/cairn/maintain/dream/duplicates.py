"""``duplicates``: near-duplicate units (of different documents) by word shingles
(Jaccard similarity of 5-word shingle sets, candidates found through bottom-k sketches)
and, when the index holds embeddings, by cosine similarity of their vectors."""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from typing import Any

from cairn.maintain.dream.base import DreamContext, Finding, finding_key, register_check
from cairn.model import Document, StoredUnit

_WORD = re.compile(r"\w+", re.UNICODE)
SHINGLE = 5
SKETCH = 12
BUCKET_CAP = 40


def shingles(text: str, k: int = SHINGLE) -> set[int]:
    """CRC32 hashes of the ``k``-word shingles of ``text`` (lower-cased words)."""
    words = _WORD.findall(text.lower())
    if len(words) < k:
        return {zlib.crc32(" ".join(words).encode())} if words else set()
    return {zlib.crc32(" ".join(words[i : i + k]).encode()) for i in range(len(words) - k + 1)}


class DuplicatesCheck:
    """See the module docstring."""

    name = "duplicates"
    summary = "near-duplicate units by shingles and by embedding similarity"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per similar pair, with both places and the similarity."""
        units: dict[str, tuple[Document, StoredUnit]] = {}
        for doc in ctx.notes:
            for u in ctx.units(doc):
                if len(u.body.strip()) >= ctx.settings.duplicate_min_chars:
                    units[u.id] = (doc, u)
        pairs: dict[tuple[str, str], dict[str, Any]] = {}
        self._shingles(ctx, units, pairs)
        self._vectors(ctx, units, pairs)
        out: list[Finding] = []
        for (a, b), ev in sorted(pairs.items()):
            da, ua = units[a]
            db, ub = units[b]
            ra, rb = ctx.display(da), ctx.display(db)
            sim = max(ev.values())
            out.append(
                Finding(
                    "duplicates", "near-duplicate",
                    finding_key("duplicates", "near-duplicate", ra, f"{ua.title}|{rb}|{ub.title}"),
                    ctx.abs_path(da), ra, ua.line_start,
                    f"{ua.title or da.title!r} is {round(sim * 100)}% similar to "
                    f"{ub.title or db.title!r} ({rb}:{ub.line_start})",
                    f"{rb}:{ub.line_start}",
                    {"other": rb, "other_path": ctx.abs_path(db), "other_line": ub.line_start,
                     **{k: round(v, 3) for k, v in ev.items()}},
                )
            )
        return out

    def _shingles(
        self,
        ctx: DreamContext,
        units: dict[str, tuple[Document, StoredUnit]],
        pairs: dict[tuple[str, str], dict[str, Any]],
    ) -> None:
        sets = {uid: shingles(u.body) for uid, (_, u) in units.items()}
        buckets: dict[int, list[str]] = defaultdict(list)
        for uid, s in sets.items():
            for h in sorted(s)[:SKETCH]:
                buckets[h].append(uid)
        seen: set[tuple[str, str]] = set()
        limit = ctx.settings.duplicate_similarity
        for members in buckets.values():
            if len(members) < 2 or len(members) > BUCKET_CAP:
                continue
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    key = (a, b) if a < b else (b, a)
                    if key in seen or units[a][0].id == units[b][0].id:
                        continue
                    seen.add(key)
                    sa, sb = sets[a], sets[b]
                    j = len(sa & sb) / len(sa | sb)
                    if j >= limit:
                        pairs.setdefault(key, {})["shingle_similarity"] = j

    def _vectors(
        self,
        ctx: DreamContext,
        units: dict[str, tuple[Document, StoredUnit]],
        pairs: dict[tuple[str, str], dict[str, Any]],
    ) -> None:
        vectors = ctx.store.vectors
        if not vectors.any_vectors():
            return
        spaces = [s for s in vectors.spaces() if s.vectors]
        if not spaces:
            return
        import numpy as np

        m = vectors.matrix(spaces[-1].space)
        rows = [i for i in range(len(m.units))
                if int(m.ordinals[i]) == 0 and m.unit_ids[int(m.units[i])] in units]
        if len(rows) < 2:
            return
        ids = [m.unit_ids[int(m.units[i])] for i in rows]
        x = np.asarray(m.matrix[rows], dtype=np.float32)
        limit = max(ctx.settings.duplicate_similarity, 0.9)
        for start in range(0, len(ids), 512):
            block = x[start : start + 512] @ x.T
            hits = np.argwhere(block >= limit)
            for i, j in hits:
                a, b = ids[start + int(i)], ids[int(j)]
                if start + int(i) >= int(j) or units[a][0].id == units[b][0].id:
                    continue
                key = (a, b) if a < b else (b, a)
                pairs.setdefault(key, {})["cosine_similarity"] = float(block[i, j])


CHECK = register_check(DuplicatesCheck())
