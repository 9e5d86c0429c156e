"""Hypothesis strategies for reasoning-model agent histories, valid as their provider
sends them, long enough to force compression.

- ``anthropic_bodies()``: a native Anthropic Messages body. Every assistant turn starts
  with thinking (signed ``thinking`` blocks, sometimes ``redacted_thinking``); some turns
  interleave thinking between text and tool use (several thinking blocks in one turn);
  parallel ``tool_use`` blocks are answered in one user turn, sometimes with user text
  after the results. The history ends in a running tool loop, a final reply or a new ask.
- ``responses_inputs()``: native Responses input items. Every response starts with a
  ``reasoning`` item carrying ``encrypted_content``; output items keep their ``id``
  (``msg_…`` / ``fc_…``) and ``status``; some responses interleave a second reasoning
  item between the message and the calls.
- ``gemini_histories()``: chat messages as Gemini's OpenAI-compatible endpoint returns
  them: the first call of every step carries ``extra_content.google.thought_signature``.
- ``thinking_chat_histories()``: DeepSeek / Kimi thinking mode: every assistant message
  carries ``reasoning_content``.

Bulk text (tool outputs, arguments, reasoning) is made from a drawn seed so examples stay
cheap to generate; the structure is drawn by hypothesis and shrinks well.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from hypothesis import strategies as st

WORDS = [
    "cache",
    "order",
    "parser",
    "retry",
    "schema",
    "tenant",
    "worker",
    "queue",
    "invoice",
    "token",
    "session",
    "handler",
    "metric",
    "timeout",
    "migration",
    "config",
    "request",
    "response",
    "scheduler",
    "index",
    "payload",
    "缓存",
    "订单",
]
TOOLS = ("bash", "read_file", "grep", "write_file")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _output(rng: random.Random, lines: int) -> str:
    return "\n".join(f"{n:5}  {_text(rng, 8)}" for n in range(1, lines + 1))


def _opaque(rng: random.Random, size: int) -> str:
    """Base64 the way signatures and encrypted reasoning look."""
    return base64.b64encode(rng.randbytes(size)).decode("ascii")


def _arguments(rng: random.Random, tool: str, big: bool) -> dict[str, Any]:
    path = f"src/app/{rng.choice(WORDS)}_{rng.randrange(100)}.py"
    if tool == "bash":
        return {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py"}
    if tool == "grep":
        return {"pattern": rng.choice(WORDS), "path": "src/"}
    if tool == "write_file":
        return {"path": path, "content": _output(rng, 200 if big else 6)}
    return {"path": path}


class _Step:
    """The calls of one step: names, arguments and their results, from one rng."""

    def __init__(self, rng: random.Random, serial: int, calls: int, output_lines: int, big: bool):
        self.calls = []
        for k in range(calls):
            tool = rng.choice(TOOLS)
            self.calls.append((f"{serial:03d}{k}", tool, _arguments(rng, tool, big and k == 0)))
        self.results = [_output(rng, rng.randint(1, output_lines)) for _ in range(calls)]


STEP = st.fixed_dictionaries(
    {
        "calls": st.integers(min_value=1, max_value=3),
        "output_lines": st.sampled_from([2, 30, 120]),
        "big": st.booleans(),
        "interleaved": st.booleans(),
        "text": st.booleans(),
        "user_after": st.sampled_from([False, False, False, True]),
        "new_ask": st.sampled_from([False, False, False, True]),
    }
)
ENDINGS = st.sampled_from(["running", "running", "reply", "ask"])


# --- Anthropic ---------------------------------------------------------------------------


def _thinking(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.15:
        return {"type": "redacted_thinking", "data": _opaque(rng, 96)}
    return {
        "type": "thinking",
        "thinking": _text(rng, rng.randint(10, 120)),
        "signature": _opaque(rng, 64),
    }


@st.composite
def anthropic_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A native Anthropic body with thinking on every assistant turn (see the module)."""
    rng = random.Random(draw(st.integers(min_value=0, max_value=2**32)))
    steps = draw(st.lists(STEP, min_size=2, max_size=10))
    ending = draw(ENDINGS)
    turns: list[dict[str, Any]] = [{"role": "user", "content": f"Please fix {_text(rng, 8)}"}]
    for serial, step in enumerate(steps):
        made = _Step(rng, serial, step["calls"], step["output_lines"], step["big"])
        blocks: list[dict[str, Any]] = [_thinking(rng)]
        if step["text"]:
            blocks.append({"type": "text", "text": f"I will check {_text(rng, 10)}"})
        if step["interleaved"]:
            blocks.append(_thinking(rng))
        for call_id, tool, arguments in made.calls:
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{call_id}", "name": tool, "input": arguments}
            )
        turns.append({"role": "assistant", "content": blocks})
        results: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": f"toolu_{call_id}", "content": output}
            for (call_id, _, _), output in zip(made.calls, made.results, strict=True)
        ]
        if step["user_after"]:
            results.append({"type": "text", "text": f"also look at {_text(rng, 5)}"})
        turns.append({"role": "user", "content": results})
        last = serial == len(steps) - 1
        if step["new_ask"] and not last:
            turns.append(
                {
                    "role": "assistant",
                    "content": [_thinking(rng), {"type": "text", "text": _text(rng, 20)}],
                }
            )
            turns.append({"role": "user", "content": f"Next: {_text(rng, 8)}"})
    if ending != "running":
        turns.append(
            {
                "role": "assistant",
                "content": [_thinking(rng), {"type": "text", "text": f"Done: {_text(rng, 30)}"}],
            }
        )
        if ending == "ask":
            turns.append({"role": "user", "content": f"Now {_text(rng, 8)}"})
    return {"model": "claude-sonnet-4-5", "system": "You are a coding agent.", "messages": turns}


# --- OpenAI Responses --------------------------------------------------------------------


def _reasoning(rng: random.Random, serial: str) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": f"rs_{serial}",
        "summary": [{"type": "summary_text", "text": _text(rng, rng.randint(5, 40))}],
        "encrypted_content": "gAAAAA" + _opaque(rng, rng.randint(48, 400)),
    }


@st.composite
def responses_inputs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Native Responses input items with a reasoning item in every response."""
    rng = random.Random(draw(st.integers(min_value=0, max_value=2**32)))
    steps = draw(st.lists(STEP, min_size=2, max_size=10))
    ending = draw(ENDINGS)
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "developer", "content": "You are a coding agent."},
        {"type": "message", "role": "user", "content": f"Please fix {_text(rng, 8)}"},
    ]
    for serial, step in enumerate(steps):
        made = _Step(rng, serial, step["calls"], step["output_lines"], step["big"])
        items.append(_reasoning(rng, f"{serial:03d}a"))
        if step["text"]:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{serial:03d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": _text(rng, 12), "annotations": []}],
                }
            )
            if step["interleaved"]:
                items.append(_reasoning(rng, f"{serial:03d}b"))
        for call_id, tool, arguments in made.calls:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "call_id": f"call_{call_id}",
                    "name": tool,
                    "arguments": json.dumps(arguments),
                    "status": "completed",
                }
            )
        for (call_id, _, _), output in zip(made.calls, made.results, strict=True):
            items.append(
                {"type": "function_call_output", "call_id": f"call_{call_id}", "output": output}
            )
        if step["new_ask"] and serial != len(steps) - 1:
            items.append({"type": "message", "role": "user", "content": f"Next: {_text(rng, 8)}"})
    if ending != "running":
        items.append(_reasoning(rng, "final"))
        items.append(
            {
                "type": "message",
                "id": "msg_final",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": _text(rng, 30), "annotations": []}],
            }
        )
        if ending == "ask":
            items.append({"type": "message", "role": "user", "content": f"Now {_text(rng, 8)}"})
    return items


# --- chat: Gemini thought signatures, DeepSeek / Kimi reasoning_content -------------------


def _chat(draw: st.DrawFn, *, signatures: bool, reasoning: bool) -> list[dict[str, Any]]:
    rng = random.Random(draw(st.integers(min_value=0, max_value=2**32)))
    steps = draw(st.lists(STEP, min_size=2, max_size=10))
    ending = draw(ENDINGS)

    def assistant(content: str | None, calls: list[dict[str, Any]] | None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning:
            message["reasoning_content"] = _text(rng, rng.randint(10, 150))
        if calls:
            message["tool_calls"] = calls
        return message

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Please fix {_text(rng, 8)}"},
    ]
    for serial, step in enumerate(steps):
        made = _Step(rng, serial, step["calls"], step["output_lines"], step["big"])
        calls: list[dict[str, Any]] = []
        for position, (call_id, tool, arguments) in enumerate(made.calls):
            call: dict[str, Any] = {
                "id": f"call_{call_id}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
            if signatures and position == 0:
                signature = _opaque(rng, rng.randint(32, 300))
                call["extra_content"] = {"google": {"thought_signature": signature}}
            calls.append(call)
        text = f"I will check {_text(rng, 10)}" if step["text"] else None
        messages.append(assistant(text, calls))
        for (call_id, tool, _), output in zip(made.calls, made.results, strict=True):
            messages.append(
                {"role": "tool", "tool_call_id": f"call_{call_id}", "name": tool, "content": output}
            )
        if step["new_ask"] and serial != len(steps) - 1:
            messages.append(assistant(_text(rng, 20), None))
            messages.append({"role": "user", "content": f"Next: {_text(rng, 8)}"})
    if ending != "running":
        messages.append(assistant(f"Done: {_text(rng, 30)}", None))
        if ending == "ask":
            messages.append({"role": "user", "content": f"Now {_text(rng, 8)}"})
    return messages


@st.composite
def gemini_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Chat messages with a thought signature on the first call of every step."""
    return _chat(draw, signatures=True, reasoning=False)


@st.composite
def thinking_chat_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """DeepSeek / Kimi thinking mode: ``reasoning_content`` on every assistant message."""
    return _chat(draw, signatures=False, reasoning=True)
