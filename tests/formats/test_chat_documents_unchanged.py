"""The documents parsed from the corpus's chat exports stay exactly what they were.

Each export under ``shared/corpus/chats`` is parsed and everything the chat parsers
decide (document title, metadata, times, warnings; every unit's kind, title, outline,
body, parent, ids, language, links, relative dates and extra fields such as the message
kind and keywords) is hashed. The expected digests were taken with the parser as it was
before its per-message work was made cheaper; a change to any parsed value changes a
digest. Model fields the chat parsers never set are left out, so a new field elsewhere
does not break this test.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from cairn.formats.chats import parse_file
from cairn.model import Document, Failure, Unit

CHATS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "chats"

pytestmark = pytest.mark.corpus

EXPECTED = {
    "chatgpt-exporter/tests/fixtures/image-generation.json":
        "c6cfcc5e482092c8f4f5f9bd3e5a00ba20e9ff4f892c5d316650c6fba4517878",
    "chatgpt-exporter/tests/fixtures/thinking-multi-preamble.json":
        "400a890154d00b324d1a26bdcfa8b4c50678a1cf3d6ffe9e242299aa3f3f7f46",
    "chatgpt-exporter/tests/fixtures/thinking-single-preamble.json":
        "f0dff7bda8b6cd8c2e101a0e4de65ccdc280757674c44339e53d75baf7f6cb15",
    "chatgpt-exporter/tests/fixtures/thinking-summaries.json":
        "dd93894ae715260caa801b576794e043cf773d0267722bd9a7206172c940c2c1",
    "claude-to-sqlite/tests/artifacts.json":
        "92f2c7e1ec52fd3939c84aa6551da8687caf6f8857a0924028343f1890d92f30",
    "claude-to-sqlite/tests/example.json":
        "5b6fc41ed36ec3872e24649ddd9a7d681ea32109f000bf64864978295ac8b6bf",
    "librechat/api/server/utils/import/__data__/chatbotui-export.json":
        "4c6ef9bfdb6c45f038683bd6837807a266060ee1e5ac5adb03a7dab9589b6b70",
    "librechat/api/server/utils/import/__data__/chatgpt-citations.json":
        "11031e4d14b0538a9dc0fa3b8eeb61e187a026096134c9a854107437fe466956",
    "librechat/api/server/utils/import/__data__/chatgpt-export.json":
        "7dd23c4c26c0d30ad21e1a2b5c1b9d6561b186120769eff152b1505a6dd270b8",
    "librechat/api/server/utils/import/__data__/chatgpt-modern-export.json":
        "acd2462f0e5213ed95b7215b4eaca33a05d2fa8425ca9b71695dbd9e447297d5",
    "librechat/api/server/utils/import/__data__/chatgpt-tree.json":
        "a34db816008593debb3c44ca5ee6a48b17a2b089444e27e6c718b3549a785409",
    "librechat/api/server/utils/import/__data__/librechat-tree.json":
        "af7ce30aaed9d7897577c4e05aad558716d3cddb198f0197e19fcfb0cafb524f",
    "librechat/api/server/utils/import/__data__/openwebui-export.json":
        "39461fb9128c60114abcba4c557bfc94a49327608b92e856f028db354e043027",
    "polylogue/polylogue/schemas/providers/chatgpt/representatives/corpus-manifest.json":
        "b59dcaaf28ee60bc57fe62900b80026512b030338c70362164969e02c476d985",
    "polylogue/polylogue/schemas/providers/chatgpt/representatives/sample-00.json":
        "8ef8ab6415f9871b052c480a72aca66a98e5636407972afb3c789ebc2a42729c",
    "polylogue/polylogue/schemas/providers/chatgpt/representatives/sample-01.json":
        "123e22dbaa1ac6ab5045fd1cb307bfa4bf293d508d8e5f24e46cba3a6aed47d8",
    "polylogue/polylogue/schemas/providers/claude-ai/representatives/corpus-manifest.json":
        "98a8017805f34b39760246d968e7ded9eead5b526bec2f7604edafe33fd5454f",
    "polylogue/polylogue/schemas/providers/claude-ai/representatives/sample-00.json":
        "02406535e105da2cda994fea6419e4764e194eb53f8eeb1230dc120c18d3e36f",
    "polylogue/polylogue/schemas/providers/claude-ai/representatives/sample-01.json":
        "60827c1eff069c43553508379f89f5b9054bb70bbd469b503d01b4ce4e597142",
    "polylogue/tests/data/gemini_chunked_prompt/branching_session.json":
        "77004abb74e2ce2bf6d9d39445e6c63a563b99c1f72d2a807d045f92866bc808",
    "polylogue/tests/data/gemini_chunked_prompt/code_execution_prompt.json":
        "625377a5460af8d16a9483c134b27b0df3ad68c7931f57ee968d04f4bf7d2a01",
    "polylogue/tests/data/gemini_chunked_prompt/code_execution_session.json":
        "f1b5699dac18fa9efe264aa3a7d1f843907e6da36ef91283a9b58795b920e3d4",
    "polylogue/tests/data/gemini_chunked_prompt/multi_turn_prompt.json":
        "0ea664ceb0bcc11458e9becbee7dfb63f442e53d20c891c9bd4d534dfdc27d3b",
    "polylogue/tests/data/gemini_chunked_prompt/multimodal_session.json":
        "bbb753e6290ce5ad9be74304368e7366f8d0ebffe3424a3ecef32fb8de8db542",
    "polylogue/tests/data/gemini_chunked_prompt/text_only_prompt.json":
        "f5d155a44ae98d11f90375be2cf7bd231a77f2a97fee221503d84938e05b1d05",
    "polylogue/tests/data/gemini_chunked_prompt/text_only_session.json":
        "270135941682ea89c6597cc9c4b025e3c7594758f2138dfa8c49988bed05c0f1",
}


def _unit(u: Unit) -> list[Any]:
    return [
        u.ordinal, u.level, u.kind, u.title, list(u.outline_path), u.body, u.parent,
        u.declared_id, u.language,
        [[lk.kind, lk.target, lk.alias, lk.anchor, lk.line] for lk in u.links],
        [[t.raw, t.active, t.start, t.end, t.role] for t in u.timestamps],
        u.extra,
    ]  # fmt: skip


def _item(item: Document | Failure) -> list[Any]:
    if isinstance(item, Failure):
        return ["failure", item.path, item.reason]
    return [
        item.path, item.format, item.title, item.metadata, item.created, item.modified,
        item.declared_id, item.key, [w.message for w in item.warnings],
        [_unit(u) for u in item.units],
    ]  # fmt: skip


def digest(path: Path) -> str:
    """SHA-256 of the canonical JSON of everything parsed from ``path``."""
    h = hashlib.sha256()
    for item in parse_file(path, path.relative_to(CHATS).as_posix()):
        h.update(json.dumps(_item(item), sort_keys=True, default=str).encode() + b"\n")
    return h.hexdigest()


def _exports() -> list[Path]:
    return sorted(CHATS.rglob("*.json")) if CHATS.is_dir() else []


def test_every_chat_export_of_the_corpus_has_an_expected_digest() -> None:
    if not CHATS.is_dir():
        pytest.skip("shared corpus absent")
    assert sorted(p.relative_to(CHATS).as_posix() for p in _exports()) == sorted(EXPECTED)


@pytest.mark.parametrize("path", _exports(), ids=lambda p: p.relative_to(CHATS).as_posix())
def test_chat_export_parses_to_the_same_documents(path: Path) -> None:
    assert digest(path) == EXPECTED[path.relative_to(CHATS).as_posix()]
