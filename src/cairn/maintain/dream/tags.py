"""``tags``: one tag written several ways across a root (``Emacs``/``emacs``,
``to-read``/``to_read``), with a fix that rewrites the rarer spellings to the most
common one in every file that uses them. A tie has no most common spelling: it is
reported without a fix.

Org tags are case-sensitive (``:TAG1:`` and ``:tag1:`` are two tags to Org), so Org
files are compared only with the Org files of their root, a rename that changes only
case gets no fix at all, and other renames are only proposed (``Fix.auto`` false).
Obsidian's tags ignore case, so a Markdown rename that changes only case gains nothing
and is only proposed too; ``--apply`` makes a Markdown rename of separators (``to_read``
→ ``to-read``)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

from cairn.maintain.dream.base import DreamContext, Finding, Fix, finding_key, register_check


def tag_key(tag: str) -> str:
    """Spellings of one tag share this key (case, ``-``/``_`` and a leading ``#``)."""
    return re.sub(r"[-_]+", "-", tag.lstrip("#").lower())


def tag_line(path: str, start: int, tag: str, is_org: bool) -> int | None:
    """The first line at or after ``start`` (1-based) of the file at ``path`` where
    ``tag`` is written as a tag (``:tag:`` in Org, ``#tag`` otherwise), or ``None``."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    pat = re.compile((r":" + re.escape(tag) + r":") if is_org
                     else (r"(?<![\w&#\\])#" + re.escape(tag) + r"(?![\w/-])"))
    for i in range(max(start, 1) - 1, len(lines)):
        if pat.search(lines[i]):
            return i + 1
    return None


class TagsCheck:
    """See the module docstring."""

    name = "tags"
    summary = "one tag spelled several ways across a root"

    @staticmethod
    def _fix(path: str, rel: str, fmt: str, old: str, best: str, is_org: bool) -> Fix | None:
        """The rename fix, or ``None`` for a case-only rename of Org tags (Org tells
        ``Work`` and ``work`` apart: renaming would change meaning)."""
        case_only = old.lower() == best.lower()
        if is_org and case_only:
            return None
        # case only in Markdown: Obsidian ignores case, so renaming gains nothing and
        # is only a proposal; any Org rename is only a proposal
        auto = not is_org and not case_only
        verb = "rename" if auto else "proposed: rename"
        return Fix("normalise_tag", path, f"{verb} tag {old} → {best} in {rel}",
                   {"old": old, "new": best, "format": fmt}, auto=auto)

    def run(self, ctx: DreamContext) -> list[Finding]:
        """One finding per (root, rarer spelling), with a fix per file using it."""
        out: list[Finding] = []
        # (root id, Org or not) -> tag key -> spelling -> uses
        per_root: dict[tuple[str, bool], dict[str, Counter[str]]] = defaultdict(
            lambda: defaultdict(Counter))
        files: dict[tuple[tuple[str, bool], str], dict[str, set[int]]] = defaultdict(
            lambda: defaultdict(set))
        for doc in ctx.notes:
            if doc.format not in ("org", "markdown", "okf"):
                continue
            # Org's spellings are counted apart: they are not Markdown's to follow
            group = (doc.root_id, doc.format == "org")
            for unit in ctx.units(doc):
                for t in unit.tags:
                    per_root[group][tag_key(t)][t] += 1
                    files[(group, t)][doc.id].add(unit.line_start)
            own = {t for unit in ctx.units(doc) for t in unit.tags}
            for t in doc.tags:
                if t in own:  # a document's tags repeat its headings' ones
                    continue
                per_root[group][tag_key(t)][t] += 1
                files[(group, t)][doc.id].add(0)
        for group, keys in per_root.items():
            is_org = group[1]
            for _key, spellings in sorted(keys.items()):
                if len(spellings) < 2:
                    continue
                top = max(spellings.values())
                leaders = sorted(t for t, k in spellings.items() if k == top)
                # a tie has no usual spelling: report it, propose nothing
                best = leaders[0] if len(leaders) == 1 else None
                for old, n in sorted(spellings.items()):
                    if old == best:
                        continue
                    for doc_id, lines in sorted(files[(group, old)].items()):
                        found = ctx.document(doc_id)
                        if found is None:
                            continue
                        doc = found
                        rel = ctx.display(doc)
                        first = min((ln for ln in lines if ln), default=None)
                        if first is not None:
                            first = tag_line(ctx.abs_path(doc), first, old, is_org) or first
                        others = ", ".join(f"{k}× {t!r}" for t, k in sorted(spellings.items())
                                           if t != old)
                        if best is None:
                            message = (f"tag {old!r} ({n}×) is also written {others} in this "
                                       "root; no spelling is the usual one")
                            fix = None
                        else:
                            message = (f"tag {old!r} is written {best!r} {spellings[best]} "
                                       f"times in this root ({n}× {old!r})")
                            fix = self._fix(ctx.abs_path(doc), rel, doc.format, old, best,
                                            is_org)
                        out.append(
                            Finding(
                                "tags", "tag-spelling",
                                finding_key("tags", "tag-spelling", rel,
                                            f"{old}>{best or ''}"),
                                ctx.abs_path(doc), rel, first, message,
                                old, {"spellings": dict(spellings), "preferred": best},
                                fix,
                            )
                        )
        return out


CHECK = register_check(TagsCheck())
