"""A name written in NFD (as macOS writes file names) and the same name in NFC (as links
are usually typed) are one note: links resolve, backlinks count, ``cairn show`` finds it."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config


def test_an_nfc_link_resolves_to_an_nfd_file_name(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    nfd = unicodedata.normalize("NFD", "Café crème.md")
    (root / nfd).write_text("# Café crème\n\nThe note.\n")
    nfc = unicodedata.normalize("NFC", "Café crème")
    (root / "links.md").write_text(f"# Links\n\nSee [[{nfc}]] and [{nfc}](<{nfc}.md>).\n")
    org = unicodedata.normalize("NFC", f"[[file:{nfd}][cafe]]")
    (root / "links.org").write_text(f"* Org\n{org}\n")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        view = c.show(str(root / "links.md"))
        links = [ln for ln in view.links if ln.kind != "url"]  # type: ignore[union-attr]
        assert links and all(ln.resolved_document_id for ln in links), links
        target = c.show(str(root / nfc) + ".md")  # the NFC spelling finds the NFD file
        assert len(target.backlinks) == 3  # type: ignore[union-attr]
