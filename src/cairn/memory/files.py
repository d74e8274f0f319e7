"""The files of an agent-memory bundle: frontmatter read and written as the OKF
reference implementation does, and the seal of a layer-1 memory (``OKF-MEMORY.md``).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ruamel.yaml import YAML

from cairn.errors import CairnError
from cairn.formats import frontmatter

LOG_TITLE = "# Memory log\n"
"""The first line of a bundle's ``log.md``."""


class MemoryError_(CairnError):
    """A memory operation refused: the message names the file and the reason."""


def link_label(text: str, empty: str = "untitled") -> str:
    """``text`` safe inside a Markdown link label of the log (brackets and line breaks
    become spaces); ``empty`` when nothing is left."""
    return re.sub(r"[\[\]\n]", " ", text).strip() or empty


@functools.cache
def _pyyaml() -> tuple[Any, Any] | None:
    """PyYAML and its (C, when built) safe loader without the timestamp resolver, as
    the OKF reference implementation reads bundles; ``None`` without PyYAML."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        return None
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader: Any = type("NoDatesLoader", (base,), {})
    loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
        for k, v in base.yaml_implicit_resolvers.items()
    }
    return yaml, loader


def parse_file(text: str, path: str) -> tuple[dict[str, Any], str]:
    """Split a bundle file into its frontmatter mapping and body. YAML timestamps stay
    the strings written, so a read and a write change neither them nor a seal.

    Read as the OKF reference implementation reads (PyYAML's safe loader, C when
    built, without timestamps); cairn's frontmatter reader when PyYAML is missing.

    Raises:
        MemoryError_: no ``---`` block at the start, or frontmatter that does not parse
            or is not a mapping (naming ``path``).
    """
    lib = _pyyaml()
    if lib is None:  # pragma: no cover
        fm = frontmatter.split(text, path, allow_toml=False)
        if fm.kind != "yaml":
            raise MemoryError_(f"{path}: no YAML frontmatter block at the start")
        if fm.failed:
            why = "; ".join(d.message for d in fm.diagnostics) or "frontmatter does not parse"
            raise MemoryError_(f"{path}: {why}")
        body = fm.body[1:] if fm.body.startswith("\n") else fm.body
        return dict(fm.data), body
    yaml, loader = lib
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise MemoryError_(f"{path}: no YAML frontmatter block at the start")
    close = _FENCE.search(text, 4)
    if close is None:
        raise MemoryError_(f"{path}: the frontmatter block is not closed by a '---' line")
    raw = text[4 : close.start()]
    body = text[close.end() + 1 :]
    if body.startswith("\n"):
        body = body[1:]
    try:
        data = yaml.load(raw, Loader=loader)  # a safe loader (no timestamps)
    except yaml.YAMLError as exc:
        raise MemoryError_(f"{path}: frontmatter is not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MemoryError_(f"{path}: frontmatter is not a mapping")
    return data, body


_FENCE = re.compile(r"^---[ \t]*$", re.M)


def _dump(meta: dict[str, Any]) -> str:
    """``meta`` as YAML: libyaml's safe dumper when built (ten times faster; a
    maintenance cycle rewrites thousands of concepts), else PyYAML's. Their output is
    the same, except that libyaml escapes characters beyond the BMP (``🎉`` →
    ``"\\U0001F389"``) even with ``allow_unicode``: such text is dumped by PyYAML."""
    lib = _pyyaml()
    if lib is not None:
        yaml = lib[0]
        opts: dict[str, Any] = {
            "sort_keys": False, "allow_unicode": True, "default_flow_style": False,
            "width": 1000,
        }
        dumper = getattr(yaml, "CSafeDumper", None)
        if dumper is not None:
            fast: str = yaml.dump(meta, Dumper=dumper, **opts)
            if "\\U" not in fast:
                return fast
        text: str = yaml.safe_dump(meta, **opts)
        return text
    out = io.StringIO()  # pragma: no cover
    _yaml().dump(meta, out)
    return out.getvalue()


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.default_flow_style = False
    y.width = 1000
    y.allow_unicode = True
    return y


def render_file(meta: Mapping[str, Any], body: str) -> bytes:
    """Frontmatter (key order kept) and body as the bytes of one file."""
    head = _dump(dict(meta))
    body = body.rstrip("\n") + "\n" if body.strip() else ""
    return f"---\n{head}---\n\n{body}".encode()


def seal(meta: Mapping[str, Any], body: str) -> str:
    """The seal of a layer-1 memory: SHA-256 hex over the canonical form of the body and
    every frontmatter field but ``hash``.

    Canonical form: the JSON of ``{"body": <body without surrounding blank lines>,
    "fields": <the fields>}`` with sorted keys, no spaces, UTF-8 (not ASCII-escaped).
    """
    fields = {k: v for k, v in meta.items() if k != "hash"}
    canon = json.dumps(
        {"body": body.strip("\n"), "fields": fields},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def now_iso() -> str:
    """The current time, ISO 8601 UTC with a ``Z`` offset, to the second."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def split_log(text: str, limit: int) -> tuple[str, str]:
    """A log's text cut below ``limit`` bytes: ``(kept, older)`` where ``kept`` is
    the title and the newest entries (at least the first one) and ``older`` the rest,
    as dated sections (a section cut in two repeats its date heading); ``older`` is
    ``""`` when the text fits. Lines are never split."""
    if len(text.encode()) <= limit:
        return text, ""
    lines = text.splitlines(keepends=True)
    size = 0
    heading: str | None = None
    entries = 0
    cut = len(lines)
    for i, line in enumerate(lines):
        size += len(line.encode())
        if line.startswith("## "):
            heading = line
        elif line.strip() and heading is not None:
            entries += 1
        if size > limit // 2 and entries > 0 and not line.startswith("## "):
            cut = i + 1
            break
    kept, rest = "".join(lines[:cut]), lines[cut:]
    while rest and not rest[0].strip():
        rest.pop(0)
    if not rest:
        return text, ""
    if not rest[0].startswith("## ") and heading is not None:
        rest.insert(0, heading)
    return kept.rstrip("\n") + "\n", "".join(rest)


def with_log_lines(text: str, lines: list[str]) -> str:
    """``text`` (a log.md) with ``lines`` at the top of today's date section."""
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    bullets = "".join(f"* {line}\n" for line in lines)
    heading = f"## {today}\n"
    if not text.strip():
        text = LOG_TITLE
    if heading in text:
        i = text.index(heading) + len(heading)
        return text[:i] + bullets + text[i:]
    m = re.search(r"^## ", text, re.M)
    block = f"{heading}{bullets}\n"
    if m is None:
        return text.rstrip("\n") + "\n\n" + block
    return text[: m.start()] + block + text[m.start() :]
