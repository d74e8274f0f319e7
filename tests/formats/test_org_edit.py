"""Write-back edits on the lossless Org tree: only the intended bytes change."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.formats.org import (
    heading_at,
    parse,
    parse_tree,
    serialize,
    set_property,
    set_tags,
    set_todo,
    todo_keywords,
)

TEXT = (
    "#+TODO: NEXT | DONE\r\n"
    "* NEXT [#A] Task   :a:b:\r\n"
    "SCHEDULED: <2024-01-01 Mon>\r\n"
    "body\twith tab\r\n"
    "* Other\r\n"
    ":PROPERTIES:\r\n"
    ":OWNER:   me\r\n"
    ":END:\r\n"
    "** Last"
)


def _changed(before: str, after: str) -> list[str]:
    """The lines that differ, as a unified diff without headers."""
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), n=0
    )
    return [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]


def test_set_todo_changes_only_the_keyword() -> None:
    tree = parse_tree(TEXT)
    kws = todo_keywords(TEXT).all()
    out = serialize(set_todo(tree, 0, "DONE", kws))
    assert out == TEXT.replace("* NEXT [#A]", "* DONE [#A]")
    out = serialize(set_todo(tree, 0, None, kws))
    assert out == TEXT.replace("* NEXT [#A]", "* [#A]")
    out = serialize(set_todo(tree, 1, "NEXT", kws))
    assert out == TEXT.replace("* Other", "* NEXT Other")
    doc = parse(out, "x.org")
    assert [u.todo for u in doc.units[1:]] == ["NEXT", "NEXT", None]


def test_set_tags() -> None:
    tree = parse_tree(TEXT)
    assert serialize(set_tags(tree, 0, ["x", "y"])) == TEXT.replace(":a:b:", ":x:y:")
    assert serialize(set_tags(tree, 0, [])) == TEXT.replace("Task   :a:b:", "Task")
    out = serialize(set_tags(tree, 1, ["new"]))
    assert out == TEXT.replace("* Other\r\n", "* Other :new:\r\n")
    assert parse(out, "x.org").units[2].tags == ("new",)


def test_set_property_existing_new_and_delete() -> None:
    tree = parse_tree(TEXT)
    out = serialize(set_property(tree, 1, "owner", "you"))
    assert out == TEXT.replace(":OWNER:   me", ":OWNER:   you")
    out = serialize(set_property(tree, 1, "NEW", "1"))
    assert _changed(TEXT, out) == ["+:NEW: 1\r\n"]
    assert dict(parse(out, "x.org").units[2].properties) == {"OWNER": "me", "NEW": "1"}
    out = serialize(set_property(tree, 1, "OWNER", None))
    assert _changed(TEXT, out) == ["-:OWNER:   me\r\n"]


def test_set_property_creates_drawer_after_planning() -> None:
    tree = parse_tree(TEXT)
    out = serialize(set_property(tree, 0, "K", "v"))
    assert out == TEXT.replace(
        "SCHEDULED: <2024-01-01 Mon>\r\n",
        "SCHEDULED: <2024-01-01 Mon>\r\n:PROPERTIES:\r\n:K: v\r\n:END:\r\n",
    )
    doc = parse(out, "x.org")
    assert doc.units[1].properties == {"K": "v"}
    assert doc.units[1].timestamps[0].role == "scheduled"


def test_set_property_on_last_line_without_newline_and_file_level() -> None:
    tree = parse_tree(TEXT)
    out = serialize(set_property(tree, 2, "K", "v"))
    assert out == TEXT + "\r\n:PROPERTIES:\r\n:K: v\r\n:END:"
    assert parse(out, "x.org").units[3].properties == {"K": "v"}
    out = serialize(set_property(tree, None, "ID", "abc"))
    assert out == ":PROPERTIES:\r\n:ID: abc\r\n:END:\r\n" + TEXT
    assert parse(out, "x.org").declared_id == "abc"


def test_edits_keep_every_other_byte_of_a_messy_file() -> None:
    messy = "\ufeffintro \x00\n* TODO a\t:t:\n\n  text  \n* b\n:PROPERTIES:\n:X: 1\n:END:\n"
    tree = parse_tree(messy)
    out = serialize(set_todo(tree, 0, "DONE", {"TODO", "DONE"}))
    assert out == messy.replace("* TODO a", "* DONE a")
    out = serialize(set_property(tree, 1, "X", "2"))
    assert out == messy.replace(":X: 1", ":X: 2")


def test_unit_line_maps_to_tree_heading() -> None:
    text = "#+begin_src sh\necho\n#+end_src\n* A\n#+begin_src sh\nx\n#+end_src\n** B\n"
    doc = parse(text, "x.org")
    tree = parse_tree(text)
    b = next(u for u in doc.units if u.title == "B")
    assert b.ordinal == 4  # preamble, code, A, code, B
    idx = heading_at(tree, b.line_start)
    assert idx == 1
    assert heading_at(tree, 2) is None
    out = serialize(set_tags(tree, idx, ["done"]))
    assert out == text.replace("** B\n", "** B :done:\n")


_LINES = st.sampled_from(
    [
        "* TODO a :x:\n", "** b\n", "*** DONE [#A] c\n", "text\n", "\n", "  - item\n",
        ":PROPERTIES:\n", ":K: v\n", ":END:\n", "SCHEDULED: <2024-01-01 Mon>\n",
        "#+begin_src sh\n", "#+end_src\n", "x\r\n", "* \n",
    ]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=25), st.integers(0, 50), st.sampled_from(
    ["todo", "tags", "prop"]
))
def test_random_edits_touch_only_their_heading(
    lines: list[str], pick: int, what: str
) -> None:
    text = "".join(lines)
    tree = parse_tree(text)
    if not tree.headings:
        return
    idx = pick % len(tree.headings)
    if what == "todo":
        new = serialize(set_todo(tree, idx, "DONE", {"TODO", "DONE"}))
    elif what == "tags":
        new = serialize(set_tags(tree, idx, ["z"]))
    else:
        new = serialize(set_property(tree, idx, "K2", "w"))
    before = tree.headings[idx]
    after = parse_tree(new)
    # everything outside the edited heading's line and section is unchanged
    assert serialize(parse_tree(new)) == new
    head_before = "".join(tree.zeroth.lines) + "".join(
        h.line + "".join(h.section.lines) for h in tree.headings[:idx]
    )
    assert new.startswith(head_before)
    tail_before = "".join(h.line + "".join(h.section.lines) for h in tree.headings[idx + 1 :])
    assert new.endswith(tail_before)
    edited = parse(new, "x.org").units
    unit = next(u for u in edited if u.kind == "heading" and u.line_start == after.headings[
        idx
    ].line_no)
    if what == "todo":
        assert unit.todo == "DONE"
    elif what == "tags":
        assert unit.tags == ("z",)
    else:
        assert unit.properties.get("K2") == "w", (before, new)
