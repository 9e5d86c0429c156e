"""The providers package: one module per provider, ``strict`` derived from them, and
``provider="auto"`` choosing by format, model, upstream and replay state."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense import repair, validate
from condense.exceptions import UnknownNameError
from condense.providers import PROFILES, PROVIDERS, choose_provider, get_provider, strict
from condense.providers.base import REPLAY_KEYS
from condense.providers.detect import provider_for_model
from profiles import examples
from strategies import histories

STRUCTURAL = (
    "first_user",
    "alternate",
    "system_only_at_start",
    "no_empty_text",
    "unique_ids",
    "results_in_call_order",
)


def test_every_provider_has_a_profile_refusals_and_a_name() -> None:
    assert set(PROVIDERS) == {
        "openai",
        "responses",
        "anthropic",
        "gemini",
        "gemini-openai",
        "mistral",
        "deepseek",
        "kimi",
        "minimax",
        "local",
        "strict",
    }
    for name, provider in PROVIDERS.items():
        assert provider.name == name == provider.profile.name
        assert provider.refusals.overflow


def test_strict_enforces_every_structural_rule_of_its_sources() -> None:
    profile = PROFILES["strict"]
    for rule in STRUCTURAL:
        if any(getattr(source, rule) for source in strict.STRUCTURAL_SOURCES):
            assert getattr(profile, rule), rule
    # derived, not written by hand: a new rule in a source shows up in strict
    stricter = dataclasses.replace(strict.STRUCTURAL_SOURCES[0], user_after_tool=False)
    assert strict.derive([stricter]).name == "strict"
    for role in ("assistant", "tool"):
        for source in strict.STRUCTURAL_SOURCES:
            assert source.allowed_keys[role] <= profile.allowed_keys[role]


def test_strict_accepts_developer_and_replay_state() -> None:
    history = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "reasoning_content": "greet"},
    ]
    assert validate(history, provider="strict") == []


@pytest.mark.parametrize(
    ("model", "chat", "expected"),
    [
        ("claude-sonnet-4-5-20250929", True, "anthropic"),
        ("anthropic/claude-3.5-sonnet", True, "anthropic"),
        ("gemini-3-pro-preview", True, "gemini-openai"),
        ("gemini-2.5-flash", False, "gemini"),
        ("deepseek-reasoner", True, "deepseek"),
        ("openrouter/deepseek/deepseek-chat-v3.1", True, "deepseek"),
        ("kimi-k2-0905-preview", True, "kimi"),
        ("moonshot-v1-8k", True, "kimi"),
        ("mistral-large-latest", True, "mistral"),
        ("devstral-small-2507", True, "mistral"),
        ("MiniMax-M2", True, "minimax"),
        ("gpt-4o", True, "openai"),
        ("o3-mini", True, "openai"),
        ("llama-3.1-8b-instruct", True, None),
    ],
)
def test_model_names(model: str, chat: bool, expected: str | None) -> None:
    assert provider_for_model(model, chat=chat) == expected


def test_signals_in_order() -> None:
    thinking = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "thinking_blocks": [{"type": "thinking"}]},
    ]
    assert choose_provider(messages=thinking).name == "anthropic"
    # the format and the model outrank what the history carries
    assert choose_provider(messages=thinking, format="responses").name == "responses"
    assert choose_provider(messages=thinking, model="gpt-4o").name == "openai"
    assert choose_provider(upstream="https://api.mistral.ai/v1").name == "mistral"
    assert choose_provider(upstream="http://127.0.0.1:8000/v1").name == "local"
    assert choose_provider("mistral", messages=thinking).reason == "given"
    nothing = choose_provider(messages=[{"role": "user", "content": "hi"}])
    assert nothing.name == "strict" and "nothing" in nothing.reason
    with pytest.raises(UnknownNameError, match="known"):
        choose_provider("antropic")
    assert get_provider("Anthropic").name == "anthropic"


_REPLAY = {
    "reasoning_content": "I think the build fails in step 3.",
    "thinking_blocks": [{"type": "thinking", "thinking": "t", "signature": "c2ln"}],
    "responses_items": [{"type": "reasoning", "id": "rs_1", "summary": []}],
}


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=histories(), key=st.sampled_from(sorted(_REPLAY)), data=st.data())
def test_strict_repair_never_strips_or_edits_replay_state(
    messages: list[Any], key: str, data: st.DataObject
) -> None:
    assistants = [
        i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"
    ]
    if not assistants:
        return
    chosen = data.draw(st.sampled_from(assistants))
    messages[chosen] = {**messages[chosen], key: copy.deepcopy(_REPLAY[key])}
    result = repair(messages, provider="strict")
    healed = result.messages
    carried = [m[key] for m in healed if isinstance(m, dict) and key in m]
    dropped = [  # a message with nothing else in it may be dropped whole, with its state
        c.message[key]
        for c in result.changes
        if c.action == "drop" and isinstance(c.message, dict) and key in c.message
    ]
    assert _REPLAY[key] in carried + dropped, "strict repair lost replay state"
    assert all(set(m) & REPLAY_KEYS <= {key} for m in healed if isinstance(m, dict))
