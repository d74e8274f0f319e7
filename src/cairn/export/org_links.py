"""Where each Org link of an exported file points, written as Markdown.

The index knows where every link of the file resolved (its stored links, matched here
by line, kind, target and anchor). A link to an exported note becomes a wikilink
(Obsidian) or a bundle-absolute Markdown link (OKF) to it, with the heading as anchor;
a link to an existing attachment a link to its copy; a URL a Markdown link labelled
as Org shows it; anything else — an ``id:`` no heading has, a missing file, a heading that is
not there — stays a visible Markdown link to its target as written, which resolves no
better in the export than it did in Org (nothing is dropped, nothing is made up). The
exceptions are :data:`SELF_ANCHOR` and :data:`SELF_SEARCH`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

from cairn.export.files import attachment_of, attachment_rel
from cairn.export.markdown import md_anchor, md_href
from cairn.export.org_inline import Render
from cairn.model import ORG_FILE, ORG_HEADING, ORG_ID, URL, Link, StoredLink

_IMAGE = frozenset(["png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "avif"])
_DEST_BAD = re.compile(r"[<>\n]")


SELF_ANCHOR = ("link to a custom id its Org file lacks (Markdown reads the anchor as "
               "a link to its own note)")
"""A difference of a round trip of Org by design: ``[[#routing]]`` names the heading
whose ``CUSTOM_ID`` is ``routing`` in the same file, and Org leaves it unresolved when the
file has none (a project that assembles one document from several files may keep it in
another). The export writes it as Org's HTML export does, ``[label](#routing)``, an
anchor in the same note; Markdown (Obsidian, cairn) reads a link to an anchor its note
lacks as a link to the note, and no Markdown link says "unresolved anchor". Making it
unresolved would mean writing a link to a file that does not exist (a click in Obsidian
creates it) or plain text (no longer a link), so the export keeps the link and
``export compare`` names it (:func:`self_anchor`)."""


def self_anchor(link: StoredLink) -> bool:
    """Whether an Org link is one the export writes as an anchor of its own note that
    Markdown resolves to the note where Org resolved nothing (:data:`SELF_ANCHOR`): an
    unresolved ``[[#custom-id]]``."""
    return (
        link.kind == ORG_HEADING
        and link.target.startswith("#")
        and link.resolved_document_id is None
        and attachment_of(link.unresolved_reason) is None
    )


SELF_SEARCH = ("link to a heading or target its Org file lacks (Markdown reads the anchor "
               "as a link to its own note)")
"""A difference of a round trip of Org by design: ``[[name]]`` and ``[[*Heading]]``
search the file they stand in (a ``<<name>>`` target, a radio target, a heading), and
Org leaves the link unresolved when the file has no such place. Written as a link to a
file of that name it would resolve, on reading the export, to another note that happens
to share the name (a wrong link), so the export writes it as an anchor of its own note,
``[label](#name)``; Markdown reads a link to an anchor its note lacks as a link to the
note, and ``export compare`` names it (:func:`self_search`)."""


def self_search(link: StoredLink) -> bool:
    """Whether an Org link is a search of its own file that Org leaves unresolved
    (:data:`SELF_SEARCH`): an unresolved ``[[name]]`` or ``[[*Heading]]``."""
    return (
        link.kind == ORG_HEADING
        and not link.target.startswith("#")
        and link.resolved_document_id is None
        and attachment_of(link.unresolved_reason) is None
    )


def _dest(target: str) -> str:
    """A link destination CommonMark reads as written (``<…>`` allows spaces)."""
    t = _DEST_BAD.sub(lambda m: f"%{ord(m.group()):02X}", target)
    return f"<{t}>" if (" " in t or "(" in t or ")" in t or not t) else t


def _plain(label: str) -> str:
    """A wikilink alias: one line, no ``|`` or brackets."""
    return " ".join(re.sub(r"[\[\]|]", " ", label).split())


def link_renderer(
    stored: Sequence[StoredLink],
    rel_of: Mapping[str, str],
    heading_of: Mapping[str, str],
    *,
    root_name: str,
    okf: bool,
    counter: list[int],
) -> Render:
    """A :data:`~cairn.export.org_inline.Render` for one file. ``stored``: its stored
    links; ``rel_of``: document id → exported path (``.md``); ``heading_of``: unit id →
    heading title (the anchor); ``root_name``: the folder of the root in the export
    (``""`` for one root); ``okf``: Markdown links, else wikilinks for notes;
    ``counter[0]`` counts the links written to exported notes."""
    pending: dict[tuple[int | None, str, str, str | None], list[StoredLink]] = {}
    for x in stored:
        pending.setdefault((x.line, x.kind, x.target, x.anchor), []).append(x)

    def render(link: Link, label: str, shown: str) -> str:
        found = pending.get((link.line, link.kind, link.target, link.anchor))
        hit = found.pop(0) if found else None
        doc = hit.resolved_document_id if hit is not None else None
        if link.kind in (ORG_ID, ORG_FILE, ORG_HEADING) and doc in rel_of:
            counter[0] += 1
            path = rel_of[str(doc)]
            anchor = heading_of.get(hit.resolved_unit_id or "") if hit is not None else None
            if okf:
                return f"[{label}]({md_href(path, anchor)})"
            target = path.removesuffix(".md")
            if anchor:
                target += "#" + " ".join(re.sub(r"[\[\]|#^]", " ", anchor).split())
            return f"[[{target}|{_plain(shown)}]]"
        att = attachment_of(hit.unresolved_reason) if hit is not None else None
        if att is not None:
            href = "/" + attachment_rel(root_name, att)
            ext = posixpath.splitext(att)[1].lower().lstrip(".")
            bang = "!" if ext in _IMAGE and not link.alias else ""
            return f"{bang}[{'' if bang else label}]({_dest(href)})"
        if link.kind == URL:  # labelled: an autolink would show it percent-decoded
            return f"[{label}]({_dest(link.target)})"
        if link.kind == ORG_ID:
            target = "id:" + link.target
        elif link.kind == ORG_HEADING and link.target.startswith("#"):  # SELF_ANCHOR
            target = "#" + link.target[1:].replace("#", "%23")
        elif link.kind == ORG_HEADING:  # a search of this file, unresolved: SELF_SEARCH
            return f"[{label}]({md_anchor(link.target.removeprefix('*').strip())})"
        else:
            target = link.target
        return f"[{label}]({_dest(target)})"

    return render
