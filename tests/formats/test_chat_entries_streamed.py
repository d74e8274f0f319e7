"""Every chat export of the corpus reads the same streamed in small pieces as read
whole, and each conversation's digest (its text as written, by which a re-index
recognises it unchanged) does not depend on where the reads split the file; a
second read that holds every digest builds no document."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.formats.chats import Entry, Reuse, _json, parse_file, read_entries
from cairn.model import Failure

CHATS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "chats"

pytestmark = pytest.mark.corpus


def _exports() -> list[Path]:
    return sorted(CHATS.rglob("*.json")) if CHATS.is_dir() else []


def _read(path: Path, reuse: Reuse) -> list[Entry | Failure]:
    return list(read_entries(path, path.name, reuse=reuse))


@pytest.mark.parametrize("path", _exports(), ids=lambda p: p.relative_to(CHATS).as_posix())
def test_a_corpus_export_reads_the_same_in_small_pieces_as_whole(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    never = Reuse(unchanged=lambda digest: False, claimed=lambda key: False)
    monkeypatch.setattr(_json, "CHUNK", path.stat().st_size + 1)  # one read: the whole file
    whole = list(parse_file(path, path.name))
    whole_entries = _read(path, never)
    monkeypatch.setattr(_json, "CHUNK", 7)
    streamed = list(parse_file(path, path.name))
    entries = _read(path, never)
    assert streamed == whole
    assert entries == whole_entries
    # the same documents and failures whether or not digests are taken
    assert [e.doc if isinstance(e, Entry) else e for e in entries] == whole
    digests = [e.digest for e in entries if isinstance(e, Entry) and e.digest]
    assert len(set(digests)) == len(digests)  # one per conversation
    # a reader that holds every conversation builds none and still sees every one
    held = set(digests)
    again = _read(path, Reuse(unchanged=held.__contains__, claimed=lambda key: False))
    assert [e.digest for e in again if isinstance(e, Entry) and e.doc is None] == digests
    assert [e for e in again if isinstance(e, Failure)] == [
        e for e in whole if isinstance(e, Failure)
    ]
