"""The dream cycle's fixes need evidence: a link is retargeted by ``--apply`` only to a
note in the folder its path pointed to; a similar name alone is only proposed; short
different words are no candidates at all; a near miss of an existing note is never
made into a new note; Org tags keep their case; and ``--apply`` that could not write
says so in its exit status."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.cli._app import app
from cairn.maintain.dream.broken import plausible

TODAY_ARGS = ("--today", "2027-06-01")
Fresh = Callable[..., tuple[Path, Cairn]]


def _vault(base: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return base


def _findings(c: Cairn, **want: object) -> list[dict[str, object]]:
    report = c.maintain.run().as_data()["report"]
    return [f for f in report["findings"] if all(f.get(k) == v for k, v in want.items())]


@pytest.mark.parametrize(
    ("want", "name", "ok"),
    [("japan", "catan", False), ("futurism", "futurama", False),
     ("compost guid", "compost guide", True), ("kevin kelly", "kevin kelly (author)", True),
     ("kevin kelly", "kevin j kelly", True), ("modules", "official modules", False),
     ("project 2023", "project 2024", False), ("japan", "2023 japan trip", False)],
)
def test_which_names_are_plausible_candidates(want: str, name: str, ok: bool) -> None:
    import difflib

    ratio = difflib.SequenceMatcher(None, want, name).ratio()
    assert plausible(want, name, ratio) is ok


def test_short_different_words_are_not_candidates(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", {
        "Catan.md": "# Catan\n\nA board game.\n",
        "Futurama.md": "# Futurama\n\nA cartoon.\n",
        "trip.md": "Went to [[Japan]]; read about [[Futurism]].\n",
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        for value in ("Japan", "Futurism"):
            (f,) = _findings(c, kind="unresolved-link", value=value)
            assert f["evidence"]["candidates"] == [] and f["fix"] is None  # type: ignore[index]


def test_a_near_miss_is_proposed_as_a_link_fix_never_created_as_a_note(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path / "vault", {
        "garden/Compost Guide.md": "# Compost Guide\n\nGreens and browns.\n",
        **{f"notes/{n}.md": f"# {n}\n\nSee [[Compost Guid]].\n" for n in "abc"},
    })
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        assert not _findings(c, check="entities", value="Compost Guid")
        hits = _findings(c, kind="unresolved-link", value="Compost Guid")
        assert len(hits) == 3
        for f in hits:
            fix = f["fix"]
            assert isinstance(fix, dict) and fix["kind"] == "retarget_link"
            assert fix["auto"] is False and fix["params"]["new"] == "[[Compost Guide]]"
        run = c.maintain.run(apply=True)
        assert not [ch for ch in run.changes if ch.action in ("changed", "created")]
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    assert not (root / "entities").exists()


def _renamed_in_place(tmp_path: Path) -> tuple[Path, Path]:
    root = _vault(tmp_path / "org", {
        "garden/compost-guide.org": "#+title: Compost guide\n\nGreens and browns.\n",
        "main.org": "* Garden\nSee [[file:garden/compost-guid.org][the guide]].\n",
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
    return root, tmp_path / "i.db"


def test_a_note_renamed_in_its_folder_is_retargeted_by_apply(tmp_path: Path) -> None:
    root, db = _renamed_in_place(tmp_path)
    res = CliRunner().invoke(app, ["dream", "--apply", "--only", "broken", *TODAY_ARGS,
                                   "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert (root / "main.org").read_text(encoding="utf-8") == (
        "* Garden\nSee [[file:garden/compost-guide.org][the guide]].\n")


def test_apply_that_cannot_back_up_exits_non_zero(tmp_path: Path) -> None:
    root, db = _renamed_in_place(tmp_path)
    Path(str(db) + ".backups").write_text("not a folder\n")  # backups cannot be written
    before = (root / "main.org").read_bytes()
    res = CliRunner().invoke(app, ["dream", "--apply", "--only", "broken", *TODAY_ARGS,
                                   "--db", str(db)])
    assert res.exit_code == 1, res.output
    assert "refused" in res.output and "not changed" in res.output
    assert (root / "main.org").read_bytes() == before


@pytest.mark.corpus
def test_a_same_named_file_of_another_project_is_no_retarget(fresh: Fresh) -> None:
    base, c = fresh({"org": ["organice", "org-roam"]})
    main = base / "org" / "organice" / "test_helpers" / "fixtures" / "main_test_file.org"
    hits = [f for f in _findings(c, kind="unresolved-link", relpath=
                                 "org/organice/test_helpers/fixtures/main_test_file.org")
            if "foo.org" in str(f["value"])]
    assert hits  # org-roam's tests/roam-files/foo.org is listed, but no fix is offered
    assert all(f["fix"] is None for f in hits)
    before = main.read_bytes()
    c.maintain.run(apply=True, proposed=True, fix_kinds=["retarget_link"])
    assert main.read_bytes() == before


@pytest.mark.corpus
def test_one_strong_candidate_is_proposed_instead_of_a_new_note(fresh: Fresh) -> None:
    base, c = fresh({"markdown": ["kepano-obsidian"]})
    refs = base / "markdown" / "kepano-obsidian" / "References"
    (refs / "Kevin J Kelly.md").rename(refs / "Kevin Kelly (author).md")
    c.index()
    hits = _findings(c, kind="unresolved-link", value="Kevin Kelly")
    assert len(hits) == 3
    for f in hits:
        fix = f["fix"]
        assert isinstance(fix, dict) and fix["auto"] is False
        assert fix["params"]["new"] == "[[Kevin Kelly (author)]]"
    assert not _findings(c, check="entities", value="Kevin Kelly")


@pytest.mark.corpus
def test_org_tags_keep_their_case(fresh: Fresh) -> None:
    base, c = fresh({"org": ["orgparse", "organice"]})
    simple = base / "org" / "orgparse" / "src" / "orgparse" / "tests" / "data" / "00_simple.org"
    before = simple.read_bytes()
    tag_fixes = [f["fix"] for f in _findings(c, check="tags")]
    assert tag_fixes and all(x is None for x in tag_fixes)  # case-only: no fix at all
    c.maintain.run(apply=True, only=["tags"], proposed=True)
    assert simple.read_bytes() == before and b":TAG1:" in before


def test_a_markdown_link_is_retargeted_in_its_target_not_its_text(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", {
        "garden/compost-guide.md": "# Compost guide\n\nGreens and browns.\n",
        "bundles/x/index.md": "# X\n",
        "main.md": "See [garden/compost-guid.md](garden/compost-guid.md) and "
                   "[bundles/x/](bundles/x/).\n",
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        fixes = [f["fix"] for f in _findings(c, relpath="vault/main.md") if f["fix"]]
        assert [x["params"]["new"] for x in fixes] == [  # type: ignore[index]
            "[garden/compost-guid.md](garden/compost-guide.md)"]  # a folder link: no fix
        c.maintain.run(apply=True)
    assert (root / "main.md").read_text(encoding="utf-8") == (
        "See [garden/compost-guid.md](garden/compost-guide.md) and [bundles/x/](bundles/x/).\n")


def test_missing_attachments_and_option_strings_are_no_entities(tmp_path: Path) -> None:
    files = {
        f"n{i}.org": f"* Slide {i}\n:PROPERTIES:\n:BEAMER_OPT: allowframebreaks,label=\n"
                     f":BEAMER_opt: allowframebreaks\n:ARCHIVE_CATEGORY: worg\n:END:\n"
                     f"[[file:img/tutorial-1.png]]\n"
        for i in range(4)
    }
    root = _vault(tmp_path / "org", files)
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        assert _findings(c, check="entities") == []


def test_ids_go_to_every_linked_heading_of_a_file(tmp_path: Path) -> None:
    heads = "".join(f"* Part {i}\nText {i}.\n" for i in range(1, 5))
    root = _vault(tmp_path / "org", {
        "book.org": "#+title: Book\n\n" + heads,
        **{f"ref{i}.org": f"See [[file:book.org::*Part {i}]] and [[file:book.org]].\n"
           for i in range(1, 5)},
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        run = c.maintain.run(apply=True, only=["broken"], fix_kinds=["add_org_id"])
        (book,) = [ch for ch in run.changes if ch.path.endswith("book.org")]
        assert book.action == "changed" and book.reason == "" and len(book.fixes) == 5
    text = (root / "book.org").read_text(encoding="utf-8").split("\n")
    for i in range(1, 5):  # each heading, directly followed by its own drawer
        at = text.index(f"* Part {i}")
        assert text[at + 1] == ":PROPERTIES:" and text[at + 2].startswith(":ID: ")
        assert text[at + 4] == f"Text {i}."
    assert text[0] == ":PROPERTIES:" and text[3] == "#+title: Book"  # the file's, first


def test_a_markdown_tag_differing_only_in_case_is_only_proposed(tmp_path: Path) -> None:
    prose = "Tags ignore case: #tag and #TAG are one tag.\n"
    root = _vault(tmp_path / "vault", {
        "a.md": "# A\n\n#tag #to-read\n", "b.md": "# B\n\n#tag #to-read\n",
        "tags.md": "# Tags\n\n" + prose + "Also #to_read.\n",
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        fixes = {f["value"]: f["fix"] for f in _findings(c, check="tags")}
        assert fixes["TAG"]["auto"] is False  # type: ignore[index]
        assert fixes["to_read"]["auto"] is True  # type: ignore[index]
        c.maintain.run(apply=True, only=["tags"])
    assert (root / "tags.md").read_text(encoding="utf-8") == (
        "# Tags\n\n" + prose + "Also #to-read.\n")


def test_a_link_to_an_outside_document_is_a_missing_attachment_not_a_note_to_retarget(
    tmp_path: Path,
) -> None:
    # Org's "file outside the source root" reason does not say "attachment": the
    # extension decides, by the one list the graph uses (``.docx`` is in it), so the
    # note that merely shares the name is never offered as the link's new target
    root = _vault(tmp_path / "notes", {
        "report.org": "#+TITLE: Report\n\nThe note about the report.\n",
        "index.org": "See [[file:~/Documents/report.docx][the report]].\n",
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root])
        (f,) = _findings(c, check="broken", value="~/Documents/report.docx")
        assert f["kind"] == "missing-attachment" and f["fix"] is None
