"""``cairn.export``: indexed knowledge written out as an OKF bundle, an Obsidian vault or
JSON (see :mod:`cairn.export.notes`), and the round-trip comparison of a root with the
index of its export (:class:`ExportService`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlsplit

from cairn.conversations import reading_order
from cairn.errors import CairnError, NotFound
from cairn.export.results import RoundTrip
from cairn.sources import is_within

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.export.notes import ExportReport
    from cairn.model import Document, Edge, Run, SourceRoot
    from cairn.store import Store

KINDS = ("okf", "obsidian", "json")


class Scratch(Protocol):
    """A throwaway index the round trip indexes an export into."""

    @property
    def store(self) -> Store:
        """Its store."""
        ...

    def index(self, paths: Sequence[str | os.PathLike[str]], *, embed: bool = True) -> Run:
        """Index folders."""
        ...


class ExportService:
    """``cairn export`` and its round-trip check over one index.

    Args:
        store: the index.
        config: the configuration (``[redact] on_ingest``).
        keyword_documents: ``keyword_documents(query) -> document ids`` with a keyword
            hit (at most 10,000 hits).
        shown_text: ``shown_text(root id, relpath, text)``: a file's text as the index
            shows it (masked as redaction masks it).
        fresh_graph: brings the graph up to date when the index changed.
        scratch: ``scratch(index file)``: a new throwaway index, closed on exit.
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        *,
        keyword_documents: Callable[[str], set[str]],
        shown_text: Callable[[str, str, str], str],
        fresh_graph: Callable[[], object],
        scratch: Callable[[Path], AbstractContextManager[Scratch]],
    ) -> None:
        self._store = store
        self._config = config
        self._keyword_documents = keyword_documents
        self._shown_text = shown_text
        self._fresh_graph = fresh_graph
        self._scratch = scratch

    def _export_roots(self, roots: Sequence[str | os.PathLike[str]] | None) -> list[SourceRoot]:
        known = self._store.roots()
        if not roots:
            return known
        out: list[SourceRoot] = []
        for r in roots:
            real = Path(r).expanduser().resolve()
            match = [k for k in known if Path(k.path) == real or is_within(Path(k.path), real)]
            if not match:
                raise NotFound(f"{real}: not a registered source root")
            out.extend(m for m in match if m not in out)
        return out

    def _export_docs(
        self, roots: Sequence[str | os.PathLike[str]] | None, query: str | None
    ) -> tuple[list[tuple[str, Document]], dict[str, str]]:
        keep: set[str] | None = None
        if query:  # a hit by its words or filters: by meaning, every note is "a hit"
            keep = self._keyword_documents(query)
        docs: list[tuple[str, Document]] = []
        abs_of: dict[str, str] = {}
        chosen = self._export_roots(roots)
        within = self._export_folders(roots)
        for root in chosen:
            name = Path(root.path).name if len(chosen) > 1 else ""
            for d in self._store.documents_of_root(root.id):
                if (keep is None or d.id in keep) and _inside(d.path, within.get(root.id)):
                    docs.append((name, d))
                    abs_of[d.id] = os.path.join(root.path, d.path)
        return docs, abs_of

    def _export_folders(
        self, roots: Sequence[str | os.PathLike[str]] | None
    ) -> dict[str, tuple[str, ...]]:
        """Root id → the root-relative folders asked for inside it (``--root`` naming a
        folder within a registered one exports only that folder); a root named itself,
        or not at all, is absent (everything in it)."""
        out: dict[str, tuple[str, ...]] = {}
        whole: set[str] = set()
        known = self._store.roots()
        for r in roots or ():
            real = Path(r).expanduser().resolve()
            for k in known:
                top = Path(k.path)
                if top == real or is_within(real, top):
                    whole.add(k.id)
                elif is_within(top, real):
                    rel = real.relative_to(top.resolve()).as_posix()
                    out[k.id] = (*out.get(k.id, ()), rel)
        return {k: v for k, v in out.items() if k not in whole}

    def write(
        self,
        kind: str,
        dest: str | os.PathLike[str],
        *,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        query: str | None = None,
    ) -> ExportReport:
        """Write the indexed documents of ``roots`` (default: all), or only those with a
        hit for ``query``, to ``dest``.

        Args:
            kind: ``okf`` (a bundle folder), ``obsidian`` (a vault folder) or ``json``
                (one file: ``{"documents", "units", "links", "edges"}`` as the API
                serialises them).
            dest: a new or empty folder (``okf``, ``obsidian``) or a new file (``json``).

        Raises:
            CairnError: unknown kind, or ``dest`` exists (never overwritten).
            NotFound: a root is not registered.
        """
        from cairn.export.notes import ExportReport, write_obsidian, write_okf

        if kind not in KINDS:
            raise CairnError(f"export kind {kind!r}: use one of {', '.join(KINDS)}")
        docs, abs_of = self._export_docs(roots, query)
        edges = self._edges() if docs else []
        units = {d.id: reading_order(self._store.units_of(d.id)) for _, d in docs}
        if kind == "okf":
            raw: dict[str, bytes] = {}
            for _, d in docs:
                if d.format in ("markdown", "okf", "org") and not d.key:
                    try:
                        raw[d.id] = self._export_bytes(d, Path(abs_of[d.id]).read_bytes())
                    except OSError:
                        continue
            _, links = units_links(self._store, [d for _, d in docs])
            from cairn.formats.markdown import block_ranges

            return write_okf(Path(dest), docs, edges, abs_of, units, raw=raw, links=links,
                             attachments=self._export_attachments(roots, len(docs)),
                             blocks_of=block_ranges)
        if kind == "obsidian":
            data: dict[str, bytes] = {}
            for _, d in docs:
                if not d.key:
                    try:
                        data[d.id] = self._export_bytes(d, Path(abs_of[d.id]).read_bytes())
                    except OSError:
                        continue
            _, links = units_links(self._store, [d for _, d in docs])
            return write_obsidian(Path(dest), docs, data, units, links,
                                  attachments=self._export_attachments(roots, len(docs)))
        from cairn.model.serialize import to_json
        from cairn.writeback import create_file

        ids = {d.id for _, d in docs}
        all_units = [u for _, d in docs for u in units[d.id]]
        payload: dict[str, Any] = {
            "documents": [self._store.document(i) for i in sorted(ids)],
            "units": all_units,
            "links": self._store.links_of([u.id for u in all_units]),
            "edges": [e for e in edges if e.source_document_id in ids],
        }
        target = Path(os.path.abspath(dest))
        create_file(target, to_json(payload).encode())
        rep = ExportReport("json", str(target), documents=len(ids), files=[target.name])
        rep.relations = len(payload["edges"])
        rep.links = len(payload["links"])
        return rep

    def _export_bytes(self, doc: Document, data: bytes) -> bytes:
        """A source file's bytes as an export may write them: as read when its
        documents are indexed as written (``on_ingest = "off"``), else with every
        finding masked as the index holds it (text that is not UTF-8 cannot be
        masked: ``OSError``, and the document is exported from its masked units or
        skipped)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None:
            table = dict(self._config.redact.get("on_ingest", {}))
            from cairn.redact import format_mode

            if format_mode(doc.format, False, table) == "off":
                return data
            raise OSError(f"{doc.path}: not UTF-8, cannot be masked")
        shown: str = self._shown_text(doc.root_id, doc.path, text)
        return data if shown == text else shown.encode("utf-8")

    def _export_attachments(
        self, roots: Sequence[str | os.PathLike[str]] | None, n_docs: int
    ) -> list[tuple[str, str, str]]:
        """``(root name, relpath, absolute path)`` of the exported roots' non-note files
        (the root name only when several roots are exported, as for documents)."""
        chosen = self._export_roots(roots)
        by_id = {r.id: r for r in chosen}
        out: list[tuple[str, str, str]] = []
        within = self._export_folders(roots)
        for root_id, rel in self._store.attachments():
            r = by_id.get(root_id)
            if r is not None and n_docs and _inside(rel, within.get(root_id)):
                name = Path(r.path).name if len(chosen) > 1 else ""
                out.append((name, rel, os.path.join(r.path, rel)))
        return out

    @staticmethod
    def _org_drawer_links(
        root: str, docs: Sequence[Document], units: Mapping[str, Any],
        links: Mapping[str, list[Any]], notes: dict[str, list[tuple[int, str]]],
    ) -> tuple[dict[str, list[Any]], dict[str, int]]:
        """``links`` without those of the Org documents' drawers, which an export keeps
        in an HTML comment (:data:`cairn.export.org_markdown.DRAWER_LINK`), and how many
        were left out, with the inline footnotes of Org headlines the export writes as
        text (:data:`cairn.export.org_markdown.HEADING_NOTE`), the partly done
        checkboxes it writes as not done (``PARTIAL_BOX``) and the file links whose
        search option names no heading (``SEARCH_OPTION``): ``{reason: count}``
        (empty when none). Fills ``notes``: each Org document's footnote references
        (:func:`cairn.export.org_markdown.org_footnotes`)."""
        from cairn.export.org_markdown import (
            DRAWER_LINK,
            HEADING_NOTE,
            PARTIAL_BOX,
            SEARCH_OPTION,
            drawer_lines,
            org_footnotes,
        )

        kept = dict(links)
        left = headed = partial = searched = 0
        for d in docs:
            if d.format != "org" or d.key:
                continue
            for u in units.get(d.id, ()):
                boxes = u.extra.get("checkboxes")
                partial += boxes.get("partial", 0) if isinstance(boxes, dict) else 0
                searched += sum(1 for x in links.get(u.id, ())
                                if x.kind == "org-file" and x.anchor
                                and x.resolved_document_id and not x.resolved_unit_id)
            try:
                text = (Path(root) / d.path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            notes[d.id], _, n = org_footnotes(text)
            headed += n
            inside = drawer_lines(text)
            if not inside:
                continue
            for u in units.get(d.id, ()):
                own = kept.get(u.id, [])
                rest = [x for x in own if x.line not in inside]
                left += len(own) - len(rest)
                kept[u.id] = rest
        found = {DRAWER_LINK: left, HEADING_NOTE: headed, PARTIAL_BOX: partial,
                 SEARCH_OPTION: searched}
        return kept, {k: n for k, n in found.items() if n}

    def _edges(self) -> list[Edge]:
        """Every graph edge, the graph brought up to date first."""
        self._fresh_graph()
        return self._store.edges.all_edges()

    def compare(
        self,
        root: str | os.PathLike[str],
        *,
        kind: str = "okf",
        exported: str | os.PathLike[str] | None = None,
    ) -> RoundTrip:
        """The round trip: export ``root`` (a registered Markdown or OKF folder), index
        the export into a throwaway index, and compare units, links and edges (see
        :func:`cairn.export.signature.signature`; ``tasks``: each heading's task keyword,
        priority and planning dates, :mod:`cairn.export.tasks`): a link or embed that
        resolved in the root (to a note, or to an existing attachment) and does not in
        the export is a difference. ``exported``: compare with this export folder, already written,
        instead of writing one.

        Returns:
            A :class:`~cairn.export.results.RoundTrip`: counts on each side, per aspect
            how many items the export lost and added and what they are (at most 20
            each).

        Raises:
            NotFound: ``root`` is not registered.
        """
        import tempfile

        from cairn.export.signature import org_words, signature
        from cairn.export.tasks import markdown_tasks, org_tasks

        (r,) = self._export_roots([root])[:1]
        with tempfile.TemporaryDirectory(prefix="cairn-roundtrip-") as tmp:
            out = Path(tmp) / Path(r.path).name
            renamed = 0
            if exported is None:
                renamed = len(self.write(kind, out, roots=[r.path]).renamed)
            else:
                out = Path(exported).expanduser().resolve()
            mine = self._store.documents_of_root(r.id)
            mine_units, mine_links = units_links(self._store, mine)
            tasks: set[tuple[str, ...]] = set()
            for d in mine:
                if d.format == "org":
                    tasks |= org_tasks(d.title, mine_units.get(d.id, ()))
            keywords = {t[2] for t in tasks if t[2]}
            keywords_of: dict[str, set[str]] = {}
            for t in tasks:
                keywords_of.setdefault(t[0], set()).add(t[2])
            org = {d.title for d in mine if d.format == "org"}
            notes: dict[str, list[tuple[int, str]]] = {}
            mine_links, exceptions = self._org_drawer_links(r.path, mine, mine_units,
                                                             mine_links, notes)
            mine_links, anchors = _org_self_anchors(mine, mine_units, mine_links)
            exceptions.update(anchors)
            a = signature(mine, self._edges(), mine_units, mine_links, keywords=keywords,
                          okf=kind == "okf", org=org, footnotes=notes)
            a["tasks"] = tasks
            a["index"] = {(h,) for h in index_links(out)} if kind == "okf" else set()
            md = {d.title for d in mine if d.format == "markdown"}
            a["display"] = _marks(Path(r.path), [d for d in mine if d.title in md])
            if renamed:
                exceptions[RENAMED] = renamed
            for d in mine:  # a note's own "[#A] …" headings and "scheduled::" fields
                if d.format != "org":
                    a["tasks"] |= markdown_tasks(d.title, mine_units.get(d.id, ()),
                                                 keywords_of.get(d.title, ()))
            with self._scratch(Path(tmp) / "roundtrip.db") as other:
                other.index([out], embed=False)
                (o,) = other.store.roots()
                theirs = other.store.documents_of_root(o.id)
                their_units, their_links = units_links(other.store, theirs)
                b = signature(
                    theirs, other.store.edges.all_edges(), their_units, their_links,
                    exact=kind == "okf", keywords=keywords, org=org,
                )
                b["tasks"] = set()
                b["index"] = {h for h in a["index"] if _resolves(out, h[0])}
                b["display"] = _marks(out, [d for d in theirs if d.title in md])
                for d in theirs:  # Org keywords are per file (#+TODO): a note's own
                    b["tasks"] |= markdown_tasks(d.title, their_units.get(d.id, ()),
                                                 keywords_of.get(d.title, ()))
        for side in (a, b):  # an Org heading's title as its words (see signature)
            side["tasks"] = {(t[0], " ".join(org_words(t[1])), *t[2:]) if t[0] in org else t
                             for t in side["tasks"]}
        lost = {k: sorted(a[k] - b[k]) for k in a}
        added = {k: sorted(b[k] - a[k]) for k in a}
        missing = {k: tuple(v[:20]) for k, v in lost.items()}
        extra = {k: tuple(v[:20]) for k, v in added.items()}
        return RoundTrip(
            root=r.path,
            kind=kind,
            same=not any(missing.values()) and not any(extra.values()),
            documents=(len(mine), len(theirs)),
            counts={k: (len(a[k]), len(b[k])) for k in a},
            differences={k: (len(lost[k]), len(added[k])) for k in a},
            exceptions=exceptions,
            missing=missing,
            extra=extra,
        )


def _org_self_anchors(
    docs: Sequence[Document], units: Mapping[str, Any], links: Mapping[str, list[Any]]
) -> tuple[dict[str, list[Any]], dict[str, int]]:
    """``links`` with each Org ``[[#custom-id]]`` its file lacks, and each ``[[name]]``
    or ``[[*Heading]]`` search of its file that finds nothing, taken as Markdown reads
    its export, a link to its own note (:data:`cairn.export.org_links.SELF_ANCHOR`,
    :data:`~cairn.export.org_links.SELF_SEARCH`), and
    how many there were: ``{reason: count}`` (empty when none). Still a link: one the
    export drops or sends elsewhere is a difference."""
    from dataclasses import replace

    from cairn.export.org_links import SELF_ANCHOR, SELF_SEARCH, self_anchor, self_search

    kept = dict(links)
    found: dict[str, int] = {}
    for d in docs:
        if d.format != "org" or d.key:
            continue
        for u in units.get(d.id, ()):
            own = kept.get(u.id, [])
            kinds = [SELF_ANCHOR if self_anchor(x) else SELF_SEARCH if self_search(x)
                     else None for x in own]
            if any(kinds):
                kept[u.id] = [x if k is None else
                              replace(x, resolved_document_id=d.id, unresolved_reason=None)
                              for x, k in zip(own, kinds, strict=True)]
                for k in kinds:
                    if k is not None:
                        found[k] = found.get(k, 0) + 1
    return kept, found


RENAMED = "notes written under another name (a name the target does not allow, or a " \
    "clash with another note of the folder; --json of the export lists them)"
_MD_LINK = re.compile(r"\]\(([^()\s]+)\)")


def index_links(out: Path) -> set[str]:
    """The link destinations of an OKF bundle's ``index.md`` (empty when it has none)."""
    try:
        text = (out / "index.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    return set(_MD_LINK.findall(text))


def _resolves(out: Path, href: str) -> bool:
    """Whether a relative link of ``index.md`` names an existing file of the bundle."""
    path = unquote(urlsplit(href).path)
    return bool(path) and not path.startswith("/") and (out / path).is_file()


def _marks(folder: Path, docs: Sequence[Document]) -> set[tuple[str, ...]]:
    """``(title, mark, value, count)`` of the Obsidian display marks (callouts, embed
    sizes: :func:`cairn.export.markdown.display_marks`) of ``docs`` under ``folder``."""
    from cairn.export.markdown import display_marks

    out: set[tuple[str, ...]] = set()
    for d in docs:
        if d.key:
            continue
        try:
            text = (folder / d.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for (mark, value), n in display_marks(text).items():
            out.add((d.title, mark, value, str(n)))
    return out


def _inside(relpath: str, folders: Sequence[str] | None) -> bool:
    """Whether a root-relative path lies in one of ``folders`` (``None``: the whole
    root)."""
    return folders is None or any(
        f in (".", "") or relpath == f or relpath.startswith(f.rstrip("/") + "/")
        for f in folders
    )


def units_links(
    store: Store, docs: Sequence[Document]
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Each document's units in reading order, and each unit's links."""
    units = {d.id: reading_order(store.units_of(d.id)) for d in docs}
    links: dict[str, list[Any]] = {}
    for link in store.links_of([u.id for us in units.values() for u in us]):
        links.setdefault(link.unit_id, []).append(link)
    return units, links
