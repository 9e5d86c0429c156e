"""recover / arecover: the ladder of changes, the waits, the bounds, the result."""

from __future__ import annotations

import asyncio
import importlib
import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from condense.errors import (
    Action,
    Category,
    RecoveryError,
    RecoveryResult,
    arecover,
    fingerprint,
    recover,
)
from condense.exceptions import InputError, InvalidOutputError, UnknownNameError
from condense.retry import RetryPolicy
from condense.tokens import count_tokens
from condense.validate import validate


class ProviderError(Exception):
    """What an SDK raises, reduced to what classify reads: a status, a body, headers."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.body = body
        self.headers = headers or {}
        super().__init__(f"Error code: {status} - {body}")


def openai_error(status: int, message: str, code: str | None = None) -> ProviderError:
    return ProviderError(status, {"error": {"message": message, "type": "x", "code": code}})


ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)


class Scripted:
    """A model call that raises the scripted errors in turn, then answers "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.sent: list[list[Any]] = []
        self.kwargs: list[dict[str, Any]] = []

    def __call__(self, messages: Sequence[Any], **kwargs: Any) -> str:
        self.sent.append(list(messages))
        self.kwargs.append(kwargs)
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def broken_history() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py b.py"},
        {"role": "tool", "tool_call_id": "call_ghost", "content": "orphan"},
        {"role": "user", "content": "Thanks."},
    ]


def long_history(turns: int = 12, size: int = 3000) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Read every file."},
    ]
    for n in range(turns):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": f"f{n}.py"})},
        }
        history += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": f"line {n} " * (size // 7)},
        ]
    history += [
        {"role": "assistant", "content": "Read them all."},
        {"role": "user", "content": "Summarize."},
    ]
    return history


# -- the happy path -----------------------------------------------------------------------


def test_first_success_returns_the_callers_messages_untouched() -> None:
    history = broken_history()
    call = Scripted()
    result = recover(call, history)
    assert isinstance(result, RecoveryResult)
    assert (result.value, result.changed, result.recovered) == ("ok", False, False)
    assert call.sent == [history] and call.kwargs == [{}]
    assert all(a is b for a, b in zip(result.messages, history, strict=True))
    assert result.attempts[0].fingerprint is None  # nothing failed: nothing hashed


# -- repair --------------------------------------------------------------------------------


def test_a_pairing_error_is_repaired_and_the_healed_history_returned() -> None:
    history = broken_history()
    before = json.dumps(history)
    call = Scripted(openai_error(400, ORPHAN))
    result = recover(call, history, provider="openai")
    assert result.value == "ok" and result.changed and result.recovered
    assert len(call.sent) == 2
    assert validate(call.sent[0], provider="openai") and not validate(
        call.sent[1], provider="openai"
    )
    assert result.messages == call.sent[1]
    assert [a.action for a in result.attempts] == [Action.REPAIR, None]
    assert result.attempts[0].diagnosis is not None
    assert result.attempts[0].diagnosis.category is Category.TOOL_PAIRING
    assert result.repairs and json.dumps(history) == before  # input never mutated
    assert "tool_pairing" in result.describe() and "succeeded" in result.describe()


def test_repair_escalates_to_strict_when_the_profile_sees_nothing_wrong() -> None:
    # Valid for OpenAI, but a stricter server refuses the two user messages in a row.
    history = [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
    ]
    refusal = openai_error(400, 'roles must alternate between "user" and "assistant"')
    call = Scripted(refusal)
    result = recover(call, history, provider="openai")
    assert len(call.sent) == 2
    assert "(escalated)" in result.attempts[0].detail
    assert not validate(result.messages, provider="strict")


def test_sdk_message_objects_are_converted_not_dropped() -> None:
    class Message:  # what an agent appends from a response: a pydantic-like object
        def model_dump(self, **options: Any) -> dict[str, Any]:
            assert options["exclude_unset"] and options["mode"] == "json"
            return {"role": "assistant", "content": "I read a.py"}

    history: list[Any] = [
        {"role": "user", "content": "read a.py"},
        Message(),
        {"role": "tool", "tool_call_id": "call_x", "content": "orphan"},
    ]
    result = recover(Scripted(openai_error(400, ORPHAN)), history, provider="openai")
    assert {"role": "assistant", "content": "I read a.py"} in result.messages


# -- never the same refused payload twice ---------------------------------------------------


def test_a_refused_payload_is_never_sent_again() -> None:
    history = long_history(turns=6, size=1500)
    call = Scripted(*[openai_error(400, ORPHAN) for _ in range(10)])
    with pytest.raises(RecoveryError) as caught:
        recover(call, history, provider="strict", max_attempts=8)
    prints = [fingerprint(sent) for sent in call.sent]
    assert len(prints) == len(set(prints)) >= 2
    attempts = caught.value.attempts
    assert [a.fingerprint for a in attempts] == prints
    # repair could not change a valid history, so condense compressed, tighter each time
    assert {a.action for a in attempts[:-1]} == {Action.COMPRESS}
    assert caught.value.messages == call.sent[-1]


def test_when_nothing_can_change_it_gives_up_without_resending() -> None:
    call = Scripted(*[openai_error(400, ORPHAN) for _ in range(5)])
    with pytest.raises(RecoveryError) as caught:
        recover(call, [{"role": "user", "content": "hi"}], max_attempts=5)
    assert len(call.sent) == 1
    assert "already refused" in str(caught.value)
    assert caught.value.attempts[-1].action is Action.FAIL


# -- compress ------------------------------------------------------------------------------


def test_overflow_compresses_to_the_room_the_provider_states() -> None:
    history = long_history()
    ours = count_tokens(history)
    theirs = int(ours * 1.25)  # the provider counts 25% more than our tokenizer
    message = (
        f"This model's maximum context length is 8000 tokens. However, you requested "
        f"{theirs + 1000} tokens ({theirs} in the messages, 1000 in the completion). "
        "Please reduce the length of the messages or completion."
    )
    call = Scripted(openai_error(400, message, "context_length_exceeded"))
    result = recover(call, history, margin=0.1)
    expected = int((8000 - 1000) * 0.9 / (theirs / ours))
    report = result.compressions[0]
    assert report.budget == expected
    assert count_tokens(call.sent[1]) <= expected
    assert result.attempts[0].action is Action.COMPRESS
    assert not validate(result.messages, provider="strict")


class Window:
    """A server with a small context window that refuses, in its own words, any history
    over it: the figures are its real count of what was sent."""

    def __init__(self, window: int, wording: str) -> None:
        self.window, self.wording = window, wording
        self.sent: list[int] = []

    def __call__(self, messages: Sequence[Any]) -> str:
        size = count_tokens(list(messages))
        self.sent.append(size)
        if size > self.window:
            text = self.wording.format(n=size, window=self.window, over=size - self.window)
            raise openai_error(400, text)
        return "ok"


LOCAL_WORDINGS = [
    # OpenAI's wording, the yardstick
    "This model's maximum context length is {window} tokens. However, your messages resulted "
    "in {n} tokens. Please reduce the length of the messages.",
    # vllm-project/vllm serving_responses.py
    "The engine prompt length {n} exceeds the max_model_len {window}. Please reduce prompt.",
    # EricLBuehler/candle-vllm src/api.rs
    "Prompt length {n} exceeds maximum model length {window}",
    # vllm-project/vllm#12165
    "The prompt (total length {n}) is too long to fit into the model (context length {window}).",
    # can1357/oh-my-pi#556 (llama.cpp)
    "request ({n} tokens) exceeds the available context size ({window} tokens), try increasing it",
    # ggml-org/llama.cpp examples/server/server.cpp: no figures, the window comes from the caller
    "Input prompt is too big compared to KV size. Please try increasing KV size.",
    # issue #9 (llama.cpp): no figures either
    "slot context: … not enough space",
    # lmstudio-ai/lmstudio-bug-tracker#546
    "Trying to keep the first {n} tokens when context the overflows. However, the model is "
    "loaded with context length of only {window} tokens, which is not enough.",
    # earendil-works/pi packages/ai/src/utils/overflow.ts (Ollama): how far over the window
    "prompt too long; exceeded max context length by {over} tokens",
    # nano-step/nano-brain#208 (Ollama)
    '{{"error":"the input length exceeds the context length"}}',
    # issue #9 (Chinese)
    "超过最大长度限制",
]


@pytest.mark.parametrize("wording", LOCAL_WORDINGS)
def test_local_servers_overflow_recovers_in_one_retry_like_openai(wording: str) -> None:
    """Defect 7: vLLM, llama.cpp and Chinese wordings were read as message_format; recover
    then sent 5294 → 3614 → 2236 tokens to a 2000-token window and gave up."""
    history = long_history(turns=6, size=2500)
    server = Window(2000, wording)
    assert count_tokens(history) > 5000
    result = recover(server, history, context_window=2000)
    assert result.value == "ok"
    assert len(server.sent) == 2 and server.sent[1] <= 2000
    assert result.attempts[0].action is Action.COMPRESS
    assert result.attempts[0].diagnosis is not None
    assert result.attempts[0].diagnosis.category is Category.CONTEXT_OVERFLOW
    assert not validate(result.messages, provider="strict")


def test_overflow_without_figures_keeps_seventy_percent_of_the_budget() -> None:
    history = long_history()
    call = Scripted(openai_error(400, "Input is too long for requested model."))
    result = recover(call, history, budget=10_000)
    assert result.compressions[0].budget == 7000


def test_each_further_overflow_goes_tighter() -> None:
    history = long_history()
    text = "prompt is too long: 30000 tokens > 20000 maximum"
    call = Scripted(openai_error(400, text), openai_error(400, text))
    result = recover(call, history)
    first, second = (report.budget for report in result.compressions)
    assert second <= int(first * 0.7)


def test_413_compresses_too() -> None:
    call = Scripted(ProviderError(413, "Request Entity Too Large"))
    history = long_history()
    result = recover(call, history)
    assert result.compressions[0].budget == int(count_tokens(history) * 0.7)


# -- output limit -------------------------------------------------------------------------


OUTPUT_LIMIT = (
    "input length and `max_tokens` exceed context limit: 5000 + 8000 > 8192, decrease "
    "input length or `max_tokens` and try again"
)


def test_output_limit_lowers_max_tokens_when_the_call_takes_it() -> None:
    call = Scripted(openai_error(400, OUTPUT_LIMIT))
    result = recover(call, broken_history()[:2], max_tokens=8000)
    assert call.kwargs == [{}, {"max_tokens": 3192}]
    assert result.max_tokens == 3192 and not result.changed
    assert result.attempts[0].action is Action.REDUCE_OUTPUT


def test_output_limit_compresses_when_the_call_cannot_take_max_tokens() -> None:
    sent: list[list[Any]] = []

    def call(messages: Sequence[Any]) -> str:
        sent.append(list(messages))
        if len(sent) == 1:
            raise openai_error(400, OUTPUT_LIMIT)
        return "ok"

    history = long_history()
    result = recover(call, history)
    assert result.attempts[0].action is Action.COMPRESS
    assert result.compressions[0].budget < count_tokens(history)


# -- back off ------------------------------------------------------------------------------


def test_backoff_honours_retry_after_and_resends_the_same_payload() -> None:
    limited = ProviderError(429, {"error": {"message": "Rate limit"}}, {"retry-after": "2"})
    call = Scripted(limited)
    sleeps = Sleeps()
    result = recover(call, broken_history(), sleep=sleeps, rng=random.Random(1))
    assert len(sleeps.waits) == 1 and 2.0 <= sleeps.waits[0] <= 2.2
    assert call.sent[0] == call.sent[1] and not result.changed
    assert result.attempts[0].action is Action.BACKOFF
    assert result.attempts[0].wait == sleeps.waits[0]


def test_backoff_without_retry_after_is_exponential_with_jitter() -> None:
    call = Scripted(ProviderError(500, "boom"), ProviderError(503, "unavailable"))
    sleeps = Sleeps()
    policy = RetryPolicy(backoff_base=1.0, jitter=0.5)
    recover(call, broken_history(), sleep=sleeps, backoff=policy, max_attempts=3)
    first, second = sleeps.waits
    assert 0.5 <= first <= 1.0 and 1.0 <= second <= 2.0


def test_a_wait_longer_than_allowed_fails_at_once() -> None:
    call = Scripted(ProviderError(429, "slow down", {"retry-after": "600"}))
    sleeps = Sleeps()
    with pytest.raises(RecoveryError, match="more than 60s"):
        recover(call, broken_history(), sleep=sleeps)
    assert sleeps.waits == [] and len(call.sent) == 1


def test_the_backoff_policy_bounds_the_waits_too() -> None:
    call = Scripted(*[ProviderError(500, "boom") for _ in range(5)])
    with pytest.raises(RecoveryError, match="backoff: max_attempts=2 reached"):
        recover(
            call,
            broken_history(),
            max_attempts=5,
            backoff=RetryPolicy(max_attempts=2),
            sleep=Sleeps(),
        )
    assert len(call.sent) == 2


def test_timeouts_and_connection_errors_back_off() -> None:
    call = Scripted(TimeoutError("timed out"), ConnectionResetError(104, "reset by peer"))
    sleeps = Sleeps()
    result = recover(call, broken_history(), sleep=sleeps)
    assert len(sleeps.waits) == 2 and result.value == "ok"
    assert [d.category for d in result.diagnoses] == [Category.TIMEOUT, Category.CONNECTION]


# -- fail fast, bounded attempts ----------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "category"),
    [
        (openai_error(401, "Incorrect API key provided: sk-xx."), Category.AUTH),
        (openai_error(402, "Insufficient credits"), Category.BILLING),
        (
            openai_error(400, "The response was filtered due to the content management policy"),
            Category.CONTENT_FILTER,
        ),
        (openai_error(404, "The model `gpt-9` does not exist"), Category.MODEL_NOT_FOUND),
    ],
)
def test_fail_fast_categories_stop_after_one_call(error: Exception, category: Category) -> None:
    call = Scripted(error)
    sleeps = Sleeps()
    history = broken_history()
    with pytest.raises(RecoveryError) as caught:
        recover(call, history, sleep=sleeps)
    failure = caught.value
    assert len(call.sent) == 1 and sleeps.waits == []
    assert failure.diagnosis.category is category
    assert failure.error is error and failure.__cause__ is error
    assert failure.messages == history
    assert failure.attempts[-1].action is Action.FAIL


def test_attempts_are_bounded() -> None:
    call = Scripted(*[ProviderError(500, "boom") for _ in range(10)])
    sleeps = Sleeps()
    with pytest.raises(RecoveryError, match="max_attempts=4") as caught:
        recover(call, broken_history(), max_attempts=4, sleep=sleeps)
    assert len(call.sent) == 4 and len(sleeps.waits) == 3
    assert len(caught.value.diagnoses) == 4


def test_max_attempts_one_never_retries() -> None:
    call = Scripted(openai_error(400, ORPHAN))
    with pytest.raises(RecoveryError):
        recover(call, broken_history(), max_attempts=1)
    assert len(call.sent) == 1


@pytest.mark.parametrize(
    "options",
    [{"max_attempts": 0}, {"budget": 0}, {"margin": 1.0}],
)
def test_bad_options_are_input_errors(options: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        recover(Scripted(), broken_history(), **options)


def test_bad_input_is_refused_before_any_call() -> None:
    call = Scripted()
    with pytest.raises(InputError):
        recover(call, "not a list")
    with pytest.raises(UnknownNameError):
        recover(call, broken_history(), provider="nope")
    assert call.sent == []


# -- async ---------------------------------------------------------------------------------


def test_arecover_repairs_and_backs_off_with_an_async_sleep() -> None:
    errors: list[Exception] = [
        openai_error(400, ORPHAN),
        ProviderError(503, "overloaded", {"retry-after": "1"}),
    ]
    sent: list[list[Any]] = []
    waits: list[float] = []

    async def call(messages: Sequence[Any]) -> str:
        sent.append(list(messages))
        if errors:
            raise errors.pop(0)
        return "ok"

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    result = asyncio.run(arecover(call, broken_history(), provider="anthropic", sleep=sleep))
    assert result.value == "ok" and len(sent) == 3
    assert [a.action for a in result.attempts] == [Action.REPAIR, Action.BACKOFF, None]
    assert 1.0 <= waits[0] <= 1.1
    assert sent[1] == sent[2] and not validate(sent[2], provider="anthropic")


def test_arecover_gives_up_like_recover() -> None:
    async def call(messages: Sequence[Any]) -> str:
        raise openai_error(401, "Incorrect API key provided")

    with pytest.raises(RecoveryError) as caught:
        asyncio.run(arecover(call, broken_history()))
    assert caught.value.diagnosis.category is Category.AUTH


def test_a_bug_in_condense_is_not_swallowed_as_a_failed_attempt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """InvalidOutputError means condense broke its own guarantee: recover must raise it,
    not count it as one more thing that did not work."""
    module = importlib.import_module("condense.errors.recover")  # the function shadows it

    def broken(messages: object, *, provider: object) -> object:
        raise InvalidOutputError("strict", ["message 0: broken by a bug"])

    monkeypatch.setattr(module, "repair", broken)
    call = Scripted(ProviderError(400, "messages with role 'tool' must be a response"))
    with pytest.raises(InvalidOutputError, match="please report this bug"):
        recover(call, broken_history(), sleep=Sleeps())
