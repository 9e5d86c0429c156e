"""What every entry point refuses before working: no list, empty, no message, too deep."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from condense._input import MAX_DEPTH, check_history, too_deep
from condense.exceptions import FormatError, InputError
from condense.formats import load, parse_text


def nested(levels: int) -> Any:
    """``levels`` nested lists (``levels`` counts the outermost one), built without recursion."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_an_empty_history_is_refused() -> None:
    with pytest.raises(InputError, match="holds no message; every provider refuses"):
        check_history([])


def test_a_history_without_a_message_object_is_refused_when_one_is_needed() -> None:
    with pytest.raises(InputError, match="3 item"):
        check_history([1, 2, 3])
    check_history([1, 2, 3], need_message=False)  # validate lists them as violations


@pytest.mark.parametrize("value", ["text", {"messages": []}, 7, b"[]"], ids=repr)
def test_not_a_list_is_refused(value: object) -> None:
    with pytest.raises(InputError, match="expected a list of messages"):
        check_history(value)


def test_the_depth_limit_names_the_message() -> None:
    fine = {"role": "user", "content": nested(MAX_DEPTH - 1)}  # the message is level 1
    deep = {"role": "user", "content": nested(MAX_DEPTH)}
    check_history([fine])
    with pytest.raises(FormatError) as caught:
        check_history([fine, deep])
    assert caught.value.index == 1 and str(caught.value) == (
        f"message 1: is nested deeper than {MAX_DEPTH} levels"
    )
    check_history([fine, deep], depth=False)


def test_a_hundred_thousand_levels_are_refused_without_recursing() -> None:
    assert too_deep(nested(100_000))
    with pytest.raises(FormatError):
        check_history([{"role": "user", "content": nested(100_000)}])


def test_json_nested_inside_arguments_counts() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    deep_text = "[" * 100_000 + "]" * 100_000
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    call["function"]["arguments"] = deep_text  # type: ignore[index]
    assert too_deep(message)
    call["function"]["arguments"] = json.dumps({"code": "[" * 500})  # brackets in a string
    assert not too_deep(message)


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_the_tool_call_shortcut_agrees_with_the_walk_at_the_limit(extra: int) -> None:
    """``check_history`` reads the common tool-call shape without a walk; at the limit
    it decides as ``too_deep`` does (message 1, tool_calls 2, call 3, function 4, JSON 5+)."""
    levels = MAX_DEPTH - 4 + extra
    arguments = '{"a": ' * levels + "1" + "}" * levels
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    history = [{"role": "user", "content": "go"}, message]
    if too_deep(message):
        with pytest.raises(FormatError, match="message 1"):
            check_history(history)
    else:
        check_history(history)
    assert too_deep(message) is (extra > 0)


@given(
    st.recursive(st.none() | st.integers(), lambda kids: st.lists(kids, max_size=3), max_leaves=30)
)
def test_too_deep_agrees_with_a_recursive_count(value: Any) -> None:
    def depth(item: Any) -> int:
        return 1 + max(map(depth, item), default=0) if isinstance(item, list) else 0

    for limit in range(1, 8):
        assert too_deep(value, limit=limit) is (depth(value) > limit)


def test_loaders_refuse_too_deep_json_with_the_line() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(FormatError, match=r"deep.json, line 1: is nested deeper than 128"):
        parse_text(deep, source="deep.json")
    jsonl = '{"messages": [{"role": "user", "content": "hi"}]}\n' + deep + "\n"
    with pytest.raises(FormatError, match=r"x.jsonl, line 2: is nested deeper"):
        parse_text(jsonl, source="x.jsonl")
    record = {"messages": [{"role": "user", "content": nested(300)}]}
    with pytest.raises(FormatError, match="nested deeper than 128 levels"):
        load(record)


@given(
    st.recursive(st.none() | st.text(max_size=3), lambda kids: st.lists(kids, max_size=2)),
    st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 2),
)
def test_the_quick_message_check_agrees_with_the_walk(value: Any, brackets: int) -> None:
    from condense._input import _message_too_deep

    arguments = "[" * brackets + "]" * brackets
    for message in (
        {"role": "user", "content": nested(brackets)},
        {"role": "assistant", "arguments": arguments, "content": value},
        {"role": "assistant", "tool_calls": [{"function": {"arguments": arguments}}]},
        [value],
        "not a message",
    ):
        assert _message_too_deep(message) is (
            isinstance(message, dict | list) and too_deep(message)
        )
