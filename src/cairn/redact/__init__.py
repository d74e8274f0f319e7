"""Redaction of secrets and personal data: detectors (:mod:`.detectors`),
masking with stable placeholders and the ``on_ingest`` modes (:mod:`.mask`), scanning
text for a report that never prints a value in full (:mod:`.scan`), and the service
over an index (:mod:`.service`: the ingest hook, what doors show, ``cairn redact scan``).

The detectors, mask and scan modules import only the vocabulary (``model``, ``errors``,
``text``); each name here loads its module on first use, so a door that never masks
(``cairn show`` of a note kept as written) does not compile the detectors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.redact.detectors import CATEGORY, DETECTORS, KINDS, Detector, Finding, find
    from cairn.redact.mask import MODES, Masker, Mode, Redacted, mask_unit, redact_document
    from cairn.redact.scan import ScanFinding, preview, scan_text

_WHERE = {
    **dict.fromkeys(("CATEGORY", "DETECTORS", "KINDS", "Detector", "Finding", "find"),
                    "detectors"),
    **dict.fromkeys(("MODES", "Masker", "Mode", "Redacted", "mask_unit", "redact_document"),
                    "mask"),
    **dict.fromkeys(("ScanFinding", "preview", "scan_text"), "scan"),
}

__all__ = [
    "CATEGORY",
    "DETECTORS",
    "KINDS",
    "MODES",
    "Detector",
    "Finding",
    "Masker",
    "Mode",
    "Redacted",
    "ScanFinding",
    "find",
    "mask_unit",
    "preview",
    "redact_document",
    "scan_text",
]


def __getattr__(name: str) -> Any:
    """Load the module holding ``name`` on first use.

    Raises:
        AttributeError: no such name.
    """
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'cairn.redact' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cairn.redact.{where}"), name)
    globals()[name] = value
    return value
