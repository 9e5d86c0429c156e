"""Properties of the adapters: round trips are lossless, dump reuses unchanged turns, inputs
are never mutated, and no input turns into a traceback."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense.exceptions import FormatError
from condense.formats import (
    Conversation,
    from_anthropic,
    from_responses,
    from_sharegpt,
    load,
    to_anthropic,
    to_responses,
    to_sharegpt,
)
from profiles import examples
from strategies import histories

# No letters of "tool_call" / "tool_response": ShareGPT cannot escape its own tags.
TEXT = st.text(alphabet=st.sampled_from([*"ab \n{}[]\"'\\<>/:", "é", "中", "🚀"]), max_size=20)
WORDS = TEXT.filter(bool)
ARGUMENTS = st.dictionaries(
    st.sampled_from(["path", "cmd", "n"]),
    st.one_of(TEXT, st.integers(), st.booleans(), st.lists(st.integers(), max_size=2)),
    max_size=3,
)
IMAGE = st.sampled_from(
    [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "low"}},
    ]
)
PARTS = st.lists(
    st.one_of(st.builds(lambda t: {"type": "text", "text": t}, TEXT), IMAGE), max_size=3
)
# Generating whole histories is the slow part; fifty of them cover the shapes above.
QUICK = settings(max_examples=examples(50), suppress_health_check=[HealthCheck.too_slow])
FORMAT_FUNCTIONS = {
    "anthropic": (from_anthropic, to_anthropic),
    "responses": (from_responses, to_responses),
    "sharegpt": (from_sharegpt, to_sharegpt),
}


@st.composite
def conversations(draw: st.DrawFn, *, rich: bool = True, thinking: bool = False) -> list[Any]:
    """Chat histories in the shape every adapter writes back exactly: tool results right
    after their calls, a user message after each exchange block, content never "" next to
    tool calls. ``rich`` adds content parts; ``thinking`` adds Anthropic thinking blocks."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT)})
    serial = 0
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        after_tools = bool(messages) and messages[-1]["role"] == "tool"
        content = draw(st.one_of(TEXT, PARTS) if rich and not after_tools else TEXT)
        messages.append({"role": "user", "content": content})
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            calls = [
                {
                    "id": f"toolu_{serial}_{k}",
                    "type": "function",
                    "function": {
                        "name": draw(st.sampled_from(["read", "run"])),
                        "arguments": json.dumps(draw(ARGUMENTS), ensure_ascii=False),
                    },
                }
                for k in range(draw(st.integers(min_value=1, max_value=3)))
            ]
            serial += 1
            reply: dict[str, Any] = {"role": "assistant", "content": draw(st.none() | WORDS)}
            reply["tool_calls"] = calls
            if thinking and draw(st.booleans()):
                block = {"type": "thinking", "thinking": draw(TEXT), "signature": "c2ln"}
                reply["thinking_blocks"] = [block]
            messages.append(reply)
            messages.extend(
                {"role": "tool", "tool_call_id": call["id"], "content": draw(TEXT)}
                for call in calls
            )
        if draw(st.booleans()):
            messages.append({"role": "assistant", "content": draw(WORDS if thinking else TEXT)})
    return messages


def _positional(messages: list[Any]) -> list[Any]:
    """Call ids replaced by their position: ShareGPT stores no ids."""
    latest: dict[Any, str] = {}
    out = []
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        for position, call in enumerate(calls):
            latest[call["id"]] = f"{index}.{position}"
        message = dict(message)
        if calls:
            message["tool_calls"] = [{**c, "id": latest[c["id"]]} for c in calls]
        if "tool_call_id" in message:
            message["tool_call_id"] = latest.get(message["tool_call_id"], "orphan")
        out.append(message)
    return out


def _without_detail(messages: list[Any]) -> list[Any]:
    """Anthropic image blocks have no ``detail``: the writer leaves it out."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [
                {**p, "image_url": {"url": p["image_url"]["url"]}}
                if p.get("type") == "image_url"
                else p
                for p in content
            ]
            message = {**message, "content": content}
        out.append(message)
    return out


@QUICK
@given(conversations(thinking=True))
def test_anthropic_round_trip_is_lossless(messages: list[Any]) -> None:
    assert from_anthropic(to_anthropic(messages)) == _without_detail(messages)


@QUICK
@given(conversations())
def test_responses_round_trip_is_lossless(messages: list[Any]) -> None:
    assert from_responses(to_responses(messages)) == messages


@QUICK
@given(conversations(rich=False))
def test_sharegpt_round_trip_keeps_everything_but_ids(messages: list[Any]) -> None:
    assert _positional(from_sharegpt(to_sharegpt(messages))) == _positional(messages)


@QUICK
@given(st.sampled_from(sorted(FORMAT_FUNCTIONS)), conversations(thinking=True), st.data())
def test_dump_reuses_unchanged_turns_and_rewrites_the_rest_exactly(
    name: str, messages: list[Any], data: st.DataObject
) -> None:
    native = FORMAT_FUNCTIONS[name][1](messages)
    snapshot = copy.deepcopy(native)
    conversation = load(native, format=name)
    assert conversation.dump() == snapshot
    # any subset of messages replaced by equal copies: those turns are written fresh,
    # and the serializers reproduce them exactly
    copied = data.draw(st.sets(st.integers(0, max(0, len(conversation.messages) - 1))))
    edited = [dict(m) if i in copied else m for i, m in enumerate(conversation.messages)]
    assert conversation.dump(edited) == snapshot
    assert native == snapshot


@QUICK
@given(st.sampled_from(sorted(FORMAT_FUNCTIONS)), conversations(), st.data())
def test_dump_stays_readable_after_insertions_and_drops(
    name: str, messages: list[Any], data: st.DataObject
) -> None:
    conversation = load(FORMAT_FUNCTIONS[name][1](messages), format=name)
    edited = list(conversation.messages)
    if edited and data.draw(st.booleans()):
        del edited[data.draw(st.integers(0, len(edited) - 1))]
    summary = {"role": "user", "content": "Summary of earlier work."}
    edited.insert(data.draw(st.integers(0, len(edited))), summary)
    back = load(conversation.dump(edited), format=name).messages
    assert summary["content"] in json.dumps(back)
    assert len(back) >= len(edited) - 1  # a summary may join a tool-result turn's text


@QUICK
@given(st.sampled_from(sorted(FORMAT_FUNCTIONS)), histories())
def test_broken_histories_raise_format_errors_not_tracebacks(
    name: str, messages: list[Any]
) -> None:
    snapshot = copy.deepcopy(messages)
    read, write = FORMAT_FUNCTIONS[name]
    try:
        native = write(messages)
    except FormatError:
        return
    finally:
        assert messages == snapshot
    read(native)  # whatever an adapter writes, it reads back
    assert Conversation(messages=messages, format=name).dump() == native


FRAGMENTS = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
        "</tool_response>",
        '{"name": "f", "arguments": {"a": 1}}',
        '{"name": 3}',
        "[1, 2]",
        "<think>",
        "\n",
        "text",
    ]
)
TURNS = st.lists(
    st.builds(
        lambda who, parts: {"from": who, "value": "".join(parts)},
        st.sampled_from(["system", "human", "gpt", "tool"]),
        st.lists(FRAGMENTS, max_size=8),
    ),
    max_size=8,
)


@QUICK
@given(TURNS)
def test_any_sharegpt_text_loads_and_dumps_back(turns: list[Any]) -> None:
    conversation = load(turns, format="sharegpt")
    assert conversation.dump() == turns
    fresh = conversation.dump([dict(m) for m in conversation.messages])
    assert isinstance(load(fresh, format="sharegpt").messages, list)
