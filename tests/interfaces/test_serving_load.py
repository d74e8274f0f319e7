"""What makes serving cheap under load stays correct: the store's change token, the
graph freshness it lets readers skip checking, index runs on a low-priority thread,
the serialiser's per-type field cache, and OKF bundle facts kept per file."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import CairnError
from cairn.formats import okf
from cairn.ingest.background import lower_thread_priority
from cairn.model.serialize import to_data


def notes(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "target.md").write_text("# Target\n\nThe place links point to.\n",
                                      encoding="utf-8")
    (folder / "a.md").write_text("# A\n\nSee [[target]].\n", encoding="utf-8")
    return folder


def test_change_token_moves_with_any_write_and_only_then(tmp_path: Path) -> None:
    folder = notes(tmp_path / "n")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as writer:
        writer.index([folder], embed=False)
        with Cairn(load_config(db=db), create=False) as reader:
            first = reader.store.change_token()
            assert first is not None
            assert reader.store.change_token() == first  # reads change nothing
            reader.search("place", mode="keyword")
            assert reader.store.change_token() == first
            (folder / "b.md").write_text("# B\n\nNew [[target]] link.\n", encoding="utf-8")
            writer.index(embed=False)  # another connection commits
            second = reader.store.change_token()
            assert second != first
            tokens: list[object] = []
            t = threading.Thread(target=lambda: tokens.append(reader.store.change_token()))
            t.start()
            t.join()
            assert tokens[0] != second  # another thread: its own connection


def test_backlinks_see_another_process_run_after_being_cached(tmp_path: Path) -> None:
    """A reader that found the graph fresh (and so skips the check) still answers what
    a later run by another connection wrote."""
    folder = notes(tmp_path / "n")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as writer:
        writer.index([folder], embed=False)
        with Cairn(load_config(db=db), create=False) as reader:
            before = reader.graph.backlinks("target.md")
            assert before.sources == 1
            assert reader.graph.backlinks("target.md").sources == 1  # from the skip path
            (folder / "b.md").write_text("# B\n\nAlso [[target]].\n", encoding="utf-8")
            writer.index(embed=False)
            after = reader.graph.backlinks("target.md")
            assert after.sources == 2


def test_a_reader_refreshes_the_graph_when_another_connection_made_it_stale(
        tmp_path: Path) -> None:
    """The skipped check is only skipped while nothing was written: a graph made stale
    by another connection after this reader found it fresh is brought up to date."""
    folder = notes(tmp_path / "n")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as writer:
        writer.index([folder], embed=False)
        with Cairn(load_config(db=db), create=False) as reader:
            reader.graph.backlinks("target.md")  # found fresh: kept for this thread
            (doc,) = writer.store.documents_at(writer.store.roots()[0].id, "a.md")
            with writer.store.transaction():
                writer.store.edges.forget_docs([doc.id])  # the graph no longer knows a.md
            assert writer.store.edges.changed_documents()[0] == [doc.id]
            assert reader.graph.backlinks("target.md").sources == 1
            assert writer.store.edges.changed_documents() == ([], [])  # the reader rebuilt


def test_index_in_background_runs_on_its_own_lower_priority_thread(tmp_path: Path) -> None:
    folder = notes(tmp_path / "n")
    with Cairn(load_config(db=tmp_path / "i.db")) as cairn:
        cairn.index([folder], embed=False)
        seen: dict[str, object] = {}
        original = cairn.index

        def spy(*args: object, **kwargs: object) -> object:
            seen["thread"] = threading.current_thread().name
            seen["running"] = cairn.background.busy()
            if sys.platform.startswith("linux"):
                seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            return original(*args, **kwargs)  # type: ignore[arg-type]

        cairn.index = spy  # type: ignore[method-assign]
        cairn.own_parts = False  # the thread path (a given store; test_index_process: a child)
        (folder / "c.md").write_text("# C\n\nThird note.\n", encoding="utf-8")
        run = cairn.background.run(nice=5)
        assert run.added == 1
        assert seen["thread"] == "cairn-index"
        assert seen["running"] is True  # inside indexing(): readers do not refresh the graph
        if sys.platform.startswith("linux"):
            assert seen["nice"] == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)
        # this thread's priority is untouched
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == \
            os.getpriority(os.PRIO_PROCESS, 0)


def test_index_in_background_raises_the_runs_error_in_the_caller(tmp_path: Path) -> None:
    folder = notes(tmp_path / "n")
    with Cairn(load_config(db=tmp_path / "i.db")) as cairn:
        cairn.index([folder], embed=False)

        def broken(*args: object, **kwargs: object) -> object:
            raise CairnError("the disk is on fire")

        cairn.index = broken  # type: ignore[method-assign]
        cairn.own_parts = False  # the thread path
        with pytest.raises(CairnError, match="on fire"):
            cairn.background.run()


def test_lower_thread_priority_refuses_nothing_silly() -> None:
    assert lower_thread_priority(0) is False
    assert lower_thread_priority(-3) is False


@dataclasses.dataclass(frozen=True)
class _Inner:
    n: int
    tags: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class _Outer:
    name: str
    inner: _Inner
    items: list[_Inner]
    extra: dict[str, object]


def test_to_data_by_cached_fields_is_the_same_as_by_asdict() -> None:
    value = _Outer("x", _Inner(1, ("a", "b")), [_Inner(2, ())], {"k": _Inner(3, ("c",))})
    for _ in range(2):  # the second time from the per-type cache
        assert to_data(value) == {
            "name": "x", "inner": {"n": 1, "tags": ["a", "b"]},
            "items": [{"n": 2, "tags": []}], "extra": {"k": {"n": 3, "tags": ["c"]}},
        }
    assert to_data(_Inner) is _Inner  # a class is kept as it is


def test_bundle_detection_follows_a_rewritten_file(tmp_path: Path) -> None:
    root = tmp_path / "b"
    root.mkdir()
    (root / "index.md").write_text("# Index\n", encoding="utf-8")
    (root / "c.md").write_text("# C\n", encoding="utf-8")
    assert not okf.is_bundle(root)
    assert not okf.is_bundle(root)  # asked again: the same answer from the kept facts
    (root / "index.md").write_text("---\nokf_version: 0.1\n---\n# Index\n", encoding="utf-8")
    assert okf.is_bundle(root)
