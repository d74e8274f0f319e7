"""Files a run cannot take as notes are reported by path and the rest indexed: names
that are not UTF-8, FIFOs, sockets, dangling and looping links, files over the size or
parse-time limit; wide encodings are read; NFC and NFD names find the same note. Real
files and a real index, through the API or the CLI run in process."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _reliability import notes_folder

from cairn.app import Cairn
from cairn.sources import decode

Cli = Callable[..., Any]


def test_a_file_name_with_invalid_utf8_is_reported_and_the_rest_indexed(
    cairn_cmd: Cli, tmp_path: Path
) -> None:
    folder = notes_folder(tmp_path / "n")
    bad = os.fsencode(folder) + b"/bad\xff.md"
    with open(bad, "wb") as fh:
        fh.write(b"# Bad name\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder])
        assert run.added == 5
        warned = [w for w in run.warnings if "not valid UTF-8" in w.message]
        assert warned and warned[0].path == "bad\\xff.md"
    res = cairn_cmd("--db", str(tmp_path / "j.db"), "index", str(folder), "--json")
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["added"] == 5
    assert any(w["path"] == "bad\\xff.md" for w in data["warnings"])


def test_a_note_replaced_by_a_fifo_does_not_block(tmp_path: Path) -> None:
    from cairn.sources import SourceFile, read_bytes

    fifo = tmp_path / "note.md"
    os.mkfifo(fifo)
    got: list[object] = []
    # a read that blocked on the FIFO would never return: a guard, not a speed claim
    reader = threading.Thread(
        target=lambda: got.append(read_bytes(SourceFile(fifo, "note.md", 0, 0.0))),
        daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert not reader.is_alive(), "reading a FIFO blocked"
    out = got[0]
    assert not isinstance(out, bytes) and "not a regular file" in out.reason  # type: ignore[attr-defined]


def test_fifos_sockets_and_dangling_links_in_a_folder(tmp_path: Path) -> None:
    import socket

    folder = notes_folder(tmp_path / "n")
    os.mkfifo(folder / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.md"))
    os.symlink(folder / "missing.md", folder / "dangling.md")
    os.symlink(folder / "loop.md", folder / "loop.md")
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder])
    sock.close()
    assert run.added == 5
    paths = {w.path for w in run.warnings}
    assert {"dangling.md", "loop.md"} <= paths


def test_partial_export_and_skipped_files_are_named_by_the_cli(
    cairn_cmd: Cli, tmp_path: Path
) -> None:
    folder = notes_folder(tmp_path / "n", 2)
    (folder / "data.json").write_text('{"not": "an export"}', "utf-8")
    res = cairn_cmd("--db", str(tmp_path / "i.db"), "index", str(folder))
    assert res.code == 0, res.stderr
    assert "skipped data.json" in res.stdout


def test_a_parse_over_the_time_limit_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n")
    (folder / "deep.org").write_text("".join("*" * i + " h\n" for i in range(1, 4001)), "utf-8")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[index]\nfile_seconds = 0.05\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        run = c.index([folder])
    assert run.added >= 5
    slow = [f for f in run.failures if f.path == "deep.org"]
    assert not slow or "file_seconds" in slow[0].reason


def test_a_file_over_the_size_limit_is_reported_unread(tmp_path: Path) -> None:
    folder = notes_folder(tmp_path / "n")
    (folder / "big.md").write_bytes(b"# Big\n" + b"x" * 2_000_000)
    cfg = tmp_path / "cairn.toml"
    cfg.write_text("[index]\nmax_file_mb = 1\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db", config_file=cfg) as c:
        run = c.index([folder])
    assert run.added == 5
    reason = next(f.reason for f in run.failures if f.path == "big.md")
    assert reason.startswith("file is 1.9 MiB")


def test_nfc_and_nfd_names_find_the_same_note(tmp_path: Path) -> None:
    import unicodedata

    folder = tmp_path / "n"
    folder.mkdir()
    nfd = unicodedata.normalize("NFD", "Café.md")
    (folder / nfd).write_text("# Café\n\nespresso\n", "utf-8")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([folder])
        nfc = unicodedata.normalize("NFC", "Café.md")
        assert c.show(nfc).kind == "document"
        assert c.show(str(folder / nfc)).kind == "document"


def test_utf32_with_a_bom_is_decoded_and_indexed(tmp_path: Path) -> None:
    text = "# Title\n\nthirtytwo words\n"
    for codec in ("utf-32", "utf-32-le", "utf-32-be"):
        data = text.encode(codec)
        if codec != "utf-32":  # the explicit byte orders write no BOM: add it
            data = ("\ufeff" + text).encode(codec)
        assert decode(data).text == text, codec
    assert decode(text.encode("utf-16")).text == text
    with pytest.raises(ValueError):
        decode(text.encode("utf-32-le"))  # no BOM: NUL bytes, refused as binary
    folder = tmp_path / "n"
    folder.mkdir()
    (folder / "wide.md").write_bytes(text.encode("utf-32"))
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder], embed=False)
        assert (run.added, run.failed) == (1, 0)
        assert [h.title for h in c.search("thirtytwo", mode="keyword").hits] == ["Title"]

