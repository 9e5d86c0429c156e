"""guard(client) for every way the official SDKs send a history, over real HTTP.

The official ``openai`` and ``anthropic`` SDKs (and Azure's OpenAI client) speak to
:class:`~condense.testing.StrictProvider` on 127.0.0.1, which answers like the providers
do: ``/v1/chat/completions`` by the named provider's rules, ``/v1/responses`` by the
Responses API's, ``/v1/messages`` by Anthropic's, each refusing an over-window prompt with
its provider's own overflow text. Every guarded method — ``create`` (streaming or not),
``parse``, the ``.stream()`` helpers, ``with_raw_response`` on the resource and on the
client, ``with_streaming_response`` — gets a history that is both broken (a tool result
answering no call) and over the window, in that API's native shape. The provider must
refuse it first, accept what guard sends next, and never see a refused payload again; the
latest user text must arrive verbatim.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest

from condense.errors import Category, RecoveryError, guard
from condense.testing import StrictProvider

WINDOW = 1500
BUDGET = 1200
LAST_ASK = "Now fix the failing step and tell me what you changed."
LOG = "step 3: test_refund failed: expected 10, got 12 (orders.py:41)\n" * 120


def chat_history() -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Read the build log."},
            {"role": "assistant", "content": None, "tool_calls": [_call("call_1", "read")]},
            {"role": "tool", "tool_call_id": "call_1", "content": LOG},
            {"role": "assistant", "content": "The build failed at step 3."},
            {"role": "user", "content": "Run the tests."},
            {"role": "assistant", "content": None, "tool_calls": [_call("call_2", "run")]},
            {"role": "tool", "tool_call_id": "call_2", "content": "2 failed, 40 passed"},
            {"role": "tool", "tool_call_id": "call_ghost", "content": "an orphan result"},
            {"role": "assistant", "content": "Two tests fail."},
            {"role": "user", "content": LAST_ASK},
        ]
    }


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def responses_history() -> dict[str, Any]:
    return {
        "instructions": "You are a coding agent.",
        "input": [
            {"role": "user", "content": "Read the build log."},
            {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": LOG},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Step 3 fails."}]},
            {"role": "user", "content": "Run the tests."},
            {"type": "function_call", "call_id": "call_2", "name": "run", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_2", "output": "2 failed"},
            {"type": "function_call_output", "call_id": "call_ghost", "output": "an orphan"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Two fail."}]},
            {"role": "user", "content": LAST_ASK},
        ],
    }


def anthropic_history() -> dict[str, Any]:
    return {
        "max_tokens": 200,
        "system": "You are a coding agent.",
        "messages": [
            {"role": "user", "content": "Read the build log."},
            {"role": "assistant", "content": [_tool_use("toolu_1", "read")]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": LOG}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Step 3 fails."}]},
            {"role": "user", "content": "Run the tests."},
            {"role": "assistant", "content": [_tool_use("toolu_2", "run")]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "2 failed"},
                    {"type": "tool_result", "tool_use_id": "toolu_ghost", "content": "orphan"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Two tests fail."}]},
            {"role": "user", "content": LAST_ASK},
        ],
    }


def _tool_use(call_id: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


# -- how each form is called, and what text it answered ------------------------------------

Sync = Callable[[Any, dict[str, Any]], str]
Async = Callable[[Any, dict[str, Any]], Awaitable[str]]


def _chat_text(reply: Any) -> str:
    return str(reply.choices[0].message.content)


def _chat_chunks(stream: Any) -> str:
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


def _responses_events(stream: Any) -> str:
    return "".join(e.delta for e in stream if e.type == "response.output_text.delta")


def _anthropic_text(message: Any) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def _anthropic_events(stream: Any) -> str:
    return "".join(
        e.delta.text
        for e in stream
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )


def _opened(manager: Any, read: Callable[[Any], str]) -> str:
    with manager as opened:
        return read(opened)


SYNC_FORMS: dict[str, dict[str, Sync]] = {
    "chat": {
        "create": lambda c, kw: _chat_text(c.chat.completions.create(**kw)),
        "create-stream": lambda c, kw: _chat_chunks(c.chat.completions.create(stream=True, **kw)),
        "parse": lambda c, kw: _chat_text(c.chat.completions.parse(**kw)),
        "stream-helper": lambda c, kw: _opened(
            c.chat.completions.stream(**kw), lambda s: _chat_text(s.get_final_completion())
        ),
        "with-raw-response": lambda c, kw: _chat_text(
            c.chat.completions.with_raw_response.create(**kw).parse()
        ),
        "client-with-raw-response": lambda c, kw: _chat_text(
            c.with_raw_response.chat.completions.create(**kw).parse()
        ),
        "with-raw-response-stream": lambda c, kw: _chat_chunks(
            c.chat.completions.with_raw_response.create(stream=True, **kw).parse()
        ),
        "with-streaming-response": lambda c, kw: _opened(
            c.chat.completions.with_streaming_response.create(**kw),
            lambda r: _chat_text(r.parse()),
        ),
    },
    "responses": {
        "create": lambda c, kw: c.responses.create(**kw).output_text,
        "create-stream": lambda c, kw: _responses_events(c.responses.create(stream=True, **kw)),
        "parse": lambda c, kw: c.responses.parse(**kw).output_text,
        "stream-helper": lambda c, kw: _opened(
            c.responses.stream(**kw), lambda s: s.get_final_response().output_text
        ),
        "with-raw-response": lambda c, kw: (
            c.responses.with_raw_response.create(**kw).parse().output_text
        ),
        "client-with-raw-response": lambda c, kw: (
            c.with_raw_response.responses.create(**kw).parse().output_text
        ),
        "with-streaming-response": lambda c, kw: _opened(
            c.responses.with_streaming_response.create(**kw), lambda r: r.parse().output_text
        ),
    },
    "anthropic": {
        "create": lambda c, kw: _anthropic_text(c.messages.create(**kw)),
        "create-stream": lambda c, kw: _anthropic_events(c.messages.create(stream=True, **kw)),
        "parse": lambda c, kw: _anthropic_text(c.messages.parse(**kw)),
        "stream-helper": lambda c, kw: _opened(
            c.messages.stream(**kw), lambda s: s.get_final_text()
        ),
        "with-raw-response": lambda c, kw: _anthropic_text(
            c.messages.with_raw_response.create(**kw).parse()
        ),
        "client-with-raw-response": lambda c, kw: _anthropic_text(
            c.with_raw_response.messages.create(**kw).parse()
        ),
        "with-streaming-response": lambda c, kw: _opened(
            c.messages.with_streaming_response.create(**kw), lambda r: _anthropic_text(r.parse())
        ),
        "beta-create": lambda c, kw: _anthropic_text(c.beta.messages.create(**kw)),
        "beta-stream-helper": lambda c, kw: _opened(
            c.beta.messages.stream(**kw), lambda s: s.get_final_text()
        ),
    },
}


async def _achunks(stream: Any) -> str:
    return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])


async def _aresponses_events(stream: Any) -> str:
    return "".join([e.delta async for e in stream if e.type == "response.output_text.delta"])


async def _aanthropic_events(stream: Any) -> str:
    return "".join(
        [
            e.delta.text
            async for e in stream
            if e.type == "content_block_delta" and e.delta.type == "text_delta"
        ]
    )


async def _aopened(manager: Any, read: Callable[[Any], Awaitable[str]]) -> str:
    async with manager as opened:
        return await read(opened)


async def _final_completion(stream: Any) -> str:
    return _chat_text(await stream.get_final_completion())


async def _final_response(stream: Any) -> str:
    return str((await stream.get_final_response()).output_text)


async def _final_text(stream: Any) -> str:
    return str(await stream.get_final_text())


async def _parsed(raw: Awaitable[Any]) -> Any:
    """The raw response's parsed value (a plain call in openai, awaited in anthropic)."""
    value = (await raw).parse()
    return await value if asyncio.iscoroutine(value) else value


async def _raw_chat(raw: Awaitable[Any]) -> str:
    return _chat_text(await _parsed(raw))


async def _raw_chat_stream(raw: Awaitable[Any]) -> str:
    return await _achunks(await _parsed(raw))


async def _raw_responses(raw: Awaitable[Any]) -> str:
    return str((await _parsed(raw)).output_text)


async def _raw_anthropic(raw: Awaitable[Any]) -> str:
    return _anthropic_text(await _parsed(raw))


async def _await_then(call: Awaitable[Any], read: Callable[[Any], Any]) -> str:
    value = read(await call)
    return str(await value if asyncio.iscoroutine(value) else value)


ASYNC_FORMS: dict[str, dict[str, Async]] = {
    "chat": {
        "create": lambda c, kw: _await_then(c.chat.completions.create(**kw), _chat_text),
        "create-stream": lambda c, kw: _await_then(
            c.chat.completions.create(stream=True, **kw), _achunks
        ),
        "parse": lambda c, kw: _await_then(c.chat.completions.parse(**kw), _chat_text),
        "stream-helper": lambda c, kw: _aopened(c.chat.completions.stream(**kw), _final_completion),
        "with-raw-response": lambda c, kw: _raw_chat(
            c.chat.completions.with_raw_response.create(**kw)
        ),
        "client-with-raw-response": lambda c, kw: _raw_chat(
            c.with_raw_response.chat.completions.create(**kw)
        ),
        "with-raw-response-stream": lambda c, kw: _raw_chat_stream(
            c.chat.completions.with_raw_response.create(stream=True, **kw)
        ),
        "with-streaming-response": lambda c, kw: _aopened(
            c.chat.completions.with_streaming_response.create(**kw),
            lambda r: _await_then(r.parse(), _chat_text),
        ),
    },
    "responses": {
        "create": lambda c, kw: _await_then(c.responses.create(**kw), lambda r: r.output_text),
        "create-stream": lambda c, kw: _await_then(
            c.responses.create(stream=True, **kw), _aresponses_events
        ),
        "parse": lambda c, kw: _await_then(c.responses.parse(**kw), lambda r: r.output_text),
        "stream-helper": lambda c, kw: _aopened(c.responses.stream(**kw), _final_response),
        "with-raw-response": lambda c, kw: _raw_responses(
            c.responses.with_raw_response.create(**kw)
        ),
        "client-with-raw-response": lambda c, kw: _raw_responses(
            c.with_raw_response.responses.create(**kw)
        ),
        "with-streaming-response": lambda c, kw: _aopened(
            c.responses.with_streaming_response.create(**kw),
            lambda r: _await_then(r.parse(), lambda p: p.output_text),
        ),
    },
    "anthropic": {
        "create": lambda c, kw: _await_then(c.messages.create(**kw), _anthropic_text),
        "parse": lambda c, kw: _await_then(c.messages.parse(**kw), _anthropic_text),
        "create-stream": lambda c, kw: _await_then(
            c.messages.create(stream=True, **kw), _aanthropic_events
        ),
        "stream-helper": lambda c, kw: _aopened(c.messages.stream(**kw), _final_text),
        "with-raw-response": lambda c, kw: _raw_anthropic(
            c.messages.with_raw_response.create(**kw)
        ),
        "client-with-raw-response": lambda c, kw: _raw_anthropic(
            c.with_raw_response.messages.create(**kw)
        ),
        "with-streaming-response": lambda c, kw: _aopened(
            c.messages.with_streaming_response.create(**kw),
            lambda r: _await_then(r.parse(), _anthropic_text),
        ),
        "beta-create": lambda c, kw: _await_then(c.beta.messages.create(**kw), _anthropic_text),
        "beta-stream-helper": lambda c, kw: _aopened(c.beta.messages.stream(**kw), _final_text),
    },
}


# -- the clients ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sdk:
    """One client class, how to point it at the fake, and the APIs it speaks."""

    name: str
    make: Callable[[StrictProvider], Any]
    apis: tuple[str, ...]


def _root(server: StrictProvider) -> str:
    return server.base_url[: -len("/v1")]


SYNC_SDKS = [
    Sdk("OpenAI", lambda s: openai.OpenAI(base_url=s.base_url, api_key="t"), ("chat", "responses")),
    Sdk(
        "AzureOpenAI",
        lambda s: openai.AzureOpenAI(
            azure_endpoint=_root(s), api_key="t", api_version="2024-10-21"
        ),
        ("chat", "responses"),
    ),
    Sdk("Anthropic", lambda s: anthropic.Anthropic(base_url=_root(s), api_key="t"), ("anthropic",)),
    # Microsoft Foundry's Claude client shares the Messages resource
    Sdk(
        "AnthropicFoundry",
        lambda s: anthropic.AnthropicFoundry(base_url=_root(s), api_key="t"),
        ("anthropic",),
    ),
]
ASYNC_SDKS = [
    Sdk(
        "AsyncOpenAI",
        lambda s: openai.AsyncOpenAI(base_url=s.base_url, api_key="t"),
        ("chat", "responses"),
    ),
    Sdk(
        "AsyncAzureOpenAI",
        lambda s: openai.AsyncAzureOpenAI(
            azure_endpoint=_root(s), api_key="t", api_version="2024-10-21"
        ),
        ("chat", "responses"),
    ),
    Sdk(
        "AsyncAnthropic",
        lambda s: anthropic.AsyncAnthropic(base_url=_root(s), api_key="t"),
        ("anthropic",),
    ),
    Sdk(
        "AsyncAnthropicFoundry",
        lambda s: anthropic.AsyncAnthropicFoundry(base_url=_root(s), api_key="t"),
        ("anthropic",),
    ),
]
HISTORIES = {"chat": chat_history, "responses": responses_history, "anthropic": anthropic_history}


def _cases(sdks: list[Sdk], forms: dict[str, dict[str, Any]]) -> list[Any]:
    return [
        pytest.param(sdk, api, form, id=f"{sdk.name}-{api}-{form}")
        for sdk in sdks
        for api in sdk.apis
        for form in forms[api]
    ]


def assert_healed(server: StrictProvider, api: str, text: str) -> None:
    """The provider refused the history first, accepted what came next, and never saw a
    refused payload again; the latest user text arrived verbatim."""
    bodies = server.bodies(api)
    refused = [refusal.request for refusal in server.refusals if refusal.api == api]
    assert refused and refused[0] == 0, "the broken history must reach the provider first"
    assert {r.code for r in server.refusals} & {"orphan_tool_result", "context_overflow"}
    assert len(bodies) - 1 not in refused and text, "the last request must be answered"
    assert len(bodies) <= 3
    for index in refused:
        assert all(bodies[index] != later for later in bodies[index + 1 :]), "a refused repeat"
    assert LAST_ASK in json.dumps(bodies[-1], ensure_ascii=False)


@pytest.mark.parametrize(("sdk", "api", "form"), _cases(SYNC_SDKS, SYNC_FORMS))
def test_sync_forms_heal_a_broken_over_window_history(sdk: Sdk, api: str, form: str) -> None:
    with StrictProvider("openai", context_window=WINDOW) as server:
        client = guard(sdk.make(server), budget=BUDGET)
        try:
            text = SYNC_FORMS[api][form](client, {"model": "fake-model", **HISTORIES[api]()})
        finally:
            client.close()
        assert_healed(server, api, text)
        assert client.last_recovery is not None and client.last_recovery.recovered


@pytest.mark.parametrize(("sdk", "api", "form"), _cases(ASYNC_SDKS, ASYNC_FORMS))
def test_async_forms_heal_a_broken_over_window_history(sdk: Sdk, api: str, form: str) -> None:
    async def main(server: StrictProvider) -> str:
        async with guard(sdk.make(server), budget=BUDGET) as client:
            return await ASYNC_FORMS[api][form](client, {"model": "fake-model", **HISTORIES[api]()})

    with StrictProvider("openai", context_window=WINDOW) as server:
        text = asyncio.run(main(server))
        assert_healed(server, api, text)


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_without_a_budget_the_overflow_is_met_on_the_next_attempt(api: str) -> None:
    sdk = SYNC_SDKS[2] if api == "anthropic" else SYNC_SDKS[0]
    with StrictProvider("openai", context_window=WINDOW) as server:
        client = guard(sdk.make(server))
        text = SYNC_FORMS[api]["create"](client, {"model": "fake-model", **HISTORIES[api]()})
        assert_healed(server, api, text)
        assert [r.code for r in server.refusals] == ["orphan_tool_result", "context_overflow"]
        client.close()


def test_a_healed_anthropic_history_stays_healed_as_the_agent_appends() -> None:
    with StrictProvider("anthropic", context_window=WINDOW) as server:
        client = guard(anthropic.Anthropic(base_url=_root(server), api_key="t"), budget=BUDGET)
        request = anthropic_history()
        reply = client.messages.create(model="fake-model", **request)
        request["messages"] += [
            {"role": "assistant", "content": [{"type": "text", "text": _anthropic_text(reply)}]},
            {"role": "user", "content": "And the docs?"},
        ]
        client.messages.create(model="fake-model", **request)
        assert len(server.refusals) == 1  # the fault was healed once, never sent again
        sent = server.bodies("anthropic")[-1]["messages"]
        assert sent[-1] == {"role": "user", "content": "And the docs?"}
        assert client.last_request is not None and client.last_request["messages"] == sent
        client.close()


def test_calls_without_a_history_and_other_resources_pass_through() -> None:
    with StrictProvider("openai") as server:
        raw = openai.OpenAI(base_url=server.base_url, api_key="t")
        client = guard(raw)
        assert [m.id for m in client.models.list().data] == ["fake-model"]
        assert [m.id for m in client.with_raw_response.models.list().parse().data] == ["fake-model"]
        assert client.responses.create(model="fake-model", input="hi").output_text
        assert "guarded" in repr(client.chat.completions)
        client.close()


def test_the_vertex_client_is_guarded_too() -> None:
    # AnthropicVertex shares the Messages resource; its path (…/models/M:rawPredict) is
    # not one the fake serves, so the 404 shows the call went through guard's diagnosis
    with StrictProvider("anthropic") as server:
        vertex = anthropic.AnthropicVertex(
            region="us-east5", project_id="p", access_token="t", base_url=_root(server)
        )
        client = guard(vertex)
        with pytest.raises(RecoveryError) as caught:
            client.messages.create(model="fake-model", **anthropic_history())
        assert caught.value.diagnosis.category is Category.NOT_FOUND
        assert server.log[-1].path.endswith("/models/fake-model:rawPredict")
        client.close()
