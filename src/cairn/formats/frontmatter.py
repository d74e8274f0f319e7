"""Front matter: the metadata block at the very start of a Markdown (or OKF) file.

Two block kinds are recognised, only when the file's *first* line opens them (a BOM is
ignored; fence lines may carry trailing spaces or tabs, as Jekyll and Hugo allow):

* YAML between ``---`` lines, loaded safely as YAML 1.2 by
  :mod:`cairn.formats.yaml_safe` (no tag builds a Python object; alias expansion is
  bounded by :data:`MAX_NODES` and :data:`MAX_DEPTH`).
* TOML between ``+++`` lines, loaded with :mod:`tomllib`.

Only the first block is front matter; a second ``---`` block further down is body text.

The result (:class:`FrontMatter`) holds JSON-serialisable plain data: ``dict``/``list``/
``str``/``int``/``float``/``bool``/``None``. YAML timestamps are kept *as written* (the
source text, e.g. ``2023-05-01 10:00``) and also parsed: :attr:`FrontMatter.dates`
maps each top-level key holding a timestamp to its normalised ISO form
(:func:`cairn.formats.written_dates.normalise_date`). Non-finite floats (``.inf``,
``.nan``) are kept as written (strings) so the data stays valid JSON.

A block larger than :data:`MAX_CHARS` is not loaded (a YAML loader written in Python
would hold the run up): ``failed`` is set and a diagnostic says so. A block that is not
closed, does not parse, or is not a mapping yields empty ``data`` and a
:class:`cairn.model.Diagnostic` naming the file and the 1-based line of the fault;
:attr:`FrontMatter.failed` is then ``True`` and the caller decides what to do with the
block's text (the Markdown parser keeps it as searchable body text).

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
from ruamel.yaml.error import YAMLError

from cairn.formats.written_dates import normalise_date
from cairn.formats.yaml_safe import MAX_DEPTH, MAX_NODES, load_yaml, load_yaml_mapping
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

MAX_CHARS = 1_000_000
"""Upper bound on the characters of one block: a larger one is not loaded (a YAML
loader written in Python would hold the run up for seconds) but reported, and its text
kept as body text."""

_YAML_FENCE = re.compile(r"---[ \t]*")
_TOML_FENCE = re.compile(r"\+\+\+[ \t]*")
_YAML_CLOSE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_TOML_CLOSE = re.compile(r"^\+\+\+[ \t]*$", re.MULTILINE)


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
        data, dates, diags, ok = load_yaml(raw, path, first_line=2, key_lines=key_lines)
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
