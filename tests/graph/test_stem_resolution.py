"""A wikilink that names no Markdown note may name an Org or text note by its file stem;
when several notes of the root share that stem, the name alone is no evidence: the file
the link's path names relative to the linking note wins, else the nearest one (fewest
folder steps), and equally near ones leave the link unresolved with the candidates in
its reason (``cairn graph unresolved`` shows them)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.interfaces.cli._app import app


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _resolved(c: Cairn, source: str) -> dict[str, str | None]:
    """Link target → the path it resolved to (``None``: unresolved) for one note."""
    (doc,) = [d for r in c.store.roots() for d in c.store.documents_of_root(r.id)
              if d.path == source]
    units = c.store.units_of(doc.id)
    path_of = {d.id: d.path for r in c.store.roots() for d in c.store.documents_of_root(r.id)}
    return {lk.target: path_of.get(lk.resolved_document_id or "")
            for lk in c.store.links_of([u.id for u in units])}


def test_a_shared_stem_resolves_to_the_nearest_note_not_the_shortest_path(
    tmp_path: Path,
) -> None:
    root = tmp_path / "notes"
    _write(root, {
        "projects/plan.md": "# Plan\n\nSee [[garden]] and [[sub/garden]].\n",
        "projects/sub/garden.org": "#+TITLE: Project garden\n",
        "other/garden.org": "#+TITLE: Another project's garden\n",
        "projects/here/tasks.md": "# Tasks\n\nSee [[garden]].\n",
    })
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([root], embed=False)
        # "other/garden.org" has the shorter path; "projects/sub" is one step away
        assert _resolved(c, "projects/plan.md") == {
            "garden": "projects/sub/garden.org", "sub/garden": "projects/sub/garden.org"}
        assert _resolved(c, "projects/here/tasks.md") == {"garden": "projects/sub/garden.org"}


def test_equally_near_notes_of_one_stem_leave_the_link_unresolved_naming_them(
    tmp_path: Path,
) -> None:
    root = tmp_path / "notes"
    _write(root, {
        "journal/today.md": "# Today\n\nSee [[plan]] and [[b/plan]].\n",
        "a/plan.org": "#+TITLE: Plan A\n",
        "b/plan.org": "#+TITLE: Plan B\n",
    })
    db = tmp_path / "i.db"
    with Cairn.open(db=db) as c:
        c.index([root], embed=False)
        assert _resolved(c, "journal/today.md") == {"plan": None, "b/plan": "b/plan.org"}
    res = CliRunner().invoke(app, ["graph", "unresolved", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    (row,) = [u for u in json.loads(res.output) if u["target"] == "plan"]
    assert "ambiguous" in row["reason"] and "a/plan.org, b/plan.org" in row["reason"]
