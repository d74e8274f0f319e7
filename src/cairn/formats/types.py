"""Note types: ``types.yaml`` declares what a note of each ``type`` must carry.

A ``types.yaml`` (in the vault root or the configuration folder) looks like::

    types:
      person:
        required: [name, email]        # front matter keys that must be present and non-empty
        fields:                        # optional value checks, key → kind
          email: string
          born: date                   # string | int | number | bool | date | datetime
          role: {enum: [lead, member]} #   | list | link | url | {enum: [...]}
          tags: list
        chunk_profile: short           # a name (short | default | long) or
                                       #   {max_tokens: 256, overlap: 32}
        retriever_weight: 1.2          # multiplies the type's score (default 1.0)
        edges:                         # front matter key → edge relation
          works_at: employed_by
        aliases: [people]              # other spellings of the type name
    unknown_types: warn                # warn (default) | ignore
    default_chunk_profile: default

:func:`load_types` reads it (raising :class:`cairn.errors.ConfigError` on a malformed
file) and :func:`validate_note` checks one parsed :class:`cairn.model.Document`:
unknown type, missing required fields and malformed values come back as
:class:`cairn.model.Diagnostic` warnings — they never stop indexing. Type names match
case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.errors import ConfigError
from cairn.model import Diagnostic, Document

__all__ = [
    "CHUNK_PROFILES",
    "FIELD_KINDS",
    "ChunkProfile",
    "NoteType",
    "TypeRegistry",
    "load_types",
    "parse_types",
    "validate_note",
]

FIELD_KINDS = ("string", "int", "number", "bool", "date", "datetime", "list", "link", "url")


@dataclass(frozen=True, slots=True)
class ChunkProfile:
    """How units of a type are cut into chunks: token budget and overlap (tokens)."""

    name: str
    max_tokens: int
    overlap: int


CHUNK_PROFILES: dict[str, ChunkProfile] = {
    "short": ChunkProfile("short", 128, 16),
    "default": ChunkProfile("default", 256, 32),
    "long": ChunkProfile("long", 512, 64),
}


@dataclass(frozen=True, slots=True)
class NoteType:
    """One declared note type.

    Attributes:
        name: the type name as declared.
        required: front matter keys that must be present and non-empty.
        fields: key → kind (one of :data:`FIELD_KINDS`) or a tuple of allowed values.
        chunk_profile: chunking for its units.
        retriever_weight: score multiplier (> 0).
        edges: front matter key → edge relation created from that key's values.
        aliases: other names of the type.
    """

    name: str
    required: tuple[str, ...] = ()
    fields: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    chunk_profile: ChunkProfile = CHUNK_PROFILES["default"]
    retriever_weight: float = 1.0
    edges: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TypeRegistry:
    """All declared types; ``warn_unknown`` says whether unknown types are reported."""

    types: Mapping[str, NoteType] = field(default_factory=dict)
    warn_unknown: bool = True
    default_chunk_profile: ChunkProfile = CHUNK_PROFILES["default"]

    def get(self, name: str | None) -> NoteType | None:
        """The type called ``name`` (case-insensitive, aliases included), or ``None``."""
        if not name:
            return None
        key = name.strip().lower()
        for t in self.types.values():
            if t.name.lower() == key or key in (a.lower() for a in t.aliases):
                return t
        return None

    def retriever_weight(self, name: str | None) -> float:
        """The retriever weight of type ``name`` (1.0 when undeclared)."""
        t = self.get(name)
        return t.retriever_weight if t else 1.0

    def chunk_profile(self, name: str | None) -> ChunkProfile:
        """The chunk profile of type ``name`` (the default profile when undeclared)."""
        t = self.get(name)
        return t.chunk_profile if t else self.default_chunk_profile


def _profile(value: Any, where: str) -> ChunkProfile:
    if isinstance(value, str):
        if value not in CHUNK_PROFILES:
            raise ConfigError(f"{where}: unknown chunk_profile {value!r}")
        return CHUNK_PROFILES[value]
    if isinstance(value, dict):
        try:
            max_tokens = int(value.get("max_tokens", 256))
            overlap = int(value.get("overlap", max_tokens // 8))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: chunk_profile needs integer max_tokens/overlap") from exc
        if max_tokens <= 0 or overlap < 0 or overlap >= max_tokens:
            raise ConfigError(f"{where}: chunk_profile needs 0 <= overlap < max_tokens")
        return ChunkProfile(str(value.get("name", "custom")), max_tokens, overlap)
    raise ConfigError(f"{where}: chunk_profile must be a name or a mapping")


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{where}: expected a list of strings")


def parse_types(text: str, source: str = "types.yaml") -> TypeRegistry:
    """Read the text of a ``types.yaml`` (YAML 1.2, loaded safely).

    Raises:
        ConfigError: when the file is not valid YAML or does not have the shape above.
    """
    from cairn.formats import frontmatter as fm_mod  # ruamel: only when a file exists

    data, diags, ok = fm_mod.load_yaml_mapping(text, source)
    if not ok:
        why = diags[0].message.replace("front matter", "file") if diags else "invalid"
        line = f":{diags[0].line}" if diags and diags[0].line else ""
        raise ConfigError(f"{source}{line}: {why}")
    raw_types = data.get("types", {})
    if not isinstance(raw_types, dict):
        raise ConfigError(f"{source}: 'types' must be a mapping of type name → settings")
    types: dict[str, NoteType] = {}
    for name, spec in raw_types.items():
        where = f"{source}: type {name!r}"
        spec = spec or {}
        if not isinstance(spec, dict):
            raise ConfigError(f"{where}: settings must be a mapping")
        fields: dict[str, str | tuple[str, ...]] = {}
        raw_fields = spec.get("fields") or {}
        if not isinstance(raw_fields, dict):
            raise ConfigError(f"{where}: 'fields' must be a mapping")
        for key, kind in raw_fields.items():
            if isinstance(kind, dict) and isinstance(kind.get("enum"), list):
                fields[key] = tuple(str(v) for v in kind["enum"])
            elif isinstance(kind, str) and kind in FIELD_KINDS:
                fields[key] = kind
            else:
                raise ConfigError(f"{where}: field {key!r} has unknown kind {kind!r}")
        weight = spec.get("retriever_weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            raise ConfigError(f"{where}: retriever_weight must be a positive number")
        edges = spec.get("edges") or {}
        if not isinstance(edges, dict) or not all(isinstance(v, str) for v in edges.values()):
            raise ConfigError(f"{where}: 'edges' must map keys to relation names")
        types[str(name)] = NoteType(
            name=str(name),
            required=_str_list(spec.get("required"), where),
            fields=fields,
            chunk_profile=_profile(spec.get("chunk_profile", "default"), where),
            retriever_weight=float(weight),
            edges={str(k): str(v) for k, v in edges.items()},
            aliases=_str_list(spec.get("aliases"), where),
        )
    unknown = data.get("unknown_types", "warn")
    if unknown not in ("warn", "ignore"):
        raise ConfigError(f"{source}: unknown_types must be 'warn' or 'ignore'")
    default = _profile(data.get("default_chunk_profile", "default"), source)
    return TypeRegistry(types, unknown == "warn", default)


def load_types(path: Path) -> TypeRegistry:
    """Read ``types.yaml`` at ``path`` (see :func:`parse_types`).

    Raises:
        ConfigError: when the file cannot be read or is malformed.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    return parse_types(text, str(path))


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://\S+$")
_WIKILINK = re.compile(r"^\s*\[\[[^\[\]]+\]\]\s*$")


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and not value)


def _check(kind: str | tuple[str, ...], value: Any) -> str | None:
    """``None`` when ``value`` fits ``kind``, else what was expected."""
    from cairn.formats import frontmatter as fm_mod

    if isinstance(kind, tuple):
        return None if str(value) in kind else f"one of {', '.join(kind)}"
    ok = True
    if kind == "string":
        ok = isinstance(value, str)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "date":
        norm = fm_mod.normalise_date(value) if isinstance(value, str) else None
        ok = norm is not None and "T" not in norm
    elif kind == "datetime":
        ok = isinstance(value, str) and fm_mod.normalise_date(value) is not None
    elif kind == "list":
        ok = isinstance(value, list)
    elif kind == "url":
        ok = isinstance(value, str) and bool(_URL.match(value))
    elif kind == "link":
        items = value if isinstance(value, list) else [value]
        ok = all(isinstance(v, str) and bool(_WIKILINK.match(v) or _URL.match(v)) for v in items)
    return None if ok else f"a {kind}"


def validate_note(doc: Document, types: TypeRegistry) -> list[Diagnostic]:
    """Check a parsed note against the declared types.

    Returns warnings (never raises): the note's type is unknown; a required field is
    missing or empty; a field's value does not fit its declared kind. A note without a
    ``type`` is not checked. A ``type`` that is a wikilink or a list
    (``type: ["[[Authors]]"]``) names its types as :func:`type_names` reads them; the
    note is checked against each declared one, and is unknown when none is declared.
    """
    from cairn.formats.markdown.fields import type_names

    key = next((k for k in doc.metadata if k.lower() == "type"), None)
    names = type_names(doc.metadata[key]) if key is not None else ()
    names = names or ((doc.type,) if doc.type else ())
    if not names:
        return []
    declared = [t for t in (types.get(n) for n in names) if t is not None]
    if not declared:
        if types.warn_unknown and types.types:
            known = ", ".join(sorted(types.types)) or "none"
            shown = ", ".join(repr(n) for n in names)
            return [Diagnostic(doc.path, f"unknown note type {shown} (declared: {known})", None)]
        return []
    out: list[Diagnostic] = []
    seen: set[str] = set()
    for note_type in declared:
        if note_type.name not in seen:  # [Authors, authors]: one type, checked once
            seen.add(note_type.name)
            out.extend(_check_fields(doc, note_type))
    return out


def _check_fields(doc: Document, note_type: NoteType) -> list[Diagnostic]:
    """The required-field and value-kind warnings of ``doc`` as a ``note_type``."""
    meta = doc.metadata
    lower = {k.lower(): k for k in meta}
    out: list[Diagnostic] = []
    for key in note_type.required:
        real = lower.get(key.lower())
        if real is None or _empty(meta[real]):
            out.append(
                Diagnostic(
                    doc.path,
                    f"type {note_type.name!r} requires field {key!r}, which is "
                    + ("missing" if real is None else "empty"),
                    None,
                )
            )
    for key, kind in note_type.fields.items():
        real = lower.get(key.lower())
        if real is None or meta[real] is None:
            continue
        expected = _check(kind, meta[real])
        if expected is not None:
            out.append(
                Diagnostic(
                    doc.path,
                    f"field {key!r} of type {note_type.name!r} should be {expected}, "
                    f"got {meta[real]!r}",
                    None,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class RootTypes:
    """The note types of every source root, loaded once per run and handed on.

    Attributes:
        by_root: root id → the registry that governs its notes (its own ``types.yaml``,
            else the one beside ``cairn.toml``); roots with neither are absent.
        sources: root id → the file that registry was read from.
        merged: every type of every registry (the first root, by path, wins a name),
            for index-wide uses: per-type chunk profiles, retriever weights, graph
            rules; ``None`` when no registry exists.
        problems: ``types.yaml`` files that could not be read, as warnings (a broken
            file never stops indexing; ``cairn validate`` reports it as an error).
    """

    by_root: Mapping[str, TypeRegistry] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    merged: TypeRegistry | None = None
    problems: tuple[Diagnostic, ...] = ()


def load_root_types(
    roots: Sequence[tuple[str, Path]], fallback: Path | None = None
) -> RootTypes:
    """Read each root's ``types.yaml`` (``roots`` are ``(root id, folder)`` pairs), with
    ``fallback`` (a ``types.yaml`` beside ``cairn.toml``) for roots without one. Each
    file is read once. Never raises: unreadable files become :attr:`RootTypes.problems`.
    """
    cache: dict[Path, TypeRegistry | None] = {}
    problems: list[Diagnostic] = []

    def read(path: Path) -> TypeRegistry | None:
        if path not in cache:
            cache[path] = None
            if path.is_file():
                try:
                    cache[path] = load_types(path)
                except ConfigError as exc:
                    problems.append(Diagnostic(str(path), str(exc)))
        return cache[path]

    by_root: dict[str, TypeRegistry] = {}
    sources: dict[str, str] = {}
    for root_id, folder in roots:
        for cand in (folder / "types.yaml", fallback):
            reg = read(cand) if cand is not None else None
            if reg is not None:
                by_root[root_id] = reg
                sources[root_id] = str(cand)
                break
    merged: dict[str, NoteType] = {}
    first: TypeRegistry | None = None
    for reg in by_root.values():
        first = first or reg
        for name, t in reg.types.items():
            merged.setdefault(name, t)
    registry = (
        TypeRegistry(merged, first.warn_unknown, first.default_chunk_profile) if first else None
    )
    return RootTypes(by_root, sources, registry, tuple(problems))
