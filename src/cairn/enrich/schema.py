"""Model replies as JSON, checked against a JSON Schema.

:func:`parse_json` finds the JSON object in a reply (bare, or in a Markdown code fence,
or after some words — small models add them); :func:`validate` checks a value against
the subset of JSON Schema (draft 2020-12) the enrichment schemas use: ``type``
(``object``, ``array``, ``string``, ``number``, ``integer``, ``boolean``), ``enum``,
``required``, ``properties``, ``items``, ``minItems``/``maxItems``,
``minLength``/``maxLength``, ``minimum``/``maximum``. No dependency.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


class BadReply(ValueError):
    """A reply that is not JSON or breaks its schema; the message says where."""


def parse_json(text: str) -> Any:
    """The JSON value of a reply: the whole text, else a fenced block, else the text
    from its first ``{`` to its last ``}``.

    Raises:
        BadReply: no JSON object can be read.
    """
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    first_error = "empty reply"
    for c in candidates:
        if not c:
            continue
        try:
            return json.loads(c)
        except ValueError as exc:
            first_error = first_error if first_error != "empty reply" else f"{exc}"
    raise BadReply(f"not JSON: {first_error}")


_TYPES: Mapping[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
}


def validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> None:
    """Check ``value`` against ``schema``.

    Raises:
        BadReply: the first violation, with its JSON path (``$.insights[2].type: …``).
    """
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _TYPES[kind]) and not (
            kind in ("number", "integer") and isinstance(value, bool)
        )
        if not ok:
            raise BadReply(f"{path}: expected {kind}, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise BadReply(f"{path}: {value!r} is not one of {', '.join(map(str, schema['enum']))}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise BadReply(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise BadReply(f"{path}: longer than {schema['maxLength']} characters")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise BadReply(f"{path}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise BadReply(f"{path}: {value} is above {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise BadReply(f"{path}: {len(value)} items, at least {schema['minItems']} wanted")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise BadReply(f"{path}: {len(value)} items, at most {schema['maxItems']} wanted")
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                raise BadReply(f"{path}: {key!r} is missing")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                validate(value[key], sub, f"{path}.{key}")
