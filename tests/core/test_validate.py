"""``Cairn.validate``: note types from types.yaml and OKF bundles, through the index."""

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
        found = c.validate()
    by_file: dict[str, list[str]] = {}
    for d in found:
        by_file.setdefault(d["path"], []).append(d["message"])
    assert set(by_file) == {"vault/ann.md", "vault/odd.md"}
    assert any("requires field 'email'" in m for m in by_file["vault/ann.md"])
    assert any("'born'" in m and "date" in m for m in by_file["vault/ann.md"])
    assert any("unknown note type 'spaceship'" in m for m in by_file["vault/odd.md"])


@pytest.mark.corpus
def test_corpus_bundles_conform_and_a_broken_copy_does_not(tmp_path: Path) -> None:
    with Cairn.open(db=tmp_path / "i.db") as c:
        c.index([OKF])
        found = c.validate()
        assert [d for d in found if d["severity"] == "error"] == []
        assert c.search("format:okf type:Metric").hits
    broken = tmp_path / "wiki"
    shutil.copytree(OKF / "okf-starter" / "wiki", broken)
    concept = next(p for p in broken.rglob("*.md") if p.name not in ("index.md", "log.md"))
    text = concept.read_text(encoding="utf-8")
    concept.write_text(text.replace("type:", "kind:", 1), encoding="utf-8")
    with Cairn.open(db=tmp_path / "j.db") as c:
        c.index([broken])
        errors = [d for d in c.validate() if d["severity"] == "error"]
    rel = concept.relative_to(broken).as_posix()
    assert any(d["path"] == f"wiki/{rel}" and "type" in d["message"] for d in errors)


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
        every = {d["path"] for d in c.validate()}
        assert every == {"vault/people/ann.md", "vault/people/cy.md", "vault/ships/odd.md"}
        # was refused: "not a registered source root"
        assert {d["path"] for d in c.validate([vault / "people"])} == {
            "vault/people/ann.md", "vault/people/cy.md"}
        assert {d["path"] for d in c.validate([vault / "people" / "cy.md"])} == {
            "vault/people/cy.md"}
        both = c.validate([vault / "ships", vault / "people" / "ann.md"])
        assert {d["path"] for d in both} == {"vault/people/ann.md", "vault/ships/odd.md"}
        assert {d["path"] for d in c.validate([vault])} == every
        with pytest.raises(NotFound, match="not inside a registered source root"):
            c.validate([tmp_path / "elsewhere"])
        with pytest.raises(NotFound):
            c.validate([tmp_path / "vault-2"])  # a sibling sharing the root's prefix


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
        inside = c.validate([broken / "wiki"])
        assert any(d["path"] == f"okf/{rel}" and d["severity"] == "error" for d in inside)
        assert all(d["path"].startswith("okf/wiki/") for d in inside)
        sub = concept.parent
        assert any(d["path"] == f"okf/{rel}" for d in c.validate([sub]))


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
