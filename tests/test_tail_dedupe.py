"""The newest units (the tail) are reduced only gently, yet an output that a newer copy
repeats word for word is pointed at that copy before any of them is summarized: the
pointer loses nothing the model cannot read a few messages later (issue 17, graded
protection: "kept if at all possible, reduced last and only gently")."""

from __future__ import annotations

import json
from typing import Any

from condense.compress import compress
from condense.tokens import count_tokens
from condense.validate import validate

FILE = "\n".join(f"{n:4d}  def handler_{n}(request): return route(request, {n})" for n in range(60))


def _session(reads: int) -> list[dict[str, Any]]:
    """An agent that reads the same file ``reads`` times (the output identical each
    time), then answers and gets a new ask."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Find why the router drops requests."},
    ]
    for n in range(reads):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": "router.py"})},
        }
        history.append({"role": "assistant", "content": f"Reading it ({n}).", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"call_{n}", "content": FILE})
    history.append({"role": "assistant", "content": "Line 12 returns before routing."})
    history.append({"role": "user", "content": "Fix it."})
    return history


def test_repeated_outputs_in_the_tail_are_pointed_at_their_copy_not_summarized() -> None:
    history = _session(4)
    output = count_tokens([history[3]]) - count_tokens([])
    # room for one copy of the output and the rest, not for four
    budget = count_tokens(history) - 2 * output
    result = compress(history, budget=budget, provider="openai", tail_tokens=10_000)
    report = result.report
    assert report.fits, report.describe()
    assert "summarized" not in report.actions, report.describe()
    assert report.actions.get("deduped") == 3
    pointers = [m for m in result.messages if m.get("role") == "tool" and m["content"] != FILE]
    assert len(pointers) == 3
    assert all("same output as the later tool call call_3" in m["content"] for m in pointers)
    assert result.messages[-3]["content"] == FILE  # the newest copy, whole
    assert validate(result.messages, provider="openai") == []
