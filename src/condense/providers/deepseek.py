"""DeepSeek (V3.2+ / V4 thinking mode) chat completions.

OpenAI's rules, plus replay: once the history carries ``reasoning_content``, every
assistant message with tool calls must carry its ``reasoning_content`` in every later
request (merging two assistant messages must not drop it).
"""

from __future__ import annotations

import dataclasses

from condense.providers import openai
from condense.providers.base import Provider

PROFILE = dataclasses.replace(
    openai.PROFILE,
    name="deepseek",
    description="DeepSeek chat completions (thinking mode replays reasoning_content)",
    developer_role=False,
    reasoning_on_tool_calls=True,
    errors={
        **openai.PROFILE.errors,
        "orphan_tool_result": "Messages with role 'tool' must be a response to a preceding "
        "message with 'tool_calls'",
        "tool_result_misplaced": "Messages with role 'tool' must be a response to a "
        "preceding message with 'tool_calls'",
        "missing_reasoning_content": "Missing `reasoning_content` field in the assistant "
        "message at message index {index}. For more information, please refer to "
        "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    },
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=openai.REFUSALS,
    hosts=("api.deepseek.com",),
)
