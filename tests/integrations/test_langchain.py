"""LangChain v1's own agent loop (``create_agent``) with ``CondenseMiddleware``, against
the strict fake speaking OpenAI's Chat Completions through ``langchain-openai``."""

from __future__ import annotations

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

langchain_agents = need("langchain.agents", "langchain")
langchain_openai = need("langchain_openai", "langchain")
messages_module = need("langchain_core.messages", "langchain")
tools_module = need("langchain_core.tools", "langchain")
openai = need("openai", "langchain")
integration = need("condense.integrations.langchain", "langchain")


@tools_module.tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"contents of {path}"


def _agent(fake: StrictProvider, middleware: list[Any]) -> Any:
    model = langchain_openai.ChatOpenAI(
        model=MODEL, base_url=fake.base_url, api_key="test", max_retries=0, max_tokens=256
    )
    return langchain_agents.create_agent(model, tools=[read_file], middleware=middleware)


def _history() -> list[Any]:
    """The broken history as LangChain holds it: arguments that are not JSON sit in an
    ``AIMessage``'s ``invalid_tool_calls`` (``convert_to_messages`` refuses them)."""
    history = []
    for message in broken_history():
        try:
            history.extend(messages_module.convert_to_messages([message]))
        except ValueError:
            calls = message["tool_calls"]
            invalid = [
                {
                    "name": c["function"]["name"],
                    "args": c["function"]["arguments"],
                    "id": c["id"],
                    "error": "not JSON",
                    "type": "invalid_tool_call",
                }
                for c in calls
            ]
            history.append(messages_module.AIMessage(content="", invalid_tool_calls=invalid))
    return history


@pytest.mark.parametrize("budget", [None, 6_000])
def test_the_agent_loop_sends_a_valid_history_that_fits(budget: int | None) -> None:
    with StrictProvider("openai", context_window=WINDOW) as fake:
        with pytest.raises(openai.BadRequestError):
            _agent(fake, []).invoke({"messages": _history()})
        refused = len(fake.refusals)
        assert refused == 1

        result = _agent(fake, [integration.CondenseMiddleware(budget)]).invoke(
            {"messages": _history()}
        )

        assert len(fake.refusals) == refused  # nothing refused since
        body = fake.requests[-1]
        assert validate(body["messages"], provider="openai") == []
        assert prompt_tokens(body) + 256 <= (budget or WINDOW)
        assert last_user_text(body["messages"]) == ASK
        assert result["messages"][-1].content.startswith("fake summary of")


def test_the_async_loop_too() -> None:
    import asyncio

    with StrictProvider("openai", context_window=WINDOW) as fake:
        agent = _agent(fake, [integration.CondenseMiddleware()])
        asyncio.run(agent.ainvoke({"messages": _history()}))
        assert not fake.refusals
        assert last_user_text(fake.requests[-1]["messages"]) == ASK


def test_unchanged_messages_are_the_agents_own_objects() -> None:
    history = messages_module.convert_to_messages(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    )
    request = langchain_agents.middleware.ModelRequest(
        model=langchain_openai.ChatOpenAI(model=MODEL, api_key="test"), messages=list(history)
    )
    assert integration.CondenseMiddleware().condense(request) is request


def test_an_unknown_models_window_is_learned_from_its_overflow_error() -> None:
    with StrictProvider("openai", context_window=WINDOW) as fake:
        model = langchain_openai.ChatOpenAI(
            model="house-model-7",
            base_url=fake.base_url,
            api_key="test",
            max_retries=0,
            max_tokens=256,
        )
        middleware = integration.CondenseMiddleware()
        agent = langchain_agents.create_agent(model, tools=[read_file], middleware=[middleware])
        agent.invoke({"messages": _history()})
        # the one overflow taught the window; the retry fitted it
        assert [r.code for r in fake.refusals] == ["context_overflow"]
        assert prompt_tokens(fake.requests[-1]) + 256 <= WINDOW
        assert last_user_text(fake.requests[-1]["messages"]) == ASK
        agent.invoke({"messages": _history()})  # later calls fit up front
        assert len(fake.refusals) == 1
