"""A fingerprint of everything that changes what redaction makes of a document: the
``[redact]`` settings, every detector's kind, pattern and filter, and the code of the
detectors, validators and masking. An index run that skips the redaction of a document
it has seen before (an unchanged conversation of a chat export) may do so only while
this fingerprint is the same: an upgrade that adds or sharpens a detector changes it,
and every document is redacted again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

VERSION = 1
"""Raised by hand when redaction's output changes in a way the code below cannot see."""

_MODULES = ("detectors.py", "validators.py", "mask.py")


def redaction_fingerprint(settings: Mapping[str, object]) -> str:
    """A hex hash of ``settings`` (the ``[redact]`` table) and of the detectors and
    masking code; the same for the same settings and the same cairn.

    Never raises: a module whose source cannot be read (a frozen install) counts by
    its name and the detectors' patterns alone.
    """
    from cairn.redact.detectors import DETECTORS

    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([VERSION, settings], sort_keys=True, default=repr).encode())
    for d in DETECTORS:
        valid = getattr(d.valid, "__qualname__", "") if d.valid is not None else ""
        h.update(repr((d.kind, d.category, d.pattern.pattern, d.pattern.flags, d.group,
                       valid, d.hints)).encode("utf-8", "surrogatepass"))
    here = Path(__file__).parent
    for name in _MODULES:
        h.update(name.encode())
        try:
            h.update((here / name).read_bytes())
        except OSError:
            continue
    return h.hexdigest()
