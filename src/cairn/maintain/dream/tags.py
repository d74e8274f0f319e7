"""``tags``: one tag written several ways across a root (``Emacs``/``emacs``,
``to-read``/``to_read``), with a fix that rewrites the rarer spellings to the most
common one in every file that uses them.

Org tags are case-sensitive (``:TAG1:`` and ``:tag1:`` are two tags to Org), so Org
files are compared only with the Org files of their root and their renames are only
proposed (``Fix.auto`` false). Obsidian's tags ignore case, so a Markdown rename that
changes only case gains nothing and is only proposed too; ``--apply`` makes a Markdown
rename of separators (``to_read`` → ``to-read``)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from cairn.maintain.dream.base import DreamContext, Finding, Fix, finding_key, register_check


def tag_key(tag: str) -> str:
    """Spellings of one tag share this key (case, ``-``/``_`` and a leading ``#``)."""
    return re.sub(r"[-_]+", "-", tag.lstrip("#").lower())


class TagsCheck:
    """See the module docstring."""

    name = "tags"
    summary = "one tag spelled several ways across a root"

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
                best = max(spellings.items(), key=lambda kv: (kv[1], kv[0] == kv[0].lower()))[0]
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
                        # case only: Org tells the two apart (renaming changes meaning),
                        # Obsidian does not (renaming gains nothing, and prose that
                        # shows both spellings would lose its point) — a proposal
                        auto = not is_org and old.lower() != best.lower()
                        verb = "rename" if auto else "proposed: rename"
                        out.append(
                            Finding(
                                "tags", "tag-spelling",
                                finding_key("tags", "tag-spelling", rel, f"{old}>{best}"),
                                ctx.abs_path(doc), rel, first,
                                f"tag {old!r} is written {best!r} {spellings[best]} times in "
                                f"this root ({n}× {old!r})",
                                old, {"spellings": dict(spellings), "preferred": best},
                                Fix("normalise_tag", ctx.abs_path(doc),
                                    f"{verb} tag {old} → {best} in {rel}",
                                    {"old": old, "new": best, "format": doc.format},
                                    auto=auto),
                            )
                        )
        return out


CHECK = register_check(TagsCheck())
