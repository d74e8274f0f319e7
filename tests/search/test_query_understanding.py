"""Query understanding: a plain query's word or phrase that names a tag, a TODO keyword,
a note type, a property's name or value, a heading or a date raises the units that
carry it (a boost, not a filter), and ``--explain`` names what matched. Real vaults
indexed into a real SQLite file through the ``Cairn`` API; one test over files of the
shared corpus."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import Config
from cairn.search.understand import dates_in

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
KEPANO = CORPUS / "markdown" / "kepano-obsidian"

# several notes say a word in their title and body; one note carries it as structure
# (a tag, a property) and says something else at length
FILLER = "Reading list notes and more notes about shelves. " * 3
LONG = "A desert planet, a spice, a duke and his son, sand and worms and water. " * 12


def _vault(root: Path) -> Path:
    root.mkdir()
    (root / "tagged.md").write_text(
        f"---\ntags: [books]\n---\n# Dune\n\n{LONG}\n", encoding="utf-8"
    )
    for i in range(6):
        (root / f"mention{i}.md").write_text(
            f"# Books on shelf {i}\n\nbooks, {FILLER} books on the shelf.\n",
            encoding="utf-8",
        )
    (root / "movies.md").write_text(
        f"---\ngenre: Sci-fi\ndirector: Ridley Scott\n---\n# Alien\n\n{LONG}\n",
        encoding="utf-8",
    )
    for i in range(6):
        (root / f"scifi{i}.md").write_text(
            f"# Sci-fi essay {i}\n\nSci-fi, {FILLER}\n", encoding="utf-8"
        )
    (root / "tasks.org").write_text(
        "#+TODO: TODO INPROGRESS WAITING | DONE\n"
        "* TODO Buy stamps\n"
        "* INPROGRESS Paint the fence\nwith the brush\n"
        "* WAITING Plumber visit\ncall back\n"
        "* Notes on progress\nprogress in tasks, progress and progress, tasks in progress\n"
        "* Waiting rooms\nwaiting waiting tasks waiting, the waiting room\n",
        encoding="utf-8",
    )
    (root / "journal.org").write_text(
        "* Meeting with the architect\n<2023-09-12 Tue>\nplans for the house\n"
        "* Meeting with the builder\n<2023-11-02 Thu>\nplans for the house meeting meeting\n"
        "* Site visit\n[2023-09-20 Wed] meeting on site\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def cairn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cairn:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    c = Cairn(Config(db_path=tmp_path / "index.db"))
    c.index([_vault(tmp_path / "vault")])
    return c


def _matched(hit_explain: object) -> list[str]:
    summands = hit_explain.get("summands", {}) if isinstance(hit_explain, dict) else {}
    return [k for k in summands if k.startswith("matched ")]


def test_a_word_naming_a_tag_raises_the_tagged_note(cairn: Cairn) -> None:
    hits = cairn.search("books", mode="keyword", explain=True, limit=20).hits
    assert hits[0].path == "tagged.md"
    assert _matched(dict(hits[0].explain)) == ["matched tag books"]
    # a boost, not a filter: the notes that only mention the word are still there
    assert {f"mention{i}.md" for i in range(6)} <= {h.path for h in hits}


def test_a_word_naming_a_property_value_raises_the_note(cairn: Cairn) -> None:
    hits = cairn.search("sci-fi", mode="keyword", explain=True, limit=20).hits
    assert hits[0].path == "movies.md"
    assert "matched property genre=Sci-fi" in _matched(dict(hits[0].explain))
    assert len({h.path for h in hits}) == 7


def test_plain_words_for_a_todo_state_find_the_tasks_in_it(cairn: Cairn) -> None:
    # no word of the query is in the task ("INPROGRESS" is one token): without
    # understanding it is not found at all
    hits = cairn.search("tasks in progress", mode="keyword", explain=True).hits
    task = next(h for h in hits if h.title == "Paint the fence")
    assert task.rank <= 3 and task.todo == "INPROGRESS"
    assert _matched(dict(task.explain)) == ["matched todo INPROGRESS"]
    hits = cairn.search("tasks waiting", mode="keyword", explain=True).hits
    task = next(h for h in hits if h.todo == "WAITING")
    assert task.rank <= 2 and _matched(dict(task.explain)) == ["matched todo WAITING"]


def test_the_task_in_the_named_state_outranks_a_heading_that_repeats_the_word(
    cairn: Cairn,
) -> None:
    """``tasks waiting`` asks for the tasks in the WAITING state: the one task in it
    ranks above the "Waiting rooms" heading that says "waiting" four times (the state's
    boost, a share of the best score for the query words it covers, outweighs a
    heading's repeats of one of them)."""
    hits = cairn.search("tasks waiting", mode="keyword", explain=True).hits
    assert [h.title for h in hits[:2]] == ["Plumber visit", "Waiting rooms"]
    assert hits[0].todo == "WAITING"
    assert _matched(dict(hits[0].explain)) == ["matched todo WAITING"]


def test_a_month_written_in_words_raises_the_units_dated_in_it(
        cairn: Cairn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_TODAY", "2024-06-20")  # a lone month: the last one
    hits = cairn.search("meeting in September", mode="keyword", explain=True).hits
    assert hits[0].title == "Meeting with the architect"
    assert _matched(dict(hits[0].explain)) == ["matched date 2023-09-01..2023-10-01"]
    # the other meeting says "meeting" more often, and is still found
    assert "Meeting with the builder" in [h.title for h in hits]
    # an inactive timestamp ([…], a journal's date) is a date the unit carries too
    visit = next(h for h in hits if h.title == "Site visit")
    assert _matched(dict(visit.explain)) == ["matched date 2023-09-01..2023-10-01"]


def test_a_phrase_that_is_a_whole_heading_is_recognised(cairn: Cairn) -> None:
    hits = cairn.search("waiting rooms", mode="keyword", explain=True).hits
    assert hits[0].title == "Waiting rooms"
    assert "matched heading Waiting rooms" in _matched(dict(hits[0].explain))


def test_summands_still_add_up_and_unrelated_queries_are_untouched(cairn: Cairn) -> None:
    for hit in cairn.search("books", mode="keyword", explain=True).hits:
        summands = dict(hit.explain)["summands"]
        assert sum(summands.values()) == pytest.approx(hit.score)
    hits = cairn.search("desert planet", mode="keyword", explain=True).hits
    assert not any(_matched(dict(h.explain)) for h in hits)


def test_a_tag_added_later_is_recognised_after_reindexing(cairn: Cairn, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    assert not cairn.search("gardening", mode="keyword").hits
    (root / "garden.md").write_text("---\ntags: [gardening]\n---\n# Beds\n\nSoil.\n",
                                    encoding="utf-8")
    (root / "other.md").write_text("# Hoe\n\ngardening gardening gardening tools\n",
                                   encoding="utf-8")
    cairn.index([root])
    hits = cairn.search("gardening", mode="keyword", explain=True).hits
    assert hits[0].path == "garden.md"
    assert _matched(dict(hits[0].explain)) == ["matched tag gardening"]


def test_dates_written_in_words() -> None:
    today = dt.date(2024, 6, 20)
    assert dates_in(["notes", "September", "2023"], today) == [
        ("2023-09-01..2023-10-01", frozenset({1, 2}))]
    assert dates_in(["12", "march", "2024"], today) == [
        ("2024-03-12..2024-03-13", frozenset({0, 1, 2}))]
    assert dates_in(["2024", "03"], today) == [("2024-03-01..2024-04-01", frozenset({0, 1}))]
    # a lone month is its last occurrence up to today
    assert dates_in(["october"], today) == [("2023-10-01..2023-11-01", frozenset({0}))]
    assert dates_in(["last", "week"], today) == [("2024-06-10..2024-06-17", frozenset({0, 1}))]
    # "may" and "march" alone are words, not months
    assert dates_in(["may", "i", "march", "on"], today) == []


@pytest.mark.corpus
def test_real_vault_notes_carrying_the_named_genre_come_first(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    if not KEPANO.is_dir():
        pytest.skip("the shared corpus is not here")
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "vault"
    shutil.copytree(KEPANO / "References", root / "References")
    shutil.copytree(KEPANO / "Categories", root / "Categories")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        hits = c.search("sci-fi show", mode="keyword", explain=True).hits
        assert hits[0].path == "References/Futurama.md"
        assert {"matched property genre=Sci-fi", "matched property categories=Shows"} <= set(
            _matched(dict(hits[0].explain)))
        hits = c.search("movie directed by Ridley Scott", mode="keyword", explain=True).hits
        assert hits[0].path == "References/Blade Runner.md"
        assert "matched property director=Ridley Scott" in _matched(dict(hits[0].explain))


def test_export_settings_and_common_property_names_are_not_recognised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_EMBED", "none")
    root = tmp_path / "vault"
    root.mkdir()
    # an Org file's #+cindex: and a heading's BEAMER_env are export settings
    (root / "manual.org").write_text(
        "#+cindex: compost\n* Slides\n:PROPERTIES:\n:BEAMER_env: block\n:END:\nslides\n",
        encoding="utf-8")
    # "status" is a name most notes carry: it does not single any out
    for i in range(12):
        (root / f"n{i}.md").write_text(f"---\nstatus: open\n---\n# Note {i}\n\nstatus text\n",
                                       encoding="utf-8")
    (root / "rare.md").write_text("---\nseedbank: yes\n---\n# Seeds\n\nkept dry\n",
                                  encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db")) as c:
        c.index([root])
        for q in ("compost block slides", "status"):
            assert not any(_matched(dict(h.explain))
                           for h in c.search(q, mode="keyword", explain=True).hits), q
        hits = c.search("seedbank", mode="keyword", explain=True).hits
        assert _matched(dict(hits[0].explain)) == ["matched property name seedbank"]
