"""``condense proxy`` end to end: the real proxy process on 127.0.0.1, in front of strict
fake providers, driven by the official ``openai`` and ``anthropic`` SDKs (and raw HTTP
where bytes matter)."""

from __future__ import annotations

import copy
import gzip
import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
import zstandard

from cli_support import HANG_GUARD, wait_until
from condense import validate
from condense.exceptions import FormatError
from condense.formats import from_anthropic, from_responses, to_anthropic, to_responses
from condense.testing import Fail, FakeProvider, Reply, StrictProvider
from condense.testing.sessions import synthetic_session
from proxy_support import RunningProxy, running_proxy, strings_in

WINDOW = 1500  # the tight upstream's window, in tokens


@pytest.fixture(scope="module")
def upstream() -> Iterator[StrictProvider]:
    """The main upstream: every provider's rules at once on chat, Anthropic's on
    /v1/messages, Responses' on /v1/responses."""
    with StrictProvider("strict") as server:
        yield server


@pytest.fixture(scope="module")
def tight() -> Iterator[StrictProvider]:
    """An upstream with a small context window."""
    with StrictProvider("openai", context_window=WINDOW) as server:
        yield server


def _root(server: StrictProvider) -> str:
    return server.base_url.removesuffix("/v1")


@pytest.fixture(scope="module")
def proxy(
    upstream: StrictProvider, tight: StrictProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningProxy]:
    main, small = _root(upstream), _root(tight)
    config = {
        "upstream": [
            # the proxy knows this window: it compresses before sending
            {"url": small, "models": ["small-*"], "context_window": WINDOW},
            # the proxy does not know this one: the overflow error teaches it
            {"url": small, "models": ["tight-*"]},
            {"url": f"{main}/gw", "models": ["prefixed-*"]},
            {"url": main, "paths": ["*/chat/completions"], "models": ["auto-*"]},
            {"url": main, "paths": ["*/chat/completions"], "provider": "strict"},
        ]
    }
    with running_proxy(["--upstream", main], tmp_path_factory.mktemp("proxy"), config=config) as p:
        yield p


_CLIENTS: dict[tuple[str, str], Any] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    for client in _CLIENTS.values():
        client.close()
    _CLIENTS.clear()


def _openai(proxy: RunningProxy) -> openai.OpenAI:
    key = ("openai", proxy.url)
    if key not in _CLIENTS:
        _CLIENTS[key] = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-test", max_retries=0)
    client: openai.OpenAI = _CLIENTS[key]
    return client


def _anthropic(proxy: RunningProxy) -> anthropic.Anthropic:
    key = ("anthropic", proxy.url)
    if key not in _CLIENTS:
        _CLIENTS[key] = anthropic.Anthropic(
            base_url=proxy.url, api_key="sk-ant-test", max_retries=0
        )
    client: anthropic.Anthropic = _CLIENTS[key]
    return client


def _since(server: StrictProvider, start: int) -> list[Any]:
    return server.log[start:]


# -- poisoned histories ------------------------------------------------------------------


def _call(call_id: Any, arguments: str = '{"command": "ls"}') -> dict[str, Any]:
    call: dict[str, Any] = {
        "type": "function",
        "function": {"name": "bash", "arguments": arguments},
    }
    if call_id is not None:
        call["id"] = call_id
    return call


def _asks(assistant: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, **assistant}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _tool(call_id: Any, content: str = "file_a file_b") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "content": content}
    if call_id is not ...:
        message["tool_call_id"] = call_id
    return message


ASK = _user("Please list the files and fix the failing test.")
FAULTS: dict[str, list[dict[str, Any]]] = {
    "result_separated_from_call": [
        ASK,
        _asks({"tool_calls": [_call("call_1")]}),
        _user("Also check the README."),
        _tool("call_1"),
    ],
    "result_before_call": [ASK, _tool("call_1"), _asks({"tool_calls": [_call("call_1")]})],
    "unanswered_call": [ASK, _asks({"tool_calls": [_call("call_1")]}), _user("What did you find?")],
    "unanswered_parallel_call": [
        ASK,
        _asks({"tool_calls": [_call("call_1"), _call("call_2"), _call("call_3")]}),
        _tool("call_2"),
        _user("And then?"),
    ],
    "orphan_result": [ASK, _tool("call_9"), _user("Go on.")],
    "duplicate_results": [
        ASK,
        _asks({"tool_calls": [_call("call_1")]}),
        _tool("call_1"),
        _tool("call_1", "again"),
        _user("Next?"),
    ],
    "result_without_id": [ASK, _asks({"tool_calls": [_call("call_1")]}), _tool(...)],
    "result_with_null_id": [ASK, _asks({"tool_calls": [_call("call_1")]}), _tool(None)],
    "result_with_empty_id": [ASK, _asks({"tool_calls": [_call("call_1")]}), _tool("")],
    "call_without_id": [ASK, _asks({"tool_calls": [_call(None)]}), _tool(...)],
    "duplicate_call_ids": [
        ASK,
        _asks({"tool_calls": [_call("call_1")]}),
        _tool("call_1"),
        _user("Once more."),
        _asks({"tool_calls": [_call("call_1")]}),
        _tool("call_1", "same again"),
    ],
    "arguments_not_json": [
        ASK,
        _asks({"tool_calls": [_call("call_1", "{'command': ls -la")]}),
        _tool("call_1"),
    ],
    "arguments_not_object": [
        ASK,
        _asks({"tool_calls": [_call("call_1", '["ls"]')]}),
        _tool("call_1"),
    ],
    "unknown_key": [{**ASK, "id": "msg_01"}],
    "starts_with_assistant": [{"role": "assistant", "content": "Hello!"}, ASK],
    "starts_with_tool": [_tool("call_1"), ASK],
    "consecutive_users": [ASK, _user("Use pytest, please.")],
    "late_system_message": [
        ASK,
        {"role": "assistant", "content": "On it."},
        {"role": "system", "content": "Answer briefly."},
        _user("Status?"),
    ],
    "empty_tool_calls": [
        ASK,
        {"role": "assistant", "content": "Looking.", "tool_calls": []},
        _user("Ok?"),
    ],
    "id_outside_the_alphabet": [
        ASK,
        _asks({"tool_calls": [_call("call.1/x")]}),
        _tool("call.1/x"),
    ],
    "legacy_function_call": [
        ASK,
        {"role": "assistant", "content": None, "function_call": {"name": "ls", "arguments": "{}"}},
        {"role": "function", "name": "ls", "content": "file_a"},
    ],
}


def _native(api: str, history: list[dict[str, Any]]) -> Any | None:
    """The poisoned history in ``api``'s wire form, or None when it cannot be written
    there or the fault does not show in that API."""
    try:
        if api == "anthropic":
            native = to_anthropic(copy.deepcopy(history))
            poisoned = validate(from_anthropic(copy.deepcopy(native)), provider="anthropic")
        elif api == "responses":
            native = to_responses(copy.deepcopy(history))
            poisoned = validate(from_responses(copy.deepcopy(native)), provider="responses")
        else:
            native, poisoned = history, validate(history, provider="strict")
    except (FormatError, KeyError, TypeError):
        return None
    return native if poisoned else None


CASES = [
    (api, name)
    for api in ("chat", "anthropic", "responses")
    for name, history in FAULTS.items()
    if _native(api, history) is not None
]


def test_every_api_gets_many_poisoned_histories() -> None:
    counts = {
        api: sum(1 for a, _ in CASES if a == api) for api in ("chat", "anthropic", "responses")
    }
    assert counts["chat"] == len(FAULTS)
    assert counts["anthropic"] >= 10
    assert counts["responses"] >= 6


def _send(proxy: RunningProxy, api: str, native: Any, *, stream: bool) -> str:
    """Send a history through the proxy with the API's official SDK; the answer text."""
    if api == "chat":
        client = _openai(proxy)
        if stream:
            chunks = client.chat.completions.create(
                model="fake-model", messages=native, stream=True
            )
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        reply = client.chat.completions.create(model="fake-model", messages=native)
        return reply.choices[0].message.content or ""
    if api == "anthropic":
        kwargs: dict[str, Any] = {"model": "claude-fake", "max_tokens": 64, **native}
        if stream:
            with _anthropic(proxy).messages.stream(**kwargs) as events:
                return events.get_final_text()
        return _anthropic(proxy).messages.create(**kwargs).content[0].text
    if stream:
        with _openai(proxy).responses.stream(model="fake-model", input=native) as events:
            return events.get_final_response().output_text
    return _openai(proxy).responses.create(model="fake-model", input=native).output_text


def _direct_refusal(upstream: StrictProvider, api: str, native: Any) -> int:
    path = {
        "chat": "/v1/chat/completions",
        "anthropic": "/v1/messages",
        "responses": "/v1/responses",
    }
    body: dict[str, Any] = {"model": "fake-model"}
    if api == "chat":
        body["messages"] = native
    elif api == "anthropic":
        body.update(native, max_tokens=64)
    else:
        body["input"] = native
    return httpx2.post(_root(upstream) + path[api], json=body).status_code


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("api", "fault"), CASES)
def test_poisoned_history_reaches_the_strict_upstream_valid(
    proxy: RunningProxy, upstream: StrictProvider, api: str, fault: str, stream: bool
) -> None:
    native = _native(api, FAULTS[fault])
    assert _direct_refusal(upstream, api, native) == 400  # the upstream refuses it as it is
    refusals, start = len(upstream.refusals), len(upstream.log)
    answer = _send(proxy, api, native, stream=stream)
    assert answer.startswith("fake summary of")
    received = _since(upstream, start)
    assert len(received) == 1  # repaired before it was sent: no refusal, no retry
    assert len(upstream.refusals) == refusals
    sent_texts = list(strings_in(received[0].json))
    for message in FAULTS[fault]:
        if message.get("role") == "user":
            assert any(message["content"] in text for text in sent_texts), message["content"]


# -- pass-through ----------------------------------------------------------------------------


VALID = {
    "/v1/chat/completions": b'{ "model" : "fake-model",\n  "messages": [{"role": "user", '
    b'"content": "caf\\u00e9 \xe2\x98\x95"}],  "temperature": 0.25 }',
    "/v1/messages": b'{"max_tokens":64,"model":"claude-fake","system":[{"type":"text","text":'
    b'"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":'
    b'[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}',
    "/v1/responses": b'{"model": "fake-model", "input": [{"role": "user", "content": "hello"}], '
    b'"store": false}',
}


@pytest.mark.parametrize("path", sorted(VALID))
@pytest.mark.parametrize("coding", [None, "gzip", "zstd"])
def test_valid_requests_arrive_byte_identical(
    proxy: RunningProxy, upstream: StrictProvider, path: str, coding: str | None
) -> None:
    compressors = {"gzip": gzip.compress, "zstd": zstandard.ZstdCompressor().compress}
    body = VALID[path] if coding is None else compressors[coding](VALID[path])
    headers = {"content-type": "application/json"} | (
        {"content-encoding": coding} if coding else {}
    )
    start = len(upstream.log)
    reply = httpx2.post(proxy.url + path, content=body, headers=headers)
    assert reply.status_code == 200, reply.text
    [received] = _since(upstream, start)
    assert received.body == body
    assert received.headers.get("content-encoding") == coding
    assert not any(name.startswith("x-condense") for name in reply.headers)


def test_other_paths_and_methods_pass_through(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    assert [m.id for m in _openai(proxy).models.list()] == ["fake-model"]
    start = len(upstream.log)
    reply = httpx2.get(f"{proxy.url}/v1/files?limit=3", headers={"x-extra": "1"})
    assert reply.status_code == 404  # the upstream's own answer
    [received] = _since(upstream, start)
    assert received.path == "/v1/files?limit=3" and received.headers["x-extra"] == "1"


def test_path_prefix_and_query_string_reach_the_upstream(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    start = len(upstream.log)
    reply = httpx2.post(
        f"{proxy.url}/v1/chat/completions?trace=1&x=%2F",
        json={"model": "prefixed-model", "messages": [ASK]},
    )
    assert reply.status_code == 200
    [received] = _since(upstream, start)
    assert received.path == "/gw/v1/chat/completions?trace=1&x=%2F"


def test_codex_compaction_trigger_is_passed_through_untouched(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    body = json.dumps(
        {
            "model": "fake-model",
            "input": [
                {"type": "function_call_output", "call_id": "call_9", "output": "x"},
                {"type": "compaction_trigger"},
            ],
        }
    ).encode()
    start = len(upstream.log)
    reply = httpx2.post(f"{proxy.url}/v1/responses", content=body)
    received = _since(upstream, start)
    assert [r.body for r in received] == [body]  # untouched, and not retried
    assert reply.status_code == 400  # the upstream's answer, as it came


# -- headers ----------------------------------------------------------------------------------


CLIENT_HEADERS = {
    "authorization": "Bearer sk-secret-123",
    "x-api-key": "sk-ant-secret-456",
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "interleaved-thinking-2025-05-14,context-management-2025-06-27",
    "openai-organization": "org-1",
    "openai-project": "proj-1",
    "user-agent": "claude-cli/2.0 (external, cli)",
    "x-stainless-lang": "python",
    "x-stainless-retry-count": "0",
    "x-unknown-header": "kept as is",
}
UPSTREAM_HEADERS = {
    "request-id": "req_0123",
    "x-request-id": "xreq_0123",
    "x-ratelimit-remaining-requests": "99",
    "anthropic-ratelimit-tokens-remaining": "12345",
    "x-upstream-other": "yes",
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("poisoned", [False, True], ids=["valid", "repaired"])
def test_headers_pass_both_ways_and_condense_says_what_it_did(
    proxy: RunningProxy, upstream: StrictProvider, stream: bool, poisoned: bool
) -> None:
    history = FAULTS["unanswered_call"] if poisoned else [ASK]
    native = to_anthropic(copy.deepcopy(history))
    upstream.push(Reply("hello there", headers=UPSTREAM_HEADERS))
    start = len(upstream.log)
    reply = httpx2.post(
        f"{proxy.url}/v1/messages",
        json={"model": "claude-fake", "max_tokens": 32, "stream": stream, **native},
        headers=CLIENT_HEADERS,
    )
    assert reply.status_code == 200
    [received] = _since(upstream, start)
    for name, value in CLIENT_HEADERS.items():
        assert received.headers[name] == value
    for name, value in UPSTREAM_HEADERS.items():
        assert reply.headers[name] == value
    condense = {k: v for k, v in reply.headers.items() if k.startswith("x-condense-")}
    if poisoned:
        assert condense["x-condense-provider"] == "anthropic"
        assert int(condense["x-condense-repaired"]) >= 1
    else:
        assert condense == {}


# -- recovery --------------------------------------------------------------------------------


def test_refusal_is_repaired_for_the_strict_rules_and_retried_once(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    history = [ASK, _user("Use pytest, please.")]  # fine for OpenAI, refused by the upstream
    start, refusals = len(upstream.log), len(upstream.refusals)
    raw = _openai(proxy).chat.completions.with_raw_response.create(model="auto-x", messages=history)
    assert raw.parse().choices[0].message.content.startswith("fake summary")
    first, second = _since(upstream, start)
    assert len(upstream.refusals) == refusals + 1
    assert first.body != second.body
    texts = list(strings_in(second.json))
    assert all(any(m["content"] in t for t in texts) for m in history)
    assert raw.headers["x-condense-retried"].startswith("message_format")


def _long_history(seed: int, messages: int = 40) -> list[dict[str, Any]]:
    history = synthetic_session(messages, seed=seed, output_chars=300, parallel=False)
    history.append(_user(f"Summarise where we are ({seed})."))
    return history


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_overflow_is_compressed_retried_once_and_the_window_learned(
    proxy: RunningProxy, tight: StrictProvider, api: str
) -> None:
    history = _long_history(seed=11 if api == "chat" else 12)
    native = history if api == "chat" else to_anthropic(history)
    model = f"tight-{api}"

    def ask(turn: Any) -> tuple[str, Any]:
        if api == "chat":
            raw = _openai(proxy).chat.completions.with_raw_response.create(
                model=model, messages=turn, max_tokens=100
            )
            return raw.parse().choices[0].message.content or "", raw.headers
        raw = _anthropic(proxy).messages.with_raw_response.create(
            model=model, max_tokens=100, **turn
        )
        return raw.parse().content[0].text, raw.headers

    start, refusals = len(tight.log), len(tight.refusals)
    answer, headers = ask(native)
    assert answer.startswith("fake summary")
    assert len(_since(tight, start)) == 2  # refused once, then accepted
    assert tight.refusals[-1].code == "context_overflow" and len(tight.refusals) == refusals + 1
    assert headers["x-condense-retried"].startswith("context_overflow")
    grown = [*history, {"role": "assistant", "content": answer}, _user("Continue.")]
    start = len(tight.log)
    answer, headers = ask(grown if api == "chat" else to_anthropic(grown))
    assert len(_since(tight, start)) == 1  # the window was learned: compressed up front
    assert "x-condense-compressed" in headers and "x-condense-retried" not in headers


def _messages_segment(body: bytes) -> bytes:
    start = body.index(b'"messages":[') + len(b'"messages":[')
    return body[start:]


def test_second_turn_sends_the_same_compressed_head(
    proxy: RunningProxy, tight: StrictProvider
) -> None:
    history = _long_history(seed=21, messages=60)
    client = _openai(proxy)
    start = len(tight.log)
    first = client.chat.completions.with_raw_response.create(model="small-x", messages=history)
    answer = first.parse().choices[0].message.content
    assert "x-condense-compressed" in first.headers
    before, after = (int(n) for n in first.headers["x-condense-compressed"].split("->"))
    assert after < WINDOW < before
    history = [*history, {"role": "assistant", "content": answer}, _user("Next step?")]
    second = client.chat.completions.with_raw_response.create(model="small-x", messages=history)
    assert second.headers["x-condense-reused"] == "compressed-head"
    history = [*history, {"role": "assistant", "content": "Done."}, _user("And now?")]
    third = client.chat.completions.with_raw_response.create(model="small-x", messages=history)
    bodies = [r.body for r in _since(tight, start)]
    assert len(bodies) == 3  # nothing refused
    one, two, three = (_messages_segment(body) for body in bodies)
    assert two.startswith(one.rsplit(b"]", 1)[0])  # byte-identical head
    assert three.startswith(two.rsplit(b"]", 1)[0])
    assert json.loads(bodies[2])["messages"][-1]["content"] == "And now?"
    assert third.parse().choices[0].message.content.startswith("fake summary")


@pytest.mark.parametrize(
    ("status", "api"), [(429, "chat"), (503, "chat"), (529, "anthropic"), (500, "responses")]
)
def test_rate_limits_and_server_errors_come_back_as_they_came(
    proxy: RunningProxy, upstream: StrictProvider, status: int, api: str
) -> None:
    upstream.push(upstream.fail(status, retry_after=7))
    start = len(upstream.log)
    with pytest.raises((openai.APIStatusError, anthropic.APIStatusError)) as caught:
        _send(
            proxy,
            api,
            FAULTS["unanswered_call"]
            if api == "chat"
            else [ASK]
            if api == "responses"
            else to_anthropic([ASK]),
            stream=False,
        )
    assert caught.value.status_code == status
    assert caught.value.response.headers["retry-after"] == "7"
    assert len(_since(upstream, start)) == 1


# -- streams ---------------------------------------------------------------------------------


_STAMP = re.compile(rb'"(created|created_at)": \d+')


@pytest.mark.parametrize("path", sorted(VALID))
def test_streamed_bytes_reach_the_client_exactly(
    proxy: RunningProxy, upstream: StrictProvider, path: str
) -> None:
    body = {**json.loads(VALID[path]), "stream": True}
    text = "one two three four five six seven eight"
    received: list[bytes] = []
    for base in (_root(upstream), proxy.url):
        upstream.push(Reply(text, pause=0.01, keepalive=True))
        with httpx2.stream("POST", base + path, json=body) as reply:
            assert reply.headers["content-type"] == "text/event-stream"
            received.append(b"".join(reply.iter_raw()))
    direct, proxied = (_STAMP.sub(b"", data) for data in received)
    assert proxied == direct
    assert b": keep-alive\n\n" in proxied or b"event: ping" in proxied


def test_stream_is_relayed_as_it_arrives_not_buffered(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    """The first event reaches the client while the upstream holds back the rest for
    longer than the client waits: a proxy that buffered would hand over nothing, and the
    client's (hang-guard) timeout would end the test."""
    upstream.push(Reply("a b c d e f g h", pause=2 * HANG_GUARD))
    body = {"model": "fake-model", "stream": True, "messages": [ASK]}
    url = f"{proxy.url}/v1/chat/completions"
    with httpx2.stream("POST", url, json=body, timeout=HANG_GUARD) as reply:
        first = next(reply.iter_raw())
    assert first.startswith(b"data: {") and b"[DONE]" not in first


def test_client_going_away_cancels_the_upstream_stream(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    cut = upstream.cut_streams
    upstream.push(Reply(" ".join(["word"] * 200), pause=0.2))
    body = {"model": "fake-model", "stream": True, "messages": [ASK]}
    with httpx2.stream("POST", f"{proxy.url}/v1/chat/completions", json=body) as reply:
        next(reply.iter_raw())
    # a proxy that read on would let the upstream finish its 40 s and cut nothing
    wait_until(lambda: upstream.cut_streams > cut, "the upstream's stream was cut")
    assert upstream.cut_streams == cut + 1


def test_websocket_upgrade_is_refused_cleanly(proxy: RunningProxy) -> None:
    host, port = proxy.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            b"GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        head = b""
        while chunk := sock.recv(4096):  # the proxy closes the connection after answering
            head += chunk
    assert head.startswith(b"HTTP/1.1 426")
    assert b"supports_websockets = false" in head


# -- count_tokens, bad input, unreachable upstream, log ----------------------------------


def test_count_tokens_sees_the_repaired_history(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    native = to_anthropic(copy.deepcopy(FAULTS["unanswered_parallel_call"]))
    refusals = len(upstream.refusals)
    count = _anthropic(proxy).messages.count_tokens(model="claude-fake", **native)
    assert count.input_tokens > 0
    assert len(upstream.refusals) == refusals
    assert upstream.bodies("count_tokens")[-1]["messages"] != native["messages"]


@pytest.mark.parametrize(
    ("path", "body", "shape", "words"),
    [
        ("/v1/chat/completions", b"{not json", "openai", "not valid JSON"),
        ("/v1/messages", b"[1, 2]", "anthropic", "must be a JSON object"),
        (
            "/v1/messages",
            b'{"model": "x", "messages": "hi"}',
            "anthropic",
            "'messages' is required",
        ),
        (
            "/v1/messages",
            b'{"model": "x", "messages": [{"role": "robot", "content": "x"}]}',
            "anthropic",
            "unknown role",
        ),
        ("/v1/responses", b'{"model": "x", "input": 5}', "openai", "'input' must be"),
        ("/v1/chat/completions", b'{"a": "\xc3\x28"}', "openai", "not UTF-8"),
    ],
)
def test_bad_input_gets_a_clear_4xx_in_the_apis_shape(
    proxy: RunningProxy, path: str, body: bytes, shape: str, words: str
) -> None:
    reply = httpx2.post(proxy.url + path, content=body)
    assert reply.status_code == 400
    error = reply.json()
    if shape == "anthropic":
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert words in error["error"]["message"]
    else:
        assert words in error["error"]["message"]
    assert httpx2.get(f"{proxy.url}/healthz").status_code == 200


def test_bad_gzip_body_is_a_400(proxy: RunningProxy) -> None:
    reply = httpx2.post(
        f"{proxy.url}/v1/messages", content=b"garbage", headers={"content-encoding": "gzip"}
    )
    assert reply.status_code == 400 and "gzip" in reply.json()["error"]["message"]


def test_unreachable_upstream_is_a_502_and_the_proxy_stays_up(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    with running_proxy(["--upstream", f"http://127.0.0.1:{closed}"], tmp_path) as proxy:
        assert httpx2.get(f"{proxy.url}/healthz").json() == {"status": "ok"}
        with pytest.raises(anthropic.APIStatusError) as caught:
            _anthropic(proxy).messages.create(model="claude-x", max_tokens=5, messages=[ASK])
        assert caught.value.status_code == 502
        assert caught.value.body["error"]["type"] == "api_error"
        assert "could not be reached" in caught.value.body["error"]["message"]
        reply = httpx2.post(
            f"{proxy.url}/v1/chat/completions", json={"model": "x", "messages": [ASK]}
        )
        assert reply.status_code == 502 and "error" in reply.json()
        assert httpx2.get(f"{proxy.url}/healthz").status_code == 200


def test_one_json_line_per_request_without_content_or_credentials(proxy: RunningProxy) -> None:
    before = len(proxy.log())
    secret = "Secret ask 7f3a: rename the payroll table"
    _openai(proxy).chat.completions.create(
        model="fake-model", messages=[_user(secret)], extra_headers={"x-api-key": "sk-ant-LEAK"}
    )
    records = proxy.wait_for_log(before + 1)
    record = records[-1]
    assert record["path"] == "/v1/chat/completions" and record["status"] == 200
    assert record["model"] == "fake-model" and record["provider"] == "strict"
    assert record["tokens_before"] > 0 and record["latency_ms"] > 0
    text = proxy.log_path.read_text(encoding="utf-8")
    assert secret not in text and "sk-test" not in text and "LEAK" not in text


def test_gemini_thought_signatures_are_never_stripped(tmp_path: Path) -> None:
    signed = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
        "extra_content": {"google": {"thought_signature": "CiQBjz1rX0sig=="}},
    }
    history = [ASK, _asks({"tool_calls": [signed]}), _tool("call_1")]
    body = json.dumps({"model": "gemini-3-pro-preview", "messages": history}).encode()
    with FakeProvider() as plain, running_proxy(["--upstream", _root(plain)], tmp_path) as proxy:
        reply = httpx2.post(f"{proxy.url}/v1/chat/completions", content=body)
        assert reply.status_code == 200
        assert [r.body for r in plain.log] == [body]  # sent as it came, signature and all
        [record] = proxy.wait_for_log(1)
        assert record["provider"] == "gemini-openai"  # the model picks Gemini's rules
        assert record["repairs"] == 0  # which accept a signed call as it is


def test_a_retry_never_strips_thinking_blocks(
    proxy: RunningProxy, upstream: StrictProvider
) -> None:
    thinking = {"type": "thinking", "thinking": "Let me list them.", "signature": "EqQBCkYIBxgC"}
    native = {
        "messages": [
            {"role": "user", "content": "List the files."},
            {
                "role": "assistant",
                "content": [
                    thinking,
                    {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}],
            },
        ]
    }
    refusal = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.1.content.0: invalid block",
        },
    }
    upstream.push(Fail(400, refusal))
    start = len(upstream.log)
    with pytest.raises(anthropic.BadRequestError) as caught:
        _anthropic(proxy).messages.create(model="claude-fake", max_tokens=64, **native)
    assert caught.value.body["error"]["message"] == "messages.1.content.0: invalid block"
    assert len(_since(upstream, start)) == 1  # no retry without the thinking block


def test_64_clients_connecting_at_once_are_all_answered(proxy: RunningProxy) -> None:
    barrier = threading.Barrier(64)
    statuses: list[int] = []

    def one(number: int) -> None:
        with httpx2.Client(timeout=HANG_GUARD) as client:
            barrier.wait()
            body = {"model": "fake-model", "messages": [_user(f"client {number}")]}
            statuses.append(client.post(f"{proxy.url}/v1/chat/completions", json=body).status_code)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 64


def test_sigterm_stops_the_proxy_with_exit_0(tmp_path: Path) -> None:
    with FakeProvider() as plain, running_proxy(["--upstream", _root(plain)], tmp_path) as proxy:
        process = proxy.process
        process.terminate()
        _, stderr = process.communicate(timeout=HANG_GUARD)
    assert process.returncode == 0
    assert f"condense: proxy at {proxy.url}" in stderr and "live page" in stderr
