"""Units: a tool call is identified by its id or its call_id alias, and a bridged call
with its result is one tool exchange before and after repair."""

from __future__ import annotations

from typing import Any

from condense import repair
from condense.units import UnitKind, call_ids, segment


def test_call_ids_are_the_id_then_the_call_id_alias() -> None:
    assert call_ids({"id": "fc_1", "call_id": "call_1"}) == ("fc_1", "call_1")
    assert call_ids({"id": "call_1", "call_id": "call_1"}) == ("call_1",)
    assert call_ids({"call_id": "call_1"}) == ("call_1",)
    assert call_ids({"id": "", "call_id": None}) == ()
    assert call_ids(["not", "a", "call"]) == ()


def test_a_bridged_call_and_its_result_are_one_tool_exchange() -> None:
    call = {
        "id": "fc_123",
        "call_id": "call_123",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_123", "content": "a.py"},
        {"role": "user", "content": "thanks"},
    ]
    shape = [
        (UnitKind.USER, 0, 1),
        (UnitKind.TOOL_EXCHANGE, 1, 3),
        (UnitKind.USER, 3, 4),
    ]
    assert [(u.kind, u.start, u.stop) for u in segment(history)] == shape
    repaired = repair(history, provider="openai").messages
    assert [(u.kind, u.start, u.stop) for u in segment(repaired)] == shape
    assert repaired[2]["content"] == "a.py"
