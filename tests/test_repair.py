"""repair: valid output for every profile, idempotent, pure, and nothing lost silently."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from condense import repair, validate
from condense.exceptions import InputError
from condense.providers import PROFILES
from condense.repair import OPENING_USER, STUB_RESULT
from profiles import examples
from strategies import clean_history, histories

PROFILE_NAMES = sorted(PROFILES)


def _call(call_id: Any, name: str = "bash", arguments: Any = '{"command": "ls"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _assistant(*calls: dict[str, Any], content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def _result(call_id: Any, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "fix the bug"}


# -- properties ----------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROFILE_NAMES)
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=histories())
def test_output_always_valid_idempotent_and_pure(provider: str, messages: list[Any]) -> None:
    before = copy.deepcopy(messages)
    if not messages:
        with pytest.raises(InputError, match="holds no message"):
            repair(messages, provider=provider)
        return
    result = repair(messages, provider=provider)
    assert messages == before, "repair mutated its input"
    assert validate(result.messages, provider=provider) == []
    again = repair(result.messages, provider=provider)
    assert again.messages == result.messages
    assert again.changes == ()
    assert all(a is b for a, b in zip(again.messages, result.messages, strict=True))


@pytest.mark.parametrize("provider", PROFILE_NAMES)
@settings(max_examples=examples(150), deadline=None)
@given(messages=histories())
def test_nothing_lost_without_a_trace(provider: str, messages: list[Any]) -> None:
    result = repair(messages, provider=provider)
    gone = [c for c in result.changes if c.action in ("drop", "merge")]
    added = [c for c in result.changes if c.action == "insert"]
    assert len(messages) - len(gone) == len(result.messages) - len(added)
    assert all(c.index is not None for c in gone)
    assert all(c.message is not None or messages[c.index] is None for c in gone)
    removed = {c.index for c in gone}
    for change in result.changes:
        assert change.reason
        if change.action != "drop" and change.index not in removed:
            assert change.output_index is not None


@pytest.mark.parametrize("provider", PROFILE_NAMES)
@settings(max_examples=examples(150), deadline=None)
@given(messages=histories())
def test_results_whose_call_exists_are_kept(provider: str, messages: list[Any]) -> None:
    call_ids = {
        call[key]
        for m in messages
        if isinstance(m, dict)
        and str(m.get("role")).lower() in ("assistant", "gpt", "ai")
        and isinstance(m.get("tool_calls"), list)
        for call in m["tool_calls"]
        for key in ("id", "call_id")
        if isinstance(call, dict) and isinstance(call.get(key), str)
    }
    result = repair(messages, provider=provider)
    for change in result.changes:
        if change.code == "orphan_tool_result":
            assert change.message["tool_call_id"] not in call_ids


@pytest.mark.parametrize("provider", PROFILE_NAMES)
@settings(max_examples=examples(100), deadline=None)
@given(messages=clean_history())
def test_valid_input_is_returned_as_is(provider: str, messages: list[Any]) -> None:
    if validate(messages, provider=provider):
        return
    result = repair(messages, provider=provider)
    assert result.changes == ()
    assert all(a is b for a, b in zip(result.messages, messages, strict=True))


# -- each fault of the issue, by example ---------------------------------------------


def test_result_separated_from_its_call_is_moved_back() -> None:
    history = [
        USER,
        _assistant(_call("call_a"), _call("call_b")),
        _result("call_a"),
        {"role": "assistant", "content": "interjection"},
        _result("call_b", "late"),
    ]
    result = repair(history, provider="openai")
    roles = [m["role"] for m in result.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]
    assert result.messages[3]["content"] == "late"
    assert [c.action for c in result.changes] == ["move"]
    assert result.changes[0].index == 4 and result.changes[0].output_index == 3


def test_result_before_its_call_is_moved_after_it() -> None:
    history = [USER, _result("call_a", "early"), _assistant(_call("call_a"))]
    result = repair(history, provider="strict")
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool"]
    assert result.messages[2]["content"] == "early"


def test_unanswered_call_gets_a_stub_and_is_reported() -> None:
    result = repair([USER, _assistant(_call("call_a"), _call("call_b")), _result("call_a")])
    assert result.messages[-1] == {"role": "tool", "tool_call_id": "call_b", "content": STUB_RESULT}
    (change,) = result.changes
    assert change.action == "insert" and change.code == "unanswered_tool_call"
    assert change.index is None and change.output_index == 3


def test_orphan_result_is_dropped_with_its_content_in_the_report() -> None:
    orphan = _result("call_zzz", "precious output")
    result = repair([USER, orphan, {"role": "assistant", "content": "done"}], provider="openai")
    assert orphan not in result.messages
    (change,) = result.changes
    assert change.action == "drop" and change.code == "orphan_tool_result"
    assert change.message is orphan and change.index == 1


def test_duplicate_real_outputs_keep_the_later_one() -> None:
    history = [USER, _assistant(_call("c1")), _result("c1", "first"), _result("c1", "second")]
    result = repair(history, provider="openai")
    assert [m.get("content") for m in result.messages[2:]] == ["second"]
    (change,) = result.changes
    assert (change.code, change.action, change.index) == ("duplicate_tool_result", "drop", 2)
    assert change.message is history[2]


RESTART = (
    "A restart occurred while this tool was in progress. This may indicate a fatal memory "
    "error or system crash. The tool execution was interrupted and did not complete."
)


@pytest.mark.parametrize("provider", PROFILE_NAMES)
@pytest.mark.parametrize("real_first", [False, True])
def test_a_call_answered_twice_keeps_its_real_output(provider: str, real_first: bool) -> None:
    """Defect 3: a call answered first by "A restart occurred while this tool was in
    progress." and then by "Command output: success" lost the real output in repair."""
    # OpenHands/agent-sdk#2298: the restart notice, then the late real observation
    notice, real = _result("call_1", RESTART), _result("call_1", "Command output: success")
    answers = [real, notice] if real_first else [notice, real]
    history = [USER, _assistant(_call("call_1")), *answers, {"role": "user", "content": "next"}]
    result = repair(history, provider=provider)
    contents = [m.get("content") for m in result.messages if m.get("role") == "tool"]
    assert contents == ["Command output: success"]
    (dropped,) = [c for c in result.changes if c.code == "duplicate_tool_result"]
    assert dropped.action == "drop" and dropped.message is notice  # nothing lost
    assert dropped.index == history.index(notice) and dropped.output_index is None
    assert "real output" in dropped.reason
    assert validate(result.messages, provider=provider) == []
    assert repair(result.messages, provider=provider).changes == ()


@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        ("[Tool execution was interrupted]", "3 files changed", "3 files changed"),  # opencode
        ("total 12\ndrwxr-xr-x src", "Tool execution aborted", "total 12\ndrwxr-xr-x src"),
        (
            "[Request interrupted by user for tool use]",
            "",
            "[Request interrupted by user for tool use]",
        ),
        ("", "Error: permission denied", "Error: permission denied"),
        (
            "Error: timed out after 30s",
            "[Operation Cancelled] Reason: User denied execution.",
            "Error: timed out after 30s",
        ),
        (
            "Error: ENOENT",
            "Traceback (most recent call last):\n  ...",
            "Traceback (most recent call last):\n  ...",
        ),
        (STUB_RESULT, "exit code 0", "exit code 0"),
        ("exit code 0", STUB_RESULT, "exit code 0"),
    ],
)
def test_duplicate_results_rank_output_over_error_over_stand_in_over_empty(
    first: str, second: str, kept: str
) -> None:
    history = [USER, _assistant(_call("c1")), _result("c1", first), _result("c1", second)]
    result = repair(history, provider="openai")
    assert [m["content"] for m in result.messages if m["role"] == "tool"] == [kept]
    (change,) = result.changes
    lost = first if kept == second and kept != first else second
    assert change.message["content"] == lost


def test_a_separated_real_output_wins_and_moves_back() -> None:
    history = [
        USER,
        _assistant(_call("c1"), _call("c2")),
        _result("c1", RESTART),
        _result("c2", "ok"),
        {"role": "assistant", "content": "the first call crashed"},
        _result("c1", "Command output: success"),
    ]
    result = repair(history, provider="openai")
    tools = result.messages[2:4]
    assert {m["tool_call_id"]: m["content"] for m in tools} == {
        "c1": "Command output: success",
        "c2": "ok",
    }
    assert {c.action for c in result.changes} == {"drop", "move"}
    assert validate(result.messages, provider="openai") == []


def _bridged_call(name: str = "bash") -> dict[str, Any]:
    """A chat tool call as Responses-bridging SDKs write it: the item id and the call id."""
    call = _call("fc_123", name)
    call["call_id"] = "call_123"
    return call


@pytest.mark.parametrize("provider", PROFILE_NAMES)
def test_a_call_id_alias_pairs_the_call_with_its_result(provider: str) -> None:
    """Defect 4: a chat tool call carrying ``"id": "fc_123"`` and ``"call_id": "call_123"``
    with a result for ``call_123`` lost the real result as an orphan and got a stub."""
    history = [
        USER,
        _assistant(_bridged_call()),
        _result("call_123", "real result"),
        {"role": "user", "content": "thanks"},
    ]
    codes = {v.code for v in validate(history, provider=provider)}
    assert not codes & {"orphan_tool_result", "unanswered_tool_call", "tool_result_misplaced"}
    assert "unknown_key" in codes  # no provider takes a call_id key on a chat tool call

    result = repair(history, provider=provider)
    assert validate(result.messages, provider=provider) == []
    (call,) = result.messages[1]["tool_calls"]
    tool = result.messages[2]
    assert tool["content"] == "real result"
    assert tool["tool_call_id"] == call["id"] and "call_id" not in call
    if provider != "mistral":  # Mistral takes 9-character ids only: both are rewritten
        assert call["id"] == "call_123" and tool is history[2]  # the result keeps its id
    bridged = {"user_after_tool"}  # Mistral: an assistant turn between the result and "thanks"
    assert not [
        c for c in result.changes if c.action in ("drop", "insert") and c.code not in bridged
    ]
    (alias,) = [c for c in result.changes if c.code == "tool_call_id_alias"]
    assert alias.message == [{"id": "fc_123", "call_id": "call_123"}]  # nothing lost
    assert repair(result.messages, provider=provider).changes == ()


def test_a_result_naming_the_item_id_keeps_it() -> None:
    history = [USER, _assistant(_bridged_call()), _result("fc_123", "real result")]
    result = repair(history, provider="openai")
    assert result.messages[1]["tool_calls"][0]["id"] == "fc_123"
    assert result.messages[2] is history[2]


def test_an_unanswered_bridged_call_keeps_its_call_id_for_the_stub() -> None:
    history = [USER, _assistant(_bridged_call()), {"role": "user", "content": "next"}]
    result = repair(history, provider="openai")
    assert result.messages[1]["tool_calls"][0]["id"] == "call_123"
    assert result.messages[2] == {
        "role": "tool",
        "tool_call_id": "call_123",
        "content": STUB_RESULT,
    }


def test_bridged_calls_pair_when_their_results_come_late_and_out_of_order() -> None:
    first, second = _bridged_call(), _call("fc_456", "read_file")
    second["call_id"] = "call_456"
    history = [
        USER,
        _assistant(first, second),
        {"role": "assistant", "content": "waiting"},
        _result("call_456", "b"),
        _result("call_123", "a"),
    ]
    result = repair(history, provider="openai")
    by_id = {m["tool_call_id"]: m["content"] for m in result.messages[2:4]}
    assert by_id == {"call_123": "a", "call_456": "b"}
    assert [c["id"] for c in result.messages[1]["tool_calls"]] == ["call_123", "call_456"]
    assert validate(result.messages, provider="openai") == []


@pytest.mark.parametrize("bad_id", [None, "", "missing"])
def test_result_without_id_takes_the_call_right_before_it(bad_id: Any) -> None:
    result_message: dict[str, Any] = {"role": "tool", "content": "out"}
    if bad_id != "missing":
        result_message["tool_call_id"] = bad_id
    result = repair([USER, _assistant(_call("call_a")), result_message], provider="openai")
    assert result.messages[2]["tool_call_id"] == "call_a"
    assert result.messages[2]["content"] == "out"
    assert result_message.get("tool_call_id", "missing") == bad_id  # input untouched


def test_call_without_id_gets_a_deterministic_one_shared_with_its_result() -> None:
    history = [USER, _assistant(_call(None)), {"role": "tool", "content": "x"}]
    first = repair(history)
    second = repair(history)
    assert first.messages == second.messages
    call_id = first.messages[1]["tool_calls"][0]["id"]
    assert call_id and first.messages[2]["tool_call_id"] == call_id


def test_duplicate_call_ids_are_made_unique_with_results_following() -> None:
    history = [
        USER,
        _assistant(_call("call_1")),
        _result("call_1", "one"),
        {"role": "user", "content": "again"},
        _assistant(_call("call_1")),
        _result("call_1", "two"),
    ]
    assert repair(history, provider="openai").changes == ()  # OpenAI accepts reused ids
    result = repair(history, provider="anthropic")
    first_id = result.messages[1]["tool_calls"][0]["id"]
    second_id = result.messages[4]["tool_calls"][0]["id"]
    assert first_id == "call_1" and second_id != "call_1"
    assert result.messages[5] == {"role": "tool", "tool_call_id": second_id, "content": "two"}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"path": "a.py"}, {"path": "a.py"}),
        ('{"path": "a.py", "content": "trunc', {"path": "a.py", "content": "trunc"}),
        ("[1, 2]", {"value": [1, 2]}),
        (None, {}),
        ("", {}),
    ],
)
def test_arguments_become_json_objects(arguments: Any, expected: dict[str, Any]) -> None:
    result = repair(
        [USER, _assistant(_call("c", arguments=arguments)), _result("c")], provider="strict"
    )
    assert json.loads(result.messages[1]["tool_calls"][0]["function"]["arguments"]) == expected


def test_unknown_and_private_keys_are_removed_for_strict_and_reported() -> None:
    message = {"role": "user", "content": "hi", "id": "msg_1", "_cache": 3}
    result = repair([message], provider="strict")
    assert result.messages == [{"role": "user", "content": "hi"}]
    assert result.changes[0].message == {"id": "msg_1", "_cache": 3}


def test_reasoning_content_is_kept_for_openai_compatible_servers() -> None:
    message = {"role": "assistant", "content": "a", "reasoning_content": "because"}
    assert repair([USER, message], provider="openai").messages[1] is message


def test_history_starting_with_assistant_gets_an_opening_user_message() -> None:
    history = [{"role": "system", "content": "s"}, {"role": "assistant", "content": "hello"}]
    result = repair(history, provider="anthropic")
    assert result.messages[1] == {"role": "user", "content": OPENING_USER}
    assert repair(history, provider="openai").messages == history


def test_history_starting_with_tool_message() -> None:
    history = [_result("call_x", "stray"), USER, {"role": "assistant", "content": "ok"}]
    result = repair(history, provider="anthropic")
    assert [m["role"] for m in result.messages] == ["user", "assistant"]


def test_consecutive_same_roles_are_merged_where_forbidden() -> None:
    history = [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "thinking"},
        _assistant(_call("c")),
        _result("c"),
    ]
    result = repair(history, provider="anthropic")
    assert result.messages[0] == {"role": "user", "content": "one\n\ntwo"}
    assert result.messages[1]["content"] == "thinking"
    assert result.messages[1]["tool_calls"][0]["id"] == "c"
    assert len(result.messages) == 3
    assert repair(history, provider="openai").changes == ()


def test_late_system_message_moves_to_the_system_prompt() -> None:
    reminder = {"role": "system", "content": "be brief"}
    history = [{"role": "system", "content": "s"}, USER, reminder]
    result = repair(history, provider="strict")
    assert result.messages[1] is reminder
    assert result.changes[0].action == "move"


def test_empty_tool_calls_removed() -> None:
    result = repair(
        [USER, {"role": "assistant", "content": "hi", "tool_calls": []}], provider="openai"
    )
    assert result.messages[1] == {"role": "assistant", "content": "hi"}


@pytest.mark.parametrize(
    ("provider", "pattern"),
    [
        ("strict", r"^[A-Za-z0-9_-]+$"),
        ("anthropic", r"^[A-Za-z0-9_-]+$"),
        ("mistral", r"^[A-Za-z0-9]{9}$"),
    ],
)
def test_ids_are_rewritten_to_the_profile_alphabet(provider: str, pattern: str) -> None:
    import re

    history = [USER, _assistant(_call("call:1/x y")), _result("call:1/x y")]
    result = repair(history, provider=provider)
    new_id = result.messages[1]["tool_calls"][0]["id"]
    assert re.match(pattern, new_id)
    assert result.messages[2]["tool_call_id"] == new_id


def test_mistral_ids_stay_consistent_across_parallel_calls() -> None:
    history = [
        USER,
        _assistant(_call("call_a"), _call("call_b")),
        _result("call_b"),
        _result("call_a"),
    ]
    result = repair(history, provider="mistral")
    ids = [c["id"] for c in result.messages[1]["tool_calls"]]
    assert len(set(ids)) == 2
    assert {m["tool_call_id"] for m in result.messages[2:]} == set(ids)


def test_legacy_function_call_becomes_a_tool_exchange() -> None:
    history = [
        USER,
        {"role": "assistant", "content": None, "function_call": {"name": "ls", "arguments": "{}"}},
        {"role": "function", "name": "ls", "content": "a.py"},
    ]
    result = repair(history, provider="openai")
    call = result.messages[1]["tool_calls"][0]
    assert result.messages[2] == {
        "role": "tool",
        "name": "ls",
        "tool_call_id": call["id"],
        "content": "a.py",
    }


def test_rejects_something_that_is_not_a_list() -> None:
    from condense.exceptions import InputError

    with pytest.raises(InputError, match="list of messages"):
        repair("not a history")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="holds no message"):  # a request body is read
        repair({"messages": []})  # type: ignore[arg-type]
