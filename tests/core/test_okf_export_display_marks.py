"""An OKF export of an Obsidian note keeps what only Obsidian displays — a callout's
type and fold state, an embed's size — and ``export compare`` counts them, so losing
one is a difference."""

from __future__ import annotations

from pathlib import Path

from cairn.app import Cairn
from cairn.config import load_config

NOTE = """# Tips

> [!tip]- Multiple blank spaces
> Folded by default.

> [!info]+ Open
> Shown.

| Pic | Note |
| --- | --- |
| ![[pic.png\\|200]] | in a table |

![[pic.png#outline|100]]
"""


def test_okf_export_keeps_callout_types_fold_state_and_embed_sizes(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Tips.md").write_text(NOTE, encoding="utf-8")
    (root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    out = tmp_path / "out"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        c.export.write("okf", out, roots=[root])
        text = (out / "Tips.md").read_text(encoding="utf-8")
        assert "> Multiple blank spaces <!-- [!tip]- -->\n" in text
        assert "> Open <!-- [!info]+ -->\n" in text
        assert "<!-- size:100 -->" in text and "<!-- size:200 -->" in text
        res = c.export.compare(root, kind="okf", exported=out)
        assert res.same, (res.missing, res.extra)
        assert res.counts["display"] == (4, 4)
        # the same export without the marks (a plain quote, an image of no size) is a loss
        (out / "Tips.md").write_text(
            text.replace(" <!-- [!tip]- -->", "").replace("<!-- size:100 -->", ""),
            encoding="utf-8")
        res = c.export.compare(root, kind="okf", exported=out)
    assert not res.same
    assert res.differences["display"] == (2, 0)
