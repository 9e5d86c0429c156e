"""Issue 17 through the real ``condense proxy``: a 35-call agent session whose running turns
now and then hold outputs larger than the whole window, so the proxy's memory
(``compress(previous=state)`` on what it sent last time) needs every grade of protection,
the last resort included. On Chat Completions, Anthropic Messages (streamed and not) and
the Responses API (streamed).

Judged by what the upstream received, with a provider that counts its own way
(``ProviderCount``: another vocabulary, 4 tokens a message, the tools): every call is
answered, none refused for size, at most two upstream requests a call; the accepted
request fits the window, carries the latest ask verbatim, holds one summary at most and
no two messages of one role in a row, and every call of the running turn still has its
result.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from condense.testing import ProviderCount, StrictProvider
from proxy_sessions import Client, carries, latest_ask
from proxy_support import running_proxy, strings_in
from session_loops import LoopShape, agent_loop

WINDOW = 6_000
MODELS = {"chat": "gpt-4o", "anthropic": "claude-opus-4-6", "responses": "gpt-5-codex"}


def _turns(body: dict[str, Any], api: str) -> list[tuple[str, list[str], list[str]]]:
    """``(role, call ids made, call ids answered)`` of each message of an upstream body
    (a Responses call is a ``call`` of its own, its output a ``tool`` item)."""
    if api == "responses":
        return [_item(item) for item in body["input"]]
    found = []
    for message in body["messages"]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if api == "chat":
            calls = [c["id"] for c in message.get("tool_calls") or ()]
            answered = [message["tool_call_id"]] if message["role"] == "tool" else []
        else:
            calls = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            answered = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        found.append((message["role"], calls, answered))
    return found


def _item(item: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    if item.get("type") == "function_call":
        return "call", [item["call_id"]], []
    if item.get("type") == "function_call_output":
        return "tool", [], [item["call_id"]]
    return str(item.get("role") or item.get("type")), [], []


@pytest.mark.parametrize(
    ("api", "stream"),
    [("chat", False), ("anthropic", False), ("anthropic", True), ("responses", True)],
)
def test_a_session_with_outputs_larger_than_the_window_fits_on_every_call(
    tmp_path: Path, api: str, stream: bool
) -> None:
    shape = LoopShape(seed=7, steps=35, ask_rate=0.2, parallel=3, big_rate=0.12, write_rate=0.0)
    points = list(agent_loop(shape))
    assert any(p.running and len(p.history[-1]["content"]) > 4 * WINDOW for p in points)
    count = ProviderCount()
    with StrictProvider("openai", context_window=WINDOW, token_counter=count) as fake:
        root = fake.base_url.removesuffix("/v1")
        with running_proxy(["--upstream", root, "--context-window", str(WINDOW)], tmp_path) as p:
            client = Client(p.url, api, stream=stream, model=MODELS[api])
            sent = [(point, client.send(point.history, fake)) for point in points]
            client.close()
    for number, (point, turn) in enumerate(sent):
        where = f"call {number} ({len(point.history)} messages)"
        assert turn.status == 200, where
        assert 1 <= len(turn.upstream) <= 2, where
        accepted = turn.upstream[-1]
        assert count.count(api, accepted) <= WINDOW, where
        assert carries(accepted, latest_ask(point.history)), f"{where}: the latest ask is gone"
        summaries = sum(s.count("[condense: summary of") for s in strings_in(accepted))
        assert summaries <= 1, f"{where}: {summaries} summaries"
        turns = _turns(accepted, api)
        roles = [role for role, _, _ in turns]  # the agent sent no run of one role
        assert not any(a == b not in ("tool", "call") for a, b in itertools.pairwise(roles)), where
        made = [c for _, calls, _ in turns for c in calls]
        answered = [c for _, _, ids in turns for c in ids]
        assert sorted(made) == sorted(answered), where
        if point.running:  # the running step's calls, all answered
            step = next(m for m in reversed(point.history) if m.get("tool_calls"))
            assert {c["id"] for c in step["tool_calls"]} <= set(answered), where
    assert [r for r in fake.refusals if r.code in ("context_overflow", "output_limit")] == []
