"""An Org root exported to Obsidian and OKF is converted to Markdown (inline markup,
links where the index resolved them, lists, blocks, tables, drawers, footnotes, tasks)
and ``export compare`` finds nothing lost or added."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.export.org_inline import inline
from cairn.export.org_links import SELF_ANCHOR, SELF_SEARCH
from cairn.export.org_markdown import DRAWER_LINK
from cairn.interfaces.cli._app import app
from cairn.model import Link

NOTES = {
    "garden.org": """:PROPERTIES:
:ID: garden-1
:ROAM_REFS: https://example.org/garden
:END:
#+TITLE: Garden
#+FILETAGS: :plants:

Plants with *bold*, /italic/, =verbatim=, ~code~, +gone+ and _under_ words.
See [[file:sub/soil.org][the soil note]], [[id:soil-1][soil by id]], [[*Beds][the beds]]
and [[https://example.org/x?a=1][a site]]; [[file:missing.org][a missing note]] stays.
A cost of =$= and later $x^2$ math.[fn:1] Also a note
inline[fn::with [[https://example.org/fn][a link]] inside].

* TODO [#A] Beds :outdoor:
SCHEDULED: <2026-05-01 Fri>
:PROPERTIES:
:CUSTOM_ID: beds
:SOURCE: [[https://example.org/beds][the beds source]]
:END:
- [X] dig
- [ ] plant
- tomato :: red fruit
1. first
2. second

| Plant | Note      |
|-------+-----------|
| bean  | climbs[fn:2] |

#+begin_src python :results output
if x:
    print("a|b")  # keeps its bytes
#+end_src

#+begin_quote
A quoted /line/.
#+end_quote

#+begin_verse
Roses are red
  violets blue
#+end_verse

:REFERENCES:
- note taken from https://example.org/ref
:END:

[fn:1] The first footnote.
[fn:2] The bean note.
""",
    "sub/soil.org": """:PROPERTIES:
:ID: soil-1
:END:
#+TITLE: Soil
Loam and clay, back to [[file:../garden.org::*Beds][the beds]].

* DONE Test the soil
CLOSED: [2026-04-01 Wed 10:00]
""",
}


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "org"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("kind", ["obsidian", "okf"])
def test_an_org_root_exports_with_nothing_lost_or_added(tmp_path: Path, kind: str) -> None:
    root = _root(tmp_path)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write(kind, out, roots=[root])
        res = c.export.compare(root, kind=kind, exported=out)
    assert res.same, (res.missing, res.extra)
    assert res.exceptions == {DRAWER_LINK: 1}  # the :REFERENCES: drawer's link
    assert "https://example.org/ref" in next(out.rglob("garden.md")).read_text()
    assert res.counts["tasks"] == (2, 2) and res.counts["links"][0] >= 5
    garden = next(out.rglob("garden.md")).read_text(encoding="utf-8")
    for md in ("**bold**", "*italic*", "`verbatim`", "`code`", "~~gone~~", "<u>under</u>",
               "[a site](https://example.org/x?a=1)", "- [X] dig", "- [ ] plant",
               "| bean | climbs[^2] |", "```python :results output\nif x:\n    print(\"a|b\")",
               "> A quoted *line*.", "Roses are red\\\n&nbsp;&nbsp;violets blue",
               "`$` and later $x^2$",
               "[^1]: The first footnote.", "# TODO [#A] Beds #outdoor",
               "scheduled:: 2026-05-01", "[^fn-8-1]: with [a link](https://example.org/fn)"):
        assert md in garden, md
    assert "[a missing note](missing.org)" in garden  # unresolved: visible, as written
    if kind == "obsidian":
        assert "[[sub/soil|the soil note]]" in garden and "[[garden#Beds|the beds]]" in garden
        assert "[[sub/soil|soil by id]]" in garden
        assert "source:: [the beds source](https://example.org/beds)" in garden
    else:
        assert "[the soil note](/sub/soil.md)" in garden
        assert "[soil by id](/sub/soil.md)" in garden
    assert "\ue000" not in garden and "\ue005" not in garden  # no placeholder leaks


def _label(link: Link, label: str, shown: str) -> str:
    return f"[{label}]({link.target})"


def test_verbatim_dollars_open_no_math_and_markup_closes_before_a_footnote() -> None:
    # Org reads "=$=" as verbatim before any LaTeX fragment: the two "$" of the
    # description list below are no math spanning the link between them
    text = "+ PRE :: other than =$=.\n+ [[https://x.org][POST]] :: a\n+ B :: not =$=."
    assert inline(text, 1, _label) == (
        "+ PRE :: other than `$`.\n+ [POST](https://x.org) :: a\n+ B :: not `$`.")
    # "~v~[fn:…]": the verbatim ends before the footnote ("[" may follow markup)
    notes: list[str] = []
    md = inline("~org-x~[fn:k:By default, ~org-x~ [[https://x.org][here]].].", 1,
                _label, notes)
    assert md == "`org-x`[^k]."
    assert notes == ["[^k]: By default, `org-x` [here](https://x.org)."]


def test_export_compare_names_the_drawer_link_exception(tmp_path: Path) -> None:
    root = _root(tmp_path)
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([root], embed=False)
    res = CliRunner().invoke(app, ["export", "compare", str(root), "--kind", "obsidian",
                                   "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert f"exception: 1 {DRAWER_LINK}" in " ".join(res.output.split())
    assert res.output.rstrip().endswith("same")


EDGES = {
    "edges.org": """:PROPERTIES:
:ROAM_REFS: [[https://example.org/one][one]]
:ROAM_REFS+: https://example.org/two
:END:
#+TITLE: Edges
#+TODO: TODO | DONE

* TODO Issue ([[https://example.org/r][report]]) :#11:@home:work:
- 2. On iOS the list item's text opens with a number
- + and this one with a plus
Toggling is bound to [[kbd:][C-\\]]. Search =+{\\(keyboard\\|typ\\)ing}= or =\\[1\\]=.

#+begin_quote
> 2) put this in ~/.profile
#+end_quote

\\begin{equation}
^B P = ^B _A R ^AP
\\end{equation}

| name | tex |
|------+-----|
| sup2 | ^2  |

#+begin_src html -r
<link href="a.css"> (ref:css)
#+end_src
See [[(css)][the stylesheet line]].

#+BEGIN: clocktable :scope subtree
#+CAPTION: Clock summary
| Headline | Time |
#+TBLFM: $2=1
#+END:

* DONE

* COMMENT TODO Pre-filtering
""",
    "described.org": """#+TITLE: Described
#+DESCRIPTION: Introduction

All this text comes before the first heading.

* A heading
""",
    "code-first.org": """#+begin_src emacs-lisp
  (+ foo bar)
#+end_src

* A heading
Its text.
""",
}


@pytest.mark.parametrize("kind", ["obsidian", "okf"])
def test_org_edge_cases_export_with_nothing_lost_or_added(tmp_path: Path, kind: str) -> None:
    """Tags Obsidian cannot hold, a keyword with no title, item text that opens like a
    bullet, a quote line opening with ``>``, a link description ending in ``\\``,
    LaTeX in verbatim, a LaTeX environment, ``^2`` in a table cell, a coderef link,
    ``KEY+`` properties, a dynamic block's keywords, a commented heading whose title
    opens with a keyword's word, a note that opens with code (no OKF description is
    made of code) and one with ``#+DESCRIPTION``: each read back as written."""
    root = tmp_path / "org"
    root.mkdir()
    for rel, text in EDGES.items():
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write(kind, out, roots=[root])
        res = c.export.compare(root, kind=kind, exported=out)
    assert res.same, (res.missing, res.extra, res.differences)
    assert res.counts["tasks"] == (2, 2)
    md = next(out.rglob("edges.md")).read_text(encoding="utf-8")
    for want in ("#work\n\norg-tags:: :#11:@home:\n", "# DONE\n", "- 2\\. On iOS",
                 "- \\+ and this", "> \\> 2) put", "[C-\\\\]", "`+{\\(keyboard\\|typ\\)ing}`",
                 "`\\[1\\]`", "$$\n\\begin{equation}\n^B P = ^B _A R ^AP\n\\end{equation}\n$$",
                 "the stylesheet line", "<!-- #+CAPTION: Clock summary -->"):
        assert want in md, want
    assert md.count("roam_refs:: ") == 2 and "[[(css)]" not in md
    first = next(out.rglob("code-first.md")).read_text(encoding="utf-8")
    assert "description: (+" not in first
    if kind == "okf":  # the file's own #+DESCRIPTION is the concept's description
        assert "description: Introduction" in next(out.rglob("described.md")).read_text()


ANCHORS = {
    "guide.org": """#+TITLE: Guide
See [[#missing][the missing part]] and [[#here][the part here]].

* Here
:PROPERTIES:
:CUSTOM_ID: here
:END:
Read [[#setup][how to set up]] again.
""",
}


@pytest.mark.parametrize("kind", ["obsidian", "okf"])
def test_a_link_to_a_custom_id_not_in_its_file_is_a_named_exception(
    tmp_path: Path, kind: str
) -> None:
    # Org leaves [[#missing]] unresolved when its file has no such CUSTOM_ID; Markdown
    # reads an anchor its note lacks as a link to the note: the compare names it
    root = tmp_path / "org"
    root.mkdir()
    for rel, text in ANCHORS.items():
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write(kind, out, roots=[root])
        res = c.export.compare(root, kind=kind, exported=out)
        guide = (out / "guide.md").read_text(encoding="utf-8")
        # still a link to compare: an export that drops it differs
        (out / "guide.md").write_text(guide.replace("(#setup)", ""), encoding="utf-8")
        dropped = c.export.compare(root, kind=kind, exported=out)
    assert res.same, (res.missing, res.extra)
    assert res.exceptions == {SELF_ANCHOR: 2}
    assert not dropped.same and dropped.differences["links"][0] == 1
    # the in-file anchor as Org means it (Org's HTML export writes href="#missing")
    assert "[the missing part](#missing)" in guide
    assert "[how to set up](#setup)" in guide
    if kind == "obsidian":
        assert "[[guide#Here|the part here]]" in guide
    else:
        assert "[the part here](/guide.md#here)" in guide


SEARCHES = {
    # another note shares the names the searches below look for in their own file
    "notes/nowhere.org": "* Nowhere note\nbody\n",
    "notes/brackets.org": "* Brackets note\nbody\n",
    "sub/w.org": "* Sub with <<target>> radio\nSee [[target]].\n* Use\n"
                 "See [[nowhere]] and [[*Missing heading]] and [[*Use]].\n"
                 "* Head [[brackets]] here\n",
}


@pytest.mark.parametrize("kind", ["obsidian", "okf"])
def test_an_unresolved_search_of_its_own_file_links_no_other_note(
    tmp_path: Path, kind: str
) -> None:
    # Org searches the file a [[name]] or [[*Heading]] stands in; one that finds nothing
    # must not become a link the export's reader resolves to notes/nowhere.md: it is an
    # anchor of its own note, which the compare names as an exception
    root = tmp_path / "org"
    for rel, text in SEARCHES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write(kind, out, roots=[root])
        res = c.export.compare(root, kind=kind, exported=out)
    text = (out / "sub" / "w.md").read_text(encoding="utf-8")
    assert res.same, (res.missing, res.extra)
    assert res.exceptions == {SELF_SEARCH: 3}
    assert "[nowhere](#nowhere)" in text and "[Missing heading](#missing-heading)" in text
    assert "# Head [brackets](#brackets) here" in text
    if kind == "obsidian":  # found in the file: a link to that heading
        assert "[[sub/w#Sub with target radio|target]]" in text and "[[sub/w#Use|Use]]" in text
    else:
        assert "[target](/sub/w.md#sub-with-target-radio)" in text
        assert "[Use](/sub/w.md#use)" in text


def test_okf_description_of_an_org_note_is_plain_text(tmp_path: Path) -> None:
    # the OKF description is read as text: no Org emphasis, link brackets or footnote
    # references; the compare strips it from the body alike on both sides
    root = tmp_path / "org"
    root.mkdir()
    (root / "marked.org").write_text(
        "*Bold* and /italic/ with =verb= and ~code~, see [[https://example.org][a site]]"
        " and [[file:other.org]].[fn:1]\n\nMore text.\n\n* Notes\n\n[fn:1] The note.\n",
        encoding="utf-8",
    )
    (root / "other.org").write_text("* Other\nbody\n", encoding="utf-8")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write("okf", out, roots=[root])
        res = c.export.compare(root, kind="okf", exported=out)
    assert res.same, (res.missing, res.extra)
    text = (out / "marked.md").read_text(encoding="utf-8")
    assert ("description: Bold and italic with verb and code, see a site and "
            "other.org.\n") in text
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "Bold and italic with verb and code, see a site" in index
