"""The one serialiser of cairn's typed results: dataclasses → JSON-ready data.

Every interface (the CLI's ``--json``, later HTTP and MCP) turns what a
:class:`cairn.app.Cairn` method returns into JSON here, so the field names and shapes
are the same everywhere and are what docs/reference/json.md documents.

Rules: a dataclass with a ``to_mapping()`` method becomes what that method returns
(serialised in turn: a result whose JSON names differ from its attributes, or whose
keys depend on its kind); any other dataclass becomes an object with its fields in
declaration order (the views of ``cairn show`` put their ``kind`` first); tuples and
lists become arrays; mappings become objects; everything else (str, int, float, bool,
None) is kept.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from cairn import model

_KIND_FIRST = frozenset({"DocumentView", "UnitView", "FileView"})
"""The views whose ``kind`` comes first (by name: the views are loaded only when one is
serialised, not by every process that prints JSON)."""


def _kind_first() -> tuple[type, ...]:
    return (model.DocumentView, model.UnitView, model.FileView)


_SCALARS = (str, int, float, bool, type(None))
_MAPPED = ("to_mapping()",)
"""The field names recorded for a dataclass that serialises itself (``to_mapping``)."""
_FIELDS: dict[type, tuple[str, ...] | None] = {}
"""Per type: its dataclass field names in declaration order, :data:`_MAPPED`, or
``None`` (not a dataclass); looked up once per type, not once per value (a search page
holds thousands of values)."""


def _field_names(cls: type) -> tuple[str, ...] | None:
    names = _FIELDS.get(cls, ())
    if names == ():
        if not dataclasses.is_dataclass(cls):
            names = None
        elif callable(getattr(cls, "to_mapping", None)):
            names = _MAPPED
        else:
            names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELDS[cls] = names
    return names


def to_data(value: Any) -> Any:
    """``value`` as plain data: dicts, lists, str, int, float, bool and None only.

    Args:
        value: a model value or view (any frozen dataclass of :mod:`cairn.model`), a
            result of a ``Cairn`` method, or plain data holding them.

    Returns:
        The same content built from JSON types; never raises for model values.
    """
    cls = type(value)
    if cls in _SCALARS:
        return value
    names = _field_names(cls)
    if names is _MAPPED:
        return to_data(value.to_mapping())
    if names is not None:
        out = {name: to_data(getattr(value, name)) for name in names}
        if cls.__name__ in _KIND_FIRST and isinstance(value, _kind_first()):
            out = {"kind": out.pop("kind"), **out}
        return out
    if isinstance(value, Mapping):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    return value


def to_json(value: Any, *, indent: int | None = 2, ascii_only: bool = False) -> str:
    """``value`` (see :func:`to_data`) as one JSON document: UTF-8 text, or with
    ``ascii_only`` every non-ASCII character escaped (``\\u2026``), for a stream that
    cannot encode it."""
    return json.dumps(to_data(value), ensure_ascii=ascii_only, indent=indent, default=str)
