"""One test per defect of issue 16 (point 5) in how condense read Responses requests as
Codex CLI sends them; the independent rules of ``native_responses_rules`` judge outputs."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import condense
from condense.arguments.calls import call_name, custom_input, is_custom
from condense.reduce.shrink import shrink_tool_arguments
from condense.units import UnitKind, segment
from native_responses_rules import problems

ASK = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}
PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"


def _reasoning(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "summary": [], "content": None, "encrypted_content": text}


def _call(call_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": "ls"}),
        "call_id": call_id,
        **extra,
    }


def _output(call_id: str, text: str = "a.py") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _developer(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }


def _request(items: list[Any]) -> dict[str, Any]:
    return {"model": "gpt-5-codex", "instructions": "be brief", "input": items, "store": False}


# --- namespace and the keys the API accepts ---------------------------------------------


def test_namespace_on_an_mcp_function_call_is_kept() -> None:
    """Codex sends ``namespace`` on MCP tools (openai-python ``ResponseFunctionToolCall
    Param.namespace``); it was removed as an unknown key, which rewrote the call and left
    the reasoning item before it without its following item."""
    mcp = _call("call_1", namespace="mcp__github", status="completed")
    request = _request([ASK, _reasoning("r1"), mcp, _output("call_1"), ASK])
    conversation = condense.load(copy.deepcopy(request))
    assert condense.validate(conversation) == []
    healed = condense.repair(conversation, provider="responses")
    assert healed.changes == ()
    assert conversation.dump(healed.messages) == request
    # a fresh write (the message rebuilt, as compress does) keeps it too
    [call] = condense.formats.to_responses([dict(m) for m in conversation.messages])[2:3]
    assert call["namespace"] == "mcp__github" and call["status"] == "completed"


@pytest.mark.parametrize(
    ("item", "key"),
    [
        ({"type": "message", "role": "assistant", "content": "x", "phase": "commentary"}, None),
        (_call("call_9", caller={"type": "direct"}), None),
        (
            {"type": "custom_tool_call", "call_id": "c", "name": "p", "input": "x", "junk": 1},
            "junk",
        ),
        (_call("call_9", metadata={"a": 1}), "metadata"),
    ],
)
def test_item_keys_are_judged_by_what_the_api_accepts(
    item: dict[str, Any], key: str | None
) -> None:
    items = [ASK, item]
    if item.get("call_id"):
        items.append(
            {
                "type": "custom_tool_call_output" if "input" in item else "function_call_output",
                "call_id": item["call_id"],
                "output": "ok",
            }
        )
    found = condense.validate(condense.load(items))
    assert [v.code for v in found] == ([] if key is None else ["unknown_key"])
    assert bool(problems(items)) == (key is not None)  # the independent rules agree


# --- pairing by call_id -----------------------------------------------------------------


def _interleaved() -> dict[str, Any]:
    return _request(
        [
            ASK,
            _reasoning("r1"),
            _call("call_a"),
            _call("call_b"),
            _developer("approved: ls"),
            _output("call_a"),
            _output("call_b"),
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            },
        ]
    )


def test_a_developer_message_between_a_call_and_its_output_is_accepted() -> None:
    """Codex puts a ``developer`` message between a call and its output; the call was
    reported as unanswered and repair moved its outputs."""
    request = _interleaved()
    assert problems(request) == []
    conversation = condense.load(copy.deepcopy(request))
    assert condense.validate(conversation) == []
    healed = condense.repair(conversation)
    assert healed.changes == ()
    assert conversation.dump(healed.messages) == request


def test_one_unit_holds_the_call_the_messages_between_and_the_outputs() -> None:
    messages = condense.load(_interleaved()).messages
    units = segment(messages)
    assert [(u.kind, u.start, u.stop) for u in units] == [
        (UnitKind.USER, 0, 1),
        (UnitKind.TOOL_EXCHANGE, 1, 5),  # calls, developer message, both outputs
        (UnitKind.REPLY, 5, 6),
    ]


def test_a_result_that_comes_late_is_found_even_when_call_ids_repeat() -> None:
    """OpenAI chat accepts ids reused in later turns: a call is answered by the first
    result after it, so an early exchange does not swallow the later one."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
    ]
    assert [(u.start, u.stop) for u in segment(messages)] == [(0, 1), (1, 3), (3, 4), (4, 6)]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "strict", "gemini-openai"])
def test_chat_profiles_are_told_the_truth_and_repaired(provider: str) -> None:
    """Chat APIs want results directly after their call: the gap is reported, and repair
    for a chat target moves each output up to its call (the developer message after)."""
    messages = condense.load(_interleaved()).messages
    codes = {v.code for v in condense.validate(messages, provider=provider)}
    assert {"unanswered_tool_call", "tool_result_misplaced"} <= codes
    healed = condense.repair(messages, provider=provider)
    assert condense.validate(healed.messages, provider=provider) == []
    roles = [m["role"] for m in healed.messages]
    first_tool = roles.index("tool")
    assert roles[first_tool - 1] == "assistant" and roles[first_tool + 1] == "tool"
    assert any(c.action == "move" for c in healed.changes)


def test_an_output_before_its_call_is_moved_after_it_under_responses() -> None:
    items = [ASK, _output("call_a"), _call("call_a"), _developer("note")]
    conversation = condense.load(items)
    assert [v.code for v in condense.validate(conversation)] == [
        "tool_result_misplaced",
        "unanswered_tool_call",
    ]
    healed = condense.repair(conversation)
    assert problems(conversation.dump(healed.messages)) == []
    assert [c.action for c in healed.changes] == ["move"]


def test_a_stub_for_an_unanswered_call_goes_right_after_it() -> None:
    items = [ASK, _call("call_a"), _call("call_b"), _developer("note"), _output("call_a")]
    healed = condense.repair(condense.load(items))
    written = condense.load(items).dump(healed.messages)
    assert problems(written) == []
    assert [i.get("call_id") for i in written[1:5]] == ["call_a", "call_b", "call_b", None]


def test_an_older_codex_local_shell_call_answered_by_a_function_call_output() -> None:
    """Older Codex sent ``local_shell_call`` items and answered them with a
    ``function_call_output`` (codex-rs ``ResponseItem::LocalShellCall``)."""
    shell = {
        "type": "local_shell_call",
        "call_id": "call_s",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls"]},
    }
    request = _request([ASK, _reasoning("r"), shell, _developer("note"), _output("call_s")])
    assert problems(request) == []
    conversation = condense.load(copy.deepcopy(request))
    assert condense.validate(conversation) == []
    assert condense.repair(conversation).changes == ()
    assert [(u.kind, u.start, u.stop) for u in segment(conversation.messages)] == [
        (UnitKind.USER, 0, 1),
        (UnitKind.TOOL_EXCHANGE, 1, 4),
    ]


# --- custom tool calls ------------------------------------------------------------------


def _patch_request(*, answered: bool = True) -> dict[str, Any]:
    items: list[Any] = [
        ASK,
        _reasoning("r"),
        {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": "call_p",
            "name": "apply_patch",
            "input": PATCH,
        },
    ]
    if answered:
        items.append({"type": "custom_tool_call_output", "call_id": "call_p", "output": "Done!"})
    return _request(items)


def test_custom_tool_calls_pair_like_function_calls() -> None:
    """``custom_tool_call`` / ``custom_tool_call_output`` (Codex's apply_patch) read as
    a chat custom tool call and a tool message, paired by id."""
    conversation = condense.load(_patch_request())
    assistant, tool = conversation.messages[1:]
    [call] = assistant["tool_calls"]
    assert is_custom(call) and call_name(call) == "apply_patch" and custom_input(call) == PATCH
    assert call["status"] == "completed" and tool["tool_call_id"] == "call_p"
    assert condense.validate(conversation) == []
    unanswered = condense.load(_patch_request(answered=False))
    [found] = condense.validate(unanswered)
    assert found.code == "unanswered_tool_call" and found.location == "input[2]"
    healed = condense.repair(unanswered)
    written = unanswered.dump(healed.messages)
    assert problems(written) == []
    assert written["input"][-1]["type"] == "custom_tool_call_output"


def test_a_fresh_write_of_a_custom_call_and_its_result() -> None:
    messages = condense.load(_patch_request()).messages
    rebuilt = [dict(m) for m in messages]  # not the read objects: written afresh
    items = condense.formats.to_responses(rebuilt)
    assert [i["type"] for i in items] == [
        "message",
        "reasoning",
        "custom_tool_call",
        "custom_tool_call_output",
    ]
    assert items[2] == _patch_request()["input"][2]
    assert problems(items) == []


def test_custom_input_is_free_text_not_json_arguments() -> None:
    """A patch is not JSON: validate must not call it invalid arguments, repair must not
    rewrite it, and the argument shrinker must leave it alone."""
    conversation = condense.load(_patch_request())
    assert condense.validate(conversation.messages, provider="responses") == []
    assert condense.repair(conversation.messages, provider="responses").changes == ()
    bare = [{k: v for k, v in m.items() if k != "responses_items"} for m in conversation.messages]
    long = copy.deepcopy(bare)
    long[1]["tool_calls"][0]["custom"]["input"] = PATCH * 200
    reduction = shrink_tool_arguments(long, [1], need=10_000, cost=lambda m: len(json.dumps(m)))
    assert reduction.messages[1] is long[1]


@pytest.mark.parametrize("provider", ["anthropic", "strict", "openai"])
def test_a_custom_call_becomes_a_function_call_where_custom_tools_do_not_exist(
    provider: str,
) -> None:
    messages = condense.load(_patch_request()).messages
    found = condense.validate(messages, provider=provider)
    assert any(v.index == 1 and "custom" in v.detail for v in found)
    healed = condense.repair(messages, provider=provider)
    assert condense.validate(healed.messages, provider=provider) == []
    [call] = healed.messages[1]["tool_calls"]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {
        "input": PATCH
    }


# --- compaction and reasoning ------------------------------------------------------------


def test_a_compaction_item_is_a_message_of_its_own_and_validates() -> None:
    compaction = {"type": "compaction", "encrypted_content": "gAAA…"}
    request = _request(
        [
            ASK,
            compaction,
            _reasoning("r"),
            {"type": "message", "role": "assistant", "content": "ok"},
            ASK,
            {"type": "compaction_trigger"},
        ]
    )
    conversation = condense.load(copy.deepcopy(request))
    assert conversation.messages[1] == {
        "role": "assistant",
        "content": None,
        "responses_items": [compaction],
    }
    assert condense.validate(conversation) == []
    assert condense.repair(conversation).changes == ()
    units = segment(conversation.messages)
    assert (1, 2) in [(u.start, u.stop) for u in units]  # never joined with the next response
    assert conversation.dump() == request


def test_reasoning_followed_by_a_web_search_is_not_lone() -> None:
    search = {
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "q"},
    }
    items = [ASK, _reasoning("r"), search, ASK]
    assert problems(items) == []
    assert condense.validate(condense.load(items)) == []


def test_reasoning_from_before_the_newest_compaction_is_dropped_and_reported() -> None:
    """Azure Foundry: "Conflicting authenticated continuation identities."
    (anomalyco/opencode #48942). Codex keeps no reasoning before a compaction item."""
    old = {"type": "reasoning", "id": "rs_old", "summary": [], "encrypted_content": "OLD"}
    reply = {
        "type": "message",
        "role": "assistant",
        "id": "msg_old",
        "status": "completed",
        "content": [{"type": "output_text", "text": "x"}],
    }
    items = [
        ASK,
        old,
        reply,
        ASK,
        {"type": "compaction", "encrypted_content": "C"},
        _reasoning("new"),
        {"type": "message", "role": "assistant", "content": "y"},
    ]
    conversation = condense.load(items)
    [found] = condense.validate(conversation)
    assert found.code == "foreign_reasoning" and found.location == "input[1]"
    assert found.provider_error == "Conflicting authenticated continuation identities."
    healed = condense.repair(conversation)
    [change] = healed.changes
    assert change.code == "foreign_reasoning" and change.message == [old]
    written = conversation.dump(healed.messages)
    assert old not in written and items[5] in written
    assert written[1] == {k: v for k, v in reply.items() if k != "id"}
    assert problems(written) == []
    assert condense.validate(condense.load(written)) == []
