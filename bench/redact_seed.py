"""Generate a seeded corpus for the redaction evaluation (issue 18).

Copies the shared chat exports and a sample of the shared notes into OUT and plants
values of every detector kind in them — in chat messages' text (JSON strings, so JSON
escaping is exercised) and in note lines — then writes ``OUT/planted.jsonl``, one
``{"file", "kind", "value"}`` per planted value. Deterministic for a seed.

    python bench/redact_seed.py /tmp/seeded --per-kind 20 --seed 7
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import shutil
import string
from collections.abc import Callable
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"

A = string.ascii_letters + string.digits
NAMES = ["anna", "j.smith", "li.wei", "omar_k", "p.muller"]
DOMAINS = ["gmail.com", "proton.me", "acme-corp.de", "uni-heidelberg.de", "outlook.com"]


def _tok(r: random.Random, n: int, alphabet: str = A) -> str:
    while True:
        s = "".join(r.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def _luhn_complete(r: random.Random, prefix: str, length: int) -> str:
    body = prefix + "".join(r.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for d in string.digits:
        digits = body + d
        total = 0
        for i, ch in enumerate(reversed(digits)):
            v = int(ch) * (2 if i % 2 else 1)
            total += v - 9 if v > 9 else v
        if total % 10 == 0:
            return digits
    raise AssertionError


def _card(r: random.Random) -> str:
    prefix, length = r.choice(
        [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("37", 15), ("6011", 16)]
    )
    n = _luhn_complete(r, prefix + str(r.randint(1, 9)), length)
    if r.random() < 0.5:
        return n
    if length == 15:
        return f"{n[:4]} {n[4:10]} {n[10:]}"
    sep = r.choice([" ", "-"])
    return sep.join(n[i : i + 4] for i in range(0, 16, 4))


def _iban(r: random.Random) -> str:
    country, length = r.choice(
        [("DE", 22), ("GB", 22), ("FR", 27), ("NL", 18), ("ES", 24), ("IT", 27)]
    )
    if country == "GB":
        bban = "".join(r.choice(string.ascii_uppercase) for _ in range(4)) + "".join(
            r.choice(string.digits) for _ in range(14)
        )
    elif country == "NL":
        bban = "".join(r.choice(string.ascii_uppercase) for _ in range(4)) + "".join(
            r.choice(string.digits) for _ in range(10)
        )
    else:
        bban = "".join(r.choice(string.digits) for _ in range(length - 4))
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    iban = f"{country}{check:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if r.random() < 0.5 else iban


def _jwt(r: random.Random) -> str:
    def b64(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = b64({"alg": "HS256", "typ": "JWT"})
    body = b64({"sub": str(r.randint(1000, 99999)), "name": _tok(r, 8), "iat": r.randint(1e9, 2e9)})
    return f"{head}.{body}.{_tok(r, 43, A + '_-')}"


def _private_key(r: random.Random) -> str:
    kind = r.choice(["RSA ", "EC ", "OPENSSH ", ""])
    lines = [_tok(r, 64, A + "+/") for _ in range(r.randint(3, 8))]
    return (
        f"-----BEGIN {kind}PRIVATE KEY-----\n"
        + "\n".join(lines)
        + f"\n-----END {kind}PRIVATE KEY-----"
    )


def _phone(r: random.Random) -> str:
    return r.choice(
        [
            lambda: f"+44 20 7{r.randint(100, 999)} {r.randint(1000, 9999)}",
            lambda: f"+1 {r.randint(201, 989)}-{r.randint(200, 999)}-{r.randint(1000, 9999)}",
            lambda: f"+49 30 {r.randint(1000000, 9999999)}",
            lambda: "+33 6 " + " ".join(str(r.randint(10, 99)) for _ in range(4)),
            lambda: f"({r.randint(201, 989)}) {r.randint(200, 999)}-{r.randint(1000, 9999)}",
            lambda: f"+81 3-{r.randint(1000, 9999)}-{r.randint(1000, 9999)}",
            lambda: f"+91 {r.randint(70000, 99999)} {r.randint(10000, 99999)}",
            # French numbers written in pairs, international and national
            lambda: f"+33 {r.randint(1, 9)} " + _pairs(r),
            lambda: f"0{r.randint(1, 9)} " + _pairs(r),
        ]
    )()


def _pairs(r: random.Random) -> str:
    return " ".join(f"{r.randint(0, 99):02d}" for _ in range(4))


def _ipv4(r: random.Random) -> str:
    while True:
        a = r.choice([34, 52, 81, 91, 104, 142, 151, 185, 212, 217])
        return f"{a}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"


def _ipv6(r: random.Random) -> str:
    groups = [r.choice(["2a00", "2a02", "2606", "2001", "2400"]), f"{r.randint(0x1000, 0xFFFF):x}"]
    groups += [f"{r.randint(0, 0xFFFF):x}" for _ in range(6)]
    if groups[0] == "2001" and groups[1].startswith("db8"):
        groups[1] = "4860"
    if r.random() < 0.5:
        return ":".join(groups[:3]) + "::" + groups[-1]
    return ":".join(groups)


def _ssn(r: random.Random) -> str:
    return f"{r.randint(101, 665)}-{r.randint(10, 99)}-{r.randint(1000, 9999)}"


def _ssn_sentence(r: random.Random, v: str) -> str:
    """With dashes, or without (then only with the words that say what it is)."""
    return r.choice([f"SSN {v}", f"social security number {v}", f"my SSN is {v}"])


KINDS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    # kind: r -> (the value, the sentence carrying it; {v} marks where the value sits)
    "openai-key": lambda r: (
        v := "sk-" + r.choice(["", "proj-"]) + _tok(r, 48),
        f"OPENAI_API_KEY={v}",
    ),
    "anthropic-key": lambda r: (
        v := "sk-ant-api03-" + _tok(r, 93, A + "_-") + "AA",
        f"the key is {v}",
    ),
    "aws-access-key": lambda r: (
        v := "AKIA" + _tok(r, 16, string.ascii_uppercase + string.digits),
        f"aws_access_key_id = {v}",
    ),
    "aws-secret-key": lambda r: (v := _tok(r, 40, A + "/+"), f"aws_secret_access_key = {v}"),
    "github-token": lambda r: (
        v := r.choice(["ghp_", "gho_", "ghs_"]) + _tok(r, 36),
        f"export GITHUB_TOKEN={v}",
    ),
    "gitlab-token": lambda r: (
        v := "glpat-" + _tok(r, 20, A + "_-"),
        f"gitlab token {v} expires soon",
    ),
    "slack-token": lambda r: (
        v := f"xoxb-{r.randint(10**11, 10**12)}-{r.randint(10**11, 10**12)}-{_tok(r, 24)}",
        f"SLACK_BOT_TOKEN: {v}",
    ),
    "stripe-key": lambda r: (
        v := r.choice(["sk_live_", "sk_test_", "rk_live_"]) + _tok(r, 24),
        f"stripe.api_key = '{v}'",
    ),
    "google-api-key": lambda r: (v := "AIza" + _tok(r, 35, A + "_-"), f"?key={v}&q=maps"),
    "discord-token": lambda r: (
        v := r.choice("MNO")
        + _tok(r, 25, A)
        + "."
        + _tok(r, 6, A + "_-")
        + "."
        + _tok(r, 38, A + "_-"),
        f"client.run('{v}')",
    ),
    "npm-token": lambda r: (v := "npm_" + _tok(r, 36), f"//registry.npmjs.org/:_authToken={v}"),
    "jwt": lambda r: (v := _jwt(r), f"token: {v}"),
    "private-key": lambda r: (v := _private_key(r), f"here is the key:\n{v}\n"),
    "bearer-token": lambda r: (v := _tok(r, 32, A + "-._~"), f"Authorization: Bearer {v}"),
    "password": lambda r: (
        v := _tok(r, 14, A + "!#%^*"),
        r.choice(
            [
                f"postgres://app:{v}@db.prod.internal:5432/main",
                f"Server=sql1;User Id=sa;Password={v};",
                f"my password is {v} for the router",
                f"wifi password: {v}",
            ]
        ),
    ),
    "generic-secret": lambda r: (
        v := _tok(r, 40, A + "/+"),
        r.choice([f"secret: {v}", f"client_secret = {v}", f"WEBHOOK_SECRET={v}"]),
    ),
    "email": lambda r: (
        v := f"{r.choice(NAMES)}{r.randint(1, 999)}@{r.choice(DOMAINS)}",
        f"write to {v} please",
    ),
    "phone": lambda r: (v := _phone(r), f"call me on {v} tomorrow"),
    "card-number": lambda r: (v := _card(r), f"my card {v} exp 09/29"),
    "iban": lambda r: (v := _iban(r), f"IBAN: {v}"),
    "us-ssn": lambda r: (
        v := r.choice([_ssn(r), _ssn(r).replace("-", ""), _ssn(r).replace("-", " ")]),
        _ssn_sentence(r, v),
    ),
    "ipv4": lambda r: (v := _ipv4(r), f"the server at {v} is down"),
    "ipv6": lambda r: (v := _ipv6(r), f"ssh to {v} works"),
}


def _strings(node: object, path: list[object], out: list[list[object]]) -> None:
    """Paths of message-text strings (long enough, not ids or urls) in a JSON tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            _strings(v, [*path, k], out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _strings(v, [*path, i], out)
    elif (
        isinstance(node, str)
        and len(node) > 30
        and " " in node
        and path
        and path[-2:-1] != ["metadata"]
        and any(k in ("parts", "text", "content") for k in path if isinstance(k, str))
    ):
        out.append(path)


def _set(tree: object, path: list[object], value: str) -> None:
    node = tree
    for k in path[:-1]:
        node = node[k]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]


def _get(tree: object, path: list[object]) -> str:
    node = tree
    for k in path:
        node = node[k]  # type: ignore[index]
    return str(node)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path)
    ap.add_argument("--per-kind", type=int, default=20, help="values planted per kind")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--notes", type=int, default=60, help="notes copied from the shared corpus")
    args = ap.parse_args()
    r = random.Random(args.seed)
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    chats = sorted(p for p in (SHARED / "chats").rglob("*.json") if p.stat().st_size < 5_000_000)
    notes = sorted((SHARED / "markdown").rglob("*.md")) + sorted((SHARED / "org").rglob("*.org"))
    notes = r.sample(notes, min(args.notes, len(notes)))
    trees: dict[Path, object] = {}
    targets: list[tuple[Path, list[object] | None]] = []
    for i, p in enumerate(chats):
        try:
            tree = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        paths: list[list[object]] = []
        _strings(tree, [], paths)
        if not paths:
            continue
        dest = out / "chats" / f"{i:03d}-{p.name}"
        trees[dest] = tree
        targets.extend((dest, q) for q in paths)
    texts: dict[Path, str] = {}
    for i, p in enumerate(notes):
        dest = out / "notes" / f"{i:03d}-{p.name}"
        texts[dest] = p.read_text(encoding="utf-8", errors="replace")
        targets.append((dest, None))
    planted: list[dict[str, str]] = []
    for kind, make in KINDS.items():
        for _ in range(args.per_kind):
            value, sentence = make(r)
            dest, path = r.choice(targets)
            if path is None:
                texts[dest] += f"\n\n{sentence}\n"
            else:
                _set(trees[dest], path, _get(trees[dest], path) + f" {sentence} ")
            planted.append({"file": str(dest.relative_to(out)), "kind": kind, "value": value})
    for dest, tree in trees.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(tree, ensure_ascii=False, indent=1), encoding="utf-8")
    for dest, text in texts.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    with (out / "planted.jsonl").open("w", encoding="utf-8") as fh:
        for row in planted:
            fh.write(json.dumps(row) + "\n")
    print(
        f"{out}: {len(trees)} chat files, {len(texts)} notes, {len(planted)} planted values "
        f"({args.per_kind} of each of {len(KINDS)} kinds)"
    )


if __name__ == "__main__":
    main()
