"""``cairn serve`` on a port another process listens on says so and exits, without
first announcing that it serves there."""

from __future__ import annotations

import socket
from pathlib import Path

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.cli import app


def test_a_busy_port_is_refused_before_serving_is_announced(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nbody\n", encoding="utf-8")
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as cairn:
        cairn.index([notes], embed=False)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        res = CliRunner().invoke(app, ["serve", "--db", str(db), "--port", str(port)])
    finally:
        taken.close()
    text = " ".join(res.output.split())
    assert res.exit_code != 0, text
    assert f"cannot serve on http://127.0.0.1:{port}" in text
    assert "serving" not in text.replace("cannot serve", "")
