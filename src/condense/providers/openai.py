"""OpenAI Chat Completions, and the OpenAI-compatible servers that follow its rules.

Ids may repeat across turns (τ-bench's real gpt-4o runs reuse them) and the
``developer`` role is understood. ``reasoning_content`` is accepted on assistant
messages: OpenAI-compatible servers replay it (DeepSeek and Kimi have their own modules
with the stricter rule that tool-call turns must carry it).
"""

from __future__ import annotations

from condense.providers.base import (
    OPENAI_PAIRING_ERRORS,
    OPENAI_REFUSALS,
    REASONING_CONTENT,
    Profile,
    Provider,
    keys_plus,
)

PROFILE = Profile(
    name="openai",
    description="OpenAI Chat Completions and OpenAI-compatible servers",
    first_user=False,
    alternate=False,
    system_only_at_start=False,
    developer_role=True,
    no_empty_text=False,
    id_pattern=None,
    id_max_length=40,
    unique_ids=False,
    allowed_keys=keys_plus({"assistant": frozenset({REASONING_CONTENT})}),
    errors=OPENAI_PAIRING_ERRORS,
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=OPENAI_REFUSALS,
    hosts=("api.openai.com",),
)
