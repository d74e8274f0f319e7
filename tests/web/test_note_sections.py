"""The note page shows each section once: a Markdown note whose title-only preamble
shares line 1 with its H1 must not render that heading and its text a second time in
the preamble."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from _corpus_index import CorpusIndexes
from cairn.app import Cairn
from cairn.config import load_config
from cairn.interfaces.web.note_view import note_context

_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.S)


def repeated_headings(c: Cairn, document_id: str) -> list[str]:
    """Titles of the page's sections that a unit's body renders again as a heading."""
    view = c.doors.get(document_id)
    ctx = note_context(view, c.doors.document_text(document_id), None)  # type: ignore[arg-type]
    titles = {u["unit"].title.strip() for u in ctx["units"] if u["unit"].kind == "heading"}
    inner = [html.unescape(re.sub(r"<[^>]+>", "", m.group(2))).strip()
             for u in ctx["units"] for m in _HEADING.finditer(str(u["body"]))]
    return [t for t in inner if t in titles]


def _document_ids(c: Cairn, fmt: str) -> list[str]:
    return [d.id for r in c.store.roots() for d in c.store.documents_of_root(r.id)
            if d.format == fmt]


def test_a_title_only_preamble_does_not_repeat_the_first_section(tmp_path: Path) -> None:
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "a.md").write_text("# Title\n\nbody one\n\n## Sub\n\nmore\n", encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([folder])
        (doc_id,) = _document_ids(c, "markdown")
        assert repeated_headings(c, doc_id) == []
        ctx = note_context(c.doors.get(doc_id), c.doors.document_text(doc_id), None)  # type: ignore[arg-type]
        page = "".join(str(u["body"]) for u in ctx["units"])
        assert page.count("body one") == 1 and page.count("more") == 1


@pytest.mark.corpus
def test_no_markdown_note_page_of_the_corpus_repeats_a_section(
        corpus: Path, corpus_indexes: CorpusIndexes, tmp_path: Path) -> None:
    # the session's index of the Org and Markdown corpus (tests/core/test_corpus_index.py)
    built = corpus_indexes.over([corpus / "org", corpus / "markdown"])
    with Cairn(load_config(db=built.copy(tmp_path / "i.db"))) as c:
        ids = _document_ids(c, "markdown")
        repeats = {i: r for i in ids if (r := repeated_headings(c, i))}
    assert len(ids) >= 800
    assert repeats == {}
