"""The detectors on hand-written positives and negatives: every kind found, checksums
applied, placeholders and look-alikes left alone; masking and scanning."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.model import Document, Unit
from cairn.redact import KINDS, Masker, find, redact_document, scan_text
from cairn.redact.validators import iban_ok, luhn

GH = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
POSITIVES = {
    "openai-key": "OPENAI_API_KEY=sk-proj-Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi9Ot",
    "anthropic-key": "key sk-ant-api03-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1Ty3Ui5"
    "Op7As9Df1Gh3AA",
    "aws-access-key": "aws_access_key_id = AKIAZ3K7PQRS2TUVWXY4",
    "aws-secret-key": "aws_secret_access_key = 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",
    "github-token": f"export GITHUB_TOKEN={GH}",
    "gitlab-token": "glpat-x8Yz2Ab4Cd6Ef8Gh0Ij2K",
    "slack-token": "SLACK=xoxb-123456789012-123456789012-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
    "stripe-key": "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'",
    "google-api-key": "?key=AIzaSyD3x9Kq2Lm8Np4Rt6Vw0Yz1Ab5Cd7Ef9Gh3",
    "discord-token": "client.run('MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs')",
    "npm-token": "//registry.npmjs.org/:_authToken=npm_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c",
    "jwt": "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9",
    "private-key": (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        "MIIEpAIBAAKCAQEA1x2y3z4A5b6C7d8E9f0G1h2I3j4K5l6M7n8O9p0Q\n"
        "-----END RSA PRIVATE KEY-----"
    ),
    "bearer-token": "Authorization: Bearer a8F3kL9mQ2xR7vT1nB5cZ0wY4",
    "password": "postgres://app:Zq8!xR2vT5@db.prod.internal:5432/main",
    "generic-secret": "secret: Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi9OtA4",
    "email": "write to anna.k42@proton.me please",
    "phone": "call +44 20 7946 1234 now",
    "card-number": "card 4539 1488 0343 6467 exp",
    "iban": "IBAN DE89 3704 0044 0532 0130 00",
    "us-ssn": "SSN 512-45-6781",
    "ipv4": "server at 81.169.145.12 is down",
    "ipv6": "ssh 2a00:1450:4001:82b::200e ok",
}

NEGATIVES = [
    "OPENAI_API_KEY=sk-...",  # placeholder
    "OPENAI_API_KEY=sk-your-key-here-xxxxxxxxxxxxxxxx",
    "const key = process.env.API_KEY",
    "Authorization: Bearer ${process.env.TOKEN}",
    "Authorization: Bearer <YOUR_TOKEN_HERE_PLEASE>",
    "postgres://user:password@localhost/db",
    "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example key
    "mail alice@example.com or bob@test",
    "pip install foo==1.2.3.4 and Emacs 24.3.50.3 and v10.0.0.1",
    "the router at 192.168.1.1, loopback 127.0.0.1, docs 203.0.113.7",
    "card 4539 1488 0343 6468",  # Luhn fails
    "IBAN DE89 3704 0044 0532 0130 01",  # mod-97 fails
    "id 35992759-8187-4f57-9721-a5b04df019b2",  # a UUID, not a card
    "ssn 000-12-3456 and 123-45-6789",
    "std::vector<int> and a::b",
    "call 123-456-7890",
    "[SECRET:github-token#1] is already masked",
    # the free-text forms stay quiet on words and documentation
    "the password is required", "password: string", "my password is incorrect",
    "secret: the_value_of_your_client_secret_goes_here", "client_secret = os.environ",
    "secret: abcdefghijklmnopqrstuvwxyzabcdefghijkl",  # no digit, no capital: a word run
    "order 123456789 shipped", "call (123) 456-7890", "ticket 536 22 1234 closed",
    "+1 234 567 8901",  # counting up from 1: a placeholder
]


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_found(kind: str) -> None:
    found = find(POSITIVES[kind])
    assert [f.kind for f in found] == [kind], found


@pytest.mark.parametrize("text", NEGATIVES)
def test_placeholders_and_look_alikes_are_not_findings(text: str) -> None:
    assert find(text) == []


def test_checksums() -> None:
    assert luhn("4539148803436467") and not luhn("4539148803436468")
    assert iban_ok("GB82 WEST 1234 5698 7654 32") and not iban_ok("GB82 WEST 1234 5698 7654 33")
    assert not iban_ok("DE89 3704")  # wrong length for the country


def test_the_same_value_gets_the_same_placeholder() -> None:
    m = Masker()
    text = f"a {GH} b bob@gmail.com c {GH} d ann@gmail.com"
    assert m.mask(text) == (
        "a [SECRET:github-token#1] b [PII:email#1] c [SECRET:github-token#1] d [PII:email#2]"
    )


def test_a_url_password_wins_over_the_email_it_looks_like() -> None:
    (f,) = find("mysql://root:Pa55w0rdX@gmail.com/db")
    assert (f.kind, f.value) == ("password", "Pa55w0rdX")


def _doc(*bodies: str) -> Document:
    units = tuple(
        Unit(i, 1, "heading", f"h{i}", (f"h{i}",), b, line_start=i + 1, line_end=i + 1)
        for i, b in enumerate(bodies)
    )
    return Document("n.md", "markdown", "T", units)


def test_modes() -> None:
    doc = _doc("clean", f"token {GH}", "also clean")
    masked = redact_document(doc, "mask")
    assert masked.findings == 1 and masked.kinds == {"github-token": 1}
    assert masked.document.units[1].body == "token [SECRET:github-token#1]"
    dropped = redact_document(doc, "drop-unit").document
    assert [u.body for u in dropped.units] == ["clean", "also clean"]
    assert [u.ordinal for u in dropped.units] == [0, 1]
    assert redact_document(doc, "off").document is doc
    with pytest.raises(ValueError, match="unknown redaction mode"):
        redact_document(doc, "shred")  # type: ignore[arg-type]


def test_scan_gives_line_kind_and_a_masked_preview_never_the_value() -> None:
    text = "first line\n" + "x" * 300 + f" {GH} " + "y" * 300 + "\n" + POSITIVES["private-key"]
    found = scan_text(text, "f.md")
    assert [(f.line, f.kind) for f in found] == [(2, "github-token"), (3, "private-key")]
    assert all(GH not in f.preview and "MIIEpAIB" not in f.preview for f in found)
    assert "[SECRET:github-token#1]" in found[0].preview and len(found[0].preview) <= 102


def test_cli_scan_prints_masked_previews_and_json(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from cairn.interfaces.cli import app

    (tmp_path / "a.md").write_text(f"# A\n\nkey {GH}\nmail anna.k42@proton.me\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["redact", "scan", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert GH not in res.output and "proton" not in res.output
    assert "a.md:3" in res.output and "github-token" in res.output
    res = CliRunner().invoke(app, ["redact", "scan", str(tmp_path / "a.md"), "--json"])
    data = json.loads(res.stdout)
    assert data["counts"] == {"github-token": 1, "email": 1} and data["files"] == 1
    assert [(f["line"], f["kind"]) for f in data["findings"]] == [(3, "github-token"), (4, "email")]
    assert GH not in res.stdout
    res = CliRunner().invoke(app, ["redact", "scan", str(tmp_path / "nope"), "--json"])
    assert res.exit_code == 2 and "no such file" in json.loads(res.stdout)["error"]


def test_config_on_ingest(tmp_path: Path) -> None:
    from cairn.config import load_config
    from cairn.errors import ConfigError

    cfg = tmp_path / "cairn.toml"
    cfg.write_text('[redact]\non_ingest = "drop-unit"\n', encoding="utf-8")
    c = load_config(db=tmp_path / "i.db", config_file=cfg)
    assert c.redact["on_ingest"] == {"chats": "drop-unit", "notes": "drop-unit"}
    cfg.write_text('[redact]\non_ingest = { markdown = "mask" }\n', encoding="utf-8")
    assert load_config(db=tmp_path / "i.db", config_file=cfg).fingerprint() != c.fingerprint()
    cfg.write_text('[redact]\non_ingest = "shred"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[redact\] on_ingest must be one of"):
        load_config(db=tmp_path / "i.db", config_file=cfg)


def test_modes_per_format() -> None:
    from cairn.redact.service import mode_for

    chat = Document("c.json", "chatgpt", "T", ())
    note = _doc("x")
    assert (mode_for(chat, {}), mode_for(note, {})) == ("mask", "off")
    assert mode_for(note, {"notes": "mask"}) == "mask"
    assert mode_for(note, {"notes": "mask", "markdown": "off"}) == "off"
    assert mode_for(chat, {"chats": "off"}) == "off"


def test_chat_formats_are_masked_by_default() -> None:
    from cairn.redact.service import mode_for

    for fmt in ("chat", "chatgpt", "claude", "gemini"):
        assert mode_for(Document("c.json", fmt, "T", ()), {}) == "mask"


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("secret: Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi9OtA4",
         "generic-secret", "Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue2Yi9OtA4"),
        ("WEBHOOK_SECRET=Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue", "generic-secret",
         "Zr4kT9wQ2mXb7Lc1Vn8Hj3Fd6Sa0Pq5Ue"),
        ("my password is hunter2!x for the router", "password", "hunter2!x"),
        ("The password was Tr0ub4dor&3.", "password", "Tr0ub4dor&3"),
        ("wifi password: c0rrect-h0rse", "password", "c0rrect-h0rse"),
        ("my SSN is 536221234", "us-ssn", "536221234"),
        ("social security number 536 22 1234", "us-ssn", "536 22 1234"),
        ("call +44 20 7946 0958 now", "phone", "+44 20 7946 0958"),
        ("call +33 1 23 45 67 89 now", "phone", "+33 1 23 45 67 89"),
        ("appelle le 01 23 45 67 89 demain", "phone", "01 23 45 67 89"),
        ("tel +33 6 12 34 56 78", "phone", "+33 6 12 34 56 78"),
    ],
)
def test_free_text_secrets_bare_ssns_and_spaced_phones_are_found(
    text: str, kind: str, value: str
) -> None:
    assert [(f.kind, f.value) for f in find(text)] == [(kind, value)]


@pytest.mark.parametrize(
    "text",
    [
        f"git clone https://{GH}@github.com/me/repo",
        "postgres://app:Zq8!xR2vT5@db.prod.internal:5432/main and my password is hunter2!x",
        "write to anna.k42@proton.me, call +33 1 23 45 67 89, SSN 536221234",
    ],
)
def test_masking_is_idempotent_on_its_own_placeholders(text: str) -> None:
    once = Masker().mask(text)
    assert once != text and "[SECRET:[" not in once and "[PII:[" not in once
    assert Masker().mask(once) == once


def test_words_drawn_from_a_masked_message_leave_out_the_pieces_of_its_secrets() -> None:
    body = "send it to marta.quell771@proton.me with ?key=AIzaSyB7q3Kx9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd"
    unit = Unit(0, 1, "message", "", (), body, extra={
        "keywords": ["send", "marta", "quell771", "aizasyb7q3kx9lm2np4qr6st8uv0wx2yz4ab6cd"],
        "role": "user"})
    doc = redact_document(Document("c.json", "chatgpt", "T", (unit,)), "mask").document
    (got,) = doc.units
    assert got.body == "send it to [PII:email#1] with ?key=[SECRET:google-api-key#1]"
    assert got.extra == {"keywords": ["send"], "role": "user"}
