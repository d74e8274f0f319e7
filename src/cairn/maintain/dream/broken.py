"""``broken``: unresolved links and embeds with candidate targets ranked by title, alias
and path similarity (a renamed note is found), ``id:`` links to IDs no heading has,
missing attachments, and headings other files link to by path or title that have no
Org ``ID`` (their links break when the file moves; ``--apply`` adds one)."""

from __future__ import annotations

import difflib
import posixpath
import re
from pathlib import Path
from typing import Any

from cairn.graph.catalog import is_missing_anchor
from cairn.graph.obsidian import is_attachment_target
from cairn.maintain.dream.base import DreamContext, Finding, Fix, finding_key, register_check
from cairn.maintain.dream.edits import file_drawer_blocked
from cairn.model import Document, LinkOccurrence

AUTO_FIX_SIMILARITY = 0.85
"""A retarget is made by ``--apply`` only for a candidate this similar, clearly the best,
and with evidence beyond its name: it sits in the very folder the broken path pointed to
(renamed in place). Otherwise one clear candidate is only proposed (``Fix.auto`` false)."""
TYPO_SIMILARITY = 0.85
"""Two names that differ by more than a typo must share whole words to be candidates:
``Japan``/``Catan`` (0.60) and ``Futurism``/``Futurama`` (0.75) are different words."""
WORDS_SIMILARITY = 0.6
"""A candidate whose name contains every word of the link (``Kevin Kelly`` →
``Kevin Kelly (author)``) must still be at least this similar (``Japan`` is not
``2023 Japan Trip``)."""
ANCHOR_SIMILARITY = 0.75
"""A heading is suggested for a missing anchor from this similarity up (``Gaols`` /
``Goals`` is 0.8); the suggestion is only proposed, never applied by ``--apply``."""
_NOTE_LINKS = ("wikilink", "embed", "markdown", "org-file")


def _norm(text: str) -> str:
    text = text.strip().lower()
    text = re.sub(r"\.(md|org|markdown|txt)$", "", text)
    return re.sub(r"[\s_\-]+", " ", text).strip()


def _names(doc: Document) -> list[tuple[str, str]]:
    """``(how, normalised name)`` a link may mean this note by."""
    stem = posixpath.splitext(posixpath.basename(doc.path))[0]
    out = [("title", _norm(doc.title)), ("path", _norm(stem)), ("path", _norm(doc.path))]
    out += [("alias", _norm(a)) for a in doc.aliases]
    return [(h, n) for h, n in out if n]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def plausible(want: str, name: str, ratio: float) -> bool:
    """Whether normalised name ``name`` may be what a link to ``want`` meant, given the
    two names' string similarity ``ratio``: the same name; or every word of the shorter
    one, of at least two words, in the longer (and ``ratio`` at least
    :data:`WORDS_SIMILARITY`); or a typo
    (``ratio`` at least :data:`TYPO_SIMILARITY`, both at least 5 characters, the same
    numbers). String similarity of short different words is not evidence."""
    if want == name:
        return True
    if _words(want) and _words(name) and re.findall(r"\d+", want) != re.findall(r"\d+", name):
        return False
    a, b = sorted((set(_words(want)), set(_words(name))), key=len)
    if len(a) >= 2 and a <= b and ratio >= WORDS_SIMILARITY:
        return True
    return ratio >= TYPO_SIMILARITY and min(len(want), len(name)) >= 5


def rank_candidates(
    target: str,
    docs: list[Document],
    *,
    limit: int = 3,
    cutoff: float = 0.6,
    names: dict[str, list[tuple[str, str]]] | None = None,
) -> list[tuple[Document, float, str]]:
    """Notes a broken link may have meant, best first: ``(document, similarity 0–1,
    by which name: title, alias or path)``; the similarity is difflib's ratio of the
    normalised names (case, separators and note extensions ignored), and only names
    :func:`plausible` for the target count. ``names`` caches :func:`_names` by document
    id across calls."""
    want = _norm(posixpath.basename(target.split("#")[0])) or _norm(target)
    if not want:
        return []
    sm = difflib.SequenceMatcher(None, autojunk=False)
    sm.set_seq2(want)  # the target's tables are built once
    lw = len(want)
    scored: list[tuple[Document, float, str]] = []
    for doc in docs:
        got = names.get(doc.id) if names is not None else None
        if got is None:
            got = _names(doc)
            if names is not None:
                names[doc.id] = got
        best = (0.0, "")
        for how, name in got:
            ln = len(name)
            if 2 * min(ln, lw) / (ln + lw) < cutoff:
                continue
            sm.set_seq1(name)
            if sm.real_quick_ratio() < cutoff or sm.quick_ratio() < cutoff:
                continue
            r = sm.ratio()
            if r > best[0] and plausible(want, name, r):
                best = (r, how)
        if best[0] >= cutoff:
            scored.append((doc, round(best[0], 3), best[1]))
    scored.sort(key=lambda x: (-x[1], x[0].path))
    return scored[:limit]


def _on_line(ctx: DreamContext, doc: Document, link: LinkOccurrence) -> bool:
    """Whether the link's text stands once, as recorded, on its line of the file (a link
    in a table cell is written with ``\\|``, which its recorded text does not hold)."""
    text = ctx.text(doc)
    if text is None or not link.line or not link.raw:
        return False
    lines = text.splitlines()
    return link.line <= len(lines) and lines[link.line - 1].count(link.raw) == 1


def suggest_heading(anchor: str, titles: list[str]) -> str | None:
    """The one title of ``titles`` a mistyped heading ``anchor`` plausibly meant
    (``Gaols`` → ``Goals``): the only title at least :data:`ANCHOR_SIMILARITY` similar
    (case ignored, the same numbers), or the best when it leads the next by more than
    0.1; ``None`` when none is near or two are about as near, or the anchor is shorter
    than 4 characters (short words are not evidence)."""
    want = anchor.strip().casefold()
    if len(want) < 4:
        return None
    sm = difflib.SequenceMatcher(None, autojunk=False)
    sm.set_seq2(want)
    scored: dict[str, float] = {}
    for title in dict.fromkeys(titles):
        name = title.strip().casefold()
        if not name or re.findall(r"\d+", name) != re.findall(r"\d+", want):
            continue
        sm.set_seq1(name)
        r = sm.ratio()
        if r >= ANCHOR_SIMILARITY:
            scored[title] = max(r, scored.get(title, 0.0))
    best = sorted(scored.items(), key=lambda x: -x[1])
    if not best or (len(best) > 1 and best[1][1] >= best[0][1] - 0.1):
        return None
    return best[0][0]


def _replacement(link: LinkOccurrence, source: Document, target: Document) -> str | None:
    """The link's text as written with its target replaced by ``target``'s name (the
    form the link's kind uses), or ``None`` when the target is not found verbatim."""
    raw = link.raw
    if not raw or link.target not in raw or link.target.endswith("/"):
        return None
    if link.kind in ("wikilink", "embed") and raw.lstrip("!").startswith("[["):
        stem = posixpath.splitext(posixpath.basename(target.path))[0]
        new = stem if "/" not in link.target else posixpath.splitext(target.path)[0]
    else:
        here = posixpath.dirname(source.path)
        new = posixpath.relpath(target.path, here or ".")
        if link.kind == "org-file" and not new.startswith((".", "/")):
            new = "./" + new if link.target.startswith("./") else new
    if link.kind == "markdown":  # ``[text](target)``: the target comes last
        head, _, tail = raw.rpartition(link.target)
        return head + new + tail
    return raw.replace(link.target, new, 1)


def _pointed_folder(link: LinkOccurrence, source: Document) -> str | None:
    """The root-relative folder a path-like link pointed to (``None`` for a bare
    wikilink, which names a note anywhere in the vault). Org and Markdown paths are
    relative to the linking file; a wikilink with ``/`` to the vault."""
    target = link.target.split("#")[0].removeprefix("file:")
    if link.kind in ("wikilink", "embed"):
        if "/" not in target:
            return None
        return posixpath.normpath(posixpath.dirname(target.lstrip("/"))) or "."
    if link.kind not in ("org-file", "markdown") or target.startswith(("/", "~")):
        return None
    here = posixpath.dirname(source.path)
    return posixpath.normpath(posixpath.join(here, posixpath.dirname(target)))


class BrokenCheck:
    """See the module docstring."""

    name = "broken"
    summary = "unresolved links and embeds (with candidates), missing IDs and attachments"

    def run(self, ctx: DreamContext) -> list[Finding]:
        """The broken findings of ``ctx`` (see the module docstring)."""
        self._names: dict[str, list[tuple[str, str]]] = {}
        seen: dict[tuple[str, str], int] = {}  # the n-th link of that text in the file
        out: list[Finding] = []
        by_root: dict[str, list[Document]] = {}
        for d in ctx.notes:
            by_root.setdefault(d.root_id, []).append(d)
        for link in ctx.links:
            if link.kind == "url" or link.unresolved_reason is None:
                continue
            if link.unresolved_reason.startswith("attachment:"):
                continue
            if link.resolved_document_id and not is_missing_anchor(link.unresolved_reason):
                continue
            doc = ctx.document(link.document_id)
            if doc is None:
                continue
            nth = seen[(doc.id, link.raw or link.target)] = seen.get(
                (doc.id, link.raw or link.target), -1) + 1
            out.append(self._finding(ctx, link, doc, by_root.get(doc.root_id, []), nth))
        out += self._fragile(ctx)
        return out

    def _finding(
        self,
        ctx: DreamContext,
        link: LinkOccurrence,
        doc: Document,
        docs: list[Document],
        nth: int,
    ) -> Finding:
        rel = ctx.display(doc)
        reason = link.unresolved_reason or ""
        anchor = f"#{link.anchor}" if link.anchor else ""
        evidence: dict[str, Any] = {"kind": link.kind, "raw": link.raw, "reason": reason}
        fix = None
        if link.kind == "org-id":
            kind = "missing-id"
        elif "attachment" in reason or is_attachment_target(link.target):
            kind = "missing-attachment"
        elif link.kind == "org-heading" or is_missing_anchor(reason):
            kind = "unresolved-anchor"
            fix = self._anchor_fix(ctx, link, doc, evidence)
        else:
            kind = "unresolved-embed" if link.kind == "embed" else "unresolved-link"
            cands = rank_candidates(link.target, [d for d in docs if d.id != doc.id],
                                    names=self._names)
            evidence["candidates"] = [
                {"path": ctx.display(c), "title": c.title, "similarity": s, "by": how}
                for c, s, how in cands
            ]
            fix = self._fix(ctx, link, doc, cands)
        what = "embed" if link.kind == "embed" else "link"
        return Finding(
            "broken", kind,
            finding_key("broken", kind, rel, f"{link.raw or link.target}|{nth}"),
            ctx.abs_path(doc), rel, link.line,
            f"{what} {link.raw or link.target + anchor} does not resolve: {reason}",
            link.target, evidence, fix,
        )

    def _fix(
        self,
        ctx: DreamContext,
        link: LinkOccurrence,
        doc: Document,
        cands: list[tuple[Document, float, str]],
    ) -> Fix | None:
        """The retarget of ``link`` to its one clear candidate: made by ``--apply`` when
        the candidate sits in the folder the broken path pointed to (and is similar
        enough), else only proposed; none when no candidate stands out, or when a path
        link's candidate lies elsewhere than in the folder it pointed to (or below it),
        that folder's parent, or the linking file's folder (a file of the same name in
        another project is no evidence)."""
        if not cands or (len(cands) > 1 and cands[1][1] >= cands[0][1] - 0.05):
            return None
        best, similarity, _how = cands[0]
        auto = False
        folder = _pointed_folder(link, doc)
        bare = link.target.split("#")[0].removeprefix("file:")
        if bare.startswith(("/", "~")):
            # a path outside the root: only a file that ends the same way (its folder
            # and name) is evidence (``~/src/worg/users/bzg.org`` → ``worg/users/bzg.org``)
            tail = "/".join(bare.rstrip("/").split("/")[-2:])
            if not ("/" + best.path).endswith("/" + tail):
                return None
        elif folder is not None:
            here = posixpath.dirname(best.path) or "."
            near = (folder, posixpath.dirname(folder) or ".",
                    posixpath.dirname(doc.path) or ".")
            if not (here in near or here.startswith(folder + "/") or folder == "."):
                return None
            auto = here == folder and similarity >= AUTO_FIX_SIMILARITY
        new = _replacement(link, doc, best)
        if new is None or new == link.raw:
            return None
        what = "retarget" if auto else "proposed: retarget"
        return Fix("retarget_link", ctx.abs_path(doc), f"{what} {link.raw} → {new}",
                   {"line": link.line, "old": link.raw, "new": new}, auto)

    def _anchor_fix(
        self, ctx: DreamContext, link: LinkOccurrence, doc: Document, evidence: dict[str, Any]
    ) -> Fix | None:
        """The proposed fix of a heading anchor that names no heading of the note its
        link resolves to: the one heading whose title is a near match (recorded in
        ``evidence["suggested_anchor"]``), written into the link; only proposed
        (``Fix.auto`` false), since a similar name alone is not evidence. ``None`` for
        a block or custom-id anchor, a link to this file's own headings, no heading or
        several about as near, or a link whose text does not hold the anchor once."""
        anchor = (link.anchor or "").strip()
        star = anchor.startswith("*")
        want = anchor[1:] if star else anchor
        target = ctx.document(link.resolved_document_id or "")
        if target is None or not want or want.startswith(("^", "#")) or link.kind not in (
                "wikilink", "embed", "org-file"):
            return None
        title = suggest_heading(want, [u.title for u in ctx.units(target) if u.level > 0])
        raw = link.raw or ""
        if title is None or raw.count(anchor) != 1 or not _on_line(ctx, doc, link):
            return None
        evidence["suggested_anchor"] = title
        new = raw.replace(anchor, ("*" if star else "") + title, 1)
        return Fix("retarget_link", ctx.abs_path(doc), f"proposed: retarget {raw} → {new}",
                   {"line": link.line, "old": raw, "new": new}, False)

    @staticmethod
    def _drawer_blocked(path: str) -> str | None:
        """Why ``path`` cannot take a file-level drawer (its text as it is now)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return f"cannot read it: {exc}"
        return file_drawer_blocked(text)

    def _fragile(self, ctx: DreamContext) -> list[Finding]:
        """Org headings and files that other files link to by path or heading title
        but that have no ``ID``."""
        targets: dict[str, set[str]] = {}
        for link in ctx.links:
            if link.kind not in ("org-file", "org-heading") or not link.resolved_unit_id:
                continue
            if link.resolved_document_id in (None, link.document_id):
                continue
            targets.setdefault(link.resolved_unit_id, set()).add(link.document_id)
        if not targets:
            return []
        out: list[Finding] = []
        docs = {link.resolved_document_id for link in ctx.links
                if link.resolved_unit_id in targets}
        for doc_id in sorted(d for d in docs if d):
            doc = ctx.document(doc_id)
            if doc is None or doc.format != "org":
                continue
            units = ctx.units(doc)
            for unit in units:
                if unit.id not in targets or unit.org_id:
                    continue
                file_level = unit.kind == "preamble" or (unit.ordinal == 0 and unit.level == 0)
                if file_level and doc.declared_id:
                    continue
                rel = ctx.display(doc)
                line = 0 if file_level else unit.line_start
                n = len(targets[unit.id])
                what = "file" if file_level else f"heading {unit.title!r}"
                blocked = self._drawer_blocked(ctx.abs_path(doc)) if file_level else None
                fix = None if blocked else Fix(
                    "add_org_id", ctx.abs_path(doc),
                    f"add an :ID: property to the {what} in {rel}",
                    {"line": line, "title": unit.title if line else ""})
                out.append(
                    Finding(
                        "broken", "fragile-link",
                        finding_key("broken", "fragile-link", rel, unit.title if line else ""),
                        ctx.abs_path(doc), rel, line or None,
                        f"{n} other files link to the {what} by path; it has no ID, so "
                        "those links break when it moves"
                        + (f" (no fix: {blocked})" if blocked else ""),
                        unit.title, {"linked_from": n}, fix,
                    )
                )
        return out


CHECK = register_check(BrokenCheck())

__all__ = ["CHECK", "BrokenCheck", "rank_candidates"]
