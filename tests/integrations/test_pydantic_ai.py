"""pydantic-ai's own agent graph (``Agent.run_sync``) with ``CondenseCapability``,
against the strict fake speaking Chat Completions through pydantic-ai's OpenAI model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from condense.testing import StrictProvider
from condense.validate import validate

from .support import (
    ASK,
    MODEL,
    WINDOW,
    broken_history,
    last_user_text,
    need,
    prompt_tokens,
)

pytestmark = pytest.mark.integrations

pydantic_ai = need("pydantic_ai", "pydantic-ai")
messages_module = need("pydantic_ai.messages", "pydantic-ai")
openai_models = need("pydantic_ai.models.openai", "pydantic-ai")
openai_providers = need("pydantic_ai.providers.openai", "pydantic-ai")
openai = need("openai", "pydantic-ai")
integration = need("condense.integrations.pydantic_ai", "pydantic-ai")

m = messages_module


def _history() -> list[Any]:
    """The broken history as pydantic-ai holds it (its ask comes as the run's prompt),
    one response carrying thinking with its signature and a built-in tool call."""
    canonical = broken_history()[:-1]
    history: list[Any] = []
    for message in canonical:
        role = message["role"]
        if role == "user":
            history.append(m.ModelRequest(parts=[m.UserPromptPart(content=message["content"])]))
        elif role == "tool":
            part = m.ToolReturnPart(
                tool_name="read_file",
                content=message["content"],
                tool_call_id=message["tool_call_id"],
            )
            history.append(m.ModelRequest(parts=[part]))
        else:
            parts: list[Any] = []
            if message.get("content"):
                parts.append(m.TextPart(content=message["content"]))
            for call in message.get("tool_calls") or []:
                parts.append(
                    m.ToolCallPart(
                        tool_name=call["function"]["name"],
                        args=call["function"]["arguments"],
                        tool_call_id=call["id"],
                    )
                )
            history.append(m.ModelResponse(parts=parts, model_name=MODEL))
    return history


def _run(fake: StrictProvider, capabilities: list[Any], history: list[Any]) -> Any:
    """One run of the agent graph on its own event loop, its HTTP client closed after."""

    async def run() -> Any:
        async with openai.AsyncOpenAI(base_url=fake.base_url, api_key="test") as client:
            provider = openai_providers.OpenAIProvider(openai_client=client)
            model = openai_models.OpenAIChatModel(MODEL, provider=provider)
            agent = pydantic_ai.Agent(
                model,
                instructions="You are a coding agent.",
                capabilities=capabilities,
                model_settings={"max_tokens": 256},
                retries=0,
            )
            return await agent.run(ASK, message_history=history)

    return asyncio.run(run())


@pytest.mark.parametrize("budget", [None, 6_000])
def test_the_agent_run_sends_a_valid_history_that_fits(budget: int | None) -> None:
    with StrictProvider("openai", context_window=WINDOW) as fake:
        with pytest.raises(pydantic_ai.exceptions.ModelHTTPError):
            _run(fake, [], _history())
        assert len(fake.refusals) == 1

        history = _history()
        result = _run(fake, [integration.CondenseCapability(budget)], history)

        assert len(fake.refusals) == 1
        body = fake.requests[-1]
        assert validate(body["messages"], provider="openai") == []
        assert prompt_tokens(body) + 256 <= (budget or WINDOW)
        assert last_user_text(body["messages"]) == ASK
        assert result.output.startswith("fake summary of")
        # only the request changed: the run's history holds every response it was given,
        # as the same objects (pydantic-ai itself joins and cleans request parts)
        kept = {id(message) for message in result.all_messages()}
        assert all(id(r) in kept for r in history if isinstance(r, m.ModelResponse))


def test_the_mapping_keeps_thinking_builtin_and_compaction_parts() -> None:
    thinking = m.ThinkingPart(content="let me look", signature="sig-123", provider_name="anthropic")
    native_call = m.NativeToolCallPart(tool_name="web_search", args={"q": "x"}, tool_call_id="ws1")
    native_return = m.NativeToolReturnPart(
        tool_name="web_search", content={"r": 1}, tool_call_id="ws1"
    )
    compaction = m.CompactionPart(content="opaque", provider_name="openai")
    long_args = {"path": "a.py", "content": "y" * 20_000}
    response = m.ModelResponse(
        parts=[
            thinking,
            native_call,
            native_return,
            compaction,
            m.TextPart(content="writing"),
            m.ToolCallPart(tool_name="write_file", args=long_args, tool_call_id="c1"),
        ]
    )
    history = [
        m.ModelRequest(parts=[m.UserPromptPart(content="write it")]),
        response,
        m.ModelRequest(
            parts=[m.ToolReturnPart(tool_name="write_file", content="ok", tool_call_id="c1")]
        ),
        m.ModelResponse(parts=[m.TextPart(content="done")]),
        m.ModelRequest(parts=[m.UserPromptPart(content="next")]),
    ]
    canonical, _, origins = integration.to_canonical(history)
    assert canonical[1]["thinking_blocks"] == [
        {"type": "thinking", "thinking": "let me look", "signature": "sig-123"}
    ]
    # unchanged: the very objects
    assert integration.from_canonical(canonical, origins)[1] is response
    # arguments shrunk by condense: the same response, its other parts as they were
    shrunk = {
        **canonical[1],
        "tool_calls": [
            {
                **canonical[1]["tool_calls"][0],
                "function": {"name": "write_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    }
    (rebuilt,) = integration.from_canonical([shrunk], origins)
    assert rebuilt.parts[:4] == [thinking, native_call, native_return, compaction]
    assert rebuilt.parts[5].args == '{"path": "a.py"}'
    assert rebuilt.parts[5].tool_call_id == "c1"


def test_an_unknown_models_window_is_learned_from_its_overflow_error() -> None:
    async def run(fake: StrictProvider) -> Any:
        async with openai.AsyncOpenAI(base_url=fake.base_url, api_key="test") as client:
            provider = openai_providers.OpenAIProvider(openai_client=client)
            model = openai_models.OpenAIChatModel("house-model-7", provider=provider)
            agent = pydantic_ai.Agent(
                model,
                capabilities=[integration.CondenseCapability()],
                model_settings={"max_tokens": 256},
                retries=0,
            )
            return await agent.run(ASK, message_history=_history())

    with StrictProvider("openai", context_window=WINDOW) as fake:
        asyncio.run(run(fake))
        assert [r.code for r in fake.refusals] == ["context_overflow"]
        assert prompt_tokens(fake.requests[-1]) + 256 <= WINDOW
        assert last_user_text(fake.requests[-1]["messages"]) == ASK
