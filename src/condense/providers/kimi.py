"""Moonshot / Kimi K2.x chat completions.

OpenAI's rules with Kimi's wordings, plus replay: in thinking mode every assistant
message with tool calls carries its ``reasoning_content``.
"""

from __future__ import annotations

import dataclasses

from condense.providers import openai
from condense.providers.base import Provider

PROFILE = dataclasses.replace(
    openai.PROFILE,
    name="kimi",
    description="Moonshot / Kimi chat completions (thinking mode replays reasoning_content)",
    developer_role=False,
    reasoning_on_tool_calls=True,
    errors={
        **openai.PROFILE.errors,
        "unanswered_tool_call": "Invalid request: an assistant message with 'tool_calls' must "
        "be followed by tool messages responding to each 'tool_call_id'. The following "
        "tool_call_ids did not have response messages: {id}",
        "orphan_tool_result": "Invalid request: tool_call_id {id} is not found",
        "tool_result_misplaced": "Invalid request: tool_call_id {id} is not found",
        "missing_tool_call_id": "Invalid request: tool_call_id  is not found",
        "missing_reasoning_content": "thinking is enabled but reasoning_content is missing in "
        "assistant tool call message at index {index}",
    },
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=openai.REFUSALS,
    hosts=("api.moonshot.ai", "api.moonshot.cn"),
)
