"""LLM enrichment of conversations: per conversation a summary, 3–10
atomic insights citing their messages and tags from the user's vocabulary; typed
relations between similar conversations. Optional: with no ``[enrich]`` provider
nothing happens.

Modules: :mod:`.settings` (``[enrich]``), :mod:`.providers` (OpenAI-compatible and
Anthropic over HTTP), :mod:`.prompts` (prompts, schemas, the conversation text),
:mod:`.schema` (JSON parsing and validation), :mod:`.pipeline` (cache, retries,
checkpoints), :mod:`.tags` (the controlled vocabulary). The composition with the index
is :mod:`cairn.enrich.service`.
"""

from __future__ import annotations

from cairn.enrich.pipeline import Estimate, Pipeline, RunStats, Task
from cairn.enrich.prompts import PROMPT_VERSION, Message, conversation_text
from cairn.enrich.providers import (
    AnthropicProvider,
    Completion,
    OpenAIProvider,
    Provider,
    RequestFailed,
    make_provider,
)
from cairn.enrich.schema import BadReply, parse_json, validate
from cairn.enrich.settings import EnrichSettings

__all__ = [
    "PROMPT_VERSION",
    "AnthropicProvider",
    "BadReply",
    "Completion",
    "EnrichSettings",
    "Estimate",
    "Message",
    "OpenAIProvider",
    "Pipeline",
    "Provider",
    "RequestFailed",
    "RunStats",
    "Task",
    "conversation_text",
    "make_provider",
    "parse_json",
    "validate",
]
