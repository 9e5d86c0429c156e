"""validate: stable codes, message indices and the provider's own error text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from condense import validate
from condense.providers import PROFILES
from condense.validate import all_violations
from condense.validate.fast import plainly_valid
from profiles import examples
from strategies import clean_history, histories

USER = {"role": "user", "content": "hi"}


def _call(call_id: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": arguments}}


@pytest.mark.parametrize("provider", sorted(PROFILES))
@settings(max_examples=examples(200), deadline=None)
@given(messages=histories() | clean_history())
def test_fast_path_never_accepts_an_invalid_history(provider: str, messages: list[Any]) -> None:
    profile = PROFILES[provider]
    if plainly_valid(messages, profile):
        assert all_violations(messages, profile) == []


def test_unanswered_call_names_openai_error_text() -> None:
    history = [USER, {"role": "assistant", "content": None, "tool_calls": [_call("call_9")]}]
    (violation,) = validate(history, provider="openai")
    assert violation.code == "unanswered_tool_call"
    assert violation.index == 1
    assert violation.provider_error is not None
    assert "did not have response messages: call_9" in violation.provider_error


def test_orphan_result_for_anthropic() -> None:
    history = [USER, {"role": "tool", "tool_call_id": "toolu_1", "content": "x"}]
    codes = {v.code: v for v in validate(history, provider="anthropic")}
    assert "orphan_tool_result" in codes
    error = codes["orphan_tool_result"].provider_error
    assert error is not None
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1" in error


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ('{"a": 1', "arguments_invalid_json"),
        ("[1]", "arguments_not_object"),
        ({"a": 1}, "arguments_not_string"),
    ],
)
def test_argument_problems(arguments: Any, code: str) -> None:
    history = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", arguments)]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    assert [v.code for v in validate(history, provider="strict")] == [code]


def test_mistral_ids() -> None:
    history = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [_call("call_abc")]},
        {"role": "tool", "tool_call_id": "call_abc", "content": "ok"},
    ]
    (violation,) = validate(history, provider="mistral")
    assert violation.code == "invalid_tool_call_id"
    assert violation.provider_error == (
        "Tool call id was call_abc but must be a-z, A-Z, 0-9, with a length of 9."
    )
    assert validate(history, provider="openai") == []


def test_role_order_rules_differ_by_profile() -> None:
    history = [{"role": "assistant", "content": "hello"}, USER, dict(USER)]
    assert validate(history, provider="openai") == []
    codes = [v.code for v in validate(history, provider="anthropic")]
    assert codes == ["first_not_user", "consecutive_same_role"]


def test_never_raises_on_garbage() -> None:
    found = validate([None, 3, {"role": 7}, {"role": "user", "content": {"x": 1}}])
    assert [v.code for v in found] == [
        "invalid_message",
        "invalid_message",
        "unknown_role",
        "invalid_content",
    ]
