"""Anthropic Messages adapter: a realistic agent request, edits, and the reverse direction."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from condense.exceptions import FormatError
from condense.formats import Conversation, from_anthropic, load, to_anthropic

FIXTURE = Path(__file__).resolve().parent / "data" / "formats" / "anthropic_agent.json"


@pytest.fixture
def request_body() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return body


@pytest.fixture
def conversation(request_body: dict[str, Any]) -> Conversation:
    return load(request_body)


def test_reads_the_agent_request(conversation: Conversation, request_body: dict[str, Any]) -> None:
    messages = conversation.messages
    assert conversation.format == "anthropic"
    roles = "system user assistant tool tool user assistant tool assistant user"
    assert [m["role"] for m in messages] == roles.split()
    system, ask, reply = messages[:3]
    assert system["content"][1]["cache_control"] == {"type": "ephemeral"}
    source = request_body["messages"][0]["content"][1]["source"]
    assert ask["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{source['data']}"},
    }
    # thinking (signature included) rides on the message; text and parallel calls split out
    assert reply["content"] == "Let me read the view and run the failing test."
    assert [b["type"] for b in reply["thinking_blocks"]] == ["thinking"]
    assert reply["thinking_blocks"][0]["signature"].startswith("EqQB")
    first, second = reply["tool_calls"]
    assert first == {
        "id": "toolu_01A9pQ3sLx",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "app/views/login.py"}'},
    }
    assert second["cache_control"] == {"type": "ephemeral"}
    assert json.loads(second["function"]["arguments"]) == {
        "cmd": "pytest tests/test_login.py -x -q"
    }


def test_parallel_results_then_the_users_text(conversation: Conversation) -> None:
    read, run, note = conversation.messages[3:6]
    assert read["tool_call_id"] == "toolu_01A9pQ3sLx"
    assert read["content"].startswith("def login(request):")
    assert run == {
        "role": "tool",
        "tool_call_id": "toolu_01B7kR2mNv",
        "content": [{"type": "text", "text": run["content"][0]["text"]}],
        "is_error": True,
    }
    assert note == {"role": "user", "content": "Careful: don't touch the template."}
    redacted = conversation.messages[6]
    assert redacted["content"] is None
    assert redacted["thinking_blocks"][0]["type"] == "redacted_thinking"
    assert conversation.messages[7]["cache_control"] == {"type": "ephemeral"}


def test_round_trips_verbatim_and_fresh(
    conversation: Conversation, request_body: dict[str, Any]
) -> None:
    snapshot = copy.deepcopy(request_body)
    assert conversation.dump() == snapshot
    assert conversation.dump([dict(m) for m in conversation.messages]) == snapshot
    assert to_anthropic(from_anthropic(request_body))["messages"] == snapshot["messages"]
    assert request_body == snapshot


def test_a_masked_result_rewrites_only_its_turn(
    conversation: Conversation, request_body: dict[str, Any]
) -> None:
    messages = list(conversation.messages)
    messages[4] = {**messages[4], "content": "[test output: 2 lines, masked]"}
    dumped = conversation.dump(messages)
    turns, original = dumped["messages"], request_body["messages"]
    assert dumped["system"] is request_body["system"]
    for index in (0, 1, 3, 4, 5, 6):
        assert turns[index] is original[index]
    assert turns[2] is not original[2]
    assert turns[2]["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01B7kR2mNv",
        "content": "[test output: 2 lines, masked]",
        "is_error": True,
    }
    assert turns[2]["content"][0] == original[2]["content"][0]
    assert turns[2]["content"][2] == {"type": "text", "text": "Careful: don't touch the template."}


def test_a_summary_replacing_the_first_exchanges_is_valid(
    conversation: Conversation, request_body: dict[str, Any]
) -> None:
    summary = {"role": "user", "content": "Summary: the login view used the key 'from'."}
    messages = [conversation.messages[0], summary, *conversation.messages[6:]]
    dumped = conversation.dump(messages)
    assert dumped["system"] is request_body["system"]
    assert dumped["model"] == "claude-sonnet-4-5"
    turns = dumped["messages"]
    assert turns[0] == summary
    assert turns[1:] == request_body["messages"][3:]
    assert all(a is b for a, b in zip(turns[1:], request_body["messages"][3:], strict=True))
    roles = [t["role"] for t in turns]
    assert roles == ["user", "assistant", "user", "assistant", "user"]


def test_without_a_system_message_the_key_goes(conversation: Conversation) -> None:
    dumped = conversation.dump(conversation.messages[1:])
    assert "system" not in dumped
    changed = conversation.dump(
        [{"role": "system", "content": "New rules."}, *conversation.messages[1:]]
    )
    assert changed["system"] == "New rules."


IMAGE = {"url": "https://x.test/a.png", "detail": "high"}


def _call(call_id: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": arguments}}


def test_to_anthropic_from_chat_messages() -> None:
    messages = [
        {"role": "system", "content": "Rules."},
        {"role": "developer", "content": "More rules."},
        {"role": "user", "content": "Look at a.py and b.py"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                _call("call_1", '{"p": "a.py"}'),
                _call("call_2", '{"p": "b.py"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "name": "read", "content": "B"},
        {"role": "tool", "tool_call_id": "call_1", "name": "read", "content": "A"},
        {"role": "user", "content": [{"type": "image_url", "image_url": IMAGE}]},
        {"role": "system", "content": "Mid-conversation note."},
    ]
    native = to_anthropic(messages)
    assert native["system"] == [
        {"type": "text", "text": "Rules."},
        {"type": "text", "text": "More rules."},
    ]
    user, assistant, results, note = native["messages"]
    assert user == {"role": "user", "content": "Look at a.py and b.py"}
    assert assistant["content"] == [  # the empty text is dropped: the API rejects it
        {"type": "tool_use", "id": "call_1", "name": "read", "input": {"p": "a.py"}},
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"p": "b.py"}},
    ]
    # a tool_result has no ``name`` and an image no ``detail``: neither is written
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_2", "content": "B"},
            {"type": "tool_result", "tool_use_id": "call_1", "content": "A"},
            {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
        ],
    }
    assert note == {"role": "user", "content": "Mid-conversation note."}
    back = from_anthropic(native)
    assert back[0] == {"role": "system", "content": native["system"]}  # documented: merged
    assert back[2]["content"] is None  # documented: "" next to tool calls reads back as None
    assert back[2]["tool_calls"] == messages[3]["tool_calls"]
    assert back[3:5] == [{k: v for k, v in m.items() if k != "name"} for m in messages[4:6]]
    image = {"url": IMAGE["url"]}
    assert back[5] == {"role": "user", "content": [{"type": "image_url", "image_url": image}]}
    assert back[6] == {"role": "user", "content": "Mid-conversation note."}


def test_bare_lists_stay_bare() -> None:
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    conversation = load(turns, format="anthropic")
    assert conversation.dump() is not turns
    assert conversation.dump() == turns
    fresh = conversation.dump([dict(m) for m in conversation.messages])
    assert fresh == turns
    with_system = conversation.dump([{"role": "system", "content": "s"}, *conversation.messages])
    assert with_system == {"system": "s", "messages": turns}


def test_errors_name_the_message() -> None:
    with pytest.raises(FormatError, match="message 1: unknown role 'system'"):
        from_anthropic([{"role": "user", "content": "a"}, {"role": "system", "content": "b"}])
    with pytest.raises(
        FormatError, match="'messages' of an Anthropic request must be a JSON array"
    ):
        from_anthropic({"system": "s"})
    bad_arguments = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": '}}
            ],
        },
    ]
    with pytest.raises(
        FormatError, match="message 1: tool call 0 has arguments that are not valid JSON"
    ):
        to_anthropic(bad_arguments)
    with pytest.raises(FormatError, match=r"x\.jsonl, line 4, message 1: unknown role 'robot'"):
        Conversation(messages=[], format="anthropic", source="x.jsonl", line=4).dump(
            [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]
        )


def _tau_call(call_id: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_user_details", "arguments": '{"user_id": "mia_li_3668"}'},
    }


def test_to_anthropic_writes_only_what_the_api_accepts() -> None:
    """tau-bench, OpenHands and SWE-agent put ``name`` on tool results; DeepSeek adds
    ``reasoning_content``, Gemini ``extra_content``: none has a slot in Anthropic."""
    signed = {**_tau_call("call_2"), "extra_content": {"google": {"thought_signature": "s"}}}
    messages = [
        {"role": "user", "content": "Change my flight.", "name": "mia"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "reasoning_content": "The user wants…",
            "refusal": None,
            "tool_calls": [{**_tau_call("call_1"), "cache_control": {"type": "ephemeral"}}, signed],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "get_user_details", "content": "{}"},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "name": "get_user_details",
            "content": [{"type": "text", "text": "{}", "annotations": []}],
            "is_error": True,
        },
    ]
    turns = to_anthropic(messages)["messages"]
    assert turns[0] == {"role": "user", "content": "Change my flight."}
    assert turns[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {
                "type": "tool_use",
                "id": "call_1",
                "name": "get_user_details",
                "input": {"user_id": "mia_li_3668"},
                "cache_control": {"type": "ephemeral"},
            },
            {
                "type": "tool_use",
                "id": "call_2",
                "name": "get_user_details",
                "input": {"user_id": "mia_li_3668"},
            },
        ],
    }
    assert turns[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "{}"},
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "content": [{"type": "text", "text": "{}"}],
                "is_error": True,
            },
        ],
    }


def test_every_result_of_one_turn_goes_in_one_user_message_before_any_text() -> None:
    messages = [
        {"role": "user", "content": "Read a and b."},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", "{}"), _call("b", "{}")]},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "user", "content": "(the user typed while the tools ran)"},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "user", "content": "Next question."},
    ]
    turns = to_anthropic(messages)["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    kinds = [b["type"] for b in turns[2]["content"]]
    assert kinds == ["tool_result", "tool_result", "text", "text"]
    assert [b.get("text") for b in turns[2]["content"][2:]] == [
        "(the user typed while the tools ran)",
        "Next question.",
    ]
    # one user message joins after the results; the next one is a turn of its own
    more = to_anthropic([*messages, {"role": "user", "content": "And another."}])["messages"]
    assert more[3] == {"role": "user", "content": "And another."}


def test_a_new_result_joins_the_unchanged_turn_of_results(request_body: dict[str, Any]) -> None:
    """A stub for a lost result must join the turn holding the other results: that
    turn is written afresh, every other turn stays the original object."""
    body = copy.deepcopy(request_body)
    body["messages"][2]["content"] = body["messages"][2]["content"][:1]  # only one result
    conversation = load(body)
    messages = list(conversation.messages)
    stub = {"role": "tool", "tool_call_id": "toolu_01B7kR2mNv", "content": "[no result]"}
    messages.insert(4, stub)
    turns = conversation.dump(messages)["messages"]
    assert len(turns) == len(body["messages"])
    assert [b.get("tool_use_id") for b in turns[2]["content"]] == [
        "toolu_01A9pQ3sLx",
        "toolu_01B7kR2mNv",
    ]
    assert all(turns[i] is body["messages"][i] for i in (0, 1, 3, 4, 5, 6))
    assert conversation.dump() == body  # unchanged: verbatim
