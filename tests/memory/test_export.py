"""Export over the shared corpus: the OKF bundle validates with 0 errors, JSON holds what
the API serialises, the Obsidian vault of the Org corpus re-indexes with its
wikilinks, and the round-trip comparison reports what differs (and is exact on a
plain Markdown folder)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import CairnError
from cairn.export.notes import concept_rel
from cairn.export.service import units_links
from cairn.export.signature import signature
from cairn.interfaces.cli._app import app
from cairn.model.serialize import to_data

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("export") / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([CORPUS / "markdown" / "kepano-obsidian", CORPUS / "org", CORPUS / "okf"],
                embed=False)
    return db


@pytest.mark.corpus
@pytest.mark.slow
def test_okf_export_validates(indexed: Path, tmp_path: Path) -> None:
    with Cairn(load_config(db=indexed)) as c:
        rep = c.export.write("okf", tmp_path / "okf")
        assert rep.documents > 1000 and rep.relations > 0
        with pytest.raises(CairnError, match="new or empty"):
            c.export.write("okf", tmp_path / "okf")  # never overwrites
    with Cairn(load_config(db=tmp_path / "o.db")) as o:
        o.index([tmp_path / "okf"], embed=False)
        diags = o.notes.validate()
        assert [d for d in diags if d.severity == "error"] == []
        assert o.stats().documents >= rep.documents


@pytest.mark.corpus
@pytest.mark.slow
def test_json_and_obsidian_exports(indexed: Path, tmp_path: Path) -> None:
    with Cairn(load_config(db=indexed)) as c:
        rep = c.export.write("json", tmp_path / "okf.json", roots=[CORPUS / "okf"])
        data = json.loads((tmp_path / "okf.json").read_text())
        assert set(data) == {"documents", "units", "links", "edges"}
        assert len(data["documents"]) == rep.documents > 50
        assert {"id", "title", "path"} <= set(data["documents"][0])
        vault = c.export.write("obsidian", tmp_path / "vault", roots=[CORPUS / "org"])
        assert vault.documents > 1000
        # the id:/file: links of the Org corpus that resolve, as (source, target) files
        (org,) = [r for r in c.store.roots() if Path(r.path).name == "org"]
        org_docs = c.store.documents_of_root(org.id)
        vpath = {d.id: concept_rel("", d) for d in org_docs}
        before: Counter[tuple[str, str]] = Counter(
            (vpath[d.id], vpath[link.resolved_document_id])
            for d in org_docs for link in c.store.links_of([u.id for u in c.store.units_of(d.id)])
            if link.kind in ("org-id", "org-file") and link.resolved_document_id in vpath
        )
    with Cairn(load_config(db=tmp_path / "v.db")) as v:
        v.index([tmp_path / "vault"], embed=False)
        s = v.stats()
        assert s.documents == vault.documents
        vdocs = v.store.documents_of_root(v.store.roots()[0].id)
        path_of = {d.id: d.path for d in vdocs}
        after: Counter[tuple[str, str]] = Counter(
            (d.path, path_of[link.resolved_document_id])
            for d in vdocs for link in v.store.links_of([u.id for u in v.store.units_of(d.id)])
            if link.kind == "wikilink" and link.resolved_document_id in path_of
        )
        kept = sum(min(n, after[k]) for k, n in before.items())
        rate = kept / sum(before.values())
        print(f"Org id:/file: links resolving after the Obsidian export: {kept}/"
              f"{sum(before.values())} = {rate:.1%}")
        assert sum(before.values()) > 500 and rate >= 0.95
        wiki = [
            link for d in v.store.documents_of_root(v.store.roots()[0].id)
            for u in v.store.units_of(d.id) for link in v.store.links_of([u.id])
            if link.kind == "wikilink"
        ]
        resolved = sum(1 for link in wiki if link.resolved_document_id)
        # every id:/file: link the Org corpus resolves becomes a resolving wikilink
        assert len(wiki) >= vault.links and resolved >= 1
        print(f"obsidian export of the Org corpus: {resolved}/{len(wiki)} wikilinks resolve")


def test_round_trip_of_a_markdown_folder(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text(
        "---\ntags: [x]\n---\n# Alpha\n\nSee [b](sub/b.md).\n\n## Two\n\nmore\n"
    )
    (root / "sub" / "b.md").write_text("# Beta\n\nBack to [a](../a.md).\n")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root)
    assert res.counts["units"][0] == res.counts["units"][1] >= 3
    assert res.counts["links"] == (2, 2) and res.counts["edges"][0] == res.counts["edges"][1]
    assert res.same, (res.missing, res.extra)


def test_round_trip_json_keeps_its_keys(tmp_path: Path) -> None:
    """``cairn export compare --json``: the aspects' counts sit at the top level, in
    the order the comparison makes them, pairs as arrays; what an export lost is
    listed as arrays of strings."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nSee [[b]].\n")
    (root / "b.md").write_text("# Beta\n\nBack.\n")
    db = tmp_path / "i.db"
    with Cairn(load_config(db=db)) as c:
        c.index([root], embed=False)
    res = CliRunner().invoke(app, ["export", "compare", str(root), "--json", "--db", str(db)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    aspects = ["units", "links", "edges", "footnotes", "tasks", "index", "display"]
    assert list(data) == ["root", "kind", "same", "documents", *aspects, "differences",
                          "exceptions", "missing", "extra"]
    assert (data["root"], data["kind"], data["same"]) == (str(root.resolve()), "okf", True)
    assert data["documents"][0] == 2  # the bundle adds its own (index.md …)
    assert data["links"] == [1, 1] and data["differences"]["links"] == [0, 0]
    assert list(data["differences"]) == list(data["missing"]) == aspects
    assert data["exceptions"] == {} and data["missing"]["links"] == []
    out = tmp_path / "out"
    with Cairn(load_config(db=db)) as c:
        c.export.write("okf", out, roots=[root])
        (out / "a.md").write_text((out / "a.md").read_text().replace("b.md", "gone.md"))
        lossy = to_data(c.export.compare(root, exported=out))
    assert lossy["same"] is False and lossy["differences"]["links"] == [1, 1]
    assert lossy["missing"]["links"] == [["Alpha", "Alpha", "=Beta", "1"]]


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize(
    "root",
    [
        "okf/okf-mesh",
        "okf/okf-starter",
        "okf/knowledge-catalog",
        "markdown/foam",
        "markdown/kepano-obsidian",
        "markdown/obsidian-help-NO-LICENCE",
    ],
)
def test_round_trip_is_exact_on_the_corpus(root: str, tmp_path: Path) -> None:
    """Nested OKF bundles keep their bundle-absolute links resolving (the export keeps
    the folders), Obsidian syntax becomes OKF Markdown with the same text, code is left
    alone: the re-indexed export has the same units, links and edges."""
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([CORPUS / root], embed=False)
        res = c.export.compare(CORPUS / root)
    assert res.counts["units"][0] > 10 and res.same, (res.missing, res.extra)


def test_obsidian_syntax_becomes_okf_markdown(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "a.md").write_text(
        "# Alpha\n\nSee [[b]], [[b#Two|the second]], [[b#Two]], [[Nowhere]] and "
        "![[img.png]]. ==marked== %%hidden%%\n\n> [!NOTE] A callout\n> inside\n\n"
        "```\n[[not a link]]\n```\n\nand `[[code]]` too.\n"
    )
    (root / "sub" / "b.md").write_text("# Beta\n\nBack to [[a]].\n\n## Two\n\nmore\n")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root)
        assert res.same, (res.missing, res.extra)
        rep = c.export.write("okf", tmp_path / "out")
    text = (tmp_path / "out" / "a.md").read_text()
    assert "[b](/sub/b.md)" in text and "[the second](/sub/b.md#two)" in text
    assert "[b > Two](/sub/b.md#two)" in text and "[Nowhere](/Nowhere.md)" in text
    assert "![img.png](/img.png)" in text and "<mark>marked</mark>" in text
    assert "[[not a link]]" in text and "`[[code]]`" in text
    assert "> A callout <!-- [!NOTE] -->\n> inside" in text  # the marker kept, not shown
    assert (tmp_path / "out" / "img.png").read_bytes().startswith(b"\x89PNG")
    assert "img.png" in rep.files


def test_round_trip_of_the_obsidian_help_classes(tmp_path: Path) -> None:
    """Each class of difference the Obsidian help vault showed, by hand: a
    ``description`` (OKF puts it at the head of the concept's text), wikilinks in
    front matter, a table's escaped alias pipe, fences inside a callout, a code span
    inside a wikilink, block ids (after a blank and right after an embed), an image's
    display size, labels with Markdown characters, a ``%%`` comment block."""
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "a.md").write_text(
        '---\ndescription: What a is about.\ncategories:\n  - "[[b]]"\n---\n'
        "Intro with a block id ^intro-id\n\n"
        "| Option | Description |\n| --- | --- |\n"
        "| `--x` | See [[b#Two\\|the second part]] and ![[pic.png\\|200]] |\n\n"
        "> [!note] A callout\n> ```md\n> > [!tip]\n> > [[not a link]]\n> ```\n\n"
        "Use [[b#`code`|`hasTag`]] or [[b#^blk]] and *[[b|a_b*c]]*.\n\n"
        "![[pic.png]]^after-embed\n\n"
        "%%\na hidden [[b]] block\n> with a quote\n%%\n\n"
        "![[pic.png#icon|100x20]] ==marked [[b]] too==\n"
    )
    (root / "sub" / "b.md").write_text("# Beta\n\nText ^blk\n\n## Two\n\nmore\n")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root)
        assert res.same, (res.missing, res.extra)
        (r,) = c.store.roots()
        docs = c.store.documents_of_root(r.id)
        sig = signature(docs, c.store.edges.all_edges(), *units_links(c.store, docs))
        # links are counted per unit and target: the preamble's 6 links to b (the front
        # matter's among them; not the code's, nor the comment's) and its 3 embeds of
        # the attachment (an existing file, not a document)
        assert sig["links"] == {("a", "", "=Beta", "6"), ("a", "", "@pic.png", "3")}
        c.export.write("okf", tmp_path / "out")
    text = (tmp_path / "out" / "a.md").read_text()
    assert '<a id="^intro-id"></a>' in text and '<a id="^after-embed"></a>' in text
    assert "[the second part](/sub/b.md#two)" in text and "![pic.png](/pic.png)" in text
    assert "> > [!tip]\n> > [[not a link]]" in text  # code inside the callout: as written
    assert "[\\`hasTag\\`](/sub/b.md#%60code%60)" in text and "[b > blk](/sub/b.md#^blk)" in text
    assert "<!-- \na hidden [[b]] block\n&gt; with a quote\n -->" in text


def _vault_with_attachment_folder(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Attachments").mkdir(parents=True)
    (root / "Templates" / "Bases").mkdir(parents=True)
    (root / "Attachments" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "Templates" / "Bases" / "Books.base").write_text("views: []\n")
    (root / "a.md").write_text("## Books\n\n![[Books.base#Author]]\n\n![[pic.png|200]]\n")
    return root


def test_okf_export_embeds_attachments_kept_in_folders(tmp_path: Path) -> None:
    """``![[pic.png]]`` with the file at ``Attachments/pic.png`` points, in the OKF
    export, where the file is copied; the round trip sees both embeds resolve."""
    root = _vault_with_attachment_folder(tmp_path)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root)
        c.export.write("okf", tmp_path / "out")
        vault = c.export.compare(root, kind="obsidian")  # the vault copies them too
        c.export.write("obsidian", tmp_path / "vault-out")
    assert res.same, (res.missing, res.extra)
    assert vault.same, (vault.missing, vault.extra)
    assert (tmp_path / "vault-out" / "Templates" / "Bases" / "Books.base").is_file()
    text = (tmp_path / "out" / "a.md").read_text()
    assert "![pic.png](/Attachments/pic.png)" in text
    assert "![Books.base > Author](/Templates/Bases/Books.base#author)" in text
    assert (tmp_path / "out" / "Attachments" / "pic.png").is_file()
    assert (tmp_path / "out" / "Templates" / "Bases" / "Books.base").is_file()


def test_compare_fails_on_a_broken_embed_in_the_export(tmp_path: Path) -> None:
    """An export whose embed no longer reaches its attachment is not "same": the
    comparison counts what every link and embed resolves to."""
    root = _vault_with_attachment_folder(tmp_path)
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        out = tmp_path / "out"
        c.export.write("okf", out)
        assert c.export.compare(root, exported=out).same
        page = out / "a.md"
        page.write_text(page.read_text().replace("(/Attachments/pic.png)", "(/pic.png)"))
        res = c.export.compare(root, exported=out)
    assert not res.same
    assert ("a", "Books", "@Attachments/pic.png", "1") in res.missing["links"]


def test_exports_carry_the_masked_text(tmp_path: Path) -> None:
    """With ``[redact] on_ingest = "mask"`` the OKF and Obsidian exports hold what the
    index holds: the placeholders, never a planted secret (the file keeps it)."""
    key = "AKIAZ3K7PQRS2TUVWXY4"
    url = "postgres://app:Zq8!xR2vT5@db.prod.internal:5432/main"
    root = tmp_path / "vault"
    root.mkdir()
    note = root / "deploy.md"
    note.write_text(f"# Deploy\n\naws_access_key_id = {key}\n\nDB: {url}\n")
    (root / "tasks.org").write_text(f"* TODO rotate\naws_access_key_id = {key}\n")
    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[redact]\non_ingest = "mask"\n[embed]\nprovider = "none"\n')
    with Cairn(load_config(db=tmp_path / "i.db", config_file=cfg, env={})) as c:
        c.index([root], embed=False)
        c.export.write("okf", tmp_path / "okf")
        c.export.write("obsidian", tmp_path / "vault-out")
    written = [p for d in ("okf", "vault-out") for p in (tmp_path / d).rglob("*") if p.is_file()]
    assert len(written) >= 4
    for p in written:
        text = p.read_text()
        assert key not in text and "Zq8!xR2vT5" not in text, p
    assert "[SECRET:" in (tmp_path / "okf" / "deploy.md").read_text()
    assert "[SECRET:" in (tmp_path / "vault-out" / "deploy.md").read_text()
    assert key in note.read_text()  # the user's file is untouched


ORG_TASKS = (
    "#+TITLE: Tasks\n"
    "* DONE [#A] This is done :work:\n"
    "CLOSED: [2024-03-02 Sat 10:00] SCHEDULED: <2024-03-01 Fri>\n"
    ":PROPERTIES:\n:ID: abc\n:END:\nBody text.\n"
    "* TODO Repeat\nDEADLINE: <2024-03-05 Tue +1w -2d>\n"
    "* Plain heading\n"
    "* DONE Support #+HTML\n"
)
ORG_OWN_KEYWORDS = "#+TODO: NEXT | FINISHED\n* NEXT [#B] Call\n* TODO is only a word here\n"


def test_obsidian_export_keeps_org_tasks_and_compare_counts_them(tmp_path: Path) -> None:
    """``* DONE [#A] …`` keeps its keyword and priority in the heading and its planning
    as inline fields; both exports round-trip with every task, and an export that
    lost a date is a difference."""
    root = tmp_path / "org"
    root.mkdir()
    (root / "t.org").write_text(ORG_TASKS)
    (root / "u.org").write_text(ORG_OWN_KEYWORDS)  # keywords are per file
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        for kind in ("obsidian", "okf"):
            res = c.export.compare(root, kind=kind)
            assert res.same and res.counts["tasks"] == (4, 4), (kind, res.missing, res.extra)
        out = tmp_path / "vault"
        c.export.write("obsidian", out)
        text = (out / "t.md").read_text()
        assert "# DONE [#A] This is done #work\n\nclosed:: 2024-03-02T10:00\n" in text
        assert "scheduled:: 2024-03-01\nid:: abc\n\nBody text." in text
        assert "# TODO Repeat\n\ndeadline:: <2024-03-05 Tue +1w -2d>\n" in text
        (out / "t.md").write_text(text.replace("scheduled:: 2024-03-01\n", ""))
        res = c.export.compare(root, kind="obsidian", exported=out)
    assert not res.same
    assert res.missing["tasks"] == (
        ("Tasks", "This is done", "DONE", "A", "2024-03-01", "", "2024-03-02T10:00"),
    )


@pytest.mark.corpus
@pytest.mark.slow
def test_obsidian_export_of_nested_okf_bundles_loses_no_link(tmp_path: Path) -> None:
    """The bundles of knowledge-catalog sit in sub-folders: their bundle-absolute
    ``/metrics/x.md`` links are rebased onto the bundle's folder in the vault, so every
    link still reaches its note (the bundles' own index.md/log.md, which the OKF side
    does not count, are the only additions)."""
    root = CORPUS / "okf" / "knowledge-catalog"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root, kind="obsidian")
    assert res.counts["links"][0] > 100
    assert not any(res.missing.values()), res.missing


def test_okf_export_of_org_keeps_its_links(tmp_path: Path) -> None:
    """``[[id:…][label]]`` and ``[[file:…][label]]`` links of an Org note become
    Markdown links to the exported concept (and heading) in the OKF bundle: the round
    trip keeps every link and edge."""
    root = tmp_path / "org"
    root.mkdir()
    (root / "a.org").write_text(
        "#+TITLE: Alpha\nSee [[id:b-1][the beta note]] and [[file:b.org][b file]].\n"
        "* Part\nMore about [[id:b-2][beta's second part]].\n* Also [[id:b-1][in a heading]]\n"
    )
    (root / "b.org").write_text(
        ":PROPERTIES:\n:ID: b-1\n:END:\n#+TITLE: Beta\nText.\n"
        "* Second\n:PROPERTIES:\n:ID: b-2\n:END:\nBody.\n"
    )
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        res = c.export.compare(root)
        c.export.write("okf", tmp_path / "out")
    assert res.counts["links"] == (3, 3) and res.same, (res.missing, res.extra)
    text = (tmp_path / "out" / "a.md").read_text()
    assert "See [the beta note](/b.md) and [b file](/b.md)." in text
    assert "More about [beta's second part](/b.md#second)." in text
    assert "# Also [in a heading](/b.md)\n" in text


def test_okf_export_keeps_an_obsidian_comment_byte_for_byte(tmp_path: Path) -> None:
    """An Obsidian ``%%comment%%`` holding ``--``, ``->`` and ``>`` becomes an HTML
    comment that ends where the Obsidian one ends and gives its text back byte for byte
    (``uncomment``), as the Org export's comments do."""
    from cairn.export.org_markdown import uncomment

    root = tmp_path / "vault"
    root.mkdir()
    hidden = "a -- b => c, x-->y &gt; &#45; &amp;"
    block = f"{hidden}\n> quoted --- line"
    (root / "a.md").write_text(f"# A\n\nText %%{hidden}%% after.\n\n%%\n{block}\n%%\n")
    out = tmp_path / "out"
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        assert c.export.compare(root).same
        c.export.write("okf", out)
        text = (out / "a.md").read_text()
        # the compare reads the comments' text: a lossy escape ("--" as "- -") differs
        (out / "a.md").write_text(text.replace("-&#45;", "- -"))
        lossy = c.export.compare(root, kind="okf", exported=out)
    assert [x.strip() for x in uncomment(text)] == [hidden, block]
    assert "after." in text and text.count("-->") == 2
    assert not lossy.same and lossy.differences["display"] == (2, 2)


def test_okf_link_to_a_nested_heading_has_one_fragment(tmp_path: Path) -> None:
    """``[[Note#A#B]]`` (heading B under A) gives an OKF URL with one ``#``: the later
    ``#`` is encoded, so the URL's fragment is the whole heading path."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Help and support.md").write_text("# Help\n\n## Questions\n\n### Report bugs\n\nx\n")
    (root / "home.md").write_text("See [[Help and support#Questions#Report bugs]].\n")
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.index([root], embed=False)
        c.export.write("okf", tmp_path / "out")
    text = (tmp_path / "out" / "home.md").read_text()
    assert "(/Help%20and%20support.md#questions%23report-bugs)" in text
