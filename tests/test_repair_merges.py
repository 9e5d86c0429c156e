"""Repair's role merging never loses a tool call (found by hypothesis under ``responses``)."""

from __future__ import annotations

from typing import Any

import condense


def _call(ident: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def test_merging_two_assistant_messages_with_calls_keeps_every_call() -> None:
    """Under the Responses API a result may come anywhere after its call, so once repair
    drops the orphan between them, two assistant messages with calls stand side by side:
    the merged message holds both calls, and every result still answers one."""
    history = [
        {"role": "assistant", "content": None, "tool_calls": [_call("call_3")]},
        {"role": "tool", "tool_call_id": "call_orphan", "content": ""},
        {"role": "assistant", "content": None, "tool_calls": [_call("call_4")]},
        {"role": "tool", "tool_call_id": "call_3", "content": "three"},
    ]
    healed = condense.repair(history, provider="responses")
    calls = [
        call["id"]
        for message in healed.messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    ]
    assert calls == ["call_3", "call_4"]
    results = {m["tool_call_id"]: m["content"] for m in healed.messages if m["role"] == "tool"}
    assert results["call_3"] == "three"
    assert condense.validate(healed.messages, provider="responses") == []
