"""``cairn.memory``: agent memory on OKF bundles — remember, recall, consolidate,
maintain, pin, forget, relate, supersede, verify and graph import
(:class:`MemoryService`; the bundle rules are in :mod:`cairn.memory`).

Each operation takes the bundle's lock, writes through safe write-back (retrying from a
fresh read when a file changed meanwhile), releases the lock and indexes exactly the
files it touched with the index's ``index_paths`` (waiting for another writer of the
index). The bundle is registered as a source root on first use when no registered root
holds it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cairn.sources import is_within

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.embed.base import Embedder
    from cairn.memory.bundle import MemoryBundle
    from cairn.memory.maintain import MaintainReport
    from cairn.memory.migrate import ImportReport
    from cairn.memory.ops import Consolidated, Remembered
    from cairn.memory.recall import RecallResult
    from cairn.memory.similarity import Proposer
    from cairn.memory.verify import SealProblem
    from cairn.model import Hit, Run
    from cairn.store import Store

T = TypeVar("T")
RETRIES = 8
"""Attempts of one operation when a file changes under it (compare-and-swap)."""
INDEX_WAIT = 120.0
"""Seconds an operation waits for another writer of the index before indexing."""


@dataclass(frozen=True)
class MemoryChange:
    """What a small memory operation did: the ``action`` (``pin``, ``forget`` …), the
    bundle-relative ``path`` it ends at, the files it ``touched`` and, for a dry run,
    the ``diffs`` it would write."""

    action: str
    path: str
    touched: tuple[str, ...]
    dry_run: bool = False
    diffs: tuple[str, ...] = ()
    detail: dict[str, Any] | None = None


@dataclass(frozen=True)
class VerifyReport:
    """``verify``: memories ``checked``, ``problems`` (seals, duplicates, missing
    memories, a write left half done; empty: all intact)."""

    bundle: str
    checked: int
    problems: tuple[SealProblem, ...]

    @property
    def ok(self) -> bool:
        """No problems."""
        return not self.problems


Search = Callable[[str, "str | None", int], "Sequence[Hit]"]
"""``search(query, mode, limit) -> hits``: the index's search."""


class MemoryService:
    """Agent memory on the OKF bundles of one index.

    Args:
        store: the index.
        config: the configuration (``backup_folder``, ``[enrich]``).
        index: ``index(folders, wait=)``: index folders (registering them as roots).
        index_paths: ``index_paths(files, wait=, allow_mass_delete=)``.
        search: ``search(query, mode, limit) -> hits``.
        embedder: the configured embedding model (``None``: none available).
        prune_backups: drops backups past ``[backup]`` retention after a maintenance
            cycle rewrote concepts.
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        *,
        index: Callable[..., Run],
        index_paths: Callable[..., Run],
        search: Search,
        embedder: Callable[[], Embedder | None],
        prune_backups: Callable[[], object],
    ) -> None:
        self._store = store
        self._config = config
        self._index = index
        self._index_paths = index_paths
        self._search = search
        self._embedder = embedder
        self._prune_backups = prune_backups

    def _memory_bundle(self, folder: str | os.PathLike[str], dry_run: bool = False) -> MemoryBundle:
        from cairn.memory.bundle import MemoryBundle
        from cairn.writeback import Backups

        return MemoryBundle(
            Path(folder).expanduser(), Backups(self._config.backup_folder), dry_run=dry_run
        )

    def _memory_op(
        self,
        folder: str | os.PathLike[str],
        op: Callable[[MemoryBundle], T],
        *,
        dry_run: bool = False,
        label: str = "memory write",
    ) -> tuple[T, MemoryBundle]:
        """Run ``op`` on the bundle under its lock as one transaction (its writes all
        or nothing across a crash, named ``label`` in the journal), retried on a write
        conflict, then index the files it touched."""
        from cairn.memory.bundle import MemoryError_
        from cairn.writeback import WriteConflict

        first = self._memory_bundle(folder, dry_run)
        registered = self._memory_registered(first.folder)
        if not dry_run:
            first.ensure()
        else:  # a dry run may plan into a folder that does not exist yet
            first.check_folder()
        last: WriteConflict | None = None
        for _ in range(RETRIES):
            bundle = self._memory_bundle(folder, dry_run)
            try:
                with bundle.locked(), bundle.transaction(label):
                    result = op(bundle)
            except WriteConflict as exc:
                last = exc
                if bundle.changes.touched():
                    self._memory_index(bundle, registered)
                    registered = True
                continue
            if not dry_run:
                self._memory_index(bundle, registered)
            return result, bundle
        raise MemoryError_(f"{first.folder}: gave up after {RETRIES} write conflicts: {last}")

    def _memory_registered(self, folder: Path) -> bool:
        return any(is_within(Path(r.path), folder) for r in self._store.roots())

    def _memory_index(self, bundle: MemoryBundle, registered: bool) -> None:
        """Index what the operation touched, ``log.md`` with it (kept small by
        :data:`cairn.memory.bundle.LOG_MAX_BYTES`, so this stays cheap), and the
        bundle's ``index.md``."""
        if not registered and not self._memory_registered(bundle.folder):
            self._index([bundle.folder], wait=INDEX_WAIT)
            return
        touched = [bundle.abs(r) for r in bundle.changes.touched()]
        made = [bundle.folder / n for n in ("index.md", "log.md")]
        if touched:
            # moves (active → subsumed) are this operation's own, not a vanished drive
            self._index_paths(
                list(dict.fromkeys([*made, *touched])), wait=INDEX_WAIT, allow_mass_delete=True
            )

    # --- operations ---------------------------------------------------------------
    def remember(
        self,
        bundle: str | os.PathLike[str],
        text: str,
        *,
        memory_type: str = "FACT",
        scope: str = "INCARNATION",
        tags: Sequence[str] = (),
        title: str | None = None,
        timestamp: str | None = None,
    ) -> Remembered:
        """Write a layer-1 memory (with its seal) into ``memories/active/`` and index it
        at once (:func:`cairn.memory.ops.remember`). ``timestamp``: when the remembered
        event happened (ISO 8601; default now), e.g. the time of a past conversation.

        Raises:
            cairn.memory.bundle.MemoryError_: empty text, unknown type or scope.
            cairn.store.lock.IndexBusy: another writer held the index for too long.
        """
        from cairn.memory.ops import remember

        rec, _ = self._memory_op(
            bundle,
            lambda b: remember(
                b, text, memory_type=memory_type, scope=scope, tags=tags, title=title,
                timestamp=timestamp,
            ),
        )
        return rec

    def recall(
        self,
        bundle: str | os.PathLike[str],
        query: str,
        *,
        limit: int = 10,
        mode: str | None = None,
        expand: bool = True,
        record: bool = True,
    ) -> RecallResult:
        """Search the bundle's concepts and memories (hybrid when the index has
        embeddings), expand one hop over concept relations, and record each recalled
        concept in the access log (``record=False``: do not).

        Raises:
            cairn.memory.bundle.MemoryError_: the bundle folder does not exist.
        """
        from cairn.memory.bundle import MemoryError_, now_iso
        from cairn.memory.recall import RecallResult, recall_hits

        b = self._memory_bundle(bundle)
        if not b.folder.is_dir():
            raise MemoryError_(f"{b.folder}: no such bundle folder")
        root = next(
            (Path(r.path) for r in self._store.roots() if is_within(Path(r.path), b.folder)), None
        )
        prefix = "" if root is None or root == b.folder else (
            b.folder.relative_to(root).as_posix() + "/"
        )
        hits: list[Any] = []
        for part in ("concepts/active/", "memories/active/"):  # one filtered search each
            where = (prefix + part).replace('"', "")
            hits.extend(self._search(f'{query} path:"{where}"', mode, max(30, limit * 3)))
        found = recall_hits(b, hits, limit=limit, expand=expand)
        recorded = 0
        if record:
            concepts = [h.path for h in found if h.kind == "concept"]
            recorded = self._store.access_log.record(str(b.folder), concepts, query, now_iso())
        return RecallResult(query, str(b.folder), tuple(found), recorded)

    def consolidate(
        self,
        bundle: str | os.PathLike[str],
        *,
        dry_run: bool = False,
        threshold: float = 0.35,
        embed: bool = True,
        proposer: Proposer | None = None,
        llm: bool | None = None,
    ) -> tuple[Consolidated, MemoryChange]:
        """Turn new layer-1 memories into layer-2 concepts (merged into an existing
        concept when similar enough) and move them to ``memories/subsumed/``
        (:func:`cairn.memory.ops.consolidate`): clustered by tags and embedding
        similarity with the configured embedder (``embed=False`` or no model: word
        overlap), or as a proposer suggests, checked by the same rules.

        Args:
            proposer: who proposes the clusters (the Python API's hook).
            llm: without a ``proposer``, ask the ``[enrich]`` model
                (:class:`cairn.memory.propose.ModelProposer`, every text masked by the
                redaction masker first): ``None`` when ``[enrich]`` is configured,
                ``True`` always (an error when it is not), ``False`` never.

        Raises:
            cairn.errors.ConfigError: ``llm=True`` without ``[enrich]``, a bad
                ``[enrich]`` value, or its ``api_key_env`` unset.
        """
        from cairn.memory.ops import consolidate

        if proposer is None and llm is not False:
            proposer = self._memory_model_proposer(required=bool(llm))
        emb = self._embedder() if embed else None
        fn = emb.embed if emb is not None else None
        res, b = self._memory_op(
            bundle,
            lambda b: consolidate(b, threshold=threshold, embed=fn, proposer=proposer),
            dry_run=dry_run,
            label="consolidate",
        )
        return res, self._change("consolidate", "", b)

    def _memory_model_proposer(self, *, required: bool) -> Proposer | None:
        """A :class:`ModelProposer` over the ``[enrich]`` provider (``None`` when it is
        not configured and not ``required``)."""
        from cairn.enrich.providers import make_provider
        from cairn.enrich.settings import EnrichSettings
        from cairn.errors import ConfigError
        from cairn.memory.propose import ModelProposer
        from cairn.redact import Masker

        settings = EnrichSettings.from_mapping(self._config.enrich)
        if not settings.configured:
            if required:
                raise ConfigError(
                    "consolidation by a language model needs an [enrich] table in "
                    "cairn.toml (provider, url, model); nothing was changed"
                )
            return None
        provider = make_provider(settings)

        def ask(system: str, user: str) -> str:
            return provider.complete(system, user, max_tokens=settings.max_tokens).text

        return ModelProposer(ask, mask=lambda t: Masker().mask(t))

    def maintain(
        self, bundle: str | os.PathLike[str], *, dry_run: bool = False, decay: bool = True
    ) -> MaintainReport:
        """One maintenance cycle: integrity, symmetry, truth maintenance, Hebbian decay
        (:func:`cairn.memory.maintain.maintain`); the recalls it counted are marked in
        the access log (not on a dry run). ``cairn dream`` calls this for memory
        bundles."""
        from cairn.memory.maintain import maintain

        state: dict[str, int] = {}

        def run(b: MemoryBundle) -> MaintainReport:
            recalls, upto = self._store.access_log.pending(str(b.folder))
            state["upto"] = upto
            return maintain(b, recalls, decay=decay)

        rep, b = self._memory_op(bundle, run, dry_run=dry_run, label="maintain")
        if not dry_run and decay and state.get("upto"):
            self._store.access_log.consume(str(b.folder), state["upto"])
        if not dry_run and rep.changed:  # decay backs up every concept it rewrites
            self._prune_backups()
        return rep

    def pin(
        self, bundle: str | os.PathLike[str], concept: str, *, pinned: bool = True
    ) -> MemoryChange:
        """Pin a concept (it never decays), or unpin it."""
        from cairn.memory.ops import set_pinned

        path, b = self._memory_op(bundle, lambda b: set_pinned(b, concept, pinned))
        return self._change("pin" if pinned else "unpin", path, b)

    def forget(self, bundle: str | os.PathLike[str], name: str) -> MemoryChange:
        """Move a memory or concept to its archive folder (never deletes)."""
        from cairn.memory.ops import forget

        path, b = self._memory_op(bundle, lambda b: forget(b, name))
        return self._change("forget", path, b)

    def relate(
        self,
        bundle: str | os.PathLike[str],
        source: str,
        relation: str,
        target: str,
        *,
        confidence: float = 1.0,
    ) -> MemoryChange:
        """Add the typed relation ``source --relation--> target`` between concepts."""
        from cairn.memory.ops import relate

        detail, b = self._memory_op(
            bundle, lambda b: relate(b, source, relation, target, confidence)
        )
        return self._change("relate", str(detail["source"]), b, detail)

    def supersede(self, bundle: str | os.PathLike[str], concept: str) -> MemoryChange:
        """Mark a concept superseded (the next maintenance supersedes its dependants)."""
        from cairn.memory.ops import supersede

        path, b = self._memory_op(bundle, lambda b: supersede(b, concept))
        return self._change("supersede", path, b)

    def verify(self, bundle: str | os.PathLike[str]) -> VerifyReport:
        """Recompute every memory's seal and check the bundle
        (:func:`cairn.memory.verify.verify`: a memory in two folders, a source memory
        or an indexed memory deleted, a write left half done); report, never fix,
        write nothing.

        Raises:
            cairn.memory.bundle.MemoryError_: the bundle folder does not exist.
        """
        from cairn.memory.bundle import MemoryError_
        from cairn.memory.verify import verify

        b = self._memory_bundle(bundle)
        if not b.folder.is_dir():
            raise MemoryError_(f"{b.folder}: no such bundle folder")
        checked, problems = verify(b)
        return VerifyReport(str(b.folder), checked, (*problems, *self._memory_unindexed(b)))

    def _memory_unindexed(self, b: MemoryBundle) -> list[SealProblem]:
        """The memory files the index holds that are no longer in the bundle (deleted
        outside cairn): the index, and a search, would still return them."""
        from cairn.memory.bundle import MEMORY_DIRS
        from cairn.memory.verify import SealProblem

        out: list[SealProblem] = []
        for r in self._store.roots():
            root = Path(r.path)
            if not is_within(root, b.folder):
                continue
            prefix = "" if root == b.folder else b.folder.relative_to(root).as_posix() + "/"
            for rel in self._store.file_paths(r.id):
                inner = rel[len(prefix):] if rel.startswith(prefix) else None
                if inner is None or not inner.startswith(tuple(d + "/" for d in MEMORY_DIRS)):
                    continue
                if not (b.folder / inner).exists():
                    out.append(SealProblem(inner, None, None,
                                           "missing: deleted, yet the index still holds it"))
        return sorted(out, key=lambda p: p.path)

    def import_graph(
        self,
        bundle: str | os.PathLike[str],
        graph_file: str | os.PathLike[str],
        *,
        dry_run: bool = False,
    ) -> ImportReport:
        """Import a NetworkX node-link graph (``.json`` / ``.yaml``) as layer-2 concepts
        with relations (:func:`cairn.memory.migrate.import_node_link`)."""
        from cairn.memory.migrate import import_node_link, load_node_link

        data = load_node_link(Path(graph_file))
        rep, _ = self._memory_op(
            bundle, lambda b: import_node_link(b, data, str(graph_file)), dry_run=dry_run
        )
        return rep

    @staticmethod
    def _change(
        action: str, path: str, b: MemoryBundle, detail: dict[str, Any] | None = None
    ) -> MemoryChange:
        return MemoryChange(
            action, path, tuple(b.changes.touched()), b.dry_run, tuple(b.changes.diffs), detail
        )
