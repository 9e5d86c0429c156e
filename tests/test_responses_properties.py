"""Properties of the Responses adapter on requests shaped like Codex CLI's: reasoning
before each response, parallel ``function_call``s (some MCP ones with ``namespace``),
``custom_tool_call``s, ``developer`` messages between a call and its output, web
searches and a compaction item. Judged by the API's rules as ``native_responses_rules``
writes them out (no condense code)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import condense
from condense.formats import to_responses
from native_responses_rules import current_turn, kept_with_neighbours, problems
from profiles import examples

QUICK = settings(
    max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow], deadline=None
)
TEXT = st.text(
    alphabet=st.sampled_from([*'ab \n{}"\\:', "é", "🚀"]), min_size=1, max_size=12
).filter(str.strip)
BULK = "\n".join(f"{n}: " + "lorem ipsum dolor sit amet " * 3 for n in range(300))


def _text(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    item: dict[str, Any] = {
        "type": "message",
        "role": role,
        "content": [{"type": kind, "text": text}],
    }
    if role == "assistant":
        item["phase"] = "commentary"
    return item


@st.composite
def codex_requests(draw: st.DrawFn) -> dict[str, Any]:
    items: list[dict[str, Any]] = [_text("user", draw(TEXT))]
    if draw(st.booleans()):
        items.append({"type": "compaction", "encrypted_content": "gAAAAB" + draw(TEXT)})
    serial = 0
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            items.append(
                {
                    "type": "reasoning",
                    "summary": [],
                    "content": None,
                    "encrypted_content": f"enc{serial}",
                }
            )
            if draw(st.booleans()):
                items.append(_text("assistant", draw(TEXT)))
            calls: list[dict[str, Any]] = []
            for n in range(draw(st.integers(min_value=1, max_value=3))):
                call_id = f"call_{serial}_{n}"
                if draw(st.booleans()):
                    call: dict[str, Any] = {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": draw(TEXT)}),
                        "call_id": call_id,
                    }
                    if draw(st.booleans()):
                        call["namespace"] = "mcp__github"
                else:
                    call = {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call_id,
                        "name": "apply_patch",
                        "input": "*** Begin Patch\n" + draw(TEXT),
                    }
                calls.append(call)
            items.extend(calls)
            if draw(st.booleans()):
                items.append(_text("developer", "approved " + draw(TEXT)))
            for call in calls:
                kind = (
                    "custom_tool_call_output"
                    if call["type"] == "custom_tool_call"
                    else "function_call_output"
                )
                output = BULK if draw(st.integers(0, 5)) == 0 else draw(TEXT)
                items.append({"type": kind, "call_id": call["call_id"], "output": output})
            serial += 1
        items.append(
            {
                "type": "reasoning",
                "summary": [],
                "content": None,
                "encrypted_content": f"enc{serial}",
            }
        )
        if draw(st.booleans()):
            items.append(
                {
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "search", "query": "q"},
                }
            )
            items.append(
                {
                    "type": "reasoning",
                    "summary": [],
                    "content": None,
                    "encrypted_content": f"w{serial}",
                }
            )
        items.append(_text("assistant", draw(TEXT)))
        items.append(_text("user", draw(TEXT)))
        serial += 1
    return {"model": "gpt-5-codex", "instructions": "be brief", "input": items, "store": False}


@QUICK
@given(codex_requests())
def test_a_codex_request_reads_validates_and_writes_back_as_it_came(
    request: dict[str, Any],
) -> None:
    before = copy.deepcopy(request)
    assert problems(request) == []  # the generator's own check
    conversation = condense.load(request)
    assert conversation.dump() == request and request == before
    assert condense.validate(conversation) == []
    healed = condense.repair(conversation)
    assert healed.changes == () and conversation.dump(healed.messages) == request


@QUICK
@given(codex_requests())
def test_a_fresh_write_of_a_codex_request_is_the_same_request(request: dict[str, Any]) -> None:
    """Every message rebuilt (as after any change): the items come out the same, so
    nothing a rewrite touches loses a key the API accepts or gains one it refuses."""
    messages = [copy.deepcopy(m) for m in condense.load(request).messages]
    assert to_responses(messages) == request["input"]


@QUICK
@given(codex_requests(), st.sampled_from([600, 2_000, 8_000]))
def test_a_compressed_codex_request_is_one_the_api_accepts(
    request: dict[str, Any], budget: int
) -> None:
    result = condense.compress(request, budget=budget)
    out = result.native
    assert isinstance(out, dict) and out["instructions"] == request["instructions"]
    assert problems(out) == []
    assert kept_with_neighbours(request, out) == []
    turn = current_turn(request)
    assert out["input"][-len(turn) :] == turn
