"""Redaction of secrets and personal data: detectors (:mod:`.detectors`),
masking with stable placeholders and the ``on_ingest`` modes (:mod:`.mask`), and
scanning text for a report that never prints a value in full (:mod:`.scan`).

This layer imports only the vocabulary (``model``, ``errors``, ``text``).
"""

from cairn.redact.detectors import CATEGORY, DETECTORS, KINDS, Detector, Finding, find
from cairn.redact.mask import MODES, Masker, Mode, Redacted, mask_unit, redact_document
from cairn.redact.scan import ScanFinding, preview, scan_text

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
