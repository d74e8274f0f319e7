"""A fast reader for the simple YAML most front matter is written in.

Most front matter is a flat mapping of ``key: value`` lines whose values are plain or
quoted one-line scalars, ``[a, b]`` flow lists or ``- item`` block lists. Composing such
a block with ruamel.yaml's pure-Python scanner costs more than parsing the Markdown body
it heads, so :func:`simple_mapping` reads exactly that shape itself and declines (returns
``None``) at anything else — comments, anchors, tags, nested mappings, block scalars,
escapes, tabs, characters YAML refuses, duplicate keys — which is then read by
:func:`cairn.formats.yaml_safe.load_yaml` with ruamel.yaml as before.

Plain scalars are resolved by ruamel.yaml's own YAML 1.2 resolver, so ``NO`` stays a
string and ``2023-05-01`` is a timestamp exactly as ruamel reads them; a value whose tag
is anything but ``str``/``null``/``bool``/``int``/``float``/``timestamp`` is declined.
``tests/formats/test_frontmatter_fast.py`` checks that every block this reader accepts
(the corpus's and hand-made edge cases) gives ruamel's result.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from ruamel.yaml.nodes import ScalarNode

__all__ = ["Item", "Scalar", "Value", "simple_mapping"]

Scalar = tuple[str, str]
"""``(tag, text)``: a scalar's resolved tag (``str``, ``null``, ``bool``, ``int``,
``float`` or ``timestamp``) and its text."""
Item = Scalar | list[Scalar]
"""A value on one line: a scalar or a ``[…]`` flow list of scalars."""
Value = Scalar | Sequence[Item]
"""A top-level value: a scalar, a flow list, or a block list of :data:`Item`."""

_TAG_PREFIX = "tag:yaml.org,2002:"
_KNOWN_TAGS = frozenset({"str", "null", "bool", "int", "float", "timestamp"})
_KEY = re.compile(r"([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#,\[\]{}\t]{0,199})?:(?: (.*))?")
"""A top-level ``key:`` line: a plain key (no indicator first, no ``:``/``#``/flow
characters, not ending in a blank — checked apart) and the rest after ``": "``."""
_REFUSED = re.compile(
    "[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
    "|[\t\u2028\u2029]"
)
"""What this reader leaves to ruamel: tabs, ``\\r`` and line breaks YAML has besides
``\\n`` (``\\x85``, ``\\u2028``, ``\\u2029``), a BOM, and every character ruamel's
reader refuses."""
_PLACEHOLDER = re.compile(r"\{\{[A-Za-z_][A-Za-z0-9_]*\}\}")
_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@` ")


@functools.cache
def _resolver() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="rt").resolver


def _plain(text: str) -> Scalar | None:
    """A one-line block-context plain scalar (``text`` already stripped), or ``None``."""
    if not text:
        return "null", ""
    first = text[0]
    if first == "-" and text[1:2] not in ("", " "):
        pass  # "-5", "-foo": a plain scalar; "- x" would be a list item
    elif first in _PLAIN_FIRST:
        return None
    if ": " in text or " #" in text or text.endswith(":"):
        return None
    tag = str(_resolver().resolve(ScalarNode, text, (True, False)))
    if tag.startswith(_TAG_PREFIX):
        tag = tag[len(_TAG_PREFIX) :]
    return (tag, text) if tag in _KNOWN_TAGS else None


def _quoted(text: str) -> Scalar | None:
    """A one-line single- or double-quoted scalar filling ``text``, or ``None``."""
    if len(text) < 2 or text[-1] != text[0]:
        return None
    inner = text[1:-1]
    if text[0] == "'":
        if "'" in inner.replace("''", ""):
            return None
        return "str", inner.replace("''", "'")
    if '"' in inner or "\\" in inner:
        return None
    return "str", inner


def _flow_item(text: str) -> Scalar | None:
    if not text:
        return None
    if text[0] in "'\"":
        return _quoted(text)
    if any(c in text for c in ":?#'\""):
        return None
    return _plain(text)


def _value(text: str) -> Item | None:
    """A one-line value: plain, quoted, or a ``[…]`` flow list of those; ``None`` when
    it is anything else."""
    text = text.strip(" ")
    if not text:
        return "null", ""
    first = text[0]
    if first in "'\"":
        return _quoted(text)
    if first == "{":
        # a template placeholder ("{{date}}"): YAML for a nested flow mapping, which
        # load_yaml keeps as the text written
        return ("str", text) if _PLACEHOLDER.fullmatch(text) else None
    if first == "[":
        if not text.endswith("]"):
            return None
        inner = text[1:-1]
        if not inner.strip(" "):
            return []
        if "[" in inner or "]" in inner or "{" in inner or "}" in inner:
            return None
        items = [_flow_item(part.strip(" ")) for part in inner.split(",")]
        if any(item is None for item in items):
            return None
        return [item for item in items if item is not None]
    return _plain(text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def simple_mapping(
    raw: str,
) -> tuple[dict[str, Value], dict[str, int]] | None:
    """Read ``raw`` (a front matter block, ``\\n`` line ends) if it is simple YAML.

    Returns ``(values, lines)``: each top-level key's value — a :data:`Scalar`, or a list
    of them (an item may itself be a flow list) — and the 0-based line of each key; or
    ``None`` when the block is not of the simple shape (see the module) and must be read
    by ruamel.yaml. Never raises.
    """
    if _REFUSED.search(raw) is not None:
        return None
    lines = raw.split("\n")
    out: dict[str, Value] = {}
    where: dict[str, int] = {}
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip(" "):
            i += 1
            continue
        m = _KEY.fullmatch(line)
        if m is None or m.group(1) is None or m.group(1).endswith(" "):
            return None
        key = m.group(1)
        if key in out or key == "<<":  # a duplicate, or a merge key
            return None
        rest = (m.group(2) or "").strip(" ")
        where[key] = i
        i += 1
        if rest:
            value = _value(rest)
            if value is None:
                return None
            folded = [rest]
            # a plain value may go on over more indented lines, folded with spaces
            while i < n and lines[i][:1] == " " and lines[i].strip(" "):
                more = lines[i].strip(" ")
                if isinstance(value, list) or more[0] in "-#" or _plain(more) is None:
                    return None
                folded.append(more)
                i += 1
            if len(folded) > 1:
                if rest[0] in "'\"":
                    return None
                value = _plain(" ".join(folded))
                if value is None:
                    return None
            out[key] = value
            continue
        items, i = _block_list(lines, i)
        if items is None:
            return None
        out[key] = items if items else ("null", "")
    return out, where


def _block_list(lines: list[str], i: int) -> tuple[list[Item] | None, int]:
    """The ``- item`` lines from ``lines[i]`` on (``[]`` when there are none) and the
    index after them; ``None`` items when they are not of the simple shape."""
    items: list[Item] = []
    indent = -1
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip(" ")
        if not stripped:
            i += 1
            continue
        col = _indent(line)
        if not (stripped == "-" or stripped.startswith("- ")):
            if col == 0:
                break  # the next key
            return None, i
        if indent < 0:
            indent = col
        elif col != indent:
            return None, i
        item = _value(stripped[1:])
        if item is None:
            return None, i
        if i + 1 < n and _indent(lines[i + 1]) > indent and lines[i + 1].strip(" "):
            return None, i  # an item going on over more lines
        items.append(item)
        i += 1
    # blank lines a list ends with belong to nothing: step back over none (keys skip them)
    return items, i
