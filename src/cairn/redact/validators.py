"""The validators of :mod:`cairn.redact.detectors`: whether a pattern's match is really
a secret or personal data.

Each ``valid(value, text, start)`` is a checksum where the kind has one (Luhn for card
numbers, ISO 13616 mod-97 for IBANs) or a false-positive filter (placeholders such as
``sk-...`` or ``YOUR_TOKEN``, ``process.env.API_KEY``, example domains and
documentation address ranges, version strings that look like IPv4 addresses, words
that are not passwords).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import re

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


def card(value: str, text: str, start: int) -> bool:
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


def ssn(value: str, text: str, start: int) -> bool:
    digits = re.sub(r"\D", "", value)
    return value not in _SSN_EXAMPLES and not _counting(digits) and len(set(digits)) > 2


_EXAMPLE_DOMAINS = re.compile(
    r"(?:^|\.)(?:example\.(?:com|org|net|edu)|example|test|invalid|localhost|local|"
    r"domain\.(?:com|tld)|email\.com|company\.com|acme\.(?:com|corp))$",
    re.IGNORECASE,
)
_FILE_TLDS = {"png", "jpg", "jpeg", "gif", "svg", "webp", "js", "ts", "css", "py", "md"}


def email(value: str, text: str, start: int) -> bool:
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


def phone(value: str, text: str, start: int) -> bool:
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


def ipv4(value: str, text: str, start: int) -> bool:
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


def ipv6(value: str, text: str, start: int) -> bool:
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


def jwt(value: str, text: str, start: int) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        return isinstance(json.loads(decoded), dict)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False


def private_key(value: str, text: str, start: int) -> bool:
    body = re.sub(r"-----[^-]+-----|\\n|\s", "", value)
    return len(body) >= 40 and not placeholder(body)


def password(value: str, text: str, start: int) -> bool:
    low = value.lower()
    if low in {"pass", "pwd", "pw", "true", "false", "none", "null"} or re.search(
        r"pass(?:word|wd)?$|^pass|secret|^the_", low
    ):
        return False
    return not placeholder(value) and not value.startswith(("$", "%", "{"))


def spoken_password(value: str, text: str, start: int) -> bool:
    """``my password is X`` / ``password: X``: a word is not a password (``is
    required``, ``is incorrect``); a value holding a digit or a symbol is."""
    return password(value, text, start) and bool(re.search(r"[\d!#$%&*+?@^~]", value))


def mixed_case_secret(value: str, text: str, start: int) -> bool:
    """A long secret (an AWS secret key, ``secret: <32+ characters>``): letters and
    digits mixed, upper and lower case both present."""
    return _mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


def token(value: str, text: str, start: int) -> bool:
    return _mixed(value)
