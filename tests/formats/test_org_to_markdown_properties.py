"""Every Org file of the shared corpus, converted to Markdown
(:func:`cairn.export.org_markdown.org_to_markdown`) and read back by the Markdown
parser, keeps what a reader of the Org file sees: every unit's text (normalised as
``cairn export compare`` does: :func:`cairn.export.signature.signature`), every link
(each one written comes back as a link, in the unit it stood in), every task (keyword,
priority, planning dates: :mod:`cairn.export.tasks`) and every footnote reference
(:func:`cairn.export.org_markdown.org_footnotes`); a link in a drawer and an inline
footnote in a heading are the named exceptions
(:data:`cairn.export.org_markdown.DRAWER_LINK`, ``HEADING_NOTE``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from cairn.export.notes import obsidian_note
from cairn.export.org_markdown import drawer_lines, org_footnotes, org_to_markdown
from cairn.export.signature import org_words, signature
from cairn.export.tasks import markdown_tasks, org_tasks, planning_lines
from cairn.formats.markdown import parse as parse_markdown
from cairn.formats.org import parse as parse_org
from cairn.model import Document, Link, StoredLink, StoredUnit

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "org"
ORG_FILES = sorted(CORPUS.rglob("*.org")) if CORPUS.is_dir() else []


def _stored(doc: Document, doc_id: str) -> tuple[list[StoredUnit], dict[str, list[StoredLink]]]:
    """A parsed document's units and links as the index stores them (ids by ordinal,
    every link unresolved, as each side of the round trip sees it here)."""
    units: list[StoredUnit] = []
    links: dict[str, list[StoredLink]] = {}
    for u in doc.units:
        uid = f"{doc_id}:{u.ordinal}"
        units.append(StoredUnit(
            id=uid, document_id=doc_id, ordinal=u.ordinal, level=u.level, kind=u.kind,
            title=u.title, outline_path=u.outline_path,
            parent_id=None if u.parent is None else f"{doc_id}:{u.parent}",
            tags=u.tags, inherited_tags=u.inherited_tags, properties=u.properties,
            todo=u.todo, todo_state=u.todo_state, priority=u.priority,
            timestamps=u.timestamps, org_id=u.org_id, custom_id=u.custom_id,
            language=u.language, line_start=u.line_start, line_end=u.line_end,
            extra=u.extra, body=u.body,
        ))
        links[uid] = [StoredLink(uid, lk.kind, lk.target, lk.alias, lk.anchor, lk.line,
                                 None, None, "unresolved") for lk in u.links]
    return units, links


def _fields(u: StoredUnit) -> str:
    return planning_lines(u.timestamps)


def _round_trip(path: Path) -> list[str]:
    """What converting ``path`` loses or adds (empty: nothing)."""
    text = path.read_text(encoding="utf-8")
    org = parse_org(text, path.name)
    org_doc = Document(path=path.name, format="org", title=org.title, units=org.units,
                       metadata=org.metadata, id="d")
    units, links = _stored(org, "d")
    inside = drawer_lines(text)  # kept in the drawer's HTML comment (DRAWER_LINK)
    links = {u: [x for x in xs if x.line not in inside] for u, xs in links.items()}
    written: list[str] = []

    def render(link: Link, label: str, shown: str) -> str:
        written.append(f"cairn-link-{len(written)}")
        return f"[{label or 'link'}]({written[-1]})"

    md = obsidian_note(org_doc, {"d": units}, org_to_markdown(text, units, render, _fields))
    back = parse_markdown(md, path.with_suffix(".md").name)
    md_doc = Document(path=back.path, format="markdown", title=org.title, units=back.units,
                      metadata=back.metadata, id="d")
    md_units, md_links = _stored(back, "d")
    keywords = {u.todo for u in units if u.todo}
    a = signature([org_doc], [], {"d": units}, links, keywords=keywords, org=[org.title],
                  footnotes={"d": org_footnotes(text)[0]})
    b = signature([md_doc], [], {"d": md_units}, md_links, keywords=keywords,
                  org=[org.title])

    def task_words(tasks: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
        return {(t[0], " ".join(org_words(t[1])), *t[2:]) for t in tasks}

    a["tasks"] = task_words(org_tasks(org.title, units))
    b["tasks"] = task_words(markdown_tasks(org.title, md_units, keywords))
    lost = [f"{k} lost: {x}" for k in a for x in sorted(a[k] - b[k])]
    added = [f"{k} added: {x}" for k in a for x in sorted(b[k] - a[k])]
    read = Counter(lk.target for u in back.units for lk in u.links)
    gone = [f"link not read back: {t}" for t in written if read[t] != 1]
    return lost + added + gone


@pytest.mark.corpus
@pytest.mark.slow
def test_every_org_file_of_the_corpus_converts_to_markdown_keeping_text_links_and_tasks(
) -> None:
    assert len(ORG_FILES) > 1000
    failures: dict[str, Sequence[str]] = {}
    for path in ORG_FILES:
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not UTF-8: the export skips it, naming the file
        diff = _round_trip(path)
        if diff:
            failures[path.relative_to(CORPUS).as_posix()] = diff[:3]
    assert not failures, f"{len(failures)} files: {dict(list(failures.items())[:10])}"
