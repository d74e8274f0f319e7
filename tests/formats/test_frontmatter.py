"""Front matter: detection, YAML 1.2, safety bounds, TOML, diagnostics, round trip."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.errors import ParseError
from cairn.formats import frontmatter as fm


def test_yaml_12_keeps_norway_on_and_sexagesimal_as_strings() -> None:
    f = fm.split("---\ncountry: NO\nswitch: on\ntime: 12:30\nyes_bool: true\n---\nbody", "n.md")
    assert f.data == {"country": "NO", "switch": "on", "time": "12:30", "yes_bool": True}
    assert f.body == "body"
    assert f.body_line == 7
    assert f.end_line == 6


def test_dates_are_kept_as_written_and_also_parsed() -> None:
    f = fm.split("---\ncreated: 2024-01-05\nat: 2024-01-05 09:30\nname: x\n---\n", "n.md")
    assert f.data["created"] == "2024-01-05"
    assert f.data["at"] == "2024-01-05 09:30"
    assert f.dates == {"created": "2024-01-05", "at": "2024-01-05T09:30"}


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("2024-02-29", "2024-02-29"),
        ("2024-01-05T10:00:00Z", "2024-01-05T10:00:00Z"),
        ("2024-01-05 10:00:00 +0200", "2024-01-05T10:00:00+02:00"),
        ("2024-1-5", "2024-01-05"),
        ("2023-02-30", None),
        ("tomorrow", None),
        ("{{date}}", None),
    ],
)
def test_normalise_date(text: str, iso: str | None) -> None:
    assert fm.normalise_date(text) == iso


def test_billion_laughs_is_rejected_with_a_diagnostic() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    text = "---\n" + "\n".join(lines) + "\n---\nstill here"
    f = fm.split(text, "bomb.md")
    assert f.failed and f.data == {}
    assert f.body == "still here"
    assert any("alias expansion" in d.message for d in f.diagnostics)
    assert all(d.path == "bomb.md" for d in f.diagnostics)


def test_recursive_alias_is_rejected() -> None:
    f = fm.split("---\na: &x [1, *x]\n---\n", "r.md")
    assert f.failed and f.data == {}


def test_small_aliases_and_merge_keys_expand() -> None:
    f = fm.split("---\nbase: &b {k: 1}\nother:\n  <<: *b\n  j: 2\nsame: *b\n---\n", "m.md")
    assert f.data == {"base": {"k": 1}, "other": {"j": 2, "k": 1}, "same": {"k": 1}}


def test_python_tags_are_never_constructed() -> None:
    f = fm.split("---\nx: !!python/object/apply:os.system [echo pwned]\n---\n", "p.md")
    assert not f.failed
    assert f.data == {"x": ["echo pwned"]}
    assert any("not supported" in d.message for d in f.diagnostics)


def test_invalid_yaml_reports_file_and_line() -> None:
    f = fm.split("---\ntitle: ok\nbad: a: b\n---\nBody", "bad.md")
    assert f.failed and f.data == {}
    assert f.body == "Body"
    (diag,) = f.diagnostics
    assert diag.path == "bad.md" and diag.line == 3
    assert "not valid YAML" in diag.message


def test_unclosed_fence_is_not_front_matter() -> None:
    f = fm.split("---\ntitle: x\n\n# H\n", "u.md")
    assert f.kind is None and f.data == {}
    assert f.body.startswith("---\ntitle: x")
    assert f.diagnostics[0].line == 1


def test_not_a_mapping() -> None:
    f = fm.split("---\njust a string\n---\nB", "s.md")
    assert f.failed and f.data == {}
    assert "not a mapping" in f.diagnostics[0].message


@pytest.mark.parametrize("first", ["-", "--", "----", "- item", "+++x", " ---"])
def test_lines_that_are_not_fences(first: str) -> None:
    f = fm.split(first + "\nsecond line\n---\n", "x.md")
    assert f.kind is None and f.data == {} and not f.diagnostics


def test_fences_may_carry_trailing_spaces_and_tabs() -> None:
    f = fm.split("--- \t\ntitle: T\n---\t \nBody", "t.md")
    assert f.data == {"title": "T"} and f.body == "Body"


def test_toml_front_matter() -> None:
    f = fm.split('+++\ntitle = "T"\nwhen = 2023-05-01\n[extra]\nn = 1\n+++\nBody', "t.md")
    assert f.kind == "toml"
    assert f.data == {"title": "T", "when": "2023-05-01", "extra": {"n": 1}}
    assert f.dates == {"when": "2023-05-01"}


def test_invalid_toml_reports_line() -> None:
    f = fm.split('+++\ntitle = "T"\nbad = = 1\n+++\nBody', "t.md")
    assert f.failed and f.diagnostics[0].line == 3


def test_toml_not_recognised_when_disabled() -> None:
    f = fm.split('+++\ntitle = "T"\n+++\n', "t.md", allow_toml=False)
    assert f.kind is None


def test_bom_and_crlf() -> None:
    f = fm.split("\ufeff---\r\ntitle: B\r\n---\r\nBody\r\n", "b.md")
    assert f.data == {"title": "B"}
    assert f.body == "Body\n"


def test_only_the_first_block_counts() -> None:
    f = fm.split("---\na: 1\n---\n---\nb: 2\n---\n", "s.md")
    assert f.data == {"a": 1}
    assert f.body == "---\nb: 2\n---\n"


def test_template_placeholder_kept_as_text() -> None:
    f = fm.split("---\ncreated: {{date}}\n---\n", "t.md")
    assert f.data == {"created": "{{date}}"}


def test_key_lines() -> None:
    f = fm.split("---\n# comment\na: 1\nb:\n  - x\n---\n", "k.md")
    assert f.key_lines == {"a": 3, "b": 4}


def test_round_trip_keeps_comments_quoting_and_order() -> None:
    raw = (
        "# a leading comment\n"
        "title: 'Quoted title'  # trailing comment\n"
        'alias: "double"\n'
        "tags:\n"
        "  - one\n"
        "  - two\n"
        "date: 2024-01-05\n"
    )
    data = fm.load_roundtrip(raw)
    data["title"] = "New title"
    out = fm.dump_roundtrip(data, raw)
    lines = out.splitlines()
    assert lines[0] == "# a leading comment"
    assert lines[1].startswith("title: 'New title'") and "# trailing comment" in lines[1]
    assert lines[2:] == ['alias: "double"', "tags:", "  - one", "  - two", "date: 2024-01-05"]


def test_round_trip_rejects_invalid_yaml() -> None:
    with pytest.raises(ParseError):
        fm.load_roundtrip("a: [unclosed\n")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("-+:#&*![]{}\"' \t\nab1=|>")), max_size=80))
def test_never_raises_and_data_is_json(text: str) -> None:
    for candidate in (text, "---\n" + text + "\n---\nbody", "+++\n" + text + "\n+++\n"):
        f = fm.split(candidate, "h.md")
        json.dumps(f.data)
        assert all(d.path == "h.md" for d in f.diagnostics)
