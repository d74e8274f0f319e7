"""The deterministic id of a graph edge (shared by the graph builders and the store,
which derives structural edges from units instead of storing them)."""

from __future__ import annotations

import hashlib
import uuid

NAMESPACE = uuid.UUID("6f2d9a4e-6c1b-5b8e-9a57-2f0c6c1e7b31")
_NS_BYTES = NAMESPACE.bytes


def edge_id(source: str, target: str, relation: str, origin: str) -> str:
    """The deterministic id of an edge: UUIDv5 over the four fields, ``\\x1f``-joined
    (``str(uuid.uuid5(NAMESPACE, name))``, computed without building a ``UUID``)."""
    name = "\x1f".join((source, target, relation, origin)).encode("utf-8")
    b = bytearray(hashlib.sha1(_NS_BYTES + name).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
