"""``Cairn.notes.validate``: note types from types.yaml and OKF bundles, through the index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.errors import NotFound

OKF = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "okf"


def test_types_yaml_in_the_vault_is_checked(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "types.yaml").write_text(
        "types:\n  person:\n    required: [email]\n    fields:\n      born: date\n"
    )
    (vault / "ann.md").write_text("---\ntype: person\nborn: yesterday\n---\n# Ann\n")
    (vault / "bob.md").write_text("---\ntype: person\nemail: b@x.org\n---\n# Bob\n")
    (vault / "odd.md").write_text("---\ntype: spaceship\n---\n# Odd\n")
    (vault / "plain.md").write_text("# No type\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([vault])
        assert run.failed == 0  # type problems never stop indexing
        found = c.notes.validate()
    by_file: dict[str, list[str]] = {}
    for d in found:
        by_file.setdefault(d.path, []).append(d.message)
    assert set(by_file) == {"vault/ann.md", "vault/odd.md"}
    assert any("requires field 'email'" in m for m in by_file["vault/ann.md"])
    assert any("'born'" in m and "date" in m for m in by_file["vault/ann.md"])
    assert any("unknown note type 'spaceship'" in m for m in by_file["vault/odd.md"])


@pytest.mark.corpus
def test_corpus_bundles_conform_and_a_broken_copy_does_not(tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([OKF])
        found = c.notes.validate()
        assert [d for d in found if d.severity == "error"] == []
        assert c.search("format:okf type:Metric").hits
    broken = tmp_path / "wiki"
    shutil.copytree(OKF / "okf-starter" / "wiki", broken)
    concept = next(p for p in broken.rglob("*.md") if p.name not in ("index.md", "log.md"))
    text = concept.read_text(encoding="utf-8")
    concept.write_text(text.replace("type:", "kind:", 1), encoding="utf-8")
    with Cairn.open(db=tmp_path / "j.db") as c:
        c.index([broken])
        errors = [d for d in c.notes.validate() if d.severity == "error"]
    rel = concept.relative_to(broken).as_posix()
    assert any(d.path == f"wiki/{rel}" and "type" in d.message for d in errors)


def test_a_folder_or_file_inside_a_root_is_validated(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "ships").mkdir()
    (vault / "types.yaml").write_text("types:\n  person:\n    required: [email]\n")
    (vault / "people" / "ann.md").write_text("---\ntype: person\n---\n# Ann\n")
    (vault / "people" / "cy.md").write_text("---\ntype: person\n---\n# Cy\n")
    (vault / "ships" / "odd.md").write_text("---\ntype: spaceship\n---\n# Odd\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        every = {d.path for d in c.notes.validate()}
        assert every == {"vault/people/ann.md", "vault/people/cy.md", "vault/ships/odd.md"}
        # was refused: "not a registered source root"
        assert {d.path for d in c.notes.validate([vault / "people"])} == {
            "vault/people/ann.md", "vault/people/cy.md"}
        assert {d.path for d in c.notes.validate([vault / "people" / "cy.md"])} == {
            "vault/people/cy.md"}
        both = c.notes.validate([vault / "ships", vault / "people" / "ann.md"])
        assert {d.path for d in both} == {"vault/people/ann.md", "vault/ships/odd.md"}
        assert {d.path for d in c.notes.validate([vault])} == every
        with pytest.raises(NotFound, match="not inside a registered source root"):
            c.notes.validate([tmp_path / "elsewhere"])
        with pytest.raises(NotFound):
            c.notes.validate([tmp_path / "vault-2"])  # a sibling sharing the root's prefix
        with pytest.raises(NotFound, match="peeple: no such file or folder"):
            c.notes.validate([vault / "peeple"])  # a typo inside the root checked nothing


@pytest.mark.corpus
def test_a_bundle_folder_inside_a_root_is_validated(tmp_path: Path) -> None:
    broken = tmp_path / "okf"
    shutil.copytree(OKF / "okf-starter", broken)
    concept = next(
        p for p in (broken / "wiki").rglob("*.md") if p.name not in ("index.md", "log.md")
    )
    concept.write_text(concept.read_text("utf-8").replace("type:", "kind:", 1), "utf-8")
    rel = concept.relative_to(broken).as_posix()
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([broken])
        inside = c.notes.validate([broken / "wiki"])
        assert any(d.path == f"okf/{rel}" and d.severity == "error" for d in inside)
        assert all(d.path.startswith("okf/wiki/") for d in inside)
        sub = concept.parent
        assert any(d.path == f"okf/{rel}" for d in c.notes.validate([sub]))


def test_a_fifo_or_a_link_out_of_a_bundle_neither_hangs_nor_is_read(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "index.md").write_text("---\nokf_version: 0.2\n---\n# Index\n")
    (vault / "note.md").write_text("---\ntype: Note\ntitle: Note\n---\n# Note\n")
    outside = tmp_path / "secret.md"
    outside.write_text("no front matter, outside the bundle\n")
    (vault / "link.md").symlink_to(outside)
    os.mkfifo(vault / "pipe.md")  # opening it for reading would block for ever
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault], embed=False)
    env = {**os.environ, "CAIRN_EMBED": "none"}
    res = subprocess.run(
        [sys.executable, "-m", "cairn.interfaces.cli", "--db", str(tmp_path / "i.db"),
         "validate", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode in (0, 1), res.stderr  # was: never returned
    paths = {d["path"] for d in json.loads(res.stdout)["diagnostics"]}
    assert "vault/link.md" not in paths and "vault/pipe.md" not in paths


KEPANO = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "markdown" / "kepano-obsidian"


def test_a_type_written_as_a_link_or_a_list_is_checked_like_a_name(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "types.yaml").write_text("types:\n  Authors:\n    required: [twitter]\n")
    forms = {
        "name.md": "type: Authors",
        "list.md": "type: [Authors]",
        "link.md": 'type: "[[Authors]]"',
        "linklist.md": 'type:\n  - "[[Authors]]"',
        "nested.md": "type: [[Authors]]",  # unquoted: YAML reads a list in a list
        "two.md": 'type: ["[[Books]]", "[[Authors]]"]',
    }
    for name, line in forms.items():
        (vault / name).write_text(f"---\n{line}\n---\n# {name}\n", encoding="utf-8")
    (vault / "ok.md").write_text('---\ntype: ["[[Authors]]"]\ntwitter: x\n---\n# ok\n')
    (vault / "other.md").write_text('---\ntype: ["[[Books]]"]\n---\n# other\n')
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        found = {d.path: d.message for d in c.notes.validate()}
        assert set(found) == {f"vault/{n}" for n in forms} | {"vault/other.md"}
        missing = "type 'Authors' requires field 'twitter', which is missing"
        for name in forms:
            assert found[f"vault/{name}"] == missing
        assert found["vault/other.md"] == "unknown note type 'Books' (declared: Authors)"
        by_name = {h.path for h in c.search("type:Authors", mode="keyword", limit=50).hits}
        by_link = {h.path for h in c.search("type:[[Authors]]", mode="keyword", limit=50).hits}
    assert by_name == by_link == {*(n for n in forms if n != "two.md"), "ok.md"}


@pytest.mark.corpus
def test_kepanos_list_of_links_types_are_validated_and_filtered(tmp_path: Path) -> None:
    vault = tmp_path / "kepano-obsidian"
    shutil.copytree(KEPANO, vault)
    (vault / "types.yaml").write_text("types:\n  Authors:\n    required: [twitter]\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([vault])
        found = c.notes.validate([vault / "References"])  # a folder inside the root
        by_name = {h.path for h in c.search("type:Authors", mode="keyword", limit=50).hits}
        by_link = {h.path for h in c.search("type:[[Authors]]", mode="keyword", limit=50).hits}
    authors = [d for d in found if "'Authors'" in d.message]
    # Steph Ango has a twitter key; Kevin Kelly does not; the template is outside References
    assert [d.path for d in authors] == ["kepano-obsidian/References/Kevin Kelly.md"]
    assert all(d.path.startswith("kepano-obsidian/References/") for d in found)
    assert by_name == by_link == {
        "References/Kevin Kelly.md", "References/Steph Ango.md", "Templates/Author Template.md",
    }
