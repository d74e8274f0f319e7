"""Plain Markdown/HTML chat transcripts with role markers (hand-written inputs)."""

from __future__ import annotations

from pathlib import Path

from cairn import formats
from cairn.app import Cairn
from cairn.formats.transcript import looks_like_transcript, parse

EXPORTER_STYLE = """---
title: ignored front matter
---
# Sourdough troubleshooting

#### You:
Why is my loaf so dense?

#### ChatGPT:
Usually under-proofing. Try a longer bulk ferment:

```python
hours = 5  # at 24 °C
```

#### You:
And the ear?
"""

INLINE_STYLE = """**User:** what is a kestrel?
**Claude:** A small falcon that hovers.
Second line of the answer.
"""


def test_exporter_style_markdown_becomes_one_conversation() -> None:
    doc = parse(EXPORTER_STYLE, "chats/bread.md")
    assert (doc.format, doc.title, doc.metadata["provider"]) == (
        "chat",
        "Sourdough troubleshooting",
        "transcript",
    )
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [(u.extra["role"], u.body.splitlines()[0]) for u in msgs] == [
        ("user", "Why is my loaf so dense?"),
        ("assistant", "Usually under-proofing. Try a longer bulk ferment:"),
        ("user", "And the ear?"),
    ]
    lines = EXPORTER_STYLE.splitlines()
    assert lines[msgs[1].line_start - 1] == "#### ChatGPT:"
    assert lines[msgs[2].line_start - 1] == "#### You:"
    code = [u for u in doc.units if u.kind == "code"]
    assert len(code) == 1 and code[0].language == "python" and "hours = 5" in code[0].body
    assert code[0].parent == msgs[1].ordinal
    assert msgs[0].extra["kind"] == "question"


def test_inline_bold_labels() -> None:
    doc = parse(INLINE_STYLE, "k.md")
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [u.extra["role"] for u in msgs] == ["user", "assistant"]
    assert msgs[1].body == "A small falcon that hovers.\nSecond line of the answer."
    assert doc.title == "k"


def test_html_transcript() -> None:
    html = (
        "<html><body><h1>Trip</h1><h4>You</h4><p>Plan three days on the coast.</p>"
        "<h4>ChatGPT</h4><ul><li>Day one: cliffs</li><li>Day two: harbour</li></ul>"
        "</body></html>"
    )
    doc = parse(html, "trip.html")
    msgs = [u for u in doc.units if u.kind == "message"]
    assert [u.extra["role"] for u in msgs] == ["user", "assistant"]
    assert "Day two: harbour" in msgs[1].body and "<" not in msgs[1].body


def test_notes_are_not_transcripts() -> None:
    faq = "# FAQ\n\n## Question\nHow?\n\n## Answer\nLike this.\n"
    assert not looks_like_transcript(faq)
    in_code = "# Notes\n\n```\n## You\nhi\n## ChatGPT\nhello\n```\n"
    assert not looks_like_transcript(in_code)
    only_user = "## You\nhello\n\n## You\nagain\n"
    assert not looks_like_transcript(only_user)
    assert formats.detect("faq.md", faq.encode()).name == "markdown"  # type: ignore[union-attr]
    assert formats.detect("c.md", EXPORTER_STYLE.encode()).name == "transcript"  # type: ignore[union-attr]


def test_transcripts_through_the_index(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "bread.md").write_text(EXPORTER_STYLE, encoding="utf-8")
    (folder / "faq.md").write_text("# FAQ\n\n## Answer\nDense bread needs time.\n")
    with Cairn.open(db=tmp_path / "i.db") as c:
        run = c.index([folder])
        assert run.failed == 0
        hit = c.search("dense role:user").hits[0]
        assert (hit.path, hit.doc_title, hit.kind) == (
            "bread.md",
            "Sourdough troubleshooting",
            "message",
        )
        assert hit.line_start == 6  # the "#### You:" line
        assert [h.path for h in c.search("dense format:markdown").hits] == ["faq.md"]
        assert c.search("source:chat bulk ferment").hits[0].path == "bread.md"
