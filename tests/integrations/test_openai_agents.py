"""The OpenAI Agents SDK's own run loop (``Runner``) with ``condense_input_filter`` and
``CondenseSession``, against the strict fake speaking the Responses API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from condense.formats import to_responses
from condense.testing import StrictProvider
from condense.testing.wire import request_messages
from condense.validate import validate

from .support import ASK, MODEL, WINDOW, broken_history, last_user_text, need

pytestmark = pytest.mark.integrations

agents = need("agents", "openai-agents")
openai = need("openai", "openai-agents")
integration = need("condense.integrations.openai_agents", "openai-agents")


def _agent(fake: StrictProvider, client: Any) -> Any:
    model = agents.OpenAIResponsesModel(model=MODEL, openai_client=client)
    return agents.Agent(
        name="coder",
        instructions="You are a coding agent.",
        model=model,
        model_settings=agents.ModelSettings(max_tokens=256),
    )


def _items() -> list[Any]:
    return list(to_responses(broken_history()))


def _check_last_request(fake: StrictProvider, budget: int | None) -> None:
    body = fake.bodies("responses")[-1]
    messages = request_messages("responses", body)
    assert validate(messages, provider="responses") == []
    assert fake._count("responses", body) + 256 <= (budget or WINDOW)
    assert last_user_text(messages) == ASK


def _run(fake: StrictProvider, items: Any, **options: Any) -> Any:
    """One run of the SDK's loop on its own event loop, its client closed after."""

    async def run() -> Any:
        async with openai.AsyncOpenAI(
            base_url=fake.base_url, api_key="test", max_retries=0
        ) as client:
            config = agents.RunConfig(tracing_disabled=True, **options.pop("config", {}))
            return await agents.Runner.run(
                _agent(fake, client), items, run_config=config, **options
            )

    return asyncio.run(run())


@pytest.mark.parametrize("budget", [None, 6_000])
def test_the_run_loop_sends_a_valid_input_that_fits(budget: int | None) -> None:
    with StrictProvider("openai", context_window=WINDOW) as fake:
        with pytest.raises(openai.BadRequestError):
            _run(fake, _items())
        assert len(fake.refusals) == 1

        condense_filter = integration.condense_input_filter(budget)
        result = _run(fake, _items(), config={"call_model_input_filter": condense_filter})

        assert len(fake.refusals) == 1
        _check_last_request(fake, budget)
        assert str(result.final_output).startswith("fake summary of")


def test_a_session_replays_a_valid_history_and_compacts_what_it_stores() -> None:
    def scenario(fake: StrictProvider, wrap: bool) -> Any:
        inner = agents.SQLiteSession("s")
        history = _items()[:-1]  # the stored session; the ask comes as the new input
        asyncio.run(inner.add_items(history))
        if not wrap:
            _run(fake, ASK, session=inner)
            return inner
        session = integration.CondenseSession(inner, model=MODEL)
        condense_filter = integration.condense_input_filter()
        _run(fake, ASK, session=session, config={"call_model_input_filter": condense_filter})
        return inner

    with StrictProvider("openai", context_window=WINDOW) as fake:
        with pytest.raises(openai.BadRequestError):
            scenario(fake, wrap=False)
        assert len(fake.refusals) == 1
        inner = scenario(fake, wrap=True)
        assert len(fake.refusals) == 1
        _check_last_request(fake, None)
        stored = asyncio.run(inner.get_items())
        # the compaction hook rewrote the stored history: valid, and within the window
        messages = request_messages("responses", {"input": stored})
        assert validate(messages, provider="responses") == []
        assert fake._count("responses", {"input": stored}) <= WINDOW


def test_unchanged_input_is_passed_through_as_is() -> None:
    items = [{"role": "user", "content": "hi"}]
    fitted, _ = integration.fit_items(items, budget=None, provider="auto", model=MODEL)
    assert fitted is items
