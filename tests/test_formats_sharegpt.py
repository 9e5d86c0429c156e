"""ShareGPT (Hermes) adapter: tagged calls and responses, and the quirks of real datasets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from condense.exceptions import FormatError
from condense.formats import from_sharegpt, load, to_sharegpt


def _call(name: str, **arguments: Any) -> str:
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def _response(text: str) -> str:
    return f"<tool_response>\n{text}\n</tool_response>"


def _turn(who: str, value: str, **extra: Any) -> dict[str, Any]:
    return {"from": who, "value": value, **extra}


PARALLEL = {
    "id": "demo/1",
    "conversations": [
        _turn("system", "You can call tools."),
        _turn("human", "Area of circles with radius 1.5 and 3?"),
        _turn(
            "gpt",
            "<think>\nTwo calls.\n</think>\n"
            + _call("circle_area", radius=1.5)
            + "\n"
            + _call("circle_area", radius=3),
        ),
        _turn("tool", _response('{"area": 7.07}') + "\n" + _response('{"area": 28.27}')),
        _turn("gpt", "<think>\nDone.\n</think>\n7.07 m² and 28.27 m²."),
    ],
    "tools": "[]",
}


def test_parallel_calls_are_answered_in_order() -> None:
    messages = load(PARALLEL).messages
    roles = "system user assistant tool tool assistant"
    assert [m["role"] for m in messages] == roles.split()
    calls = messages[2]
    assert calls["content"] == "<think>\nTwo calls.\n</think>"
    assert [c["id"] for c in calls["tool_calls"]] == ["call_2_0", "call_2_1"]
    assert calls["tool_calls"][1]["function"] == {
        "name": "circle_area",
        "arguments": '{"radius": 3}',
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_2_0", "content": '{"area": 7.07}'}
    assert messages[4]["tool_call_id"] == "call_2_1"
    assert messages[5]["content"].endswith("28.27 m².")


def test_round_trips_verbatim_and_fresh() -> None:
    conversation = load(PARALLEL)
    assert conversation.dump() == PARALLEL
    assert conversation.dump([dict(m) for m in conversation.messages]) == PARALLEL
    assert to_sharegpt(from_sharegpt(PARALLEL)) == PARALLEL["conversations"]


def test_changed_results_rewrite_only_their_turn() -> None:
    conversation = load(PARALLEL)
    messages = list(conversation.messages)
    messages[4] = {**messages[4], "content": "[masked]"}
    turns = conversation.dump(messages)["conversations"]
    original = PARALLEL["conversations"]
    assert [turns[i] is original[i] for i in range(5)] == [True, True, True, False, True]
    assert turns[3]["value"] == _response('{"area": 7.07}') + "\n" + _response("[masked]")


def test_results_are_written_in_call_order() -> None:
    messages = from_sharegpt(PARALLEL)
    swapped = [*messages[:3], messages[4], messages[3], messages[5]]
    assert to_sharegpt(swapped) == PARALLEL["conversations"]


def test_a_call_written_as_prose_leaves_an_orphan_result() -> None:
    # llamafactory glaive zh #197: the call is prose, the tool turn is tagged
    record = [
        _turn("human", "打折后多少钱？"),
        _turn("gpt", 'AI 计算折扣: {"原价": 200, "折扣": 20}'),
        _turn("tool", _response('{"折后价": 160}')),
        _turn("gpt", "折后价是 160 元。"),
    ]
    messages = from_sharegpt(record)
    assert "tool_calls" not in messages[1]
    assert messages[2] == {"role": "tool", "tool_call_id": "call_2_0", "content": '{"折后价": 160}'}
    conversation = load(record)
    assert conversation.dump() == record
    assert conversation.dump([dict(m) for m in conversation.messages]) == record


def test_a_trajectory_may_end_on_a_call() -> None:
    record = [_turn("human", "weather?"), _turn("gpt", _call("weather", city="Oslo"))]
    messages = from_sharegpt(record)
    assert messages[1]["content"] is None
    assert messages[1]["tool_calls"][0]["id"] == "call_1_0"
    assert to_sharegpt(messages) == record


def test_extra_and_missing_responses() -> None:
    record = [
        _turn("gpt", _call("a")),
        _turn("tool", _response("1") + "\n" + _response("2")),
        _turn("gpt", _call("b") + "\n" + _call("c")),
        _turn("tool", _response("3")),
        _turn("human", "next"),
    ]
    messages = from_sharegpt(record)
    assert [m.get("tool_call_id") for m in messages] == [
        None,
        "call_0_0",
        "call_1_1",  # answers no call
        None,
        "call_2_0",  # call_2_1 stays unanswered
        None,
    ]
    assert load(record).dump() == record


def test_results_split_over_consecutive_tool_turns() -> None:
    record = [
        _turn("gpt", _call("a") + "\n" + _call("b")),
        _turn("tool", _response("1")),
        _turn("tool", _response("2")),
    ]
    messages = from_sharegpt(record)
    assert [m["tool_call_id"] for m in messages[1:]] == ["call_0_0", "call_0_1"]
    conversation = load(record)
    assert conversation.dump() == record
    # written fresh, the results of one batch share one turn
    fresh = conversation.dump([dict(m) for m in messages])
    assert fresh == [record[0], _turn("tool", _response("1") + "\n" + _response("2"))]


def test_packed_parallel_results_are_split_and_repacked() -> None:
    # llamafactory reason_tool_use: one response holding a JSON array, one item per call
    items = [
        {"tool_call_id": "call_x", "content": "7.07"},
        {"tool_call_id": "call_y", "content": "28"},
    ]
    packed = json.dumps(items)
    record = [
        _turn("gpt", _call("area", r=1.5) + "\n" + _call("area", r=3)),
        _turn("tool", _response(packed)),
        _turn("gpt", _call("area", r=9)),
        _turn("tool", _response(json.dumps([{"tool_call_id": "call_z", "content": "254"}]))),
    ]
    messages = from_sharegpt(record)
    assert [json.loads(m["content"]) for m in messages[1:3]] == items
    assert [m["tool_call_id"] for m in messages[1:3]] == ["call_0_0", "call_0_1"]
    assert json.loads(messages[4]["content"]) == [{"tool_call_id": "call_z", "content": "254"}]
    conversation = load(record)
    assert conversation.dump([dict(m) for m in messages]) == record
    masked = [*messages[:2], {**messages[2], "content": "[masked]"}, *messages[3:]]
    assert json.loads(conversation.dump(masked)[1]["value"][16:-17]) == [items[0], "[masked]"]


def test_text_and_think_blocks_stay_in_content() -> None:
    value = "<think>\nplan\n</think>\nI'll search.\n" + _call("search", q="x") + "\nThen report."
    (message,) = from_sharegpt([_turn("gpt", value)])
    assert message["content"] == "<think>\nplan\n</think>\nI'll search.\nThen report."
    assert len(message["tool_calls"]) == 1


def test_a_block_that_is_not_a_call_stays_text() -> None:
    value = "<tool_call>\nnot json\n</tool_call>\n" + _call("ok")
    (message,) = from_sharegpt([_turn("gpt", value)])
    assert message["content"] == "<tool_call>\nnot json\n</tool_call>"
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["ok"]
    assert to_sharegpt([message]) == [_turn("gpt", value)]


def test_an_untagged_tool_turn_is_one_response() -> None:
    record = [_turn("gpt", _call("ls")), _turn("tool", "a.py\nb.py")]
    assert from_sharegpt(record)[1]["content"] == "a.py\nb.py"
    mixed = [_turn("gpt", _call("ls")), _turn("tool", "header\n" + _response("a.py"))]
    assert from_sharegpt(mixed)[1]["content"] == "header\n" + _response("a.py")


def test_names_and_extra_keys_are_kept() -> None:
    record = {
        "conversations": [
            _turn("user", "hi", weight=0),
            _turn("assistant", _call("f"), weight=1),
            _turn("tool", _response("ok"), weight=0),
        ],
        "source": "x",
    }
    conversation = load(record, format="sharegpt")
    assert conversation.messages[0] == {"role": "user", "content": "hi", "weight": 0}
    assert conversation.messages[2]["weight"] == 0
    added = [*conversation.messages, {"role": "user", "content": "thanks"}]
    assert conversation.dump(added)["conversations"][-1] == _turn("user", "thanks")
    assert conversation.dump([dict(m) for m in conversation.messages]) == record


def test_to_sharegpt_from_chat_messages() -> None:
    messages = [
        {"role": "developer", "content": [{"type": "text", "text": "rules"}]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{bad"}}
            ],
        },
    ]
    assert to_sharegpt(messages) == [
        _turn("system", "rules"),
        _turn("gpt", '<tool_call>\n{"name": "f", "arguments": "{bad"}\n</tool_call>'),
    ]


def test_errors_name_the_turn() -> None:
    with pytest.raises(FormatError, match="message 1: unknown 'from' 'observation'"):
        from_sharegpt([_turn("human", "a"), _turn("observation", "b")])
    with pytest.raises(FormatError, match="message 0: 'value' must be a string, got null"):
        from_sharegpt([{"from": "human", "value": None}])
    with pytest.raises(FormatError, match="'conversations' of a ShareGPT record must be"):
        from_sharegpt({"conversations": "x"})
    with pytest.raises(FormatError, match="message 0: unknown role 'robot'"):
        to_sharegpt([{"role": "robot", "content": "x"}])


def test_only_separating_newlines_leave_the_content() -> None:
    value = "<think>x</think>" + _call("a") + "\n" + _call("b") + "\nafter\n" + _call("c") + "tail"
    (message,) = from_sharegpt([_turn("gpt", value)])
    assert message["content"] == "<think>x</think>\naftertail"
    assert len(message["tool_calls"]) == 3
