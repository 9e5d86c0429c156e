"""The fake providers count a prompt their own way and refuse one over the window the
way each real API does, so no test passes merely because condense and its fake agree.

The refusal texts are the providers' own: OpenAI's ``context_length_exceeded`` text
(litellm #4931 quotes it), Anthropic's "prompt is too long: N tokens > W maximum" and
"input length and `max_tokens` exceed context limit" (claude-code issues; see
``providers/anthropic.py``), and the Responses API's "Your input exceeds the context
window of this model" (openai/codex reports; ``providers/responses.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from condense import classify
from condense.errors import Category
from condense.formats import to_anthropic, to_responses
from condense.testing import FakeProvider, ProviderCount, StrictProvider
from condense.testing.sessions import turn_session
from condense.tokens import count_tokens
from proxy_sessions import TOOLS

WINDOW = 600
SESSION = turn_session(3, seed=1)
LONG = [*SESSION[:1], {"role": "user", "content": "please look at this: " + "word " * 900}]
SHORT = [{"role": "user", "content": "hi there"}]


def _native(api: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    if api == "chat":
        return {"model": "m", "messages": history}
    if api == "anthropic":
        return {"model": "m", "max_tokens": 10, **to_anthropic(history)}
    return {"model": "m", "input": to_responses(history), "instructions": "Be brief."}


def test_the_fake_does_not_count_like_condense() -> None:
    count = ProviderCount()
    for api in ("chat", "anthropic", "responses"):
        assert count.count(api, _native(api, SESSION)) != count_tokens(SESSION)
    body = _native("chat", SESSION)
    # 4 tokens a message besides its text, where condense counts 3
    heavier = ProviderCount(per_message=5).count("chat", body)
    assert heavier - count.count("chat", body) == len(SESSION)
    cjk = _native("chat", [{"role": "user", "content": "订单用户会话缓存重试队列处理器" * 40}])
    assert count.count("chat", cjk) > ProviderCount(encoding="o200k_base").count("chat", cjk)


def test_tools_and_instructions_count_at_the_fake() -> None:
    count = ProviderCount(tools_prompt=300)
    bare = count.count("chat", _native("chat", SHORT))
    tools = [{"type": "function", "function": tool} for tool in TOOLS]
    with_tools = count.count("chat", {**_native("chat", SHORT), "tools": tools})
    one_tool = json.dumps(tools[0], separators=(",", ":"))
    assert with_tools - bare > 300 + len(TOOLS) * (count.per_tool + len(one_tool) // 8)
    responses = _native("responses", SHORT)
    assert count.count("responses", responses) > count.count(
        "responses", {**responses, "instructions": None}
    )


def test_every_api_reads_the_same_history_alike() -> None:
    count = ProviderCount()
    counts = {api: count.count(api, _native(api, SESSION)) for api in ("chat", "anthropic")}
    assert abs(counts["chat"] - counts["anthropic"]) < 0.1 * counts["chat"]


@pytest.fixture(params=["fake", "strict"])
def server(request: pytest.FixtureRequest) -> Iterator[FakeProvider]:
    if request.param == "fake":
        with FakeProvider(context_window=WINDOW) as fake:
            yield fake
    else:
        with StrictProvider("openai", context_window=WINDOW) as strict:
            yield strict


def _overflow(server: FakeProvider, api: str, *, stream: bool) -> Any:
    url = server.base_url
    if api == "anthropic":
        native = to_anthropic(LONG)
        client = anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="k", max_retries=0)
        with client, pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.create(model="m", max_tokens=10, stream=stream, **native)
        return refused.value
    with openai.OpenAI(base_url=url, api_key="k", max_retries=0) as openai_client:
        if api == "chat":
            with pytest.raises(openai.BadRequestError) as caught:
                openai_client.chat.completions.create(
                    model="m",
                    messages=LONG,  # type: ignore[arg-type]
                    max_tokens=10,
                    stream=stream,
                )
        else:
            with pytest.raises(openai.BadRequestError) as caught:
                openai_client.responses.create(
                    model="m",
                    input=to_responses(LONG),  # type: ignore[arg-type]
                    stream=stream,
                )
    return caught.value


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("api", "text"),
    [
        ("chat", "This model's maximum context length is 600 tokens. However, your messages"),
        ("anthropic", "prompt is too long: "),
        ("responses", "Your input exceeds the context window of this model."),
    ],
)
def test_an_over_window_prompt_gets_the_real_overflow(
    server: FakeProvider, api: str, text: str, stream: bool
) -> None:
    error = _overflow(server, api, stream=stream)
    assert error.status_code == 400
    body = error.body if isinstance(error.body, dict) else {}
    message = str(body.get("message") or body.get("error", {}).get("message", ""))
    assert message.startswith(text), message
    if api == "anthropic":
        assert message.endswith(f"tokens > {WINDOW} maximum")
        assert json.loads(error.response.text)["error"]["type"] == "invalid_request_error"
    else:
        assert json.loads(error.response.text)["error"]["code"] == "context_length_exceeded"
    diagnosis = classify(error)
    assert diagnosis.category is Category.CONTEXT_OVERFLOW
    if api != "responses":  # the two that state their figures
        prompt = server._count(api, json.loads(server.log[-1].body))
        assert (diagnosis.input_tokens, diagnosis.allowed_tokens) == (prompt, WINDOW)


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_prompt_and_output_over_the_window_is_an_output_limit(
    server: FakeProvider, api: str
) -> None:
    history = [{"role": "user", "content": "word " * 300}]
    body = _native(api, history)
    prompt = server._count(api, body)
    assert prompt < WINDOW
    url = server.base_url
    if api == "chat":
        chat = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        with chat, pytest.raises(openai.BadRequestError) as caught:
            chat.chat.completions.create(
                model="m",
                messages=history,  # type: ignore[arg-type]
                max_tokens=WINDOW,
            )
        assert "in the completion" in str(caught.value)
    else:
        messages = anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="k", max_retries=0)
        with messages, pytest.raises(anthropic.BadRequestError) as refused:
            messages.messages.create(model="m", max_tokens=WINDOW, messages=history)  # type: ignore[arg-type]
        assert f"{prompt} + {WINDOW} > {WINDOW}" in str(refused.value)
        caught = refused  # type: ignore[assignment]
    assert classify(caught.value).category is Category.OUTPUT_LIMIT


def test_responses_does_not_count_the_output_against_the_window(server: FakeProvider) -> None:
    history = [{"role": "user", "content": "word " * 300}]
    with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as client:
        answer = client.responses.create(
            model="m",
            input=history,  # type: ignore[arg-type]
            max_output_tokens=WINDOW,
        )
    assert answer.status == "completed"


def test_usage_reports_the_fakes_own_count(server: FakeProvider) -> None:
    with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as client:
        answer = client.chat.completions.create(model="m", messages=SHORT)  # type: ignore[arg-type]
    assert answer.usage is not None
    assert answer.usage.prompt_tokens == ProviderCount().count("chat", _native("chat", SHORT))
    assert answer.usage.prompt_tokens != count_tokens(SHORT)
