"""The fake providers speak Anthropic Messages and OpenAI Responses too, as the official
SDKs expect them to, streaming and not, refusing in each provider's own shape."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx2
import openai
import pytest

from condense.testing import Fail, FakeProvider, Reply, StrictProvider, Truncated

ASK = [{"role": "user", "content": "What is in setup.py?"}]


@pytest.fixture
def strict() -> Iterator[StrictProvider]:
    with StrictProvider("strict", context_window=400, require_api_key="key") as server:
        yield server


def _anthropic(server: FakeProvider) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.base_url.removesuffix("/v1"), api_key="key", max_retries=0
    )


def _openai(server: FakeProvider) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="key", max_retries=0)


def test_anthropic_messages_plain_streamed_and_counted(strict: StrictProvider) -> None:
    with _anthropic(strict) as client:
        strict.push(Reply("one two three", finish_reason="length"))
        message = client.messages.create(model="claude-x", max_tokens=50, messages=ASK)
        assert message.content[0].text == "one two three"
        assert message.stop_reason == "max_tokens"
        assert message.usage.input_tokens > 0
        strict.push(Reply("alpha beta gamma delta epsilon"))
        with client.messages.stream(model="claude-x", max_tokens=50, messages=ASK) as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_message()
        assert final.content[0].text == "alpha beta gamma delta epsilon"
        assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
        assert kinds.count("text") >= 2  # deltas arrive in pieces
        count = client.messages.count_tokens(model="claude-x", messages=ASK)
        assert count.input_tokens == message.usage.input_tokens
    assert len(strict.bodies("anthropic")) == 2 and len(strict.bodies("count_tokens")) == 1
    assert strict.requests == []  # chat bodies only


def test_responses_plain_and_streamed(strict: StrictProvider) -> None:
    with _openai(strict) as client:
        strict.push(Reply("hello from responses"))
        response = client.responses.create(model="gpt-x", input=ASK, instructions="Be brief.")
        assert response.output_text == "hello from responses"
        assert response.status == "completed" and response.usage is not None
        strict.push(Reply("streamed words come in pieces"))
        with client.responses.stream(model="gpt-x", input="hi") as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
        assert final.output_text == "streamed words come in pieces"
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert kinds.count("response.output_text.delta") >= 2


def test_anthropic_refusals_in_anthropics_shape(strict: StrictProvider) -> None:
    with _anthropic(strict) as client:
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model="claude-x",
                max_tokens=50,
                messages=[{"role": "assistant", "content": "hi"}],
            )
        assert caught.value.body == {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": 'messages: first message must use the "user" role',
            },
            "request_id": "req_condense",
        }
        long = [{"role": "user", "content": "word " * 800}]
        with pytest.raises(
            anthropic.BadRequestError, match=r"prompt is too long: \d+ tokens > 400"
        ):
            client.messages.create(model="claude-x", max_tokens=50, messages=long)
        strict.push(strict.fail(529, retry_after=3))
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            client.messages.create(model="claude-x", max_tokens=50, messages=ASK)
        assert overloaded.value.status_code == 529
        assert overloaded.value.response.headers["retry-after"] == "3"
    reply = httpx2.post(
        strict.base_url + "/messages",
        json={"model": "x", "messages": ASK},
        headers={"x-api-key": "key"},
    )
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == "max_tokens: Field required"
    wrong = httpx2.post(strict.base_url + "/messages", json={}, headers={"x-api-key": "nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "authentication_error"
    assert [r.api for r in strict.refusals] == ["anthropic", "anthropic", "anthropic"]


def test_responses_refusals_in_openais_shape(strict: StrictProvider) -> None:
    orphan = [{"type": "function_call_output", "call_id": "call_1", "output": "x"}]
    with _openai(strict) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model="gpt-x", input=orphan)
        assert caught.value.body["message"] == (
            "No tool call found for function call output with call_id call_1."
        )
        with pytest.raises(openai.BadRequestError, match="exceeds the context window"):
            client.responses.create(model="gpt-x", input="word " * 800)
    assert strict.refusals[-1].api == "responses" and strict.refusals[-1].request == 1


def test_fake_provider_answers_every_api_in_its_shape() -> None:
    with FakeProvider(script=[Fail(500)]) as fake:
        failed = httpx2.post(fake.base_url + "/messages", json={"messages": ASK})
        assert failed.status_code == 500 and failed.json()["type"] == "error"
        garbled = httpx2.post(fake.base_url + "/responses", content=b"{")
        assert garbled.status_code == 400 and "error" in garbled.json()
        fake.push(Truncated(keep=0.5))
        with httpx2.stream(
            "POST", fake.base_url + "/messages", json={"messages": ASK, "stream": True}
        ) as cut:
            events = b"".join(cut.iter_raw())
        assert b"message_start" in events and b"message_stop" not in events


def test_paced_streams_send_keepalives_between_events() -> None:
    paced = Reply("a b c d", pause=0.01, keepalive=True)
    with (
        FakeProvider(script=[paced]) as fake,
        httpx2.stream(
            "POST", fake.base_url + "/messages", json={"messages": ASK, "stream": True}
        ) as reply,
    ):
        events = b"".join(reply.iter_raw()).split(b"\n\n")
    pings = [e for e in events if e.startswith(b"event: ping")]
    assert len(pings) > 2
