"""Consolidation proposed by a language model (:mod:`cairn.memory.propose`): the rules
that check a proposal, on hand-written answers (each kind of mistake refused and its
memories clustered by the rules; masking before anything is sent), and — slow — the
``[enrich]`` wiring through a real model (SmolLM2 behind an OpenAI-compatible loopback
server, as the enrichment test runs it)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.app import Cairn
from cairn.config import load_config
from cairn.errors import ConfigError
from cairn.memory.propose import REPLY_SCHEMA, ModelProposer, clean_title, read_reply

BACKUP = "The nightly backup job copies the database to the offsite bucket"
NEW = {
    "backup": "The backup job to the offsite bucket failed on Tuesday night",
    "cat": "The cat sleeps on the sofa all afternoon",
    "kitten": "My kitten naps on the couch after lunch",
    "secret": "Mail the oncall lead at alice.smith@fastmail.net about the pager",
}


def _ids(prompt: str) -> tuple[dict[str, str], dict[str, str]]:
    """``(memory key → id, concept title word → id)`` read back from a prompt."""
    mems = {
        key: m.group(1)
        for m in re.finditer(r"^(m\d+): .*$", prompt, re.M)
        for key, text in NEW.items()
        if text[:20] in m.group(0)
    }
    backup = [m.group(1) for m in re.finditer(r"^(c\d+): .*backup.*$", prompt, re.M)]
    return mems, {"backup": backup[0]} if backup else {}


def _setup(c: Cairn, bundle: Path) -> str:
    """One concept about backups (by the rules), then the four new memories."""
    c.memory.remember(bundle, BACKUP, tags=["backup"])
    res, _ = c.memory.consolidate(bundle, llm=False)
    (concept,) = res.created
    for key, text in NEW.items():
        c.memory.remember(bundle, text, tags=[key] if key != "kitten" else ["cat"])
    return concept


def test_the_rules_check_a_hand_written_proposal(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    sent: list[str] = []

    def ask(system: str, user: str) -> str:
        sent.append(user)
        mems, concepts = _ids(user)
        return "Here you are:\n```json\n" + json.dumps({"clusters": [
            {"memories": [mems["backup"]], "concept": concepts["backup"]},  # right
            {"memories": [mems["cat"], mems["kitten"]], "concept": None,
             "title": "  Cats and their naps  "},
            {"memories": [mems["secret"]], "concept": concepts["backup"]},  # no evidence
            {"memories": ["m99"], "concept": None, "title": "ghost"},  # no such memory
            {"memories": [mems["cat"]], "concept": None, "title": "again"},  # twice
            {"memories": [mems["kitten"]], "concept": "c42"},  # no such concept
        ]}) + "\n```"

    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        backup = _setup(c, bundle)
        email = NEW["secret"].split()[-4]
        proposer = ModelProposer(ask, mask=lambda t: t.replace(email, "[EMAIL]"))
        res, _ = c.memory.consolidate(bundle, proposer=proposer, embed=False)
        report = c.memory.maintain(bundle, dry_run=True, decay=False)
    assert len(sent) == 1 and "alice.smith@fastmail.net" not in sent[0] and "[EMAIL]" in sent[0]
    assert res.proposer == "ModelProposer"
    problems = "\n".join(res.problems)
    assert "'m99': not a memory" in problems and "proposed twice" in problems
    assert "'c42': not a concept" in problems
    assert f"nothing shared with {backup}" in problems and len(res.problems) == 4
    by = {tuple(sorted(Path(m).name.split("_", 2)[2] for m in g.memories)): g.by
          for g in res.clusters}
    assert sorted(by.values()) == ["model", "model", "rules"]
    # the right merge is made, the new concept has the model's title
    assert res.merged == (backup,)
    assert "failed on Tuesday" in (bundle / backup).read_text()
    titled = [p for p in res.created if "title: Cats and their naps" in (bundle / p).read_text()]
    assert len(titled) == 1 and "kitten" in (bundle / titled[0]).read_text()
    # every memory ends up the source of a concept: symmetry holds
    assert len(res.subsumed) == 4 and report.unsourced == [] and report.pending == 0


def test_an_unusable_answer_leaves_everything_to_the_rules(tmp_path: Path) -> None:
    bundle = tmp_path / "mem"
    replies = iter(["I cannot help with that.", '{"clusters": [{"memories": "m1"}]}'])
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        _setup(c, bundle)
        res, _ = c.memory.consolidate(
            bundle, proposer=ModelProposer(lambda s, u: next(replies), batch=2), embed=False
        )
    assert len(res.problems) == 2 and all("no usable answer" in p for p in res.problems)
    assert all(g.by == "rules" for g in res.clusters) and len(res.subsumed) == 4


def test_reply_shape_and_titles() -> None:
    assert read_reply('x {"clusters": []} y') == []
    for bad in ("no json", '{"clusters": 3}', '{"clusters": [{"memories": [1]}]}',
                '{"clusters": [{"memories": [], "title": 7}]}', "{oops}"):
        with pytest.raises(ValueError):
            read_reply(bad)
    assert clean_title(' "Backups" ') == "Backups"
    assert clean_title("x" * 121) is None and clean_title("  ") is None
    assert clean_title("two\nlines") is None and clean_title(None) is None


def test_llm_without_enrich_is_an_error(tmp_path: Path) -> None:
    with Cairn(load_config(db=tmp_path / "i.db")) as c:
        c.memory.remember(tmp_path / "mem", BACKUP)
        with pytest.raises(ConfigError, match=r"\[enrich\]"):
            c.memory.consolidate(tmp_path / "mem", llm=True)
        res, _ = c.memory.consolidate(tmp_path / "mem")  # not configured: the rules
    assert res.proposer is None and len(res.created) == 1


# --- a real model ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def smol_url() -> Iterator[tuple[str, list[str]]]:
    """``(http://127.0.0.1:PORT/v1, prompts received)``: SmolLM2 (the enrichment test's
    model and loader) behind the OpenAI chat API, its output constrained to
    :data:`REPLY_SCHEMA`."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "enrich"))
    from test_real_model import _model, serve_chat

    prompts: list[str] = []
    with serve_chat(_model(), lambda _body: REPLY_SCHEMA, prompts) as url:
        yield url, prompts


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a 135M model on a loaded machine: minutes per answer
def test_a_real_model_proposes_through_enrich(
    tmp_path: Path, smol_url: tuple[str, list[str]]
) -> None:
    """``[enrich]`` configured: ``memory_consolidate`` asks the model (one request for
    the batch), its answer — weak, from a 135M model — is checked by the rules, and
    whatever it proposes, every memory ends up the source of exactly one concept and
    the bundle validates."""
    url, prompts = smol_url
    cfg = tmp_path / "cairn.toml"
    cfg.write_text(
        f'[enrich]\nprovider = "openai"\nurl = "{url}"\nmodel = "smollm2"\n'
        "max_tokens = 300\ntimeout = 600\n"
    )
    bundle = tmp_path / "mem"
    with Cairn(load_config(db=tmp_path / "i.db", config_file=cfg)) as c:
        _setup(c, bundle)
        before = len(prompts)
        res, _ = c.memory.consolidate(bundle, embed=False)
        report = c.memory.maintain(bundle, dry_run=True, decay=False)
        errors = [d for d in c.notes.validate() if d.severity == "error"]
    assert res.proposer == "ModelProposer" and len(prompts) == before + 1
    assert "alice.smith@fastmail.net" not in prompts[-1] and "m4:" in prompts[-1]
    print("model proposal:", res.clusters, res.problems)
    assert len(res.subsumed) == 4 and report.unsourced == [] and report.pending == 0
    placed = [m for g in res.clusters for m in g.memories]
    assert len(placed) == len(set(placed)) == 4
    assert errors == []
