"""The result types of :class:`cairn.app.Cairn`'s services, for the doors (interfaces
import only ``app`` and the vocabulary, never a feature package)."""

from __future__ import annotations

from cairn.enrich.service import EnrichReport
from cairn.enrich.show import EnrichedConversation
from cairn.redact.service import ScanReport, mask_text, scan_paths

__all__ = ["EnrichReport", "EnrichedConversation", "ScanReport", "mask_text", "scan_paths"]
