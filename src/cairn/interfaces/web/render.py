"""Note text to safe HTML: Markdown through markdown-it-py (raw HTML escaped, Obsidian
wikilinks and embeds as links), Org bodies by a small block renderer (source blocks,
tables, lists, links), and every result passed through :func:`sanitize` (nh3) last.

Every note is hostile input: nothing here trusts a title, a body, a property value or
a link target. Text is escaped when it is put into markup, link targets outside
:data:`SAFE_SCHEMES` are dropped, and the finished fragment is cleaned by nh3 with a
fixed allowlist of tags and attributes (no ``style``, no ``on*``, no ``script``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from html import escape, unescape
from urllib.parse import quote, unquote, urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
"""URL schemes a rendered link may keep; any other (``javascript:``, ``data:``,
``vbscript:``, ``file:`` …) is dropped with its ``href``."""

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl",
    "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "input", "kbd", "li",
    "mark", "ol", "p", "pre", "s", "section", "small", "span", "strong", "sub", "summary",
    "sup", "table", "tbody", "td", "th", "thead", "time", "tr", "ul",
})
ATTRIBUTES: Mapping[str, set[str]] = {
    "*": {"class", "id", "title"},
    "a": {"href"},
    "td": {"align"}, "th": {"align"},
    "ol": {"start"},
    "input": {"type", "checked", "disabled"},
}

Resolve = Callable[[str], str | None]
"""Maps a link target as written (``people/alex`` of ``[[people/alex]]``) to the UI's
URL of the note (and heading) it resolves to, or ``None``."""


def safe_url(url: str) -> str | None:
    """``url`` when it is relative (a path, a fragment) or uses a scheme of
    :data:`SAFE_SCHEMES`, else ``None``. Control characters and whitespace that
    browsers ignore inside a scheme (``java\\tscript:``) are removed before checking."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", unescape(url))
    try:
        scheme = urlsplit(cleaned).scheme.lower()
    except ValueError:
        return None
    if scheme and scheme not in SAFE_SCHEMES:
        return None
    if not scheme and ":" in cleaned.split("/", 1)[0]:
        return None  # "javascript&colon;" and other tricks that still carry a colon
    return url


def sanitize(html: str) -> str:
    """``html`` cleaned by nh3: only :data:`TAGS` and :data:`ATTRIBUTES`, only
    :data:`SAFE_SCHEMES` in links, comments stripped, ``rel="noopener noreferrer"`` on
    every link."""
    return nh3.clean(
        html,
        tags=set(TAGS),
        attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        url_schemes=set(SAFE_SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
    )


def note_href(document_id: str, anchor: str | None = None) -> str:
    """The UI's URL of a document (and a unit of it)."""
    return f"/note/{quote(document_id, safe='')}" + (f"#u-{quote(anchor, safe='')}"
                                                     if anchor else "")


# --- Markdown ---------------------------------------------------------------------------
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")


def _markdown(resolve: Resolve) -> MarkdownIt:
    from mdit_py_plugins.tasklists import tasklists_plugin

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")
    md.use(tasklists_plugin)
    md.validateLink = lambda url: safe_url(url) is not None  # type: ignore[method-assign]

    def wikilink(state: StateInline, silent: bool) -> bool:
        m = _WIKI.match(state.src, state.pos)
        if m is None:
            return False
        if not silent:
            embed, inner = m.group(1), m.group(2)
            target, _, alias = inner.partition("|")
            name = target.partition("#")[0]
            href = resolve(target.strip()) or resolve(name.strip())
            label = alias.strip() or target.strip()
            cls = "wikilink embed" if embed else "wikilink"
            if href:
                html = (f'<a class="{cls}" href="{escape(href)}">'
                        f"{escape(label)}</a>")
            else:
                html = (f'<span class="{cls} unresolved" title="unresolved link">'
                        f"{escape(label)}</span>")
            token = state.push("html_inline", "", 0)
            token.content = html
        state.pos = m.end()
        return True

    def relink(state: StateCore) -> None:
        """``[text](other.md)`` to the resolved note's page."""
        for tok in state.tokens:
            for child in tok.children or ():
                if child.type == "link_open":
                    href = str(child.attrGet("href") or "")
                    mapped = resolve(href) or resolve(unquote(href))
                    if mapped:
                        child.attrSet("href", mapped)

    md.inline.ruler.before("link", "wikilink", wikilink)
    md.core.ruler.push("relink", relink)
    return md


def render_markdown(text: str, resolve: Resolve) -> str:
    """Markdown to sanitised HTML: CommonMark with tables, strikethrough and task lists;
    raw HTML in the note is shown as text; ``[[target|alias]]`` and ``![[embed]]`` become
    links to the resolved note (a ``span.unresolved`` when they resolve to nothing)."""
    return sanitize(_markdown(resolve).render(text))


# --- Org --------------------------------------------------------------------------------
_ORG_LINK = re.compile(r"\[\[([^\[\]\n]+)\](?:\[([^\[\]\n]*)\])?\]")
_ORG_EMPH = [
    (re.compile(r"(?<![\w*])\*(\S(?:[^*\n]*\S)?)\*(?![\w*])"), "strong"),
    (re.compile(r"(?<![\w/:])/(\S(?:[^/\n]*\S)?)/(?![\w/])"), "em"),
    (re.compile(r"(?<![\w=])=(\S(?:[^=\n]*\S)?)=(?![\w=])"), "code"),
    (re.compile(r"(?<![\w~])~(\S(?:[^~\n]*\S)?)~(?![\w~])"), "code"),
    (re.compile(r"(?<![\w+])\+(\S(?:[^+\n]*\S)?)\+(?![\w+])"), "del"),
]


def _org_inline(text: str, resolve: Resolve) -> str:
    """One line of Org text to HTML: links, emphasis; everything else escaped."""
    out: list[str] = []
    pos = 0
    for m in _ORG_LINK.finditer(text):
        out.append(_org_emphasis(text[pos:m.start()]))
        target, desc = m.group(1), m.group(2)
        label = escape(desc if desc else target)
        href = resolve(target)
        if href is None and target.startswith(("id:", "file:")):
            href = resolve(target.split(":", 1)[1].split("::", 1)[0])
        if href:
            out.append(f'<a href="{escape(href)}">{label}</a>')
        elif safe_url(target) is not None and urlsplit(target).scheme in SAFE_SCHEMES:
            out.append(f'<a href="{escape(target)}">{label}</a>')
        else:
            out.append(f'<span class="link unresolved" title="{escape(target)}">{label}</span>')
        pos = m.end()
    out.append(_org_emphasis(text[pos:]))
    return "".join(out)


def _org_emphasis(text: str) -> str:
    html = escape(text)
    for pattern, tag in _ORG_EMPH:
        html = pattern.sub(rf"<{tag}>\1</{tag}>", html)
    return html


_BEGIN = re.compile(r"^\s*#\+begin_(\w+)\s*(\S*)", re.IGNORECASE)
_LIST = re.compile(r"^(\s*)([-+*]|\d+[.)])\s+(\[[ xX-]\]\s+)?(.*)$")


def render_org(text: str, resolve: Resolve) -> str:
    """An Org unit body to sanitised HTML: ``#+begin_src``/``example``/``quote`` blocks,
    tables, plain lists (with checkboxes), paragraphs, links and emphasis. Other
    ``#+KEYWORD:`` lines are dropped."""
    lines = text.splitlines()
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append("<p>" + "<br>".join(_org_inline(p, resolve) for p in para) + "</p>")
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        begin = _BEGIN.match(line)
        if begin:
            flush()
            kind, lang = begin.group(1).lower(), begin.group(2)
            end = re.compile(rf"^\s*#\+end_{re.escape(kind)}\b", re.IGNORECASE)
            body: list[str] = []
            i += 1
            while i < len(lines) and not end.match(lines[i]):
                body.append(lines[i])
                i += 1
            content = escape("\n".join(body))
            if kind == "quote":
                out.append("<blockquote><p>" + "<br>".join(
                    _org_inline(b, resolve) for b in body) + "</p></blockquote>")
            else:
                cls = f' class="language-{escape(lang)}"' if lang else ""
                out.append(f'<pre class="src"><code{cls}>{content}</code></pre>')
            i += 1
            continue
        if line.lstrip().startswith("|"):
            flush()
            rows: list[list[str]] = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                row = lines[i].strip()
                if not re.match(r"^\|[-+|]+\|?$", row):
                    rows.append([c.strip() for c in row.strip("|").split("|")])
                i += 1
            out.append("<table>" + "".join(
                "<tr>" + "".join(f"<td>{_org_inline(c, resolve)}</td>" for c in r) + "</tr>"
                for r in rows) + "</table>")
            continue
        item = _LIST.match(line)
        if item:
            flush()
            ordered = item.group(2)[0].isdigit()
            items: list[str] = []
            while i < len(lines) and (m := _LIST.match(lines[i])):
                box = m.group(3)
                check = ""
                if box:
                    ticked = " checked" if box.strip()[1] in "xX" else ""
                    check = f'<input type="checkbox" disabled{ticked}> '
                items.append(f"<li>{check}{_org_inline(m.group(4), resolve)}</li>")
                i += 1
            tag = "ol" if ordered else "ul"
            out.append(f"<{tag}>{''.join(items)}</{tag}>")
            continue
        if not line.strip():
            flush()
        elif re.match(r"^\s*#\+\w+:", line) or re.match(r"^\s*#(\s|$)", line):
            pass  # keywords and comments are not content
        else:
            para.append(line.strip())
        i += 1
    flush()
    return sanitize("".join(out))


def highlight(snippet: str, spans: tuple[tuple[int, int], ...]) -> str:
    """``snippet`` escaped, with each ``(start, end)`` character span in ``<mark>``."""
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start < pos or end <= start:
            continue
        out.append(escape(snippet[pos:start]))
        out.append(f"<mark>{escape(snippet[start:end])}</mark>")
        pos = end
    out.append(escape(snippet[pos:]))
    return "".join(out)


def editor_link(template: str | None, path: str, line: int) -> str | None:
    """The "open in editor" URL from ``[web] editor_url`` (``{path}``: the absolute file
    path, URL-quoted; ``{line}``: the 1-based line), or ``None`` when no template is
    configured or it names a scheme that runs code in the page (``javascript:``,
    ``data:``, ``vbscript:``)."""
    if not template:
        return None
    scheme = urlsplit(re.sub(r"[\x00-\x20\x7f]", "", template)).scheme.lower()
    if scheme in ("javascript", "data", "vbscript", ""):
        return None
    return template.replace("{path}", quote(path, safe="/")).replace("{line}", str(line))
