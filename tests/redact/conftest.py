"""The redaction tests import their helpers (:mod:`_chat_leaks`) and the enrichment
tests' replaying server and vault from beside them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "enrich"))
