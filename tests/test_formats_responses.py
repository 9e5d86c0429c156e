"""OpenAI Responses adapter: reasoning stays with its item, parallel calls, item ids."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from condense.exceptions import FormatError
from condense.formats import Conversation, from_responses, load, to_responses

FIXTURE = Path(__file__).resolve().parent / "data" / "formats" / "responses_agent.json"


@pytest.fixture
def request_body() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return body


@pytest.fixture
def conversation(request_body: dict[str, Any]) -> Conversation:
    return load(request_body)


def _items_by_id(items: list[Any]) -> dict[str, Any]:
    return {item["id"]: item for item in items if "id" in item}


def test_reads_the_agent_request(conversation: Conversation, request_body: dict[str, Any]) -> None:
    messages = conversation.messages
    assert conversation.format == "responses"
    roles = "developer user assistant tool tool assistant user assistant user assistant"
    assert [m["role"] for m in messages] == roles.split()
    ask = messages[1]
    assert ask["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://example.com/itinerary.png", "detail": "low"},
    }
    calls = messages[2]
    assert calls["content"] is None
    assert [c["id"] for c in calls["tool_calls"]] == ["call_Paris01", "call_Oslo02"]
    assert calls["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',  # verbatim, never re-encoded
    }
    assert calls["tool_calls"][0]["item_id"] == "fc_68a2"
    # the reasoning item stays attached to the item after it
    assert [item["id"] for item in calls["responses_items"]] == ["rs_68a1"]
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "call_Paris01",
        "content": '{"temp_c": 18, "sky": "cloudy"}',
    }
    answer = messages[5]
    assert answer["item_id"] == "msg_68a5"
    assert answer["content"][0]["annotations"] == []
    assert [item["id"] for item in answer["responses_items"]] == ["rs_68a4"]
    searched = messages[7]
    assert [item["type"] for item in searched["responses_items"]] == [
        "reasoning",
        "web_search_call",
    ]
    # a message item and the function calls right after it are one assistant message
    booked = messages[9]
    assert booked["content"][0]["text"] == "Booking now."
    assert booked["tool_calls"][0]["id"] == "call_Book03"
    assert booked["responses_items"][0]["id"] == "rs_68a9"
    assert "instructions" not in json.dumps(messages)  # carried on the record, not a message


def test_round_trips_verbatim(conversation: Conversation, request_body: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(request_body)
    assert conversation.dump() == snapshot
    assert conversation.dump(list(conversation.messages)) == snapshot
    fresh = conversation.dump([dict(m) for m in conversation.messages])
    expected = copy.deepcopy(snapshot)
    expected["input"][9] = {"type": "message", **expected["input"][9]}  # "type" is always written
    assert fresh == expected
    assert to_responses(from_responses(request_body)) == expected["input"]
    assert request_body == snapshot


def test_a_masked_output_keeps_reasoning_next_to_its_item(
    conversation: Conversation, request_body: dict[str, Any]
) -> None:
    messages = list(conversation.messages)
    messages[4] = {**messages[4], "content": "[weather output masked]"}
    dumped = conversation.dump(messages)
    items, original = dumped["input"], request_body["input"]
    assert len(items) == len(original)
    for index, item in enumerate(items):
        if index == 6:
            assert item == {**original[6], "output": "[weather output masked]"}
        else:
            assert item is original[index]
    assert dumped["instructions"] == request_body["instructions"]


def test_a_rewritten_reply_keeps_its_reasoning_and_ids(conversation: Conversation) -> None:
    messages = list(conversation.messages)
    messages[9] = {**messages[9], "content": "Booking the Paris trip now."}
    items = conversation.dump(messages)["input"]
    reasoning, reply, call = items[-3:]
    assert reasoning["id"] == "rs_68a9"
    assert reply == {
        "type": "message",
        "role": "assistant",
        "content": "Booking the Paris trip now.",
        "id": "msg_68b0",
        "status": "completed",
    }
    assert call["id"] == "fc_68b1"
    assert call["call_id"] == "call_Book03"


def test_dropping_an_exchange_drops_its_reasoning(
    conversation: Conversation, request_body: dict[str, Any]
) -> None:
    messages = conversation.messages[:2] + conversation.messages[5:]
    items = conversation.dump(messages)["input"]
    ids = [item.get("id") for item in items]
    assert "rs_68a1" not in ids
    assert ids.index("rs_68a4") + 1 == ids.index("msg_68a5")
    assert _items_by_id(items)["msg_68a5"] is _items_by_id(request_body["input"])["msg_68a5"]


def test_reasoning_with_nothing_after_it_gets_its_own_message() -> None:
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call_output", "call_id": "c0", "output": "late"},
        {"type": "reasoning", "id": "rs_2", "summary": []},
    ]
    messages = from_responses(items)
    assert messages[1] == {"role": "assistant", "content": None, "responses_items": [items[1]]}
    assert messages[2]["role"] == "tool"
    assert messages[3]["responses_items"] == [items[3]]
    assert to_responses(messages) == items
    assert load(items).dump() == items


def test_a_string_input_is_one_user_message() -> None:
    body = {"model": "gpt-4.1", "input": "Tell me a joke."}
    conversation = load(body)
    assert conversation.messages == [{"role": "user", "content": "Tell me a joke."}]
    assert conversation.dump() == body
    reply = {"role": "assistant", "content": "Why did the chicken…"}
    assert conversation.dump([*conversation.messages, reply])["input"] == [
        {"type": "message", "role": "user", "content": "Tell me a joke."},
        {"type": "message", "role": "assistant", "content": "Why did the chicken…"},
    ]


IMAGE = {"url": "https://x.test/a.png", "detail": "high"}


def test_to_responses_from_chat_messages() -> None:
    messages = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "name": "g", "content": "two"},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    items = to_responses(messages)
    assert [item["type"] for item in items] == [
        "message",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "message",
    ]
    assert items[1]["content"] == [{"type": "input_text", "text": "hi"}]
    assert items[2] == {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    # the Responses API has no ``name`` on a function_call_output: it is not written
    assert items[4] == {"type": "function_call_output", "call_id": "c1", "output": "one"}
    assert items[6]["content"] == [{"type": "output_text", "text": "done"}]
    unnamed = [{k: v for k, v in m.items() if k != "name"} for m in messages]
    assert from_responses(items) == unnamed


def test_to_responses_writes_only_what_the_api_accepts() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}", "strict": True},
        "extra_content": {"google": {"thought_signature": "sig"}},
        "item_id": "fc_1",
        "status": "completed",
    }
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {}}]},
        {
            "role": "assistant",
            "content": "On it.",
            "name": "bot",
            "reasoning_content": "think",
            "refusal": None,
            "phase": "commentary",
            "item_id": "msg_1",
            "tool_calls": [call],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "one", "weight": 1},
        {"role": "user", "content": [{"type": "image_url", "image_url": IMAGE}], "name": "u"},
    ]
    items = to_responses(messages)
    assert items == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": "On it.",
            "id": "msg_1",
            "phase": "commentary",
        },
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "f",
            "arguments": "{}",
            "id": "fc_1",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "one"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_image", "image_url": IMAGE["url"], "detail": "high"}],
        },
    ]


def test_errors_name_the_item() -> None:
    with pytest.raises(FormatError, match="message 1: input item has no 'type' and no 'role'"):
        from_responses([{"role": "user", "content": "a"}, {"content": "b"}])
    with pytest.raises(FormatError, match="needs an 'input' array"):
        from_responses({"model": "x"})
    with pytest.raises(FormatError, match="message 0: tool call 0 must be a JSON object"):
        to_responses([{"role": "assistant", "content": None, "tool_calls": ["c1"]}])
