"""Curated detectors of secrets and personal data in text.

Each :class:`Detector` is a regular expression for one kind plus a validator
(:mod:`cairn.redact.validators`): a checksum where the kind has one, and
false-positive filters. :func:`find` returns the findings of a text as
non-overlapping character spans, earliest and longest first.

Kinds (``Finding.kind``) and their class (``Finding.category``): secrets —
``openai-key``, ``anthropic-key``, ``aws-access-key``, ``aws-secret-key``,
``github-token``, ``gitlab-token``, ``slack-token``, ``stripe-key``, ``google-api-key``,
``discord-token``, ``npm-token``, ``jwt``, ``private-key``, ``bearer-token``,
``password``, ``generic-secret`` (``secret: <32+ characters>``); personal data
(``pii``) — ``email``, ``phone``, ``card-number``, ``iban``, ``us-ssn``, ``ipv4``,
``ipv6``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cairn.redact.validators import (
    card,
    email,
    iban_ok,
    ipv4,
    ipv6,
    jwt,
    mixed_case_secret,
    password,
    phone,
    private_key,
    spoken_password,
    ssn,
    token,
)

Category = Literal["secret", "pii"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected value: ``text[start:end] == value`` (character offsets)."""

    kind: str
    category: Category
    start: int
    end: int
    value: str


@dataclass(frozen=True, slots=True)
class Detector:
    """A kind's pattern; ``group`` is the capture group holding the value (0: the whole
    match); ``valid(value, text, start)`` filters false positives."""

    kind: str
    category: Category
    pattern: re.Pattern[str]
    group: int = 0
    valid: Callable[[str, str, int], bool] | None = None
    hints: tuple[str, ...] = ()
    """Substrings (lower case) of which a text must hold one for the pattern to be
    tried at all (none: always tried) — a fast pre-filter."""
    digit: bool = False
    """Every match holds a digit: a text without one is not searched (a pre-filter)."""


_TOK = r"[A-Za-z0-9_\-]"
DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private-key",
        "secret",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,12000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[A-Za-z0-9+/=\s]|\\n){40,12000})"
        ),
        valid=private_key,
        hints=("private key",),
    ),
    Detector(
        "anthropic-key",
        "secret",
        re.compile(r"\bsk-ant-(?:api|admin|oat)\d\d-[A-Za-z0-9_\-]{20,}"),
        valid=token,
        hints=("sk-ant-",),
    ),
    Detector(
        "openai-key",
        "secret",
        re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
        valid=token,
        hints=("sk-",),
    ),
    Detector(
        "aws-access-key",
        "secret",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"),
        valid=token,
        hints=(
            "akia",
            "asia",
            "abia",
            "acca",
            "agpa",
            "aida",
            "aroa",
            "aipa",
            "anpa",
            "anva",
            "apka",
        ),
    ),
    Detector(
        "aws-secret-key",
        "secret",
        re.compile(
            r"(?i:aws|secret[_\s-]?access[_\s-]?key)[A-Za-z_\s\"'-]{0,24}[=:]\s*[\"']?"
            r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        group=1,
        valid=mixed_case_secret,
        hints=("aws", "secret"),
    ),
    Detector(
        "github-token",
        "secret",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b"),
        valid=token,
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Detector(
        "gitlab-token",
        "secret",
        re.compile(r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt)-[A-Za-z0-9_\-]{20,}"),
        valid=token,
        hints=("gl",),
    ),
    Detector(
        "slack-token",
        "secret",
        re.compile(
            r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"
            r"|https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"
        ),
        valid=token,
        hints=("xox", "hooks.slack.com"),
    ),
    Detector(
        "stripe-key",
        "secret",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}"),
        valid=token,
        hints=("_live_", "_test_", "whsec_"),
    ),
    Detector(
        "google-api-key",
        "secret",
        re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
        valid=token,
        hints=("aiza",),
    ),
    Detector(
        "discord-token",
        "secret",
        re.compile(
            r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![\w\-])"
            r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{20,}"
        ),
        valid=token,
        hints=(".",),  # both forms hold a dot
    ),
    Detector(
        "npm-token", "secret", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), valid=token, hints=("npm_",)
    ),
    Detector(
        "jwt",
        "secret",
        re.compile(rf"\beyJ{_TOK}{{8,}}\.eyJ{_TOK}{{8,}}\.{_TOK}{{8,}}"),
        valid=jwt,
        hints=("eyj",),
    ),
    Detector(
        "bearer-token",
        "secret",
        re.compile(r"(?i:\bbearer)\s+([A-Za-z0-9\-._~+/]{16,}=*)"),
        group=1,
        valid=token,
        hints=("bearer",),
    ),
    Detector(
        "password",
        "secret",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@\"'<>]{1,64}:([^\s@/\"'<>]{1,128})@"),
        group=1,
        valid=password,
        hints=("://",),
    ),
    Detector(
        "password",
        "secret",
        re.compile(r"(?i:\b(?:password|passwd|pwd))\s*=\s*([^;\s'\"&]{3,128})(?=;|\s|$|['\"&])"),
        group=1,
        valid=password,
        hints=("pass", "pwd"),
    ),
    Detector(
        "password",
        "secret",
        re.compile(
            r"(?i:\b(?:password|passwd|passphrase|passcode)(?:\s+(?:is|was)\s*:?|\s*:))"
            r"\s*[\"']?([^\s\"'<>`]{3,127}[^\s\"'<>`.,;:!?)\]])(?=[\s\"'<>`.,;:!?)\]]|$)"
        ),
        group=1,
        valid=spoken_password,
        hints=("pass",),
    ),
    Detector(
        "generic-secret",
        "secret",
        re.compile(
            r"(?i:\b(?:client|api|app|shared|webhook|signing)?[_\-]?secret(?:[_\-]?key)?)"
            r"\s*[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+_\-]{32,128})(?![A-Za-z0-9/+_\-])"
        ),
        group=1,
        valid=mixed_case_secret,
        hints=("secret",),
    ),
    Detector(
        "email",
        "pii",
        re.compile(
            r"(?<![\w.%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,24}\b"
        ),
        valid=email,
        hints=("@",),
    ),
    Detector(
        "iban",
        "pii",
        re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"),
        valid=lambda v, t, s: iban_ok(v),
        digit=True,
    ),
    Detector(
        "card-number",
        "pii",
        re.compile(r"(?<![\d.\-])(?:\d[ \-]?){12,18}\d(?![\d.\-]\d)"),
        valid=card,
        digit=True,
    ),
    Detector(
        "us-ssn",
        "pii",
        re.compile(r"(?<![\d\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d\-])"),
        valid=ssn,
        hints=("-",),
    ),
    Detector(
        "us-ssn",
        "pii",
        re.compile(
            r"(?i:\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?))(?:\s*(?:is|:|#))?\s*"
            r"((?!000|666|9\d\d)\d{3}([ ]?)(?!00)\d{2}\2(?!0000)\d{4})(?![\d\-])"
        ),
        group=1,
        valid=ssn,
        hints=("ssn", "social security"),
    ),
    Detector(
        "phone",
        "pii",
        re.compile(
            r"\+\d{1,3}(?:[ .\-]?\(?\d{1,4}\)?){1,2}(?:[ .\-]?\d{2,4}){1,4}(?!\d)"
            r"|(?<![\d\-])\(\d{3}\) ?\d{3}-\d{4}(?!\d)"
            r"|(?<![\d\-.])\d{3}[.\-]\d{3}[.\-]\d{4}(?![\d\-.])"
            r"|(?<![\d\-.+/])0[1-9](?:[ .]\d\d){4}(?![\d\-.])"
        ),
        valid=phone,
        digit=True,
    ),
    Detector(
        "ipv4",
        "pii",
        re.compile(
            r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b"
        ),
        valid=ipv4,
        hints=(".",),
        digit=True,
    ),
    Detector(
        "ipv6",
        "pii",
        re.compile(
            r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:])"
            r"|(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){1,6}(?::[0-9A-Fa-f]{1,4}){1,6}(?![\w:])"
            r"|(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){1,7}:(?![\w:])"
        ),
        valid=ipv6,
        hints=(":",),
    ),
)
"""Every detector, most specific first (an earlier kind wins an overlap of equal start)."""

_OWN = re.compile(r"\[(?:SECRET|PII):[a-z0-9\-]+#\d+\]")
"""A placeholder :class:`cairn.redact.Masker` writes."""

KINDS: tuple[str, ...] = tuple(dict.fromkeys(d.kind for d in DETECTORS))
"""Every kind, in detector order."""

CATEGORY: dict[str, Category] = {d.kind: d.category for d in DETECTORS}

@dataclass(frozen=True, slots=True)
class _Prefilter:
    """The pre-filters of a tuple of detectors, read once per text, not per detector:
    every hint, and the detectors (by place) each one lets through."""

    detectors: tuple[Detector, ...]
    hints: tuple[str, ...]
    by_hint: dict[str, tuple[int, ...]]
    unhinted: frozenset[int]


def _prefilter_of(dets: tuple[Detector, ...]) -> _Prefilter:
    hints = tuple(dict.fromkeys(h for d in dets for h in d.hints))
    return _Prefilter(
        dets,
        hints,
        {h: tuple(i for i, d in enumerate(dets) if h in d.hints) for h in hints},
        frozenset(i for i, d in enumerate(dets) if not d.hints),
    )


_PREFILTER = [_prefilter_of(DETECTORS)]
_DIGIT = re.compile(r"\d")


def find(text: str) -> list[Finding]:
    """The findings in ``text``, non-overlapping, in text order.

    Where two findings overlap, the earlier detector wins (a private key block beats
    an e-mail inside it; a URL's password beats the e-mail its ``user:pw@host`` reads as).
    Never raises for any input.
    """
    if not text or (text.isalpha() and text.islower()):
        # every detector's match holds a digit, a capital, a space or a sign: a word of
        # lower-case letters (most of a message's keywords) holds no finding
        return []
    taken: list[Finding] = []
    low = text.lower()
    # masking is idempotent: nothing inside one of its own placeholders is found again
    own = [m.span() for m in _OWN.finditer(text)] if "[secret:" in low or "[pii:" in low else []
    # the pre-filters are read once per text: only the detectors they let through run,
    # in their order (an earlier one wins an overlap)
    pre = _PREFILTER[0]
    if pre.detectors is not DETECTORS:  # replaced (a test, a plug-in): tables anew
        pre = _PREFILTER[0] = _prefilter_of(DETECTORS)
    tried = set(pre.unhinted)
    for h in pre.hints:
        if h in low:
            tried.update(pre.by_hint[h])
    digit: bool | None = None
    for i in sorted(tried):
        det = pre.detectors[i]
        if det.digit:
            if digit is None:
                digit = _DIGIT.search(text) is not None
            if not digit:
                continue
        for m in det.pattern.finditer(text):
            start, end = m.span(det.group)
            if start < 0 or any(f.start < end and start < f.end for f in taken):
                continue
            if own and any(a < end and start < b for a, b in own):
                continue
            value = m.group(det.group)
            try:
                ok = det.valid is None or det.valid(value, text, start)
            except (ValueError, TypeError):
                ok = False
            if ok:
                taken.append(Finding(det.kind, det.category, start, end, value))
    return sorted(taken, key=lambda f: f.start)
