"""Curated detectors of secrets and personal data in text.

Each :class:`Detector` is a regular expression for one kind plus a validator: a
checksum where the kind has one (Luhn for card numbers, ISO 13616 mod-97 for IBANs)
and false-positive filters (placeholders such as ``sk-...`` or ``YOUR_TOKEN``,
``process.env.API_KEY``, example domains and documentation address ranges, version
strings that look like IPv4 addresses). :func:`find` returns the findings of a text as
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

import base64
import binascii
import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

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


_PLACEHOLDER = re.compile(
    r"\.\.\.|…|x{4,}|X{4,}|\*{3,}|<[^>]*>|\$\{|\{\{|%\(|process\.env|os\.environ|getenv|"
    r"your[_-]?|example|placeholder|redacted|dummy|changeme|insert|replace|sample|"
    r"\[SECRET:|\[PII:",
    re.IGNORECASE,
)


def placeholder(value: str) -> bool:
    """Whether ``value`` reads as a placeholder, not a real value: ``sk-...``,
    ``YOUR_API_KEY``, ``<token>``, ``${TOKEN}``, ``process.env.API_KEY``, ``xxxx``, or
    one character repeated for most of it."""
    if _PLACEHOLDER.search(value):
        return True
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    if not core:
        return True
    top = max(core.count(c) for c in set(core))
    return len(core) >= 8 and top / len(core) > 0.5


def _mixed(value: str, text: str = "", start: int = 0) -> bool:
    """A random token: not a placeholder, and holding digits and letters."""
    return (
        not placeholder(value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def luhn(digits: str) -> bool:
    """The Luhn checksum of a digit string (card numbers)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card(value: str, text: str, start: int) -> bool:
    digits = re.sub(r"[ -]", "", value)
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 3:
        return False
    if not re.match(r"4|5[1-5]|2[2-7]|3[47]|3[068]|6(?:011|5|4[4-9])|35|62", digits):
        return False
    groups = re.split(r"[ -]", value)
    if len(groups) > 1 and not (
        (all(len(g) == 4 for g in groups[:-1]) and 1 <= len(groups[-1]) <= 4)
        or [len(g) for g in groups] == [4, 6, 5]  # American Express
        or [len(g) for g in groups] == [4, 6, 4]  # Diners Club
    ):
        return False  # not grouped as card numbers are written (ids, DOIs, UUID parts)
    return len(set(re.findall(r"[ -]", value))) <= 1 and luhn(digits)


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24,
    "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27,
    "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26, "UA": 29, "BR": 29, "SA": 24,
    "IL": 23, "QA": 29, "KW": 30, "JO": 30, "MU": 30, "GI": 23, "FO": 18, "GL": 18,
}  # fmt: skip


def iban_ok(value: str) -> bool:
    """ISO 13616: the country's length and the mod-97 check equal to 1."""
    s = re.sub(r"\s", "", value).upper()
    if _IBAN_LENGTHS.get(s[:2], 0) != len(s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


_SSN_EXAMPLES = {"078-05-1120", "123-45-6789", "219-09-9999"}


def _ssn(value: str, text: str, start: int) -> bool:
    digits = re.sub(r"\D", "", value)
    return value not in _SSN_EXAMPLES and not _counting(digits) and len(set(digits)) > 2


_EXAMPLE_DOMAINS = re.compile(
    r"(?:^|\.)(?:example\.(?:com|org|net|edu)|example|test|invalid|localhost|local|"
    r"domain\.(?:com|tld)|email\.com|company\.com|acme\.(?:com|corp))$",
    re.IGNORECASE,
)
_FILE_TLDS = {"png", "jpg", "jpeg", "gif", "svg", "webp", "js", "ts", "css", "py", "md"}


def _email(value: str, text: str, start: int) -> bool:
    local, _, domain = value.rpartition("@")
    if _EXAMPLE_DOMAINS.search(domain) or domain.rsplit(".", 1)[-1].lower() in _FILE_TLDS:
        return False
    if local.lower() in {"user", "username", "name", "you", "me", "someone", "foo", "git"}:
        return False
    if text[max(0, start - 1) : start] == "/":
        return False  # in a URL's path: a Message-ID or a list archive, not a person
    return not placeholder(local)


def _counting(digits: str, value: str = "") -> bool:
    """Whether a number reads as a placeholder: it starts counting up from 1 or down
    from 9 (``123-456-7890``, ``+1 234 567 8901``), or holds the run 123456 written in
    one piece or grouped as ``123 456`` (``+49123456789``, ``+91 (123) 456-7890``); a
    real number written in pairs (``+33 1 23 45 67 89``) is not one."""
    if digits.startswith(("123456", "987654")):
        return True
    return "123456" in digits and (
        value.lstrip("+").isdigit() or re.search(r"(?<!\d)123\)?[ .\-]*456", value) is not None
    )


def _phone(value: str, text: str, start: int) -> bool:
    digits = re.sub(r"\D", "", value)
    if not 8 <= len(digits) <= 15 or len(set(digits)) < 3:
        return False
    if _counting(digits, value) or "(555)" in value or re.search(r"\b555[ .\-]01\d\d\b", value):
        return False  # a run such as 123-456-7890, and the fictional 555 numbers
    before = text[max(0, start - 1) : start]
    after = text[start + len(value) : start + len(value) + 1]
    return not (before.isalnum() or (before in "./-_" and before)) and not (
        after.isalnum() or after in {"-", "_"}
    )


_VERSION_BEFORE = re.compile(
    r"(?:\bv|version|ver\.?|release|build|==|>=|<=|~=|\^|~|@|/v|-|emacs|gnu|firefox|"
    r"iceweasel|chrome|python|node|java|kernel|linux|windows|macos|ios|android|item|otro|"
    r"section|chapter|step|§)\s*$",
    re.I,
)


def _ipv4(value: str, text: str, start: int) -> bool:
    before = text[max(0, start - 20) : start]
    after = text[start + len(value) : start + len(value) + 2]
    if re.search(r"[\d.]$", before) or re.match(r"\.\d|-\w|[A-Za-z]", after):
        return False  # part of a longer dotted number (a version, an OID)
    if _VERSION_BEFORE.search(before):
        return False
    ip = ipaddress.IPv4Address(value)
    nets = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")  # documentation ranges
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_link_local
        or any(ip in ipaddress.IPv4Network(n) for n in nets)
        or str(ip) == "255.255.255.255"
    )


def _ipv6(value: str, text: str, start: int) -> bool:
    try:
        ip = ipaddress.IPv6Address(value)
    except ValueError:
        return False
    if value.count(":") < 3 or not any(c.isdigit() for c in value):
        return False
    before = text[max(0, start - 1) : start]
    if before in (":", ".") or before.isalnum():
        return False
    return not (
        ip.is_loopback
        or ip.is_unspecified
        or ip.is_link_local
        or ip.is_multicast
        or ip in ipaddress.IPv6Network("2001:db8::/32")
    )


def _jwt(value: str, text: str, start: int) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        return isinstance(json.loads(decoded), dict)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False


def _private_key(value: str, text: str, start: int) -> bool:
    body = re.sub(r"-----[^-]+-----|\\n|\s", "", value)
    return len(body) >= 40 and not placeholder(body)


def _password(value: str, text: str, start: int) -> bool:
    low = value.lower()
    if low in {"pass", "pwd", "pw", "true", "false", "none", "null"} or re.search(
        r"pass(?:word|wd)?$|^pass|secret|^the_", low
    ):
        return False
    return not placeholder(value) and not value.startswith(("$", "%", "{"))


def _spoken_password(value: str, text: str, start: int) -> bool:
    """``my password is X`` / ``password: X``: a word is not a password (``is
    required``, ``is incorrect``); a value holding a digit or a symbol is."""
    return _password(value, text, start) and bool(re.search(r"[\d!#$%&*+?@^~]", value))


def _generic_secret(value: str, text: str, start: int) -> bool:
    return _mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _aws_secret(value: str, text: str, start: int) -> bool:
    return _mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _token(value: str, text: str, start: int) -> bool:
    return _mixed(value)


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
        valid=_private_key,
        hints=("private key",),
    ),
    Detector(
        "anthropic-key",
        "secret",
        re.compile(r"\bsk-ant-(?:api|admin|oat)\d\d-[A-Za-z0-9_\-]{20,}"),
        valid=_token,
        hints=("sk-ant-",),
    ),
    Detector(
        "openai-key",
        "secret",
        re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
        valid=_token,
        hints=("sk-",),
    ),
    Detector(
        "aws-access-key",
        "secret",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"),
        valid=_token,
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
        valid=_aws_secret,
        hints=("aws", "secret"),
    ),
    Detector(
        "github-token",
        "secret",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b"),
        valid=_token,
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Detector(
        "gitlab-token",
        "secret",
        re.compile(r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt)-[A-Za-z0-9_\-]{20,}"),
        valid=_token,
        hints=("gl",),
    ),
    Detector(
        "slack-token",
        "secret",
        re.compile(
            r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"
            r"|https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"
        ),
        valid=_token,
        hints=("xox", "hooks.slack.com"),
    ),
    Detector(
        "stripe-key",
        "secret",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}"),
        valid=_token,
        hints=("_live_", "_test_", "whsec_"),
    ),
    Detector(
        "google-api-key",
        "secret",
        re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
        valid=_token,
        hints=("aiza",),
    ),
    Detector(
        "discord-token",
        "secret",
        re.compile(
            r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![\w\-])"
            r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{20,}"
        ),
        valid=_token,
    ),
    Detector(
        "npm-token", "secret", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), valid=_token, hints=("npm_",)
    ),
    Detector(
        "jwt",
        "secret",
        re.compile(rf"\beyJ{_TOK}{{8,}}\.eyJ{_TOK}{{8,}}\.{_TOK}{{8,}}"),
        valid=_jwt,
        hints=("eyj",),
    ),
    Detector(
        "bearer-token",
        "secret",
        re.compile(r"(?i:\bbearer)\s+([A-Za-z0-9\-._~+/]{16,}=*)"),
        group=1,
        valid=_token,
        hints=("bearer",),
    ),
    Detector(
        "password",
        "secret",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@\"'<>]{1,64}:([^\s@/\"'<>]{1,128})@"),
        group=1,
        valid=_password,
        hints=("://",),
    ),
    Detector(
        "password",
        "secret",
        re.compile(r"(?i:\b(?:password|passwd|pwd))\s*=\s*([^;\s'\"&]{3,128})(?=;|\s|$|['\"&])"),
        group=1,
        valid=_password,
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
        valid=_spoken_password,
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
        valid=_generic_secret,
        hints=("secret",),
    ),
    Detector(
        "email",
        "pii",
        re.compile(
            r"(?<![\w.%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,24}\b"
        ),
        valid=_email,
        hints=("@",),
    ),
    Detector(
        "iban",
        "pii",
        re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"),
        valid=lambda v, t, s: iban_ok(v),
    ),
    Detector(
        "card-number",
        "pii",
        re.compile(r"(?<![\d.\-])(?:\d[ \-]?){12,18}\d(?![\d.\-]\d)"),
        valid=_card,
    ),
    Detector(
        "us-ssn",
        "pii",
        re.compile(r"(?<![\d\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d\-])"),
        valid=_ssn,
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
        valid=_ssn,
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
        valid=_phone,
    ),
    Detector(
        "ipv4",
        "pii",
        re.compile(
            r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b"
        ),
        valid=_ipv4,
        hints=(".",),
    ),
    Detector(
        "ipv6",
        "pii",
        re.compile(
            r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:])"
            r"|(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){1,6}(?::[0-9A-Fa-f]{1,4}){1,6}(?![\w:])"
            r"|(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){1,7}:(?![\w:])"
        ),
        valid=_ipv6,
        hints=(":",),
    ),
)
"""Every detector, most specific first (an earlier kind wins an overlap of equal start)."""

_OWN = re.compile(r"\[(?:SECRET|PII):[a-z0-9\-]+#\d+\]")
"""A placeholder :class:`cairn.redact.Masker` writes."""

KINDS: tuple[str, ...] = tuple(dict.fromkeys(d.kind for d in DETECTORS))
"""Every kind, in detector order."""

CATEGORY: dict[str, Category] = {d.kind: d.category for d in DETECTORS}


def find(text: str) -> list[Finding]:
    """The findings in ``text``, non-overlapping, in text order.

    Where two findings overlap, the earlier detector wins (a private key block beats
    an e-mail inside it; a URL's password beats the e-mail its ``user:pw@host`` reads as).
    Never raises for any input.
    """
    if not text:
        return []
    taken: list[Finding] = []
    low = text.lower()
    # masking is idempotent: nothing inside one of its own placeholders is found again
    own = [m.span() for m in _OWN.finditer(text)] if "[secret:" in low or "[pii:" in low else []
    for det in DETECTORS:
        if det.hints and not any(h in low for h in det.hints):
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
