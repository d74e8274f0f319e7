"""Parse served HTML and list anything that could run script."""

from __future__ import annotations

import re
from html.parser import HTMLParser

URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster",
             "background", "srcdoc", "ping", "cite", "srcset"}
BANNED_TAGS = {"iframe", "object", "embed", "base", "style", "svg", "math",
               "link", "meta", "frame", "frameset", "applet", "img", "video", "audio",
               "source", "template", "textarea"}


def _own_head(tag: str, a: dict[str, str]) -> bool:
    """The page's own stylesheet link and meta tags."""
    if tag == "link":
        return a.get("rel") == "stylesheet" and a.get("href") == "/static/app.css"
    return tag == "meta" and set(a) <= {"charset", "name", "content"} and \
        a.get("name", "viewport") == "viewport"


class Dangers(HTMLParser):
    """Collects executable or loading markup: ``<script>`` other than the UI's own
    static file, ``on*`` attributes, ``style`` attributes, URLs with a scheme that
    runs code, and tags that embed or load content."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): v or "" for k, v in attrs}
        if tag == "script":
            self.scripts.append(a.get("src", ""))
            if a.get("src") not in ("/static/app.js", "/static/cytoscape.min.js",
                                    "/static/graph.js"):
                self.found.append(f"<script {a}>")
        elif tag in BANNED_TAGS and not _own_head(tag, a):
            self.found.append(f"<{tag} {a}>")
        for k, v in a.items():
            if k.startswith("on"):
                self.found.append(f"{tag} {k}={v!r}")
            if k == "style":
                self.found.append(f"{tag} style={v!r}")
            if k in URL_ATTRS:
                bare = re.sub(r"[\x00-\x20\x7f]", "", v).lower()
                if bare.startswith(("javascript:", "vbscript:", "data:")):
                    self.found.append(f"{tag} {k}={v!r}")

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        pass


def dangers(html: str) -> list[str]:
    """Everything in ``html`` that could run script or load content."""
    p = Dangers()
    p.feed(html)
    p.close()
    return p.found
