"""StrictProvider: refuses what each provider refuses, in that provider's words and shape."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
from typing import Any

import pytest

from cli_support import HANG_GUARD, terminal_job
from condense.cli import main
from condense.errors import Category, classify
from condense.exceptions import UnknownNameError
from condense.testing import Refusal, StrictProvider
from condense.testing.strict_provider import PROVIDERS


def post(server: StrictProvider, body: Any) -> tuple[int, dict[str, str], Any]:
    """One raw request over a plain socket: what any client would receive."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HANG_GUARD)
    try:
        connection.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return response.status, headers, json.loads(response.read())
    finally:
        connection.close()


def chat(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": list(messages), **extra}


USER = {"role": "user", "content": "hi"}
ORPHAN = {"role": "tool", "tool_call_id": "call_ghost", "content": "lost"}


def call_message(call_id: str, arguments: str = "{}") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "ls", "arguments": arguments}}
        ],
    }


# -- refusals: status, shape and words ----------------------------------------------------


def test_openai_answers_in_openais_shape_with_its_real_text() -> None:
    with StrictProvider("openai") as server:
        status, _, body = post(server, chat(USER, {"role": "tool", "content": "no id"}))
    assert status == 400
    assert body == {
        "error": {
            "message": "Missing parameter 'tool_call_id': messages with role 'tool' must have "
            "a 'tool_call_id'.",
            "type": "invalid_request_error",
            "param": "messages.[1]",
            "code": None,
        }
    }


def test_anthropic_answers_in_anthropics_shape_naming_the_call() -> None:
    with StrictProvider("anthropic") as server:
        status, _, body = post(server, chat(USER, call_message("toolu_01"), USER))
    assert status == 400
    assert body["type"] == "error"
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": "messages.1: `tool_use` ids were found without `tool_result` blocks "
        "immediately after: toolu_01. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message.",
    }


def test_gemini_answers_with_invalid_argument() -> None:
    with StrictProvider("gemini") as server:
        status, _, body = post(server, chat(USER, ORPHAN))
    assert status == 400
    assert body == {
        "error": {
            "code": 400,
            "message": "Please ensure that function response turn comes immediately after a "
            "function call turn.",
            "status": "INVALID_ARGUMENT",
        }
    }


def test_mistral_refuses_ids_that_are_not_nine_characters() -> None:
    with StrictProvider("mistral") as server:
        answer = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
        status, _, body = post(server, chat(USER, call_message("call_1"), answer))
    assert status == 400
    assert body == {
        "object": "error",
        "message": "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_mistral_role_order_uses_its_message_order_type() -> None:
    with StrictProvider("mistral") as server:
        _, _, body = post(server, chat(USER, {"role": "user", "content": "again"}))
    assert body["type"] == "invalid_request_message_order" and body["code"] == "3230"
    assert body["message"] == "Unexpected role 'user' after role 'user'"


def test_responses_speaks_of_function_call_outputs() -> None:
    with StrictProvider("responses") as server:
        _, _, body = post(server, chat(USER, ORPHAN))
    assert body["error"]["message"] == (
        "No tool call found for function call output with call_id call_ghost."
    )


def test_minimax_answers_400_with_code_2013() -> None:
    with StrictProvider("minimax") as server:
        answer = {"role": "tool", "tool_call_id": "call_function_1", "content": "x"}
        broken = call_message("call_function_1", '{"path": ')
        status, _, body = post(server, chat(USER, broken, answer))
    assert status == 400
    assert body["error"] == {
        "type": "bad_request_error",
        "message": "invalid params, invalid function arguments json string, tool_call_id: "
        "call_function_1 (2013)",
        "http_code": "400",
    }


def test_minimax_v2_answers_200_with_base_resp() -> None:
    with StrictProvider("minimax-v2") as server:
        status, _, body = post(server, chat(USER, ORPHAN))
    assert status == 200
    assert body["base_resp"] == {
        "status_code": 2013,
        "status_msg": "invalid params, tool result's tool id(call_ghost) not found (2013)",
    }
    assert classify((status, body)).category is Category.TOOL_PAIRING


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_every_refusal_classifies_as_something_repair_fixes(name: str) -> None:
    with StrictProvider(name) as server:
        status, _, body = post(server, chat(USER, ORPHAN))
    assert classify((status, body)).category in (
        Category.TOOL_PAIRING,
        Category.MESSAGE_FORMAT,
    )


def test_refusals_are_recorded_and_reported() -> None:
    seen: list[Refusal] = []
    with StrictProvider("strict", on_refusal=seen.append) as server:
        post(server, chat(USER))
        post(server, chat(USER, ORPHAN))
        post(server, chat())
    assert [(r.request, r.code, r.index) for r in server.refusals] == [
        (1, "orphan_tool_result", 1),
        (2, "missing_messages", None),
    ]
    assert seen == server.refusals


def test_a_valid_request_is_answered_plain_and_streamed() -> None:
    with StrictProvider("anthropic") as server:
        status, _, body = post(server, chat(USER))
        assert status == 200 and body["choices"][0]["message"]["content"]
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HANG_GUARD)
        connection.request("POST", "/v1/chat/completions", json.dumps(chat(USER, stream=True)))
        streamed = connection.getresponse().read().decode()
        connection.close()
    assert streamed.rstrip().endswith("data: [DONE]")


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="anthropic"):
        StrictProvider("claude")


# -- the context window -------------------------------------------------------------------


LONG = {"role": "user", "content": "word " * 400}


@pytest.mark.parametrize(
    ("name", "stated"),
    [
        ("openai", True),
        ("strict", True),
        ("anthropic", True),
        ("gemini", True),
        ("mistral", True),
        ("responses", False),
        ("minimax", False),
    ],
)
def test_overflow_is_refused_with_the_providers_message(name: str, stated: bool) -> None:
    with StrictProvider(name, context_window=100) as server:
        status, _, body = post(server, chat(LONG))
        used = server.token_counter(chat(LONG))
    diagnosis = classify((status, body))
    assert status == 400 and diagnosis.category is Category.CONTEXT_OVERFLOW
    if stated:
        assert (diagnosis.input_tokens, diagnosis.allowed_tokens) == (used, 100)
    else:
        assert diagnosis.allowed_tokens is None


def test_the_openai_overflow_text_is_the_real_one() -> None:
    with StrictProvider("openai", context_window=100) as server:
        _, _, body = post(server, chat(LONG))
        used = server.token_counter(chat(LONG))
    assert body["error"]["message"] == (
        f"This model's maximum context length is 100 tokens. However, your messages resulted "
        f"in {used} tokens. Please reduce the length of the messages."
    )
    assert body["error"]["code"] == "context_length_exceeded"


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_max_tokens_beyond_the_window_is_an_output_limit(name: str) -> None:
    with StrictProvider(name, context_window=1000) as server:
        status, _, body = post(server, chat(USER, max_tokens=2000))
        prompt = server.token_counter(chat(USER))
        assert post(server, chat(USER, max_tokens=1000 - prompt))[0] == 200
    diagnosis = classify((status, body))
    assert diagnosis.category is Category.OUTPUT_LIMIT
    assert diagnosis.suggested_max_tokens == 1000 - prompt


def test_a_custom_token_counter_is_used() -> None:
    with StrictProvider("anthropic", context_window=10, token_counter=lambda body: 11) as server:
        _, _, body = post(server, chat(USER))
    assert body["error"]["message"] == "prompt is too long: 11 tokens > 10 maximum"


# -- scripted failures ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status", "category"),
    [
        ("openai", 429, Category.RATE_LIMIT),
        ("anthropic", 529, Category.OVERLOADED),
        ("anthropic", 429, Category.RATE_LIMIT),
        ("gemini", 503, Category.OVERLOADED),
        ("mistral", 500, Category.SERVER_ERROR),
        ("openai", 503, Category.OVERLOADED),
    ],
)
def test_scripted_failures_carry_retry_after(name: str, status: int, category: Category) -> None:
    with StrictProvider(name) as server:
        server.push(server.fail(status, retry_after=3))
        got, headers, body = post(server, chat(USER))
        assert post(server, chat(USER))[0] == 200  # the script is used up
    assert got == status and headers["retry-after"] == "3"
    diagnosis = classify((got, body, headers))
    assert diagnosis.category is category and diagnosis.retry_after == 3


def test_a_refusal_comes_before_the_script() -> None:
    with StrictProvider("openai") as server:
        server.push(server.fail(500))
        assert post(server, chat(USER, ORPHAN))[0] == 400
        assert server.pending == 1


# -- the command ---------------------------------------------------------------------------


def test_serve_fake_prints_the_url_and_stops_on_ctrl_c() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "condense",
        "serve-fake",
        "--provider",
        "anthropic",
        "--context-window",
        "50",
        "--port",
        str(port),
        "--fail",
        "429:2",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=terminal_job
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/v1"
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD)
        statuses = []
        for body in (chat(USER), chat(LONG)):  # the refusal first, then the script
            connection.request("POST", "/v1/chat/completions", json.dumps(body))
            response = connection.getresponse()
            response.read()
            statuses.append((response.status, response.getheader("Retry-After")))
        connection.close()
        assert statuses == [(429, "2"), (400, None)]
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=HANG_GUARD)
    assert process.returncode == 0
    assert "prompt is too long" in err
    assert "served 2 request(s), refused 1" in err


def test_serve_fake_rejects_a_bad_failure_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-fake", "--fail", "often"]) == 2
    assert "STATUS:SECONDS" in capsys.readouterr().err
