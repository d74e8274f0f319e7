"""``Cairn``: the composition root and the public Python API.

Built from a :class:`cairn.config.Config`, it opens the store and wires the indexer and
the searcher; every interface (CLI, and later HTTP, MCP, web) calls one method of it.

Example::

    from cairn.app import Cairn

    with Cairn.open(db="notes.db") as cairn:
        run = cairn.index(["~/notes"])
        for hit in cairn.search("tag:work budget").hits:
            print(hit.title, hit.abs_path, hit.line_start)
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any

from cairn.config import Config, load_config
from cairn.errors import CairnError, NotFound
from cairn.export.graph import render as render_graph
from cairn.graph.expand import ExpandConfig
from cairn.graph.service import GraphService
from cairn.ingest.embedding import EmbedProgress, EmbedReport
from cairn.ingest.pipeline import Indexer, Progress, make_root
from cairn.model import Diagnostic, Hit, Run, SourceRoot
from cairn.search.eval import EvalReport
from cairn.search.service import SearchResult, SemanticConfig, SemanticService
from cairn.sources import is_within
from cairn.store import Store, open_store


class Cairn:
    """One knowledge base: a store plus the services over it.

    Args:
        config: the frozen configuration (see :func:`cairn.config.load_config`).

    Raises:
        cairn.errors.StoreError: the index cannot be opened.
    """

    def __init__(self, config: Config, *, create: bool = True) -> None:
        self.config = config
        if not create and not config.db_path.exists():
            raise NotFound(
                f"{config.db_path}: no index here yet; run `cairn index FOLDER` first "
                "(or choose an index with --db / CAIRN_DB)"
            )
        self.store: Store = open_store(config.db_path)
        self.graph = GraphService(
            self.store,
            renderer=render_graph,
            expand_config=ExpandConfig.from_mapping(config.graph),
        )
        self.semantic = SemanticService(
            self.store,
            config.search,
            SemanticConfig.load(config.config_file),
            graph=self.graph,
        )
        self.last_embed: EmbedReport | None = None

    @classmethod
    def open(
        cls,
        *,
        db: str | os.PathLike[str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
        create: bool = True,
    ) -> Cairn:
        """Load the configuration (``--db``, ``CAIRN_DB``, ``cairn.toml``) and open.

        Raises:
            NotFound: ``create`` is false and there is no index file yet.
            cairn.errors.ConfigError / StoreError: bad configuration or index file.
        """
        return cls(load_config(db=db, config_file=config_file), create=create)

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> Cairn:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- indexing ---------------------------------------------------------------------
    def _parse_options(self) -> dict[str, dict[str, object]]:
        org = self.config.org
        if not (org.tags_exclude_from_inheritance or org.inherited_property_keys):
            return {}
        try:
            from cairn.formats.org import OrgOptions
        except ImportError:
            return {}
        opts = OrgOptions(
            tags_exclude_from_inheritance=frozenset(org.tags_exclude_from_inheritance),
            inherited_property_keys=tuple(org.inherited_property_keys),
        )
        return {"org": {"options": opts}}

    def add_roots(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> list[SourceRoot]:
        """Register folders as source roots (a file registers its folder, limited to it).

        Raises:
            CairnError: a path does not exist.
        """
        roots: list[SourceRoot] = []
        for p in paths:
            path = Path(p).expanduser()
            if not path.exists():
                raise CairnError(f"{path}: no such file or folder")
            if path.is_file():
                real = path.resolve()
                covering = [
                    r for r in self.store.roots() if Path(r.path) in real.parents and not r.include
                ]
                if covering:  # already inside a registered folder: index that one
                    roots.append(covering[0])
                    continue
                root = make_root(path.parent, (*include, path.name), exclude)
                known = {r.id: r for r in self.store.roots()}
                if root.id in known and known[root.id].include:
                    merged = tuple(dict.fromkeys((*known[root.id].include, path.name)))
                    root = SourceRoot(root.id, root.path, merged, root.exclude)
            else:
                root = make_root(path, include, exclude)
            self._refuse_nesting(root)
            self.store.upsert_root(root)
            roots.append(root)
        return roots

    def _refuse_nesting(self, root: SourceRoot) -> None:
        """A folder inside (or around) a registered one would index files twice."""
        new = Path(root.path)
        for r in self.store.roots():
            old = Path(r.path)
            if r.id == root.id:
                continue
            if old in new.parents:
                raise CairnError(
                    f"{new} is inside the registered folder {old}; run `cairn index {old}` "
                    "(use --include/--exclude to narrow it), or remove that folder first "
                    "with `cairn roots --remove`"
                )
            if new in old.parents:
                raise CairnError(
                    f"{new} holds the registered folder {old}; remove it first with "
                    f"`cairn roots --remove {old}` so no file is indexed twice"
                )

    def index(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        progress: Progress | None = None,
        embed: bool = True,
        embed_progress: EmbedProgress | None = None,
    ) -> Run:
        """Index folders (registering them as roots), or every registered root, then
        bring the graph and the embeddings up to date.

        Args:
            paths: folders (or single export files) to index; ``None`` or empty means
                every registered root.
            include / exclude: globs for newly registered roots.
            progress: ``progress(done, total, relpath)`` after each file.
            embed: chunk and embed what changed (``False``: keyword search only until a
                later run embeds; without a model the same happens, with one notice).
            embed_progress: ``progress(done, total, what)`` while embedding.

        Returns:
            The :class:`Run` record (also stored); notices of the embedding pass (model
            missing, turned off) are added to its ``warnings`` as ``info``. The pass's
            own report is in :attr:`last_embed`.
        """
        plist = list(paths or [])
        roots = (
            self.add_roots(plist, include=include, exclude=exclude) if plist else self.store.roots()
        )
        indexer = Indexer(
            self.store,
            config_hash=self.config.fingerprint(),
            parse_options=self._parse_options(),
        )
        run = indexer.run(roots, progress)
        changed = bool(run.added or run.changed or run.removed)
        if changed or self.graph.is_stale():
            self.graph.update(run_id=run.id)
        self.last_embed = None
        if changed or (embed and self.semantic.pending()):
            report = self.semantic.after_index(no_embed=not embed, progress=embed_progress)
            self.last_embed = report
            if report.notices:
                notes = tuple(Diagnostic("", n, severity="info") for n in report.notices)
                run = dataclasses.replace(run, warnings=(*run.warnings, *notes))
        return run

    def roots(self) -> list[SourceRoot]:
        """Registered source roots."""
        return self.store.roots()

    def remove_root(self, path: str | os.PathLike[str]) -> int:
        """Forget a root and its documents; returns the number of documents removed.

        Raises:
            NotFound: no root at that path.
        """
        real = Path(path).expanduser().resolve().as_posix()
        for r in self.store.roots():
            if r.path == real:
                n = self.store.remove_root(r.id)
                self.graph.update()
                return n
        raise NotFound(f"{real}: not a registered source root")

    # --- search -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        explain: bool = False,
        include_alternates: bool = False,
        expand: bool | None = None,
    ) -> SearchResult:
        """Search; see :mod:`cairn.search.query` for the syntax and
        :meth:`cairn.search.service.SearchService.search` for the details.

        Args:
            query: any text; never raises for it.
            mode: ``keyword`` (BM25), ``semantic`` (embeddings) or ``hybrid`` (their
                fusion); ``None`` is hybrid when the index has embeddings, else keyword.
            limit: number of hits (default: ``[search] limit``).
            offset: hits to skip (paging: the next page starts at ``offset + limit``).
            explain: give each hit its ranks, raw scores, fused summands and, with
                ``expand``, the edges walked.
            include_alternates: also chat messages off the canonical branch.
            expand: graph expansion: walk 1–2 hops from the top hits along typed edges
                and re-score (see :mod:`cairn.graph.expand`); ``None``: ``[graph]
                expand`` from the configuration (default off).

        Raises:
            QueryError: ``offset`` is negative.
        """
        if expand is None:
            expand = bool(self.config.graph.get("expand", False))
        return self.semantic.search(
            query,
            mode=mode,
            limit=limit,
            offset=offset,
            explain=explain,
            include_alternates=include_alternates,
            expand=expand,
        )

    def evaluate(
        self,
        folder: str | os.PathLike[str],
        *,
        modes: Sequence[str] = ("keyword", "semantic", "hybrid"),
        split: str = "test",
    ) -> EvalReport:
        """nDCG@10, Recall@100 and MRR@10 per mode on a BEIR-layout data set, indexed
        into a throwaway store (see :mod:`cairn.search.eval`).

        Raises:
            CairnError: the folder is not a BEIR data set.
        """
        return self.semantic.evaluate(Path(folder), modes=modes, split=split)

    # --- lookups ----------------------------------------------------------------------
    def _locate_path(self, text: str) -> tuple[str, str, int | None] | None:
        """``(root id, relpath, line)`` for ``PATH[:LINE]`` given absolute, relative to
        the current folder, or relative to a root."""
        line: int | None = None
        path = text
        head, sep, tail = text.rpartition(":")
        if sep and tail.isdigit() and head:
            path, line = head, int(tail)
        roots = self.store.roots()
        candidates = [Path(path).expanduser()]
        if not candidates[0].is_absolute():
            candidates.append(Path.cwd() / path)
        for cand in candidates:
            real = cand.resolve() if cand.exists() else cand.absolute()
            for r in roots:
                rp = Path(r.path)
                if is_within(rp, real) and real != rp:
                    rel = real.relative_to(rp).as_posix()
                    if self.store.documents_at(r.id, rel):
                        return r.id, rel, line
        for r in roots:
            if self.store.documents_at(r.id, path):
                return r.id, path, line
        return None

    def show(self, ref: str) -> dict[str, Any]:
        """A document or unit with its metadata, outline, links and backlinks.

        Args:
            ref: a unit id, a document id, a unique id prefix, or ``PATH[:LINE]``
                (a line selects the unit whose span holds it).

        Returns:
            ``{"kind": "document", "document": {...}, "units": [...]}`` or
            ``{"kind": "unit", "unit": {...}, "document": {...}}``.

        Raises:
            NotFound: nothing matches ``ref``, or a prefix is ambiguous.
        """
        unit = self.store.unit(ref)
        if unit is not None:
            return self._unit_view(unit)
        doc = self.store.document(ref)
        if doc is not None:
            return self._document_view(doc)
        loc = self._locate_path(ref)
        if loc is not None:
            root_id, rel, line = loc
            docs = self.store.documents_at(root_id, rel)
            if line is not None:
                for d in docs:
                    units = self.store.units_of(d["id"])
                    best = [u for u in units if u["line_start"] <= line <= u["line_end"]]
                    if best:
                        return self._unit_view(max(best, key=lambda u: u["line_start"]))
                last = max(
                    (u["line_end"] for d in docs for u in self.store.units_of(d["id"])),
                    default=0,
                )
                if line < 1 or line > last:
                    raise NotFound(f"{rel}: line {line} is outside the file (1-{last})")
            if len(docs) == 1:
                return self._document_view(docs[0])
            return {
                "kind": "file",
                "path": rel,
                "documents": [self._document_dict(d) for d in docs],
            }
        matches = self.store.find_ids(ref) if len(ref) >= 4 else []
        if len(matches) == 1:
            return self.show(matches[0][1])
        if len(matches) > 1:
            raise NotFound(f"{ref}: ambiguous id prefix ({len(matches)} matches)")
        raise NotFound(f"{ref}: no document, unit or indexed file matches")

    def _document_dict(self, d: Any) -> dict[str, Any]:
        return {
            "id": d["id"],
            "title": d["title"],
            "format": d["format"],
            "path": d["path"],
            "abs_path": f"{d['root_path'].rstrip('/')}/{d['path']}",
            "root": d["root_path"],
            "key": d["key"],
            "type": d["type"],
            "tags": json.loads(d["tags"]),
            "aliases": json.loads(d["aliases"]),
            "created": d["created"],
            "modified": d["modified"],
            "metadata": json.loads(d["metadata"]),
            "warnings": json.loads(d["warnings"]),
            "size": d["size"],
            "mtime": d["mtime"],
        }

    def _unit_dict(self, u: Any) -> dict[str, Any]:
        return {
            "id": u["id"],
            "ordinal": u["ordinal"],
            "level": u["level"],
            "kind": u["kind"],
            "title": u["title"],
            "outline_path": json.loads(u["outline_path"]),
            "parent_id": u["parent_id"],
            "tags": json.loads(u["tags"]),
            "inherited_tags": json.loads(u["inherited_tags"]),
            "properties": json.loads(u["properties"]),
            "todo": u["todo"],
            "todo_state": u["todo_state"],
            "priority": u["priority"],
            "timestamps": json.loads(u["timestamps"]),
            "org_id": u["org_id"],
            "custom_id": u["custom_id"],
            "language": u["language"],
            "line_start": u["line_start"],
            "line_end": u["line_end"],
            "extra": json.loads(u["extra"]),
            "body": u["body"],
        }

    def _links(self, unit_ids: list[str]) -> list[dict[str, Any]]:
        return (
            [
                {
                    "unit_id": r["unit_id"],
                    "kind": r["kind"],
                    "target": r["target"],
                    "alias": r["alias"],
                    "anchor": r["anchor"],
                    "line": r["line"],
                    "resolved_document_id": r["resolved_document_id"],
                    "resolved_unit_id": r["resolved_unit_id"],
                    "unresolved_reason": r["unresolved_reason"],
                }
                for r in self.store.links_of(unit_ids)
            ]
            if unit_ids
            else []
        )

    def backlinks(self, document_id: str) -> list[dict[str, Any]]:
        """Links from anywhere in the index that resolve to this document."""
        return [
            {
                "source_document_id": r["document_id"],
                "source_unit_id": r["unit_id"],
                "source_title": r["source_title"],
                "source_path": r["source_path"],
                "kind": r["kind"],
                "target": r["target"],
                "anchor": r["anchor"],
                "line": r["line"],
                "resolved_unit_id": r["resolved_unit_id"],
            }
            for r in self.store.backlinks(document_id)
        ]

    def _document_view(self, d: Any) -> dict[str, Any]:
        units = self.store.units_of(d["id"])
        return {
            "kind": "document",
            "document": self._document_dict(d),
            "units": [{k: v for k, v in self._unit_dict(u).items() if k != "body"} for u in units],
            "links": self._links([u["id"] for u in units]),
            "backlinks": self.backlinks(d["id"]),
        }

    def _unit_view(self, u: Any) -> dict[str, Any]:
        doc = self.store.document(u["document_id"])
        view = {
            "kind": "unit",
            "unit": self._unit_dict(u),
            "document": self._document_dict(doc) if doc else None,
            "links": self._links([u["id"]]),
            "siblings": self.store.siblings(u["document_id"], u["parent_id"], u["id"]),
        }
        return view

    def read_file(self, path: str | os.PathLike[str]) -> str:
        """The text of an indexed file, refusing any path that resolves outside a root.

        Raises:
            NotFound: the path is outside every source root or is not a file.
        """
        p = Path(path).expanduser()
        for r in self.store.roots():
            rp = Path(r.path)
            cand = p if p.is_absolute() else rp / p
            if is_within(rp, cand) and cand.is_file():
                return cand.read_text(encoding="utf-8", errors="replace")
        raise NotFound(f"{p}: not a file inside a registered source root")

    # --- status -----------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Counts per format, the last run, failed files and document warnings."""
        run = self.store.last_run()
        return {
            "db": str(self.config.db_path),
            "schema_version": self.store.schema_version,
            **self.store.counts(),
            "last_run": run_dict(run) if run else None,
            "failed_files": [
                {
                    "root": r["root_path"],
                    "path": r["path"],
                    "status": r["status"],
                    "reason": r["reason"],
                    "line": r["line"],
                }
                for r in self.store.failed_files()
            ],
            "warnings": [
                {"root": root, "path": path, **w}
                for root, path, ws in self.store.document_warnings()
                for w in ws
            ],
        }

    def validate(
        self, paths: Iterable[str | os.PathLike[str]] | None = None
    ) -> list[dict[str, Any]]:
        """Check note types (``types.yaml``) and OKF bundle conformance.

        Args:
            paths: registered root folders to check (default: every root). Index them
                first: type checks read the indexed notes.

        Returns:
            Diagnostics as dicts ``{path, line, severity, message}``; ``severity`` is
            ``error`` (an OKF conformance failure), ``warning`` or ``info``.

        Raises:
            NotFound: a path is not a registered root.
            cairn.errors.ConfigError: a ``types.yaml`` is malformed.
        """
        from cairn.maintain.validate import validate_roots

        roots = self.store.roots()
        if paths:
            wanted = {Path(p).expanduser().resolve().as_posix() for p in paths}
            chosen = [r for r in roots if r.path in wanted]
            missing = wanted - {r.path for r in chosen}
            if missing:
                raise NotFound(f"{sorted(missing)[0]}: not a registered source root")
            roots = chosen
        fallback = (
            self.config.config_file.parent / "types.yaml" if self.config.config_file else None
        )
        return [
            {"path": d.path, "line": d.line, "severity": d.severity, "message": d.message}
            for d in validate_roots(self.store, roots, types_file=fallback)
        ]

    def is_empty(self) -> bool:
        """Whether nothing has been indexed yet."""
        return bool(self.store.counts()["documents"] == 0)

    def check(self) -> list[str]:
        """Integrity problems of the index (empty when healthy)."""
        return self.store.integrity_check()


def run_dict(run: Run) -> dict[str, Any]:
    """A run record as plain JSON-ready data."""
    d = asdict(run)
    return d


def hit_dict(hit: Hit) -> dict[str, Any]:
    """A hit as plain JSON-ready data (see the README's JSON section)."""
    d = asdict(hit)
    d["outline_path"] = list(hit.outline_path)
    d["tags"] = list(hit.tags)
    d["siblings"] = list(hit.siblings)
    return d
