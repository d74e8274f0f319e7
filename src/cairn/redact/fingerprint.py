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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cairn.config import Config

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


def index_config_hash(config: Config) -> str:
    """The configuration hash an index run records and compares with the last run's:
    :meth:`cairn.config.Config.fingerprint` (the settings that change parsing) and
    :func:`redaction_fingerprint` of its ``[redact]`` table. A new hash re-indexes every
    file once, unchanged bytes or not, so an upgrade that adds or sharpens a detector
    reaches the secrets already in the index.

    Never raises (see :func:`redaction_fingerprint`).
    """
    redaction = redaction_fingerprint(dict(config.redact))
    data = f"{config.fingerprint()}\x00{redaction}".encode()
    return hashlib.sha256(data).hexdigest()[:16]
