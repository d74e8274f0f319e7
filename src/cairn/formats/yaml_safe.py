"""YAML front matter loaded safely into plain data.

Loaded with ruamel.yaml as YAML 1.2 (``NO``, ``on`` and ``12:30`` stay strings, as in
Obsidian). The node graph is composed and converted here, never constructed, so no tag
can build Python objects (unknown tags such as ``!!python/object`` are ignored with a
warning and the value kept as plain data), and alias expansion is bounded
(:data:`MAX_NODES` nodes in all, :data:`MAX_DEPTH` levels), which rejects "billion
laughs" documents and recursive aliases. Used by :func:`cairn.formats.frontmatter.split`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from cairn.formats.written_dates import normalise_date
from cairn.formats.yaml_simple import simple_mapping
from cairn.model import Diagnostic

MAX_NODES = 100_000
"""Upper bound on nodes visited while converting one block (alias expansion included)."""
MAX_DEPTH = 64
"""Upper bound on nesting depth of one block."""

_TAG_PREFIX = "tag:yaml.org,2002:"


class _Budget:
    """Counts nodes visited during conversion, to bound alias expansion."""

    __slots__ = ("left", "raw")

    def __init__(self, limit: int, raw: str = "") -> None:
        self.left = limit
        self.raw = raw


_PLACEHOLDER = re.compile(r"\{\{[^{}\n]*\}\}")


class _Reject(Exception):
    """Raised inside conversion when the document exceeds a safety bound."""


def load_yaml_mapping(
    text: str, path: str = "", first_line: int = 1
) -> tuple[dict[str, Any], list[Diagnostic], bool]:
    """Load a YAML mapping document safely, as front matter is loaded.

    Returns ``(data, diagnostics, ok)``; ``ok`` is ``False`` (and ``data`` empty) when the
    text is not valid YAML or not a mapping. ``first_line`` is the file line of ``text``'s
    first line, for diagnostics.
    """
    data, _dates, diags, ok = load_yaml(text, path, first_line)
    return (data if ok else {}), diags, ok


def load_yaml(
    raw: str, path: str, first_line: int, key_lines: dict[str, int] | None = None
) -> tuple[dict[str, Any], dict[str, str], list[Diagnostic], bool]:
    """``(data, dates, diagnostics, ok)`` of a YAML block (see the module docstring);
    ``dates``: top-level key → normalised ISO date for values that are dates;
    ``key_lines``, when given, receives each top-level key's file line. Never raises."""
    diags: list[Diagnostic] = []
    if not raw.strip():
        return {}, {}, diags, True
    simple = simple_mapping(raw)
    if simple is not None:
        return _from_simple(*simple, first_line, key_lines)
    return load_with_ruamel(raw, path, first_line, key_lines)


def load_with_ruamel(
    raw: str, path: str, first_line: int, key_lines: dict[str, int] | None = None
) -> tuple[dict[str, Any], dict[str, str], list[Diagnostic], bool]:
    """:func:`load_yaml` without its fast path for simple blocks: every block composed
    by ruamel.yaml (the reference the fast path is tested against). Never raises."""
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
    _string_dates(data, dates)
    return data, dates, diags, True


def _string_dates(data: dict[str, Any], dates: dict[str, str]) -> None:
    """Add to ``dates`` the top-level string values of ``data`` that read as dates."""
    for key, value in data.items():
        if key not in dates and isinstance(value, str):
            iso = normalise_date(value)
            if iso is not None:
                dates[key] = iso


def _from_simple(
    values: dict[str, Any],
    lines: dict[str, int],
    first_line: int,
    key_lines: dict[str, int] | None,
) -> tuple[dict[str, Any], dict[str, str], list[Diagnostic], bool]:
    """:func:`load_yaml`'s result for a block :func:`simple_mapping` read: each scalar
    converted as :func:`_scalar` converts ruamel's node of the same tag and text."""
    data = {key: _simple_value(value) for key, value in values.items()}
    dates: dict[str, str] = {}
    for key, value in values.items():
        if key_lines is not None:
            key_lines.setdefault(key, first_line + lines[key])
        if isinstance(value, tuple) and value[0] == "timestamp":
            iso = normalise_date(value[1])
            if iso is not None:
                dates[key] = iso
    _string_dates(data, dates)
    return data, dates, [], True


def _simple_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_simple_value(v) for v in value]
    tag, text = value
    if tag in ("str", "timestamp"):
        return text
    if tag == "null":
        return None
    if tag == "bool":
        return text.lower() in ("true", "yes", "on", "y")
    if tag == "int":
        return _to_int(text)
    return _to_float(text)


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
