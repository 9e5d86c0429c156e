"""guard(client): the real openai SDK, over 127.0.0.1, against the strict provider."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from condense.errors import Action, Category, RecoveryError, guard
from condense.exceptions import InputError, UnknownNameError
from condense.testing import StrictProvider
from condense.validate import Violation, validate

WINDOW = 1500
BUDGET = 1200


def poisoned_session() -> list[dict[str, Any]]:
    """One of each fault in provider-rules.md, and too long for ``WINDOW``."""
    big_output = "def test_refund(order):\n" + "    assert refund(order) == expected\n" * 240
    return [
        {"role": "system", "content": "You are a coding agent."},
        # first message after the system prompt from the assistant
        {"role": "assistant", "content": "Ready when you are."},
        # unknown key `id` on a message
        {"role": "user", "content": "Fix the failing test.", "id": "msg_1"},
        # two user messages in a row
        {"role": "user", "content": "It is in tests/test_orders.py."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                # bad id characters; arguments cut off (invalid JSON)
                {
                    "id": "call.read:1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "tests/t'},
                },
                # arguments that are JSON but not an object
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '["refund"]'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call.read:1", "content": big_output},
        # a tool result without tool_call_id
        {"role": "tool", "content": "orders.py:12: def refund("},
        # a tool result answering no call
        {"role": "tool", "tool_call_id": "call_ghost", "content": "orphan output"},
        # a system message in the middle (MiniMax: invalid message role: system)
        {"role": "system", "content": "Reminder: run the tests."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                # the id of an earlier call again; arguments as a dict, not a string
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "run", "arguments": {"cmd": "pytest -x"}},
                },
                # a call that is never answered
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "run", "arguments": '{"cmd": "ls"}'},
                },
            ],
        },
        {"role": "user", "content": "Where are we?"},
        # a tool result that is not directly after its call
        {"role": "tool", "tool_call_id": "call_2", "content": "1 failed, 3 passed"},
        {"role": "user", "content": "Go on, please."},
    ]


# the profile guard repairs for, per strict server; MiniMax's rules are OpenAI's plus a
# system prompt only at the start, which the strict profile covers
PROFILE_FOR = {
    "openai": "openai",
    "responses": "responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "mistral": "mistral",
    "strict": "strict",
    "minimax": "strict",
    "minimax-v2": "strict",
}


def faults(request: dict[str, Any], server: StrictProvider) -> set[tuple[str, str]]:
    """What the server's profile finds wrong in one recorded request."""
    return {_fault(v) for v in validate(request["messages"], provider=server.profile)}


def _fault(violation: Violation) -> tuple[str, str]:
    return violation.code, violation.tool_call_id or str(violation.index)


@pytest.fixture
def server() -> Iterator[StrictProvider]:
    with StrictProvider("anthropic", context_window=WINDOW) as provider:
        yield provider


_OPEN: list[openai.OpenAI] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def sdk(server: StrictProvider) -> openai.OpenAI:
    """An SDK client for ``server``, closed after the test."""
    client = openai.OpenAI(base_url=server.base_url, api_key="test")
    _OPEN.append(client)
    return client


# -- done when -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PROFILE_FOR))
def test_a_poisoned_session_heals_within_two_attempts(name: str) -> None:
    with StrictProvider(name, context_window=WINDOW) as server:
        client = guard(sdk(server), provider=PROFILE_FOR[name], budget=BUDGET)
        history = poisoned_session()
        assert server.token_counter({"messages": history}) > WINDOW

        reply = client.chat.completions.create(model="fake-model", messages=history)

        assert reply.choices[0].message.content
        recovery = client.last_recovery
        assert recovery is not None and len(recovery.attempts) <= 2
        healed = recovery.messages
        assert healed == server.requests[-1]["messages"]
        assert not validate(healed, provider=server.profile)
        assert server.token_counter({"messages": healed}) <= WINDOW
        assert len(server.refusals) == 1
        assert faults(server.requests[0], server)

        # the agent keeps appending to its own (unhealed) list: the fault stays healed
        history += [
            {"role": "assistant", "content": reply.choices[0].message.content},
            {"role": "user", "content": "And now the docs."},
        ]
        client.chat.completions.create(model="fake-model", messages=history)
        assert len(server.refusals) == 1
        assert client.last_recovery is not None and len(client.last_recovery.attempts) == 1

        seen: set[tuple[str, str]] = set()
        for request in server.requests:
            found = faults(request, server)
            assert not found & seen, f"{found & seen} reached the server twice"
            seen |= found


def test_the_refusal_is_the_providers_own(server: StrictProvider) -> None:
    client = guard(sdk(server), provider="anthropic", budget=BUDGET)
    client.chat.completions.create(model="fake-model", messages=poisoned_session())
    recovery = client.last_recovery
    assert recovery is not None
    diagnosis = recovery.attempts[0].diagnosis
    assert diagnosis is not None and diagnosis.status_code == 400
    assert diagnosis.message == 'messages: first message must use the "user" role'
    assert diagnosis.provider_code == "invalid_request_error"


def test_without_a_budget_the_overflow_is_met_on_the_next_attempt() -> None:
    with StrictProvider("openai", context_window=WINDOW) as server:
        client = guard(sdk(server), provider="openai")
        client.chat.completions.create(model="fake-model", messages=poisoned_session())
        recovery = client.last_recovery
        assert recovery is not None
        assert [a.action for a in recovery.attempts] == [Action.REPAIR, Action.COMPRESS, None]
        overflow = recovery.attempts[1].diagnosis
        assert overflow is not None and overflow.category is Category.CONTEXT_OVERFLOW
        assert overflow.allowed_tokens == WINDOW
        assert [r.code for r in server.refusals] == ["unknown_key", "context_overflow"]


# -- escalation, output, backoff, failure ---------------------------------------------------


def test_a_server_stricter_than_the_profile_gets_a_strict_repair() -> None:
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "what now?"},
    ]
    with StrictProvider("minimax") as server:
        client = guard(sdk(server), provider="openai")
        client.chat.completions.create(model="fake-model", messages=history)
        recovery = client.last_recovery
        assert recovery is not None and len(recovery.attempts) == 2
        assert "(escalated)" in recovery.attempts[0].detail
        assert server.refusals[0].message == (
            "invalid params, chat content has invalid message role: system (2013)"
        )


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_max_tokens_is_lowered_to_what_fits(name: str) -> None:
    with StrictProvider(name, context_window=4000) as server:
        client = guard(sdk(server))
        messages = [{"role": "user", "content": "Write a long story."}]
        client.chat.completions.create(model="fake-model", messages=messages, max_tokens=6000)
        prompt = server.token_counter({"messages": messages})
        assert [r.get("max_tokens") for r in server.requests] == [6000, 4000 - prompt]
        assert client.last_recovery is not None
        assert client.last_recovery.max_tokens == 4000 - prompt


def test_max_completion_tokens_is_the_one_lowered_when_the_call_used_it() -> None:
    with StrictProvider("openai", context_window=4000) as server:
        client = guard(sdk(server))
        messages = [{"role": "user", "content": "Write."}]
        client.chat.completions.create(
            model="fake-model", messages=messages, max_completion_tokens=9000
        )
        last = server.requests[-1]
        assert "max_tokens" not in last and last["max_completion_tokens"] < 4000


def test_backoff_honours_retry_after_from_the_server(server: StrictProvider) -> None:
    waits: list[float] = []
    server.push(server.fail(429, retry_after=2), server.fail(529))
    client = guard(sdk(server), sleep=waits.append)
    messages = [{"role": "user", "content": "hi"}]
    client.chat.completions.create(model="fake-model", messages=messages)
    assert len(server.requests) == 3  # the SDK's own retries are off
    assert 2.0 <= waits[0] <= 2.2 and 0 < waits[1] <= 1.0
    recovery = client.last_recovery
    assert recovery is not None
    assert [d.category for d in recovery.diagnoses] == [Category.RATE_LIMIT, Category.OVERLOADED]


def test_auth_fails_at_once_with_the_diagnosis() -> None:
    with StrictProvider("openai", require_api_key="right") as server:
        client = guard(sdk(server))
        with pytest.raises(RecoveryError) as caught:
            client.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "hi"}]
            )
        assert len(server.requests) == 1
        assert caught.value.diagnosis.category is Category.AUTH
        assert isinstance(caught.value.error, openai.AuthenticationError)


def test_raise_original_keeps_the_sdks_exception_types() -> None:
    with StrictProvider("openai", require_api_key="right") as server:
        client = guard(sdk(server), raise_original=True)
        with pytest.raises(openai.AuthenticationError) as caught:
            client.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "hi"}]
            )
        assert any("condense.guard" in note for note in caught.value.__notes__)


def test_minimax_refusals_inside_a_200_are_caught() -> None:
    with StrictProvider("minimax-v2") as server:
        client = guard(sdk(server))
        history = [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "call_ghost", "content": "orphan"},
        ]
        reply = client.chat.completions.create(model="fake-model", messages=history)
        assert reply.choices[0].message.content
        recovery = client.last_recovery
        assert recovery is not None
        diagnosis = recovery.attempts[0].diagnosis
        assert diagnosis is not None and diagnosis.provider_code == "2013"


# -- streams, async, pass-through ------------------------------------------------------------


def test_streaming_recovers_a_failure_at_request_time(server: StrictProvider) -> None:
    client = guard(sdk(server), provider="anthropic", budget=BUDGET)
    stream = client.chat.completions.create(
        model="fake-model", messages=poisoned_session(), stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text.startswith("fake summary of")
    assert len(server.requests) == 2 and server.requests[-1]["stream"] is True


def test_async_client_is_guarded() -> None:
    async def main(server: StrictProvider) -> tuple[str, str]:
        async with guard(
            openai.AsyncOpenAI(base_url=server.base_url, api_key="test"),
            provider="gemini",
            budget=BUDGET,
        ) as client:
            reply = await client.chat.completions.create(
                model="fake-model", messages=poisoned_session()
            )
            stream = await client.chat.completions.create(
                model="fake-model", messages=poisoned_session(), stream=True
            )
            streamed = "".join([c.choices[0].delta.content or "" async for c in stream])
            return reply.choices[0].message.content or "", streamed

    with StrictProvider("gemini", context_window=WINDOW) as server:
        text, streamed = asyncio.run(main(server))
        assert text and streamed
        # the stream reused the healed history: one refusal in all
        assert len(server.refusals) == 1 and len(server.requests) == 3


def test_async_backoff_uses_the_injected_sleep(server: StrictProvider) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def main() -> None:
        raw = openai.AsyncOpenAI(base_url=server.base_url, api_key="test")
        async with guard(raw, sleep=sleep) as client:
            await client.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "hi"}]
            )

    server.push(server.fail(503, retry_after=1.5))
    asyncio.run(main())
    assert len(waits) == 1 and 1.5 <= waits[0] <= 1.65


def test_everything_else_passes_through(server: StrictProvider) -> None:
    raw = sdk(server)
    with guard(raw) as client:
        assert client.client is raw
        assert [m.id for m in client.models.list().data] == ["fake-model"]
        assert client.base_url == raw.base_url
        assert client.chat.completions.with_raw_response is not None
        assert "condense.guard(" in repr(client)


def test_sticky_can_be_turned_off(server: StrictProvider) -> None:
    client = guard(sdk(server), provider="anthropic", budget=BUDGET, sticky=False)
    history = poisoned_session()
    client.chat.completions.create(model="fake-model", messages=history)
    client.chat.completions.create(model="fake-model", messages=history)
    assert len(server.refusals) == 2


def test_an_unhealed_history_is_sent_as_the_agent_gave_it(server: StrictProvider) -> None:
    client = guard(sdk(server))
    history = [{"role": "user", "content": "hi"}]
    client.chat.completions.create(model="fake-model", messages=history)
    assert server.requests[0]["messages"] == history
    recovery = client.last_recovery
    assert recovery is not None and not recovery.changed
    assert json.dumps(recovery.messages) == json.dumps(history)


def test_guard_checks_what_it_is_given() -> None:
    with pytest.raises(InputError, match=r"chat\.completions\.create"):
        guard(object())
    with StrictProvider("openai") as server:
        with pytest.raises(InputError):
            guard(sdk(server), max_attempts=0)
        with pytest.raises(UnknownNameError):
            guard(sdk(server), provider="nope")
