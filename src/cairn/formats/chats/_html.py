"""HTML → plain text for chat answers stored as HTML (Google Takeout ``safeHtmlItem``).

Tags are removed, entities decoded (``&amp;`` → ``&``), block elements (``p``, ``div``,
headings, ``li``, ``tr``, ``br`` …) end a line so list items stay on separate lines,
``<pre>`` keeps its whitespace and becomes a fenced code block (its language taken from a
``language-x`` class), ``script``/``style`` content is dropped, and runs of blank lines
collapse to one.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCK_TEXT = """
    p div li ul ol h1 h2 h3 h4 h5 h6 tr table blockquote
    section article header footer dl dt dd hr figure figcaption details summary
"""
_BLOCK = frozenset(_BLOCK_TEXT.split())
_SKIP = frozenset({"script", "style", "head", "title"})


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.pre_lang: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag == "br":
            self.out.append("\n")
        elif tag == "pre":
            self.pre += 1
            self.pre_lang = None
            self.out.append("\n```\n")
        elif tag == "code" and self.pre:
            for name, value in attrs:
                if name == "class" and value:
                    m = re.search(r"language-([\w+#-]+)", value)
                    if m and self.out and self.out[-1] == "\n```\n":
                        self.out[-1] = f"\n```{m.group(1).lower()}\n"
        elif tag in ("td", "th"):
            self.out.append(" ")
        elif tag in _BLOCK:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.out.append("\n```\n")
        elif tag in _BLOCK and tag != "li":
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            self.out.append(data)
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """Plain text of an HTML fragment (see the module docstring for the rules)."""
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; this is a last resort
        return re.sub(r"<[^>]+>", " ", html)
    text = "".join(parser.out)
    lines: list[str] = []
    in_pre = False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_pre = not in_pre
            lines.append(line.strip())
            continue
        lines.append(line.rstrip() if in_pre else line.strip())
    joined = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", joined).strip()
