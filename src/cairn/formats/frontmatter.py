"""Front matter: the metadata block at the very start of a Markdown (or OKF) file.

Two block kinds are recognised, only when the file's *first* line opens them (a BOM is
ignored; fence lines may carry trailing spaces or tabs, as Jekyll and Hugo allow):

* YAML between ``---`` lines, loaded with ruamel.yaml as YAML 1.2 (so ``NO``, ``on`` and
  ``12:30`` stay strings, as in Obsidian). Loading is safe: the node graph is composed
  and converted by this module, never constructed, so no tag can build Python objects
  (unknown tags such as ``!!python/object`` are ignored with a warning and the value is
  kept as plain data), and alias expansion is bounded (:data:`MAX_NODES` nodes in total,
  :data:`MAX_DEPTH` levels), which rejects "billion laughs" documents and recursive
  aliases.
* TOML between ``+++`` lines, loaded with :mod:`tomllib`.

Only the first block is front matter; a second ``---`` block further down is body text.

The result (:class:`FrontMatter`) holds JSON-serialisable plain data: ``dict``/``list``/
``str``/``int``/``float``/``bool``/``None``. YAML timestamps are kept *as written* (the
source text, e.g. ``2023-05-01 10:00``) and also parsed: :attr:`FrontMatter.dates`
maps each top-level key holding a timestamp to its normalised ISO form. Non-finite floats
(``.inf``, ``.nan``) are kept as written (strings) so the data stays valid JSON.

A block larger than :data:`MAX_CHARS` is not loaded (pure-Python YAML reads about 0.5
MB/s): ``failed`` is set and a diagnostic says so. A block that is not closed, does not
parse, or is not a mapping yields empty ``data``
and a :class:`cairn.model.Diagnostic` naming the file and the 1-based line of the
fault; :attr:`FrontMatter.failed` is then ``True`` and the caller decides what to do with
the block's text (the Markdown parser keeps it as searchable body text).

For later write-back, :func:`load_roundtrip` and :func:`dump_roundtrip` keep comments,
quoting and key order: load → edit a key → dump changes only that key.
"""

from __future__ import annotations

import datetime as _dt
import io
import math
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from cairn.model import Diagnostic

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_NODES",
    "FrontMatter",
    "dump_roundtrip",
    "load_roundtrip",
    "load_yaml_mapping",
    "normalise_date",
    "split",
]

MAX_NODES = 100_000
"""Upper bound on nodes visited while converting one block (alias expansion included)."""
MAX_DEPTH = 64
"""Upper bound on nesting depth of one block."""

MAX_CHARS = 1_000_000
"""Upper bound on the characters of one block: a larger one is not loaded (a YAML
loader written in Python would hold the run up for seconds) but reported, and its text
kept as body text."""

_YAML_FENCE = re.compile(r"---[ \t]*")
_TOML_FENCE = re.compile(r"\+\+\+[ \t]*")
_YAML_CLOSE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_TOML_CLOSE = re.compile(r"^\+\+\+[ \t]*$", re.MULTILINE)
_TAG_PREFIX = "tag:yaml.org,2002:"


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The front matter of one file and where the body starts.

    Attributes:
        kind: ``"yaml"``, ``"toml"`` or ``None`` when the file has no front matter block.
        data: the block as plain JSON-serialisable data (empty when absent or failed).
        raw: the block's text between the fences (``""`` when absent).
        start_line: 1-based line of the opening fence (``1``), or ``None`` when absent.
        end_line: 1-based line of the closing fence, or ``None`` (absent or unclosed).
        body: the text after the closing fence (the whole text when there is no closed
            block).
        body_line: 1-based file line on which :attr:`body` starts.
        dates: top-level key → normalised ISO date/datetime for keys whose value is a
            date (YAML timestamp, TOML date/datetime, or a string that parses as one).
        failed: ``True`` when a closed block was found but could not be used (bad
            YAML/TOML or not a mapping).
        diagnostics: problems found, each naming the file and line.
        key_lines: top-level key → 1-based file line where it is written (YAML only).
    """

    kind: str | None
    data: dict[str, Any]
    raw: str = ""
    start_line: int | None = None
    end_line: int | None = None
    body: str = ""
    body_line: int = 1
    dates: dict[str, str] = field(default_factory=dict)
    failed: bool = False
    diagnostics: tuple[Diagnostic, ...] = ()
    key_lines: dict[str, int] = field(default_factory=dict)


class _Budget:
    """Counts nodes visited during conversion, to bound alias expansion."""

    __slots__ = ("left", "raw")

    def __init__(self, limit: int, raw: str = "") -> None:
        self.left = limit
        self.raw = raw


_PLACEHOLDER = re.compile(r"\{\{[^{}\n]*\}\}")


class _Reject(Exception):
    """Raised inside conversion when the document exceeds a safety bound."""


def split(text: str, path: str = "", *, allow_toml: bool = True) -> FrontMatter:
    """Find and load the front matter block at the start of ``text``.

    Args:
        text: the whole file, decoded (a leading BOM and ``\\r`` line ends are tolerated).
        path: the file's path, used in diagnostics.
        allow_toml: also recognise ``+++`` TOML blocks (Markdown: yes; OKF: no).

    Returns:
        A :class:`FrontMatter`; never raises on bad input.
    """
    text = text.lstrip("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if _YAML_FENCE.fullmatch(first):
        kind, closing = "yaml", _YAML_CLOSE
    elif allow_toml and _TOML_FENCE.fullmatch(first):
        kind, closing = "toml", _TOML_CLOSE
    else:
        return FrontMatter(kind=None, data={}, body=text, body_line=1)
    if first_end < 0:  # the file is a lone fence line
        return _unclosed(text, path, kind)
    # find the closing fence line (one regex scan: linear however long the file)
    close = closing.search(text, first_end + 1)
    if close is None:
        return _unclosed(text, path, kind)
    close_start = close.start()
    close_end = close.end() + 1 if close.end() < len(text) else len(text)
    line_no = text.count("\n", 0, close_start) + 1
    raw = text[first_end + 1 : close_start]
    body = text[close_end:]
    body_line = line_no + 1
    if len(raw) > MAX_CHARS:
        diag = Diagnostic(
            path,
            f"front matter block is too large to read ({len(raw) / 1e6:.1f} MB, the limit "
            f"is {MAX_CHARS / 1e6:.0f} MB); its text is kept as body text",
            1,
        )
        return FrontMatter(
            kind=kind,
            data={},
            raw=raw,
            start_line=1,
            end_line=line_no,
            body=body,
            body_line=body_line,
            failed=True,
            diagnostics=(diag,),
        )
    key_lines: dict[str, int] = {}
    if kind == "yaml":
        data, dates, diags, ok = _load_yaml(raw, path, first_line=2, key_lines=key_lines)
    else:
        data, dates, diags, ok = _load_toml(raw, path, first_line=2)
    return FrontMatter(
        kind=kind,
        data=data if ok else {},
        raw=raw,
        start_line=1,
        end_line=line_no,
        body=body,
        body_line=body_line,
        dates=dates if ok else {},
        failed=not ok,
        diagnostics=tuple(diags),
        key_lines=key_lines if ok else {},
    )


def _unclosed(text: str, path: str, kind: str) -> FrontMatter:
    fence = "---" if kind == "yaml" else "+++"
    diag = Diagnostic(
        path,
        f"front matter opened with '{fence}' on line 1 is never closed; "
        "the file is read as having no front matter",
        1,
    )
    return FrontMatter(kind=None, data={}, body=text, body_line=1, diagnostics=(diag,))


# --- YAML ------------------------------------------------------------------------------


def load_yaml_mapping(
    text: str, path: str = "", first_line: int = 1
) -> tuple[dict[str, Any], list[Diagnostic], bool]:
    """Load a YAML mapping document safely, as front matter is loaded.

    Returns ``(data, diagnostics, ok)``; ``ok`` is ``False`` (and ``data`` empty) when the
    text is not valid YAML or not a mapping. ``first_line`` is the file line of ``text``'s
    first line, for diagnostics.
    """
    data, _dates, diags, ok = _load_yaml(text, path, first_line)
    return (data if ok else {}), diags, ok


def _load_yaml(
    raw: str, path: str, first_line: int, key_lines: dict[str, int] | None = None
) -> tuple[dict[str, Any], dict[str, str], list[Diagnostic], bool]:
    diags: list[Diagnostic] = []
    if not raw.strip():
        return {}, {}, diags, True
    yaml = YAML(typ="rt")
    try:
        node = yaml.compose(raw)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else first_line
        problem = exc.problem or exc.context or "syntax error"
        diags.append(Diagnostic(path, f"front matter is not valid YAML: {problem}", line))
        return {}, {}, diags, False
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        diags.append(Diagnostic(path, f"front matter is not valid YAML: {exc}", first_line))
        return {}, {}, diags, False
    if node is None:
        return {}, {}, diags, True
    if not isinstance(node, MappingNode):
        what = "a list" if isinstance(node, SequenceNode) else "a single value"
        diags.append(
            Diagnostic(
                path,
                f"front matter is {what}, not a mapping of keys to values; ignored",
                first_line + node.start_mark.line,
            )
        )
        return {}, {}, diags, False
    budget = _Budget(MAX_NODES, raw)
    try:
        data = _convert_mapping(node, budget, diags, path, first_line, (), 0)
    except _Reject as exc:
        diags.append(Diagnostic(path, f"front matter rejected: {exc}", first_line))
        return {}, {}, diags, False
    dates: dict[str, str] = {}
    for key_node, value_node in node.value:
        if key_lines is not None:
            key_lines.setdefault(_key_text(key_node), first_line + key_node.start_mark.line)
        if isinstance(value_node, ScalarNode) and _tag(value_node) == "timestamp":
            iso = normalise_date(value_node.value)
            if iso is not None:
                dates[_key_text(key_node)] = iso
    for key, value in data.items():
        if key not in dates and isinstance(value, str):
            iso = normalise_date(value)
            if iso is not None:
                dates[key] = iso
    return data, dates, diags, True


def _tag(node: Node) -> str:
    tag = str(getattr(node.tag, "value", node.tag) or "")
    return tag[len(_TAG_PREFIX) :] if tag.startswith(_TAG_PREFIX) else tag


def _key_text(node: Node) -> str:
    if isinstance(node, ScalarNode):
        return str(node.value).replace("\ufeff", "")
    return _flow_text(node)


def _flow_text(node: Node) -> str:
    """A short readable text for a complex node (used for non-scalar keys)."""
    if isinstance(node, ScalarNode):
        return str(node.value)
    if isinstance(node, SequenceNode):
        return "[" + ", ".join(_flow_text(n) for n in node.value[:20]) + "]"
    if isinstance(node, MappingNode):
        return (
            "{" + ", ".join(f"{_flow_text(k)}: {_flow_text(v)}" for k, v in node.value[:20]) + "}"
        )
    return "?"


def _visit(budget: _Budget, depth: int) -> None:
    budget.left -= 1
    if budget.left < 0:
        raise _Reject(f"more than {MAX_NODES} values after alias expansion")
    if depth > MAX_DEPTH:
        raise _Reject(f"nested deeper than {MAX_DEPTH} levels (or a recursive alias)")


def _convert(
    node: Node,
    budget: _Budget,
    diags: list[Diagnostic],
    path: str,
    first_line: int,
    stack: tuple[int, ...],
    depth: int,
) -> Any:
    _visit(budget, depth)
    if id(node) in stack:
        raise _Reject("recursive alias")
    if isinstance(node, ScalarNode):
        return _scalar(node, diags, path, first_line)
    if isinstance(node, SequenceNode):
        _check_tag(node, ("seq", "set", "omap", "pairs"), diags, path, first_line)
        inner = (*stack, id(node))
        return [_convert(n, budget, diags, path, first_line, inner, depth + 1) for n in node.value]
    if isinstance(node, MappingNode):
        # a template placeholder such as "created: {{date}}" is YAML for a nested flow
        # mapping; keep it as the text written
        src = budget.raw[node.start_mark.index : node.end_mark.index].strip()
        if src.startswith("{{") and _PLACEHOLDER.fullmatch(src):
            return src
        return _convert_mapping(node, budget, diags, path, first_line, stack, depth)
    return None


def _convert_mapping(
    node: MappingNode,
    budget: _Budget,
    diags: list[Diagnostic],
    path: str,
    first_line: int,
    stack: tuple[int, ...],
    depth: int,
) -> dict[str, Any]:
    _visit(budget, depth)
    if id(node) in stack:
        raise _Reject("recursive alias")
    _check_tag(node, ("map", "set", "omap"), diags, path, first_line)
    inner = (*stack, id(node))
    out: dict[str, Any] = {}
    merged: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if isinstance(key_node, ScalarNode) and _tag(key_node) == "merge":
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for src in sources:
                if isinstance(src, MappingNode):
                    sub = _convert_mapping(src, budget, diags, path, first_line, inner, depth + 1)
                    for k, v in sub.items():
                        merged.setdefault(k, v)
            continue
        if isinstance(key_node, ScalarNode):
            key = _key_text(key_node)
        else:
            key = _flow_text(key_node)
            diags.append(
                Diagnostic(
                    path,
                    f"front matter key {key!r} is not a plain value; kept as text",
                    first_line + key_node.start_mark.line,
                )
            )
        if key in out:
            diags.append(
                Diagnostic(
                    path,
                    f"front matter key {key!r} appears twice; the last value is used",
                    first_line + key_node.start_mark.line,
                )
            )
        out[key] = _convert(value_node, budget, diags, path, first_line, inner, depth + 1)
    for k, v in merged.items():
        out.setdefault(k, v)
    return out


def _check_tag(
    node: Node, allowed: tuple[str, ...], diags: list[Diagnostic], path: str, first_line: int
) -> None:
    tag = _tag(node)
    if tag and tag not in allowed:
        diags.append(
            Diagnostic(
                path,
                f"front matter tag {tag!r} is not supported and was ignored",
                first_line + node.start_mark.line,
            )
        )


def _scalar(node: ScalarNode, diags: list[Diagnostic], path: str, first_line: int) -> Any:
    value = str(node.value).replace("\ufeff", "")
    tag = _tag(node)
    if tag in ("str", "timestamp", "binary"):
        return value
    if tag == "null":
        return None
    if tag == "bool":
        return value.lower() in ("true", "yes", "on", "y")
    if tag == "int":
        return _to_int(value)
    if tag == "float":
        return _to_float(value)
    if tag:
        _check_tag(node, (), diags, path, first_line)
    return value


def _to_int(text: str) -> int | str:
    cleaned = text.replace("_", "")
    for base in (0, 10):
        try:
            return int(cleaned, base)
        except ValueError:
            continue
    if cleaned.startswith(("0o", "-0o", "+0o")):
        return text
    try:
        return int(cleaned, 8)
    except ValueError:
        return text


def _to_float(text: str) -> float | str:
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        return text
    return value if math.isfinite(value) else text


# --- TOML ------------------------------------------------------------------------------

_TOML_LINE = re.compile(r"line (\d+)")


def _load_toml(
    raw: str, path: str, first_line: int
) -> tuple[dict[str, Any], dict[str, str], list[Diagnostic], bool]:
    diags: list[Diagnostic] = []
    try:
        loaded = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_LINE.search(str(exc))
        line = first_line + int(m.group(1)) - 1 if m else first_line
        diags.append(Diagnostic(path, f"front matter is not valid TOML: {exc}", line))
        return {}, {}, diags, False
    dates: dict[str, str] = {}
    data = {str(k): _plain_toml(v) for k, v in loaded.items()}
    for k, v in loaded.items():
        if isinstance(v, _dt.date | _dt.datetime | _dt.time):
            iso = normalise_date(_plain_toml(v))
            if iso is not None:
                dates[str(k)] = iso
    return data, dates, diags, True


def _plain_toml(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain_toml(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_toml(v) for v in value]
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


# --- dates -----------------------------------------------------------------------------

_DATE_RE = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt]|[ \t]+)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"[ \t]*(Z|z|[+-]\d{1,2}(?::?\d{2})?)?)?"
)


def normalise_date(text: Any) -> str | None:
    """Normalise a written date or datetime to ISO 8601, or ``None`` if it is not one.

    Accepts ``YYYY-MM-DD`` and YAML/ISO datetimes (``T`` or spaces between date and time,
    optional seconds, fraction, ``Z`` or ``±HH[:MM]`` offset). Returns ``YYYY-MM-DD`` or
    ``YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM]`` (fractions dropped). Invalid calendar dates
    (``2023-02-30``) give ``None``.
    """
    if not isinstance(text, str):
        return None
    m = _DATE_RE.fullmatch(text.strip())
    if not m:
        return None
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        _dt.date(year, month, day)
    except ValueError:
        return None
    out = f"{year:04d}-{month:02d}-{day:02d}"
    if m.group(4) is None:
        return out
    hour, minute = int(m.group(4)), int(m.group(5))
    if hour > 23 or minute > 59:
        return None
    out += f"T{hour:02d}:{minute:02d}"
    if m.group(6) is not None:
        if int(m.group(6)) > 60:
            return None
        out += f":{int(m.group(6)):02d}"
    tz = m.group(7)
    if tz:
        if tz in ("Z", "z"):
            out += "Z"
        else:
            sign, digits = tz[0], tz[1:].replace(":", "")
            hh = digits[:-2] if len(digits) > 2 else digits
            mm = digits[-2:] if len(digits) > 2 else "00"
            out += f"{sign}{int(hh):02d}:{mm}"
    return out


# --- round trip ------------------------------------------------------------------------


_SEQ_INDENT = re.compile(r"^( *)- ", re.M)


def _rt_yaml(like: str = "") -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    # keep the block-sequence indentation the file uses ("key:\n  - a" or "key:\n- a")
    offsets = [len(m.group(1)) for m in _SEQ_INDENT.finditer(like)]
    nested = [o for o in offsets if o > 0]
    offset = min(nested) if nested and len(nested) * 2 >= len(offsets) else 0
    yaml.indent(mapping=2, sequence=offset + 2, offset=offset)
    return yaml


def load_roundtrip(raw: str) -> Any:
    """Load a front matter block's YAML text for editing, keeping comments and style.

    Returns ruamel's round-trip mapping (a ``dict`` subclass); edit it like a dict and
    give it to :func:`dump_roundtrip`. Only use it on files the user asked to change.

    Raises:
        cairn.errors.ParseError: when ``raw`` is not valid YAML.
    """
    from cairn.errors import ParseError

    try:
        return _rt_yaml().load(raw)
    except YAMLError as exc:
        raise ParseError(f"front matter is not valid YAML: {exc}") from exc


def dump_roundtrip(data: Any, like: str = "") -> str:
    """Serialise data loaded by :func:`load_roundtrip` back to YAML text.

    Comments, quoting, flow style and key order of untouched keys are kept, so a
    load → edit → dump cycle changes only the edited lines. ``like`` is the original
    block text; its block-sequence indentation is reused. The text has no fences.
    """
    buf = io.StringIO()
    _rt_yaml(like).dump(data, buf)
    return buf.getvalue()
