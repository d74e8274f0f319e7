"""Unit ids are given out by position (``ingest/ids.py``'s fast copy): the copy equals
``dataclasses.replace`` field for field, and a real file gets the same ids as before."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cairn.app import Cairn
from cairn.config import Config
from cairn.ingest import ids
from cairn.model import Link, Timestamp, Unit


def _every_field_set() -> Unit:
    """A unit whose every field holds a value of its own (none left at its default)."""
    return Unit(
        ordinal=3, level=2, kind="heading", title="Plan", outline_path=("Top", "Plan"),
        body="Water the tomatoes.", parent=1, tags=("garden",), inherited_tags=("home",),
        properties={"EFFORT": "1h"}, todo="TODO", todo_state="todo", priority="A",
        timestamps=(Timestamp("<2026-12-01>", True, "2026-12-01", role="scheduled"),),
        org_id="org-1",
        custom_id="custom-1", declared_id="declared-1", line_start=4, line_end=9,
        links=(Link("wikilink", "Seeds", line=5, raw="[[Seeds]]"),), language="en",
        extra={"role": "user"}, id="old", parent_id="old-parent", document_id="old-doc",
    )


def test_the_fast_copy_equals_dataclasses_replace() -> None:
    u = _every_field_set()
    defaults = Unit(0, 0, "", "", (), "")
    for f in dataclasses.fields(Unit):  # the sample really sets every field
        assert getattr(u, f.name) != getattr(defaults, f.name), f.name
    for parent in ("p-1", None):
        fast = ids._with_ids(u, "u-1", "d-1", parent)
        assert fast == dataclasses.replace(u, id="u-1", document_id="d-1", parent_id=parent)


def test_ids_are_the_path_based_uuids(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# One\ntext\n## Two\nmore\n# One\nagain\n", encoding="utf-8")
    with Cairn(Config(db_path=tmp_path / "i.db", embed={"provider": "none"})) as c:
        c.index([str(root)], embed=False)
        (doc,) = c.store.documents_of_root(ids.root_id(root))
        assert doc.id == ids.document_id(ids.root_id(root), "a.md")
        units = c.store.units_of(doc.id)
        want, seen = [], {}
        for u in units:
            n = seen.get((u.kind, u.outline_path), 0)
            seen[(u.kind, u.outline_path)] = n + 1
            want.append(ids.unit_id(doc.id, u.outline_path, n, u.kind))
        assert [u.id for u in units] == want
        by_id = {u.id: u for u in units}
        two = next(u for u in units if u.title == "Two")
        assert two.parent_id is not None and by_id[two.parent_id].title == "One"


def test_the_fast_uuid5_is_uuid5() -> None:
    import random
    import uuid

    rng = random.Random(5)
    names = ["", "unit:", "doc:r:a.md:key", "root:/ä/東京"]
    names += ["unit:" + "".join(rng.choice("ab\x1f é東🙂-") for _ in range(rng.randint(0, 40)))
              for _ in range(2000)]
    for name in names:
        assert ids.uuid5(name) == str(uuid.uuid5(ids.NAMESPACE, name)), name
