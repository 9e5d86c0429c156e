"""The library and the proxy's guard read replay state alike (issue 20): whatever
``compress`` returns for a reasoning history edits and adds no piece of replay state as
the guard reads it (``condense.message.replay_state``, item ids included), so what the
guard turns away is never a compression's edit. (The guard's policy is stricter than the
library's in one way: it also wants the latest assistant message's state kept, which
graded protection may summarize away under a budget too small for it.)"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense import Conversation
from condense.compress import compress
from condense.message import replay_state
from condense.server.replay import compression_keeps_replay, replay_only_dropped
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
    assert replay_only_dropped(messages, result.messages)  # nothing edited or added
    assert replay_state(result.messages) <= replay_state(messages)
    kept_latest = [m for m in result.messages if m is _latest_assistant(messages)]
    if kept_latest:  # the latest reply kept: the guard's compression rule holds too
        assert compression_keeps_replay(messages, result.messages)


def _latest_assistant(messages: list[dict[str, Any]]) -> Any:
    return next((m for m in reversed(messages) if m.get("role") == "assistant"), None)


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
