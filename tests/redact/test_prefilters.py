"""The detectors' pre-filters (hints, "holds a digit", a word of lower-case letters)
only skip work: :func:`cairn.redact.find` finds exactly what trying every detector on
every text finds, on the hand-written samples, real chat exports and text spliced from
both; and a unit's title and body are searched once when it is masked."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_detectors import NEGATIVES, POSITIVES

from cairn.model import Unit
from cairn.redact import Masker, detectors, find
from cairn.redact.detectors import DETECTORS, Finding
from cairn.redact.mask import mask_unit


def _every_detector(text: str) -> list[Finding]:
    """What :func:`find` finds with no pre-filter: every detector tried on ``text``."""
    if not text:
        return []
    own = [m.span() for m in detectors._OWN.finditer(text)]
    taken: list[Finding] = []
    for det in DETECTORS:
        for m in det.pattern.finditer(text):
            start, end = m.span(det.group)
            if start < 0 or any(f.start < end and start < f.end for f in taken):
                continue
            if any(a < end and start < b for a, b in own):
                continue
            value = m.group(det.group)
            try:
                ok = det.valid is None or det.valid(value, text, start)
            except (ValueError, TypeError):
                ok = False
            if ok:
                taken.append(Finding(det.kind, det.category, start, end, value))
    return sorted(taken, key=lambda f: f.start)


def _spliced(pieces: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.choice(pieces), rng.choice(pieces)
        cut = rng.randint(0, len(a))
        out.append(a[:cut] + rng.choice(["", " ", "\n", ": ", "="]) + b + a[cut:])
    return out


WORDS = ["word", "été", "naïve", "straße", "ſecret", "akia", "aiza", "bearer", "ı", "ﬁle",
         "Word", "AKIAZ3K7PQRS2TUVWXY4", "glpat", "x", "ssn", "passé", "日本語", "aws"]


def test_the_prefilters_find_what_every_detector_finds_on_the_samples() -> None:
    samples = [*POSITIVES.values(), *NEGATIVES, *WORDS]
    texts = samples + _spliced(samples, 3000, seed=3)
    for text in texts:
        assert find(text) == _every_detector(text), text
    assert all(find(t) for t in POSITIVES.values())  # the samples do hold findings


@pytest.mark.corpus
def test_the_prefilters_find_what_every_detector_finds_in_real_chat_exports(
    corpus: Path,
) -> None:
    pieces: list[str] = []
    for path in sorted((corpus / "chats").rglob("*")):
        if path.is_file() and path.stat().st_size < 2_000_000:
            try:
                text = path.read_text("utf-8")
            except UnicodeDecodeError:
                continue
            pieces += [p for p in text.splitlines() if p.strip()]
    assert len(pieces) > 1000
    words = [w for p in pieces for w in p.lower().split()]
    for text in [*pieces, *words, *_spliced([*pieces, *POSITIVES.values()], 2000, seed=4)]:
        assert find(text) == _every_detector(text), text


def test_a_masked_unit_searches_its_title_and_body_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = "write to anna.k42@proton.me, key " + POSITIVES["openai-key"]
    unit = Unit(ordinal=0, level=1, kind="message", title="call +44 20 7946 1234",
                outline_path=(), body=body, extra={"keywords": ["anna", "proton"]})
    searched: list[str] = []

    def counted(text: str) -> list[Finding]:
        searched.append(text)
        return find(text)

    monkeypatch.setattr("cairn.redact.mask.find", counted)
    out = mask_unit(Masker(), unit)
    assert searched.count(body) == 1 and searched.count(unit.title) == 1
    assert "[PII:email#1]" in out.body and "[SECRET:openai-key#1]" in out.body
    assert out.title == "call [PII:phone#1]"
    assert out.extra["keywords"] == []  # pieces of the found address
