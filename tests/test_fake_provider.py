"""FakeProvider: an OpenAI-compatible server on 127.0.0.1, driven by a script."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from cli_support import HANG_GUARD, wait_until
from condense.testing import (
    Delay,
    Disconnect,
    Empty,
    Fail,
    FakeProvider,
    Reply,
    Truncated,
)

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def post(
    fake: FakeProvider,
    body: Any,
    *,
    path: str = "/v1/chat/completions",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One raw request over a plain socket (no SDK, no proxy settings involved)."""
    connection = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=HANG_GUARD)
    try:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        connection.request(
            "POST", path, payload, {"Content-Type": "application/json", **(headers or {})}
        )
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@pytest.fixture
def client(fake_provider: FakeProvider) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=fake_provider.base_url, api_key="test", max_retries=0) as sdk:
        yield sdk


def test_base_url_and_ephemeral_ports() -> None:
    with FakeProvider() as one, FakeProvider() as two:
        assert one.base_url == f"http://127.0.0.1:{one.port}/v1"
        assert one.port != two.port


def test_models_endpoint(client: openai.OpenAI) -> None:
    assert [model.id for model in client.models.list().data] == ["fake-model"]


def test_default_responder_answers_when_nothing_is_scripted(
    fake_provider: FakeProvider, client: openai.OpenAI
) -> None:
    completion = client.chat.completions.create(**CHAT)  # type: ignore[call-overload]
    assert completion.choices[0].message.content == "fake summary of 1 messages"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens > 0
    assert fake_provider.requests == [CHAT]


def test_script_is_served_in_order_then_the_responder(fake_provider: FakeProvider) -> None:
    fake_provider.responder = lambda body: f"echo {body['messages'][0]['content']}"
    fake_provider.push(Reply("first"), Reply("second", finish_reason="length"))
    assert fake_provider.pending == 2
    answers = [json.loads(post(fake_provider, CHAT)[2])["choices"][0] for _ in range(3)]
    assert [(a["message"]["content"], a["finish_reason"]) for a in answers] == [
        ("first", "stop"),
        ("second", "length"),
        ("echo hello", "stop"),
    ]
    assert fake_provider.pending == 0


def test_responder_may_return_a_step(fake_provider: FakeProvider) -> None:
    fake_provider.responder = lambda body: Fail(418)
    assert post(fake_provider, CHAT)[0] == 418


def test_fail_sends_status_body_and_headers(fake_provider: FakeProvider) -> None:
    fake_provider.push(
        Fail(429, headers={"Retry-After": "1", "retry-after-ms": "1000"}),
        Fail(400, body={"error": {"message": "custom", "code": "bad"}}),
        Fail(502, body="<html>bad gateway</html>"),
    )
    status, headers, body = post(fake_provider, CHAT)
    assert (status, headers["retry-after"], headers["retry-after-ms"]) == (429, "1", "1000")
    assert json.loads(body)["error"]["type"] == "requests"  # OpenAI's, not Anthropic's type
    assert json.loads(post(fake_provider, CHAT)[2]) == {
        "error": {"message": "custom", "code": "bad"}
    }
    assert post(fake_provider, CHAT)[2] == b"<html>bad gateway</html>"


def test_sdk_sees_fail_as_its_own_exceptions(
    fake_provider: FakeProvider, client: openai.OpenAI
) -> None:
    fake_provider.push(Fail(429, headers={"retry-after-ms": "5"}), Fail(500))
    with pytest.raises(openai.RateLimitError) as rate_limited:
        client.chat.completions.create(**CHAT)  # type: ignore[call-overload]
    assert rate_limited.value.response.headers["retry-after-ms"] == "5"
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(**CHAT)  # type: ignore[call-overload]


def test_truncated_body_is_cut_json(fake_provider: FakeProvider) -> None:
    fake_provider.push(Truncated(keep=0.5))
    status, headers, body = post(fake_provider, CHAT)
    assert status == 200
    assert int(headers["content-length"]) == len(body)
    with pytest.raises(ValueError, match=r"Unterminated|Expecting"):
        json.loads(body)


def test_empty_answers(fake_provider: FakeProvider) -> None:
    fake_provider.push(Empty(), Empty(None), Empty("  ", finish_reason="length"))
    contents = [json.loads(post(fake_provider, CHAT)[2])["choices"][0] for _ in range(3)]
    assert [(c["message"]["content"], c["finish_reason"]) for c in contents] == [
        ("", "stop"),
        (None, "stop"),
        ("  ", "length"),
    ]


def test_delay_then_answer(fake_provider: FakeProvider) -> None:
    fake_provider.push(Delay(0.3, then=Reply("late")))  # the wait: see the next test
    status, _, body = post(fake_provider, CHAT)
    assert status == 200
    assert json.loads(body)["choices"][0]["message"]["content"] == "late"


def test_delay_trips_a_client_timeout(fake_provider: FakeProvider) -> None:
    fake_provider.push(Delay(5.0))
    with (
        openai.OpenAI(
            base_url=fake_provider.base_url, api_key="t", max_retries=0, timeout=0.2
        ) as sdk,
        pytest.raises(openai.APITimeoutError),
    ):
        sdk.chat.completions.create(**CHAT)  # type: ignore[call-overload]


def test_close_wakes_pending_delays_quickly() -> None:
    """close() ends a pending delay longer than the test may wait for it."""
    fake = FakeProvider(script=[Delay(2 * HANG_GUARD)])
    connection = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=HANG_GUARD)
    connection.request("POST", "/v1/chat/completions", json.dumps(CHAT).encode())
    wait_until(lambda: bool(fake.log), "the request arrived")
    closing = threading.Thread(target=lambda: (fake.close(), fake.close()))  # idempotent
    closing.start()
    closing.join(HANG_GUARD)
    assert not closing.is_alive(), "close() waited for the delay"
    with pytest.raises((http.client.HTTPException, OSError)):
        connection.getresponse()
    connection.close()


def test_disconnect(fake_provider: FakeProvider) -> None:
    fake_provider.push(Disconnect())
    with pytest.raises((http.client.HTTPException, OSError)):
        post(fake_provider, CHAT)


def test_stream_ends_with_done(fake_provider: FakeProvider) -> None:
    fake_provider.push(Reply("one two three four five"))
    status, headers, body = post(fake_provider, {**CHAT, "stream": True})
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    events = [line for line in body.decode().split("\n\n") if line]
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "one two three four five"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_stream_through_the_sdk_with_usage(
    fake_provider: FakeProvider, client: openai.OpenAI
) -> None:
    fake_provider.push(Reply("streamed answer"))
    stream = client.chat.completions.create(  # type: ignore[call-overload]
        **CHAT, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert (
        "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed answer"
    )
    assert chunks[-1].usage is not None


def test_truncated_stream_has_no_done(fake_provider: FakeProvider) -> None:
    fake_provider.push(Truncated("a b c d e f g h", keep=0.5))
    body = post(fake_provider, {**CHAT, "stream": True})[2].decode()
    assert "[DONE]" not in body
    assert body.startswith("data: ")


def test_validator_rejects_without_consuming_the_script(fake_provider: FakeProvider) -> None:
    def no_tools(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if any(m.get("role") == "tool" for m in body["messages"]):
            return 400, {"error": {"message": "tools are not allowed here"}}
        return None

    fake_provider.validator = no_tools
    fake_provider.push(Reply("scripted"))
    bad = {**CHAT, "messages": [{"role": "tool", "tool_call_id": "x", "content": "r"}]}
    status, _, body = post(fake_provider, bad)
    assert status == 400
    assert json.loads(body)["error"]["message"] == "tools are not allowed here"
    assert fake_provider.pending == 1
    assert (
        json.loads(post(fake_provider, CHAT)[2])["choices"][0]["message"]["content"] == "scripted"
    )
    assert len(fake_provider.requests) == 2  # rejected requests are recorded too


def test_context_window_with_a_pluggable_counter(fake_provider: FakeProvider) -> None:
    fake_provider.context_window = 10
    fake_provider.token_counter = lambda body: sum(
        len(str(m.get("content", "")).split()) for m in body["messages"]
    )
    small = {**CHAT, "messages": [{"role": "user", "content": "five words fit in here"}]}
    large = {**CHAT, "messages": [{"role": "user", "content": "word " * 11}]}
    assert post(fake_provider, small)[0] == 200
    status, _, body = post(fake_provider, large)
    assert status == 400
    error = json.loads(body)["error"]
    assert error["code"] == "context_length_exceeded"
    assert "maximum context length is 10 tokens" in error["message"]
    assert "resulted in 11 tokens" in error["message"]


def test_api_key_check(fake_provider: FakeProvider) -> None:
    fake_provider.require_api_key = "secret-key"
    assert post(fake_provider, CHAT)[0] == 401
    assert post(fake_provider, CHAT, headers={"Authorization": "Bearer secret-key"})[0] == 200


def test_bad_json_and_unknown_routes(fake_provider: FakeProvider) -> None:
    assert post(fake_provider, b"{not json")[0] == 400
    assert post(fake_provider, [1, 2])[0] == 400
    assert post(fake_provider, CHAT, path="/v1/embeddings")[0] == 404


def test_log_records_method_path_headers_and_raw_body(fake_provider: FakeProvider) -> None:
    post(fake_provider, b"{not json", headers={"X-Test": "yes"})
    [entry] = fake_provider.log
    assert (entry.method, entry.path, entry.body, entry.json) == (
        "POST",
        "/v1/chat/completions",
        b"{not json",
        None,
    )
    assert entry.headers["x-test"] == "yes"
    assert fake_provider.requests == []  # not a JSON chat request


def test_chunked_request_bodies_are_read(fake_provider: FakeProvider) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", fake_provider.port, timeout=HANG_GUARD)
    try:
        payload = json.dumps(CHAT).encode()
        connection.request(
            "POST", "/v1/chat/completions", iter([payload[:10], payload[10:]]), encode_chunked=True
        )
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    assert fake_provider.requests == [CHAT]
