"""LiteLLM's own request path (``litellm.acompletion`` with ``litellm.callbacks``) with
condense's handler, against the strict fake behind LiteLLM's OpenAI provider."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
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

pytestmark = [
    pytest.mark.integrations,
    # LiteLLM's own types warn under this pydantic (not ours to fix)
    pytest.mark.filterwarnings("ignore:.* using the .ReadOnly. qualifier:UserWarning"),
]

litellm = need("litellm", "litellm")  # offline: tests/conftest.py keeps its cost map local
integration = need("condense.integrations.litellm", "litellm")


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    """``litellm.callbacks``, restored after the test."""
    before = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = before


def _call(fake: StrictProvider, messages: list[Any]) -> Any:
    async def call() -> Any:
        return await litellm.acompletion(
            model=f"openai/{MODEL}",
            api_base=fake.base_url,
            api_key="test",
            messages=messages,
            max_tokens=256,
            num_retries=0,
        )

    return asyncio.run(call())


@pytest.mark.parametrize("budget", [None, 6_000])
def test_acompletion_sends_a_valid_history_that_fits(
    callbacks: list[Any], budget: int | None
) -> None:
    with StrictProvider("openai", context_window=WINDOW) as fake:
        with pytest.raises(litellm.BadRequestError):
            _call(fake, broken_history())
        assert len(fake.refusals) == 1

        callbacks.append(integration.CondenseHandler(budget) if budget else integration.handler)
        history = broken_history()
        reply = _call(fake, history)

        assert len(fake.refusals) == 1
        body = fake.requests[-1]
        assert validate(body["messages"], provider="openai") == []
        assert prompt_tokens(body) + 256 <= (budget or WINDOW)
        assert last_user_text(body["messages"]) == ASK
        assert reply.choices[0].message.content.startswith("fake summary of")
        assert history == broken_history()  # the caller's list is not mutated


def test_the_proxy_hook_returns_the_request_fitted() -> None:
    data = {"model": f"openai/{MODEL}", "messages": broken_history(), "max_tokens": 256}
    fitted = asyncio.run(integration.handler.async_pre_call_hook(None, None, data, "completion"))
    assert validate(fitted["messages"], provider="openai") == []
    assert last_user_text(fitted["messages"]) == ASK
    untouched = {"model": f"openai/{MODEL}", "messages": [{"role": "user", "content": "hi"}]}
    assert (
        asyncio.run(integration.handler.async_pre_call_hook(None, None, untouched, "completion"))
        is untouched
    )
