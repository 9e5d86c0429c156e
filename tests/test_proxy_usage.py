"""The provider's own count, read from its answers as the fake providers (which speak the
APIs as the official SDKs parse them) send them; and what the proxy plans with it."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from condense.server.budget import SLACK_PER_MESSAGE, plan_budget
from condense.server.usage import UsageTap, prompt_tokens
from condense.server.windows import LearnedWindows
from condense.testing import wire
from condense.tokens.families import TOKENIZERS

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}


def _tap(chunks: list[bytes]) -> UsageTap:
    tap = UsageTap()
    for chunk in chunks:
        tap.feed(chunk)
    return tap


@pytest.mark.parametrize("api", ["chat", "anthropic", "responses", "count_tokens"])
def test_a_plain_answer_states_the_prompt_tokens(api: str) -> None:
    answer = json.dumps(wire.answer(api, BODY, "hello there", "stop", (1234, 7))).encode()
    tap = _tap([answer[:10], answer[10:]])
    assert tap.prompt_tokens(content_type="application/json", content_encoding=None) == 1234
    zipped = _tap([gzip.compress(answer)])
    assert zipped.prompt_tokens(content_type="application/json", content_encoding="gzip") == 1234


@pytest.mark.parametrize("api", ["chat", "anthropic", "responses"])
def test_a_stream_states_the_prompt_tokens(api: str) -> None:
    body = {**BODY, "stream_options": {"include_usage": True}}
    events = wire.events(api, body, "a b c d e f", "stop", (4321, 6))
    tap = _tap(events)
    assert tap.prompt_tokens(content_type="text/event-stream", content_encoding=None) == 4321


def test_a_chat_stream_without_usage_teaches_nothing() -> None:
    tap = _tap(wire.events("chat", BODY, "a b c", "stop", (99, 3)))
    assert tap.prompt_tokens(content_type="text/event-stream", content_encoding=None) is None


def test_anthropic_counts_cached_tokens_too() -> None:
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 17_842,
        "cache_creation_input_tokens": 8_216,
    }
    assert prompt_tokens({"type": "message", "usage": usage}) == 3 + 17_842 + 8_216
    start = {"type": "message_start", "message": {"usage": usage}}
    assert prompt_tokens(start) == 3 + 17_842 + 8_216
    assert prompt_tokens({"type": "message_delta", "usage": {"output_tokens": 5}}) is None


def test_a_huge_answer_keeps_its_head_and_tail() -> None:
    events: list[bytes] = wire.events("anthropic", BODY, "x " * 10, "stop", (777, 1))
    filler = b'event: ping\ndata: {"type": "ping"}\n\n' * 60_000  # ~2 MB between them
    tap = _tap([events[0], filler, *events[1:]])
    assert tap.prompt_tokens(content_type="text/event-stream", content_encoding=None) == 777
    assert (
        _tap([b"not json"]).prompt_tokens(content_type="application/json", content_encoding=None)
        is None
    )


def test_learned_ratio_is_the_highest_recent_one_and_windows_only_shrink_on_ceilings() -> None:
    learned = LearnedWindows()
    learned.observe("u", "m", theirs=1100, ours=1000)
    learned.observe("u", "m", theirs=1300, ours=1000)
    learned.observe("u", "m", theirs=1000, ours=1000)
    known = learned.get("u", "m")
    assert known is not None and known.ratio == pytest.approx(1.3) and known.window is None
    learned.learn("u", "m", ceiling=9000)
    learned.learn("u", "m", ceiling=12000)
    assert learned.get("u", "m").window == 9000  # type: ignore[union-attr]
    learned.learn("u", "m", window=16000)  # a window a provider stated wins
    assert learned.get("u", "m").window == 16000  # type: ignore[union-attr]
    for _ in range(10):
        learned.observe("u", "m", theirs=1000, ours=1000)
    assert learned.get("u", "m").ratio == 1.0  # type: ignore[union-attr]


def _budget(**changes: Any) -> Any:
    settings: dict[str, Any] = {
        "parts": {},
        "provider": "openai",
        "model": "gpt-4o",
        "encoding": "o200k_base",
        "media": "openai",
        "window": 10_000,
        "output": 1_000,
        "learned": None,
        "margin": 0.05,
    }
    settings.update(changes)
    return plan_budget(**settings)


def test_the_room_is_the_window_less_output_margin_ratio_parts_and_slack() -> None:
    room = _budget().room(100)
    assert room.messages == int(9_000 * 0.95) - 100 * SLACK_PER_MESSAGE
    claude = _budget(model="claude-opus-4-6", provider="anthropic", media="anthropic").room(100)
    assert claude.ratio == TOKENIZERS["claude"].ratio
    assert claude.messages == int(int(9_000 * 0.95) / 1.3) - 100 * SLACK_PER_MESSAGE
    responses = _budget(provider="responses").room(100)  # Responses does not count output
    assert responses.messages == int(10_000 * 0.95) - 100 * SLACK_PER_MESSAGE
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    assert _budget(parts={"tools": tools}).room(100).fixed > 0
    assert _budget(window=None).room(100) is None


def test_what_was_learned_replaces_the_family_ratio() -> None:
    learned = LearnedWindows()
    learned.observe("u", "claude-opus-4-6", theirs=1050, ours=1000)
    known = learned.get("u", "claude-opus-4-6")
    budget = _budget(model="claude-opus-4-6", provider="anthropic", learned=known)
    assert budget.ratio == pytest.approx(1.05)
    assert _budget(model=None).ratio == _budget(model="house-model").ratio == 1.0
