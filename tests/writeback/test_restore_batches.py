"""A bare ``cairn restore`` undoes the last dream run as one batch (the files it
changed and the notes it created), never its own safety copies; ``--run`` picks a
batch; a created note is removed only while it holds the bytes cairn wrote. Real files,
a real index, the real CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

Cli = Callable[..., Any]  # tests/conftest.py's ``cli`` fixture (``run_cli``)
LINKS = "* L\n[[file:a.org][a]] and [[file:b.org][b]]\n"


def _env(tmp_path: Path) -> dict[str, str | None]:
    home = tmp_path / "home"
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"), "CAIRN_EMBED": "none"}


def _write(root: Path, files: dict[str, str]) -> dict[Path, bytes]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_bare_restore_undoes_the_whole_run_once(cli: Cli, tmp_path: Path) -> None:
    root, db, env = tmp_path / "v", str(tmp_path / "x.db"), _env(tmp_path)
    before = _write(root, {"a.org": "#+title: A\n* A\n", "b.org": "* B\n",
                           "l1.org": LINKS, "l2.org": LINKS})
    cli("index", str(root), "--no-embed", "--db", db, env=env)
    changed = cli("dream", "--apply", "--fix", "add_org_id", "--db", db, "--json", env=env).json()
    assert sorted(Path(c["path"]).name for c in changed["changes"]
                  if c["action"] == "changed") == ["a.org", "b.org"]
    res = cli("restore", "--db", db, env=env)
    assert "undid batch dream-" in res.stdout
    assert _snapshot(root) == before  # both files of the run, byte for byte
    # the restore's own safety copies are not a run to undo: nothing comes back
    again = cli("restore", "--db", db, env=env, check=False)
    assert again.code == 1 and "no write batch left to restore" in again.stderr
    assert _snapshot(root) == before
    listed = cli("restore", "--list", "--db", db, env=env).stdout
    assert "(undone)" in listed and "(a restore's own copies)" in listed
    # --run undoes a named batch: here the restore itself, which redoes the run
    batch = next(line.split()[1] for line in listed.splitlines()
                 if line.startswith("batch restore:"))
    cli("restore", "--run", batch, "--db", db, env=env)
    assert _snapshot(root) != before and b":ID:" in (root / "a.org").read_bytes()


def test_restore_removes_a_note_the_run_created_only_while_unchanged(
    cli: Cli, tmp_path: Path
) -> None:
    root, db, env = tmp_path / "v", str(tmp_path / "x.db"), _env(tmp_path)
    before = _write(root, {f"n{i}.md": f"# N{i}\n\nWe went to [[Japan]].\n" for i in range(3)})
    cli("index", str(root), "--no-embed", "--db", db, env=env)
    run = cli("dream", "--apply", "--fix", "create_note", "--db", db, "--json", env=env).json()
    made = [Path(c["path"]) for c in run["changes"] if c["action"] == "created"]
    assert [p.name for p in made] == ["Japan.md"] and made[0].is_file()
    assert run["changes"][0]["backup"]
    res = cli("restore", "--db", db, env=env)
    assert f"removed {made[0]}" in res.stdout
    assert _snapshot(root) == before
    assert not made[0].parent.exists()  # the folder it made for the note goes too
    # created again, then edited by hand: restore refuses, names it, changes nothing
    cli("dream", "--apply", "--fix", "create_note", "--db", db, env=env)
    made[0].write_bytes(made[0].read_bytes() + b"my own line\n")
    edited = _snapshot(root)
    res = cli("restore", "--db", db, env=env, check=False)
    assert res.code != 0 and str(made[0]) in res.stderr and "not removed" in res.stderr
    assert _snapshot(root) == edited


def test_a_template_is_no_evidence_for_a_new_note(cli: Cli, tmp_path: Path) -> None:
    root, db, env = tmp_path / "v", str(tmp_path / "x.db"), _env(tmp_path)
    before = _write(root, {"n0.md": "# N0\n\nBy [[Authors]].\n",
                           "n1.md": "# N1\n\nBy [[Authors]].\n",
                           "Templates/Author Template.md": "# T\n\n[[Authors]]\n"})
    cli("index", str(root), "--no-embed", "--db", db, env=env)
    run = cli("dream", "--apply", "--fix", "create_note", "--db", db, "--json", env=env).json()
    assert not [c for c in run["changes"] if c["action"] == "created"]
    assert _snapshot(root) == before


def test_options_a_restore_would_ignore_are_refused_before_it_writes(
    cli: Cli, tmp_path: Path
) -> None:
    """``restore --dry-run`` (a dry run is for --prune) or ``restore --path F`` (a filter
    of --list) once undid the last run for real; options that exclude each other (and
    ``dream --apply --dry-run``) were half ignored. Each is a usage error naming both
    options, and no file changes."""
    root, db, env = tmp_path / "v", str(tmp_path / "x.db"), _env(tmp_path)
    _write(root, {"a.org": "#+title: A\n* A\n", "l1.org": LINKS, "l2.org": LINKS})
    cli("index", str(root), "--no-embed", "--db", db, env=env)
    cli("dream", "--apply", "--fix", "add_org_id", "--db", db, env=env)
    after_dream = _snapshot(root)
    for args, said in (
        (["--dry-run"], "--dry-run only works with --prune"),
        (["--path", str(root / "a.org")], "--path only works with --list"),
        (["--list", "--prune"], "--prune and --list cannot be used together"),
        (["--run", "x", "y"], "--run and ID cannot be used together"),
    ):
        res = cli("restore", *args, "--db", db, env=env, check=False)
        assert res.code == 2 and said in res.stderr, (args, res.stderr)
        assert _snapshot(root) == after_dream, args
    res = cli("restore", "--dry-run", "--json", "--db", db, env=env, check=False)
    assert res.code == 2 and "--dry-run only works with --prune" in res.json()["error"]
    res = cli("dream", "--apply", "--dry-run", "--json", "--db", db, env=env, check=False)
    assert res.code == 2 and "--apply and --dry-run cannot be used together" in res.json()["error"]
    res = cli("dream", "--fix", "add_org_id", "--db", db, env=env, check=False)
    assert res.code == 2 and "--fix only works with --apply or --dry-run" in res.stderr
    assert _snapshot(root) == after_dream


def test_a_count_of_one_file_is_singular(cli: Cli, tmp_path: Path) -> None:
    """``1 file``, not ``1 files``, in the summaries of index, dream and restore."""
    root, db, env = tmp_path / "v", str(tmp_path / "x.db"), _env(tmp_path)
    _write(root, {"a.org": "#+title: A\n* A\n", "l1.org": LINKS})
    (root / "l1.org").unlink()
    indexed = cli("index", str(root), "--no-embed", "--db", db, env=env)
    assert indexed.stdout.startswith("1 file: 1 added"), indexed.stdout
    (root / "l1.org").write_text(LINKS, encoding="utf-8")
    cli("index", "--no-embed", "--db", db, env=env)
    applied = cli("dream", "--apply", "--fix", "add_org_id", "--db", db, env=env)
    assert "1 file written" in applied.stderr, applied.stderr
    undone = cli("restore", "--db", db, env=env)
    assert undone.stdout.rstrip().endswith("(1 file)"), undone.stdout
