"""Hypothesis strategies for adversarial chat histories.

``histories()`` builds a plausible agent session (system prompt, user asks, replies,
tool exchanges with parallel calls) and then breaks it the way real histories break:
results orphaned, moved, duplicated or lost, ids missing or reused or malformed, a
second id in ``call_id``,
arguments that are dicts, invalid or non-object JSON, unknown and private keys, odd
roles and content shapes, consecutive same-role messages.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

TEXT = st.lists(
    st.sampled_from([*"abc xyz\n{}\"'\\", "中文", "é", "👩‍👩‍👧", "\u200d", "🚀", "   "]),
    max_size=20,
).map("".join)
IDS = st.one_of(
    st.sampled_from(["call_1", "call_2", "call_3", "toolu_01", "abc", "x" * 50]),
    st.text(alphabet="abcXYZ019_-. /:", min_size=1, max_size=12),
)
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["path", "command", "q"]), TEXT, max_size=3).map(
        lambda d: json.dumps(d, ensure_ascii=False)
    ),
    st.dictionaries(st.sampled_from(["path", "n"]), st.integers(), max_size=2),  # a dict
    st.sampled_from(['{"path": "a.py", "content": "trunc', "[1, 2]", '"s"', "", "null", "{"]),
    st.none(),
    TEXT,
)
CONTENT = st.one_of(
    TEXT,
    st.none(),
    st.just(""),
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, TEXT),
            st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
            TEXT,
            st.integers(),
        ),
        max_size=3,
    ),
    st.integers(),
    st.dictionaries(st.just("k"), TEXT, max_size=1),
)


@st.composite
def tool_exchange(draw: st.DrawFn, serial: int) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=4))
    calls = []
    for k in range(count):
        call_id = draw(st.one_of(st.just(f"call_{serial}_{k}"), IDS))
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": draw(st.sampled_from(["bash", "read_file", "grep"])),
                    "arguments": draw(ARGUMENTS),
                },
            }
        )
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": draw(st.one_of(st.none(), st.just(""), TEXT)),
        "tool_calls": calls,
    }
    results = [
        {"role": "tool", "tool_call_id": call["id"], "content": draw(TEXT)} for call in calls
    ]
    return [assistant, *draw(st.permutations(results))]


@st.composite
def clean_history(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT)})
    for serial in range(draw(st.integers(min_value=0, max_value=6))):
        kind = draw(st.sampled_from(["user", "reply", "tools", "tools"]))
        if kind == "user":
            messages.append({"role": "user", "content": draw(TEXT)})
        elif kind == "reply":
            messages.append({"role": "assistant", "content": draw(TEXT)})
        else:
            messages.extend(draw(tool_exchange(serial)))
    if not messages:  # an empty history is refused as input (tested on its own)
        messages.append({"role": "user", "content": draw(TEXT)})
    return messages


def _break_one(draw: st.DrawFn, messages: list[dict[str, Any]]) -> None:
    """Apply one random fault in place (to our own freshly generated list)."""
    fault = draw(
        st.sampled_from(
            [
                "delete",
                "move",
                "duplicate",
                "id_none",
                "id_empty",
                "id_missing",
                "call_id_missing",
                "call_id_alias",
                "unknown_key",
                "private_key",
                "role",
                "content",
                "empty_tool_calls",
                "legacy",
                "not_a_dict",
                "tool_calls_garbage",
            ]
        )
    )
    if not messages and fault != "not_a_dict":
        return
    index = draw(st.integers(min_value=0, max_value=max(0, len(messages) - 1)))
    message = messages[index] if messages else None
    if not isinstance(message, dict) and fault not in ("delete", "move", "not_a_dict"):
        return
    if fault == "delete":
        del messages[index]
    elif fault == "move":
        target = draw(st.integers(min_value=0, max_value=len(messages) - 1))
        messages.insert(target, messages.pop(index))
    elif fault == "duplicate":
        messages.insert(index, copy.copy(messages[index]))
    elif fault in ("id_none", "id_empty", "id_missing") and message.get("role") == "tool":
        if fault == "id_missing":
            message.pop("tool_call_id", None)
        else:
            message["tool_call_id"] = None if fault == "id_none" else ""
    elif fault == "call_id_missing" and isinstance(message.get("tool_calls"), list):
        first = message["tool_calls"][0] if message["tool_calls"] else None
        if isinstance(first, dict):
            first.pop("id", None)
    elif fault == "call_id_alias" and isinstance(message.get("tool_calls"), list):
        first = message["tool_calls"][0] if message["tool_calls"] else None
        if isinstance(first, dict):  # as Responses-bridging SDKs write it; results keep it
            first["call_id"] = first.get("id")
            first["id"] = draw(st.sampled_from(["fc_1", "fc_2", "call_1"]))
    elif fault == "unknown_key":
        message["id"] = "msg_1"
    elif fault == "private_key":
        message["_meta"] = {"x": 1}
    elif fault == "role":
        message["role"] = draw(st.sampled_from(["human", "Assistant", "function", "robot", None]))
    elif fault == "content":
        message["content"] = draw(CONTENT)
    elif fault == "empty_tool_calls" and message.get("role") == "assistant":
        message["tool_calls"] = []
    elif fault == "legacy" and message.get("role") == "assistant":
        message.pop("tool_calls", None)
        message["function_call"] = {"name": "bash", "arguments": '{"command": "ls"}'}
        messages.insert(index + 1, {"role": "function", "name": "bash", "content": "a.py"})
    elif fault == "not_a_dict":
        messages.insert(index, draw(st.sampled_from(["hello", 3, None, ["x"]])))  # type: ignore[arg-type]
    elif fault == "tool_calls_garbage" and message.get("role") == "assistant":
        message["tool_calls"] = draw(st.sampled_from(["x", {"a": 1}, [1, "y"], [{"id": "q"}]]))


@st.composite
def histories(draw: st.DrawFn) -> list[Any]:
    messages = draw(clean_history())
    for _ in range(draw(st.integers(min_value=0, max_value=5))):
        _break_one(draw, messages)
    if not any(isinstance(m, dict) for m in messages):
        # a history without a single message is refused as input (tested on its own)
        messages.append({"role": "user", "content": "hi"})
    return messages
