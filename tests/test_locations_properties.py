"""Properties of locations: every place an adapter records exists in the user's file and
holds what it should; the writers' layouts agree with what reading their output finds;
and no report about an Anthropic or Responses file ever names condense's internal keys,
whatever the faults and whichever provider it is checked for."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense.exceptions import InvalidOutputError
from condense.formats import load, to_anthropic, to_responses
from condense.formats.anthropic import layout as anthropic_layout
from condense.formats.locate import Path
from condense.formats.responses import layout as responses_layout
from condense.providers import PROFILES
from condense.repair import repair
from condense.validate import validate
from profiles import examples

INTERNAL = ("thinking_blocks", "responses_items", "item_id")
QUICK = settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
WORDS = st.sampled_from(["ls", "read a.py", "ok", "done", "中文", ""])
NAMES = st.sampled_from(["read", "run"])


@st.composite
def anthropic_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """Agent sessions in Anthropic's format: thinking (interleaved too), parallel calls,
    results with the user's text after them, a top-level system of either shape."""
    turns: list[Any] = [{"role": "user", "content": draw(WORDS) or "go"}]
    for n in range(draw(st.integers(1, 5))):
        blocks: list[Any] = []
        for k in range(draw(st.integers(1, 3))):
            if draw(st.booleans()):
                blocks.append({"type": "thinking", "thinking": f"t{n}{k}", "signature": "c2ln"})
            if draw(st.booleans()):
                blocks.append({"type": "redacted_thinking", "data": "ZGF0YQ=="})
            if draw(st.booleans()):
                blocks.append({"type": "text", "text": draw(WORDS) or "x"})
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{n}_{k}", "name": draw(NAMES), "input": {}}
            )
        turns.append({"role": "assistant", "content": blocks})
        results: list[Any] = [
            {"type": "tool_result", "tool_use_id": b["id"], "content": draw(WORDS)}
            for b in blocks
            if b["type"] == "tool_use"
        ]
        if draw(st.booleans()):
            results.append({"type": "text", "text": draw(WORDS) or "more"})
        turns.append({"role": "user", "content": results})
    if draw(st.booleans()):
        turns.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    system = draw(st.sampled_from([None, "Be careful.", [{"type": "text", "text": "Rules."}]]))
    return {"messages": turns} if system is None else {"system": system, "messages": turns}


@st.composite
def responses_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """Responses input: reasoning items with encrypted content before messages and
    parallel function calls, a web search call, replayed ids, status and phase."""
    items: list[Any] = []
    if draw(st.booleans()):
        items.append({"type": "message", "role": "developer", "content": "Be brief."})
    for n in range(draw(st.integers(1, 4))):
        items.append({"role": "user", "content": draw(WORDS) or "go"})
        items.append(
            {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": "gAAA"}
        )
        if draw(st.booleans()):
            items.append({"type": "web_search_call", "id": f"ws_{n}", "status": "completed"})
        if draw(st.booleans()):
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "phase": "commentary",
                    "content": [{"type": "output_text", "text": "Looking.", "annotations": []}],
                }
            )
        calls = draw(st.integers(0, 3))
        for k in range(calls):
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n}_{k}",
                    "call_id": f"call_{n}_{k}",
                    "name": draw(NAMES),
                    "arguments": "{}",
                    "status": "completed",
                }
            )
        for k in range(calls):
            items.append(
                {"type": "function_call_output", "call_id": f"call_{n}_{k}", "output": "ok"}
            )
    return {"model": "o4-mini", "input": items}


def _containers(node: Any, path: Path = ()) -> list[tuple[Path, Any]]:
    """Every object and array in ``node`` with its path."""
    found: list[tuple[Path, Any]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for key, value in node.items():
            found.extend(_containers(value, (*path, key)))
    elif isinstance(node, list):
        found.append((path, node))
        for index, value in enumerate(node):
            found.extend(_containers(value, (*path, index)))
    return found


@st.composite
def broken(draw: st.DrawFn, bodies: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A body broken the way real files break: keys no API knows (internal names too),
    lost or duplicated blocks and items, ids changed, inputs that are not objects."""
    body = copy.deepcopy(draw(bodies))
    for _ in range(draw(st.integers(0, 4))):
        places = _containers(body)
        path, target = draw(st.sampled_from(places))
        fault = draw(st.sampled_from(["key", "internal", "drop", "copy", "id", "input"]))
        if isinstance(target, dict) and fault in ("key", "internal"):
            key = draw(st.sampled_from(INTERNAL)) if fault == "internal" else "metadata"
            target[key] = "x"
        elif isinstance(target, list) and target and fault in ("drop", "copy"):
            at = draw(st.integers(0, len(target) - 1))
            if fault == "drop":
                del target[at]
            else:
                target.insert(at, copy.deepcopy(target[at]))
        elif isinstance(target, dict) and fault == "id":
            for key in ("id", "tool_use_id", "call_id"):
                if key in target:
                    target[key] = "moved_1"
        elif isinstance(target, dict) and fault == "input" and "input" in target:
            target["input"] = [1, 2]
        del path
    return body


PROVIDERS = st.sampled_from(["auto", *sorted(PROFILES)])


@QUICK
@given(st.one_of(broken(anthropic_bodies()), broken(responses_bodies())), PROVIDERS)
def test_no_report_names_an_internal_key(body: dict[str, Any], provider: str) -> None:
    try:
        conversation = load(body)
    except Exception:  # a fault made the body unreadable: that is FormatError's job
        return
    if conversation.format not in ("anthropic", "responses"):
        return
    texts = []
    for violation in validate(conversation, provider=provider):
        assert violation.location is not None
        texts.extend([str(violation), violation.detail, violation.provider_error or ""])
    try:
        result = repair(conversation, provider=provider)
    except InvalidOutputError:
        result = None
    if result is not None:
        texts.extend(f"{change} {change.location}" for change in result.changes)
    for text in texts:
        assert not any(key in text for key in INTERNAL), text


def _at(record: Any, path: Path) -> Any:
    node = record
    for step in path:
        node = node[step]
    return node


@QUICK
@given(st.one_of(anthropic_bodies(), responses_bodies()))
def test_every_recorded_place_exists_and_holds_its_thing(body: dict[str, Any]) -> None:
    conversation = load(body)
    locator = conversation.locator
    for index, message in enumerate(conversation.messages):
        place = locator.place(index)
        assert place is not None
        native = _at(body, place.path)
        kind = native.get("type") if isinstance(native, dict) else None
        if message["role"] == "tool":
            assert kind in ("tool_result", "function_call_output")
            assert native.get("tool_use_id", native.get("call_id")) == message["tool_call_id"]
        for call, path in zip(message.get("tool_calls") or [], place.calls, strict=True):
            block = _at(body, path)
            assert (block.get("call_id") or block["id"]) == call["id"]
        for path in place.replay:
            assert _at(body, path)["type"] in (
                "thinking",
                "redacted_thinking",
                "reasoning",
                "web_search_call",
            )
        content = message.get("content")
        if isinstance(content, list):
            assert len(place.parts) == len(content)
            for part, path in zip(content, place.parts, strict=True):
                if part.get("type") == "text":
                    assert _at(body, path)["text"] == part["text"]


@QUICK
@given(st.one_of(anthropic_bodies(), responses_bodies()))
def test_a_fresh_write_lays_messages_out_where_reading_finds_them(body: dict[str, Any]) -> None:
    """``layout`` (where condense would put each message when writing it fresh) agrees
    with the places ``read`` finds in that written request."""
    messages = load(body).messages
    if "input" in body:
        native, places = responses_layout(messages)
        assert native == to_responses(messages)
    else:
        native, places = anthropic_layout(messages)
        assert native == to_anthropic(messages)
    again = load(
        json.loads(json.dumps(native)), format="responses" if "input" in body else "anthropic"
    )
    assert len(again.messages) == len(messages)
    assert places == tuple(again.locator.place(i) for i in range(len(messages)))
