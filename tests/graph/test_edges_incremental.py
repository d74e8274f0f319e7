"""Incremental updates give exactly the graph a rebuild from scratch gives.

After each change to a vault (edit tags, properties, links; add, delete, rename notes)
``GraphService.update()`` must leave the same edges — ids, weights, counts, evidence —
and the same stubs as ``rebuild()``. A fixed sequence on the small vault, then random
sequences on random vaults (seeded, so a failure replays).
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from cairn.model import Failure

pytest.importorskip("cairn.formats.markdown")
pytest.importorskip("cairn.formats.org")


def _state(v: Any) -> tuple[dict[str, tuple[Any, ...]], set[tuple[Any, ...]]]:
    edges = {
        e.id: (e.source, e.target, e.relation, e.origin, e.weight, e.count, e.links,
               e.evidence, e.source_document_id, e.target_document_id)
        for e in v.cairn.store.edges.all_edges()
    }
    stubs = {(i, *rest) for i, rest in v.stubs().items()}
    return edges, stubs


def _check(v: Any) -> None:
    v.cairn.index([v.root])
    v.graph.update()
    incremental = _state(v)
    v.graph.rebuild()
    assert _state(v) == incremental


def test_fixed_sequence_on_the_small_vault(small: Any) -> None:
    before = _state(small)
    _check(small)  # nothing changed
    assert _state(small) == before
    # beta loses project=apollo and gains tag rare: the pair weights of rare change
    small.write("beta.md", "---\ntags: [garden, rare]\n---\n# Beta\n\nBeta text.\n")
    _check(small)
    assert ("alpha.md#", "shares_property", "beta.md#") not in small.edges()
    small.write("new.md", "---\ntags: [garden]\nproject: Apollo\n---\n# New\n\n[[Missing Note]]\n")
    _check(small)
    (small.root / "sub" / "delta.md").unlink()
    _check(small)
    assert any(t == "stub:sub/delta.md" for _s, _r, t in small.edges("declared"))
    (small.root / "gamma.md").rename(small.root / "gamma2.md")
    _check(small)
    small.write("Missing Note.md", "# Missing Note\n\nNow here.\n")
    _check(small)
    assert not any(t == "stub:Missing Note" for _s, _r, t in small.edges())


NAMES = ["Ant", "Bee", "Cat", "Dog", "Eel", "Fox", "Gnu", "Hen"]
TAGS = ["red", "blue", "green", "gold"]


def _note(rng: random.Random) -> str:
    tags = rng.sample(TAGS, rng.randint(0, 2))
    lines = ["---", f"tags: [{', '.join(tags)}]"]
    if rng.random() < 0.5:
        lines.append(f"project: {rng.choice(['Apollo', 'Gemini'])}")
    if rng.random() < 0.4:
        lines.append(f"related: [{rng.choice(NAMES)}]")
    if rng.random() < 0.3:
        lines.append(f'depends_on: "[[{rng.choice(NAMES)}]]"')
    lines += ["---", f"# {rng.choice(NAMES)} note", ""]
    for _ in range(rng.randint(0, 3)):
        lines.append(f"See [[{rng.choice(NAMES)}]] and [[{rng.choice(NAMES)}#Part]].")
    if rng.random() < 0.5:
        lines += ["", "## Part", "", f"#{rng.choice(TAGS)} text [[{rng.choice(NAMES)}]]"]
    return "\n".join(lines) + "\n"


def _org(rng: random.Random, i: int) -> str:
    other = rng.randrange(4)
    project = rng.choice(["Apollo", "X"])
    return (f"#+title: Org {i}\n\n* Head {i} :{rng.choice(TAGS)}:\n:PROPERTIES:\n"
            f":ID: 00000000-0000-4000-8000-00000000000{i}\n:PROJECT: {project}\n"
            f":END:\nLink [[id:00000000-0000-4000-8000-00000000000{other}][o]] "
            f"and [[file:{rng.choice(NAMES)}.md][n]].\n** Sub\n[[*Head {i}]]\n")


@pytest.mark.parametrize("seed", range(1, 7))
def test_random_edit_sequences(make_vault: Any, seed: int) -> None:
    rng = random.Random(seed)
    files = {f"{n}.md": _note(rng) for n in rng.sample(NAMES, 5)}
    files.update({f"o{i}.org": _org(rng, i) for i in range(3)})
    v = make_vault(files)
    _check(v)
    origins: set[str] = set()
    for _step in range(8):
        present = sorted(p.relative_to(v.root).as_posix() for p in v.root.rglob("*.*")
                         if p.suffix in (".md", ".org"))
        op = rng.choice(["edit", "edit", "add", "delete", "rename"])
        target = rng.choice(present)
        if op == "edit" or (op == "delete" and len(present) < 3):
            num = int(re.findall(r"\d", target)[-1]) if target.endswith(".org") else 0
            text = _org(rng, num) if target.endswith(".org") else _note(rng)
            v.write(target, text)
        elif op == "add":
            free = [n for n in NAMES if f"{n}.md" not in present]
            if free:
                v.write(f"{rng.choice(free)}.md", _note(rng))
        elif op == "delete":
            (v.root / target).unlink()
        else:
            new = Path(target).with_name("moved-" + Path(target).name)
            (v.root / target).rename(v.root / new)
        _check(v)
        origins |= {row[3] for row in _state(v)[0].values()}
    assert origins == {"declared", "structural", "implicit"}


def test_a_file_parsed_again_with_the_same_hash_is_rebuilt(small: Any) -> None:
    store = small.cairn.store
    before = _state(small)
    # a file marked partly failed is parsed again on the next run although its bytes
    # (and so its content hash) did not change: its units are deleted and re-inserted
    root = store.roots()[0]
    state = store.file_states(root.id)["alpha.md"]
    with store.transaction():
        store.upsert_file(root.id, "alpha.md", size=state.size, mtime=0, hash_=state.hash,
                          format_="markdown", failure=Failure("alpha.md", "partly failed"))
    # (the units' delete trigger drops the file's edges; Cairn.index then updates the
    # graph, which must notice the rewrite although the hash is the same)
    from cairn.ingest.pipeline import Indexer
    from cairn.redact.fingerprint import index_config_hash

    run = Indexer(small.cairn.store, config_hash=index_config_hash(small.cairn.config)).run(
        small.cairn.store.roots()
    )
    assert run.changed == 1
    (alpha,) = store.edges.documents_at_path(root.id, "alpha.md")
    # (structural edges are derived from the units, so they are there at once)
    assert not [e for e in store.edges.all_edges()
                if e.source_document_id == alpha.id and e.origin != "structural"]
    small.graph.update()
    assert _state(small) == before


def test_update_inside_the_callers_transaction(small: Any) -> None:
    small.write("extra.md", "# Extra\n\n[[Beta]]\n")
    small.cairn.index([small.root])
    with small.cairn.store.transaction():
        small.graph.update()
    assert ("extra.md#Extra", "references", "beta.md#") in small.edges("declared")


@pytest.mark.parametrize(("first", "later"), [("Foo Bar", "foo bar"), ("foo bar", "Foo Bar")])
def test_a_stub_spelled_two_ways_is_labelled_as_a_rebuild_labels_it(
    small: Any, first: str, later: str
) -> None:
    small.write("zz.md", f"# Zz\n\n[[{first}]]\n")
    _check(small)
    small.write("aa.md", f"# Aa\n\n[[{later}]]\n")  # sorts first, written last
    _check(small)
    labels = {label for _kind, label, _t in small.stubs().values() if label.lower() == "foo bar"}
    assert labels == {"Foo Bar"}
