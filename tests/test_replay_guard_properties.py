"""The library and the proxy's guard read replay state alike (issue 20): whatever
``compress`` returns for a reasoning history passes the guard the proxy puts in front of
every compression (``condense.server.replay``), item ids included — so the guard never
turns away a compression the library made, and what it turns away is an edit."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense import Conversation
from condense.compress import compress
from condense.message import replay_state
from condense.server.replay import compression_keeps_replay
from condense.tokens import count_tokens
from profiles import examples
from reasoning_strategies import gemini_histories, responses_inputs, thinking_chat_histories

FRACTIONS = st.floats(min_value=0.08, max_value=0.95)
PROPERTY = settings(
    max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _guarded(messages: list[dict[str, Any]], fraction: float, **options: Any) -> None:
    budget = max(200, int(count_tokens(messages) * fraction))
    result = compress(messages, budget=budget, **options)
    assert not result.report.replay_removed  # none of these providers binds thinking
    assert compression_keeps_replay(messages, result.messages)
    assert replay_state(result.messages) <= replay_state(messages)


@PROPERTY
@given(items=responses_inputs(), fraction=FRACTIONS)
def test_responses_compressions_pass_the_guard(items: list[Any], fraction: float) -> None:
    messages = Conversation.read(items).messages
    assert any("item_id" in m or m.get("tool_calls") for m in messages)
    _guarded(messages, fraction)


@PROPERTY
@given(messages=gemini_histories(), fraction=FRACTIONS)
def test_gemini_compressions_pass_the_guard(messages: list[Any], fraction: float) -> None:
    _guarded(messages, fraction, provider="gemini")


@PROPERTY
@given(messages=thinking_chat_histories(), fraction=FRACTIONS)
def test_reasoning_content_compressions_pass_the_guard(
    messages: list[Any], fraction: float
) -> None:
    _guarded(messages, fraction, model="kimi-k2-thinking")
