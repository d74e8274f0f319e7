"""A dated two-person chat session in the linear export layout (``{id, name,
created_at, messages[{id, role, name, content}]}``), as the conversation-ranking tests
write them: Caroline speaks as ``user``, anyone else as ``assistant``."""

from __future__ import annotations

from typing import Any


def chat_session(sid: str, when: str, turns: list[tuple[str, str]],
                 named: bool = True) -> dict[str, Any]:
    """Session ``sid`` started at ``when`` (ISO 8601) with ``turns`` as ``(speaker,
    text)``; ``named=False`` leaves the speakers' names out (roles only)."""
    return {
        "id": sid,
        "name": "Caroline and Melanie",
        "created_at": when,
        "messages": [
            {"id": f"{sid}:{i}", "role": "user" if who == "Caroline" else "assistant",
             **({"name": who} if named else {}), "content": text}
            for i, (who, text) in enumerate(turns, 1)
        ],
    }
