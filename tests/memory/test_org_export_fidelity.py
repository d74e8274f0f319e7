"""What an Org note's Markdown export must keep exactly, and what ``export compare``
must see when it does not: footnotes, drawers kept in HTML comments, partial
checkboxes, table cells, verse lines, property values and link search options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.app import Cairn
from cairn.config import load_config


def _export(tmp_path: Path, files: dict[str, str], kind: str) -> tuple[str, dict[str, Any]]:
    """Index an Org root of ``files``, export it as ``kind``, compare: the first
    file's Markdown and the compare's result."""
    root = tmp_path / "org"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write(kind, out, roots=[root])
        res = c.export.compare(root, kind=kind, exported=out)
    first = Path(next(iter(files))).with_suffix(".md").name
    return next(out.rglob(first)).read_text(encoding="utf-8"), res


FOOTNOTE_THEN_LIST = "* H\nnamed[fn:1] here.\n\n[fn:1] Named def.\n* H2\n- a\n"


@pytest.mark.parametrize("kind", ["obsidian", "okf"])
def test_a_footnote_stays_a_footnote_when_a_later_section_holds_a_list(
    tmp_path: Path, kind: str
) -> None:
    md, res = _export(tmp_path, {"f.org": FOOTNOTE_THEN_LIST}, kind)
    assert "named[^1] here." in md and "[^1]: Named def." in md
    assert "fn:" not in md.split("\n---\n", 1)[1]  # the body (not the front matter)
    assert res.same, (res.missing, res.extra)
    assert res.counts["footnotes"] == (1, 1)


def test_compare_finds_a_footnote_written_as_text(tmp_path: Path) -> None:
    root = tmp_path / "org"
    root.mkdir()
    (root / "f.org").write_text(FOOTNOTE_THEN_LIST, encoding="utf-8")
    lossy = tmp_path / "out"
    lossy.mkdir()  # the words all there, the footnote gone
    (lossy / "f.md").write_text(
        "---\ntitle: f\n---\n\n# H\n\nnamed\\[fn:1\\] here.\n\n\\[fn:1\\] Named def.\n\n"
        "# H2\n\n- a\n", encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root, kind="obsidian", exported=lossy)
    assert not res.same
    assert res.differences["footnotes"] == (1, 0)
    assert res.missing["footnotes"] == (("f", "H", "[^1]"),)


def test_an_unreferenced_footnote_definition_stays_text_without_a_stray_backslash(
    tmp_path: Path,
) -> None:
    md, res = _export(tmp_path, {"f.org": "* H\n[fn:9] Never referenced.\n"}, "obsidian")
    assert "\\[fn:9\\] Never referenced." in md.splitlines()
    assert res.same, (res.missing, res.extra)


def test_an_indented_footnote_reference_on_its_own_line_stays_a_reference(
    tmp_path: Path,
) -> None:
    text = "* H\nSee below.\n\n    [fn:up]\n\n[fn:up] Up one folder.\n"
    md, res = _export(tmp_path, {"f.org": text}, "obsidian")
    assert "[^up]\n" in md and "[^up]: Up one folder." in md
    assert res.same, (res.missing, res.extra)
    assert res.counts["footnotes"] == (1, 1)


LOGBOOK = """:LOGBOOK:
CLOCK: [2012-10-26 Fri 16:01]--[2012-10-26 Fri 16:12] =>  0:11
- Note taken on [2012-10-26 Fri 16:13] \\\\
  see [[https://x.org/a?b=1&c=2][x]] -- &amp; &#45; --> <!-- ---
:END:"""


@pytest.mark.parametrize("kind", ["obsidian", "okf"])
def test_a_drawer_kept_in_an_html_comment_reads_back_byte_for_byte(
    tmp_path: Path, kind: str
) -> None:
    from cairn.export.org_markdown import uncomment

    md, res = _export(tmp_path, {"f.org": f"* H\n{LOGBOOK}\nText.\n"}, kind)
    assert LOGBOOK in uncomment(md)
    comment = md[md.index("<!-- ") + 5 : md.index(" -->")]
    assert "--" not in comment  # nothing that could end the comment early
    assert "=&gt;" in comment and "?b=1&c=2" in comment  # the rest as written
    assert res.same, (res.missing, res.extra)


def test_a_partly_done_checkbox_is_not_exported_as_done(tmp_path: Path) -> None:
    from cairn.export.org_markdown import PARTIAL_BOX

    text = "* H\n- [-] parent\n  - [X] one\n  - [ ] two\n"
    md, res = _export(tmp_path, {"f.org": text}, "obsidian")
    assert "- [ ] parent\n  - [X] one\n  - [ ] two" in md
    assert res.same, (res.missing, res.extra)
    assert res.exceptions == {PARTIAL_BOX: 1}


def test_a_verse_block_keeps_its_indents_and_stanzas(tmp_path: Path) -> None:
    text = ("* H\n  #+begin_verse\n  Great clouds overhead\n      Tiny black birds rise\n\n"
            "  A new stanza\n  #+end_verse\n")
    md, res = _export(tmp_path, {"f.org": text}, "obsidian")
    assert ("Great clouds overhead\\\n" + "&nbsp;" * 4 + "Tiny black birds rise\n\n"
            "A new stanza") in md
    assert res.same, (res.missing, res.extra)


def test_a_vert_entity_in_a_table_cell_is_a_bar(tmp_path: Path) -> None:
    text = "* H\n| a | b |\n|---+---|\n| x\\vert{}y | z\\vert w |\n"
    md, res = _export(tmp_path, {"f.org": text}, "obsidian")
    assert "| x\\|y | z\\| w |" in md
    assert res.same, (res.missing, res.extra)


def test_a_url_property_value_stays_as_written(tmp_path: Path) -> None:
    text = "* H\n:PROPERTIES:\n:URL: https://x.org/a::b\n:END:\nText.\n"
    md, res = _export(tmp_path, {"f.org": text}, "obsidian")
    assert "url:: https://x.org/a::b\n" in md
    assert res.same, (res.missing, res.extra)
    assert res.counts["links"] == (1, 1)


def test_a_file_link_text_search_is_reported_as_an_exception(tmp_path: Path) -> None:
    from cairn.export.org_markdown import SEARCH_OPTION

    files = {"a.org": "* A\nSee [[file:b.org::Some text][b]] and [[file:b.org::*Bh][bh]].\n",
             "b.org": "* Bh\nHere is Some text.\n"}
    md, res = _export(tmp_path, files, "obsidian")
    assert "[[b|b]]" in md and "[[b#Bh|bh]]" in md  # Obsidian links no text search
    assert res.same, (res.missing, res.extra)
    assert res.exceptions == {SEARCH_OPTION: 1}
