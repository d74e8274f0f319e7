"""Agent memory on OKF bundles (``../shared/OKF-MEMORY.md``): layer-1 memories
(events, sealed by SHA-256), layer-2 concepts (graph nodes with typed relations),
consolidation, maintenance (integrity, symmetry, truth maintenance, Hebbian decay),
and import of NetworkX node-link graphs.

:mod:`.bundle` (layout, files, seals, log, lock), :mod:`.ops` (remember, consolidate,
pin, forget, relate, supersede, verify), :mod:`.maintain` (the maintenance cycle),
:mod:`.recall` (bundle hits with relation expansion), :mod:`.migrate` (node-link
import), :mod:`.similarity` (embedding similarity, the proposer hook and its checks),
:mod:`.propose` (clusters proposed by a language model).
:class:`cairn.memory.service.MemoryService` composes them with indexing and search.
"""
