"""OpenAISummarizer against FakeProvider: real SDK, real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import functools
import sys
import threading
from typing import Any

import pytest

from cli_support import HANG_GUARD
from condense.exceptions import InputError
from condense.retry import RetryPolicy, aretry, retry
from condense.summarizers import (
    ExtractiveSummarizer,
    OpenAISummarizer,
    SummaryOutcome,
    openai_compat,
    summarize_with_report,
)
from condense.summarizers._text import estimate_tokens
from condense.summarizers.prompt import SYSTEM_PROMPT
from condense.testing import (
    Delay,
    DeterministicSummarizer,
    Disconnect,
    Empty,
    Fail,
    FakeProvider,
    Reply,
    Truncated,
)

SPAN: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the flaky test in tests/test_sync.py (issue #4411)."},
    {
        "role": "assistant",
        "content": "I will run it first.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "bash",
                    "arguments": '{"command": "pytest tests/test_sync.py"}',
                },
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "FAILED tests/test_sync.py::test_race - TimeoutError\nexit code 1",
    },
    {"role": "assistant", "content": "The race is in sync.py; next I will add a lock."},
]


@pytest.fixture(autouse=True)
def _no_ambient_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASE_URL", "API_KEY", "MODEL"):
        monkeypatch.delenv(f"CONDENSE_{name}", raising=False)
        monkeypatch.delenv(f"OPENAI_{name}", raising=False)


def make(fake: FakeProvider, **options: Any) -> OpenAISummarizer:
    """A summarizer for transport tests: the model's answer comes back as sent
    (``restore=False``; the restoring is tested in test_summarizers_restore.py)."""
    settings: dict[str, Any] = {
        "base_url": fake.base_url,
        "model": "fake-model",
        "timeout": 2.0,
        "backoff_base": 0.01,
        "seed": 7,
        "restore": False,
    }
    settings.update(options)
    return OpenAISummarizer(**settings)


def run(summarizer: OpenAISummarizer, previous: str | None = None) -> SummaryOutcome:
    return summarizer.summarize_with_report(SPAN, previous=previous, target_tokens=300)


def prompt_of(request: dict[str, Any]) -> str:
    return "\n".join(str(message["content"]) for message in request["messages"])


# -- success and the prompt -------------------------------------------------------------------


def test_success_returns_the_model_text(fake_provider: FakeProvider) -> None:
    fake_provider.push(Reply("## User asks\n- fix tests/test_sync.py"))
    outcome = run(make(fake_provider))
    assert outcome == SummaryOutcome(
        text="## User asks\n- fix tests/test_sync.py", summarizer="openai", attempts=1
    )
    [request] = fake_provider.requests
    assert request["model"] == "fake-model"
    assert request["max_tokens"] >= 300
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["messages"][0]["content"] == SYSTEM_PROMPT


def test_summarize_is_the_text_of_the_report(fake_provider: FakeProvider) -> None:
    fake_provider.push(Reply("short summary"))
    text = make(fake_provider).summarize(SPAN, previous=None, target_tokens=100)
    assert text == "short summary"


def test_prompt_holds_the_span_as_a_transcript(fake_provider: FakeProvider) -> None:
    run(make(fake_provider))
    prompt = prompt_of(fake_provider.requests[0])
    assert "[user] Fix the flaky test in tests/test_sync.py (issue #4411)." in prompt
    assert '[assistant tool call] bash({"command": "pytest tests/test_sync.py"})' in prompt
    assert "[tool result: bash] FAILED tests/test_sync.py::test_race" in prompt
    assert "## Errors" in prompt  # the sections are asked for
    assert "Update this summary" not in prompt


def test_previous_summary_makes_it_an_update(fake_provider: FakeProvider) -> None:
    previous = "## Files\n- src/sync.py\n## Last state\nLock added in commit 9f3e2a1."
    run(make(fake_provider), previous=previous)
    prompt = prompt_of(fake_provider.requests[0])
    assert "Update this summary with the new span" in prompt
    assert "Lock added in commit 9f3e2a1." in prompt
    assert prompt.index("9f3e2a1") < prompt.index("<new_span>")


def test_secrets_never_leave_the_process(fake_provider: FakeProvider) -> None:
    secrets = [
        "sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "hunter2-database",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "local-api-key-123456",
    ]
    span: list[dict[str, Any]] = [
        {"role": "user", "content": f"use {secrets[0]} and postgres://app:{secrets[3]}@db/x"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": f'{{"command": "AWS_ACCESS_KEY_ID={secrets[1]} aws s3 ls"}}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"token: {secrets[2]}\n" + "x" * 9000},
        {"role": "assistant", "content": [{"type": "text", "text": f"Bearer {secrets[4]}"}]},
        {"role": "user", "content": f"my key for this endpoint is {secrets[5]}"},
    ]
    summarizer = make(fake_provider, api_key=secrets[5])
    summarizer.summarize(span, previous=f"## Errors\n- leaked {secrets[0]}", target_tokens=200)
    [recorded] = fake_provider.log
    body = recorded.body.decode()
    for secret in secrets:
        assert secret not in body
    assert "[REDACTED]" in body
    assert recorded.headers["authorization"] == f"Bearer {secrets[5]}"  # only where it belongs


def test_prompt_size_is_capped(fake_provider: FakeProvider) -> None:
    span = [
        {"role": "user" if i % 2 else "assistant", "content": f"message {i} " + "word " * 2_000}
        for i in range(300)
    ]
    summarizer = make(fake_provider, max_prompt_tokens=2_000, max_message_chars=1_000)
    summarizer.summarize(span, previous="## Last state\n" + "old " * 5_000, target_tokens=200)
    prompt = prompt_of(fake_provider.requests[0])
    assert estimate_tokens(prompt) <= 2_000
    assert "messages left out" in prompt
    assert "message 0 " in prompt  # the head of the span
    assert "message 299 " in prompt  # and its tail


def test_long_messages_are_cut_in_the_middle(fake_provider: FakeProvider) -> None:
    span = [{"role": "tool", "tool_call_id": "x", "content": "HEAD " + "y" * 20_000 + " TAIL"}]
    make(fake_provider, max_message_chars=500).summarize(span, previous=None, target_tokens=50)
    prompt = prompt_of(fake_provider.requests[0])
    assert "HEAD" in prompt
    assert "TAIL" in prompt
    assert "chars cut …]" in prompt
    assert "y" * 600 not in prompt


def test_an_answer_over_target_is_trimmed(fake_provider: FakeProvider) -> None:
    fake_provider.push(Reply("\n".join(f"- line {i} " + "z" * 40 for i in range(100))))
    outcome = make(fake_provider).summarize_with_report(SPAN, previous=None, target_tokens=50)
    assert not outcome.fell_back
    assert estimate_tokens(outcome.text) <= 50
    assert outcome.text.startswith("- line 0 ")


def test_an_answer_cut_by_length_but_with_text_is_used(fake_provider: FakeProvider) -> None:
    fake_provider.push(Reply("## User asks\n- fix the flaky", finish_reason="length"))
    outcome = run(make(fake_provider))
    assert not outcome.fell_back
    assert outcome.text == "## User asks\n- fix the flaky"


# -- retries ----------------------------------------------------------------------------------


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the summarizer has the retry core make, recorded instead of slept (the
    core's sleeping is condense.retry's, tested in test_retry.py)."""
    asked: list[float] = []

    async def asleep(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(openai_compat, "retry", functools.partial(retry, sleep=asked.append))
    monkeypatch.setattr(openai_compat, "aretry", functools.partial(aretry, sleep=asleep))
    return asked


@pytest.mark.parametrize(
    "headers", [{"retry-after-ms": "250"}, {"Retry-After": "0.25"}], ids=["ms", "seconds"]
)
def test_429_waits_as_asked_then_succeeds(
    fake_provider: FakeProvider, headers: dict[str, str], waits: list[float]
) -> None:
    fake_provider.push(Fail(429, headers=headers), Reply("after the wait"))
    outcome = run(make(fake_provider, backoff_base=0.0))
    assert outcome.text == "after the wait"
    assert outcome.attempts == 2
    assert not outcome.fell_back
    assert outcome.failures[0].startswith("HTTP 429")
    (wait,) = waits
    assert 0.25 <= wait <= 0.25 * 1.1  # as asked, plus up to a tenth (condense.retry)


def test_a_retry_after_longer_than_allowed_falls_back_at_once(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(429, headers={"Retry-After": "30"}))
    outcome = run(make(fake_provider, max_retry_wait=5))
    assert outcome.fell_back
    assert outcome.attempts == 1
    assert outcome.reason is not None
    assert "asked to wait 30s" in outcome.reason


def test_500_is_retried(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(500), Fail(503), Reply("third time"))
    outcome = run(make(fake_provider))
    assert outcome.text == "third time"
    assert outcome.attempts == 3
    assert outcome.failures == (
        "HTTP 500: fake provider error 500",
        "HTTP 503: fake provider error 503",
    )


def test_retries_are_bounded_then_it_falls_back(fake_provider: FakeProvider) -> None:
    fake_provider.push(*[Fail(502)] * 5)
    outcome = run(make(fake_provider, max_attempts=3))
    assert outcome.fell_back
    assert outcome.attempts == 3
    assert len(fake_provider.requests) == 3
    assert fake_provider.pending == 2


def test_truncated_body_is_retried(fake_provider: FakeProvider) -> None:
    fake_provider.push(Truncated(), Reply("whole answer"))
    outcome = run(make(fake_provider))
    assert outcome.text == "whole answer"
    assert outcome.failures[0].startswith("unreadable response")


def test_dropped_connection_is_retried(fake_provider: FakeProvider) -> None:
    fake_provider.push(Disconnect(), Reply("reconnected"))
    outcome = run(make(fake_provider))
    assert outcome.text == "reconnected"
    assert outcome.attempts == 2


def test_backoff_policy() -> None:
    policy = RetryPolicy(max_attempts=4, backoff_base=1.0, backoff_max=3.0, max_retry_wait=10)

    class Fixed:
        def __init__(self, value: float) -> None:
            self.value = value

        def random(self) -> float:
            return self.value

    low, high = Fixed(0.0), Fixed(1.0)
    assert policy.delay(1, None, low) == 1.0  # type: ignore[arg-type]
    assert policy.delay(2, None, low) == 2.0  # type: ignore[arg-type]
    assert policy.delay(3, None, low) == 3.0  # type: ignore[arg-type]  # capped
    assert policy.delay(2, None, high) == 1.0  # type: ignore[arg-type]  # jitter: half off
    assert policy.delay(4, None, low) is None  # type: ignore[arg-type]  # out of retries
    assert policy.delay(1, 4.0, low) == 4.0  # type: ignore[arg-type]  # as the server asks
    assert policy.delay(1, 4.0, high) == pytest.approx(4.4)  # type: ignore[arg-type]
    assert policy.delay(1, 11.0, low) is None  # type: ignore[arg-type]  # too long


# -- fallback ---------------------------------------------------------------------------------


def test_413_falls_back_to_extractive_without_retrying(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(413, body={"error": {"message": "Request too large for model"}}))
    outcome = run(make(fake_provider))
    assert outcome.fell_back
    assert outcome.summarizer == "extractive"
    assert outcome.attempts == 1
    assert outcome.reason == "HTTP 413: Request too large for model"
    assert outcome.text == ExtractiveSummarizer().summarize(SPAN, previous=None, target_tokens=300)


def test_timeout_falls_back(fake_provider: FakeProvider) -> None:
    fake_provider.push(Delay(3.0), Delay(3.0))
    outcome = run(make(fake_provider, timeout=0.2, max_attempts=2))
    assert outcome.fell_back
    assert outcome.attempts == 2
    assert outcome.failures == ("timed out after 0.2s", "timed out after 0.2s")


@pytest.mark.parametrize(
    ("step", "reason"),
    [
        (Empty(""), "the answer was empty (finish_reason=stop)"),
        (Empty("  \n "), "the answer was empty (finish_reason=stop)"),
        (Empty(None), "the answer was empty (finish_reason=stop)"),
        (Empty("", finish_reason="length"), "cut off (finish_reason=length) with no text"),
        (Empty("## User asks\n", finish_reason="length"), "length) with only headings"),
        (Empty("## Files", finish_reason="stop"), "the answer had only headings"),
    ],
    ids=["empty", "whitespace", "null", "length", "length-headings", "headings"],
)
def test_unusable_answers_fall_back(fake_provider: FakeProvider, step: Empty, reason: str) -> None:
    fake_provider.push(step)
    outcome = run(make(fake_provider))
    assert outcome.fell_back
    assert outcome.reason is not None
    assert reason in outcome.reason
    assert outcome.attempts == 1


def test_wrong_api_key_falls_back(fake_provider: FakeProvider) -> None:
    fake_provider.require_api_key = "right-key"
    outcome = run(make(fake_provider, api_key="wrong-key"))
    assert outcome.fell_back
    assert outcome.reason == "HTTP 401: Incorrect API key provided."
    assert not run(make(fake_provider, api_key="right-key")).fell_back


def test_unreachable_endpoint_falls_back() -> None:
    with FakeProvider() as fake:
        url = fake.base_url  # closed: nothing listens there any more
    outcome = OpenAISummarizer(
        base_url=url, model="m", max_attempts=2, backoff_base=0.01
    ).summarize_with_report(SPAN, previous=None, target_tokens=100)
    assert outcome.fell_back
    assert outcome.attempts == 2
    assert outcome.reason is not None
    assert outcome.reason.startswith("connection failed")


def test_the_fallback_is_configurable(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(400))
    outcome = run(make(fake_provider, fallback=DeterministicSummarizer()))
    assert outcome.summarizer == "deterministic"
    assert outcome.text.startswith("summary of 4 messages")


def test_summarize_never_raises_for_a_provider_failure(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(400))
    text = make(fake_provider).summarize(SPAN, previous=None, target_tokens=300)
    assert "## User asks" in text  # the extractive digest


def test_summarize_with_report_helper_uses_the_method(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(413))
    outcome = summarize_with_report(make(fake_provider), SPAN, previous=None, target_tokens=300)
    assert outcome.fell_back


# -- configuration ----------------------------------------------------------------------------


def test_arguments_beat_condense_env_beat_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/openai")
    monkeypatch.setenv("OPENAI_MODEL", "openai-model")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    plain = OpenAISummarizer()
    assert (plain.base_url, plain.model) == ("http://127.0.0.1:9/openai", "openai-model")
    monkeypatch.setenv("CONDENSE_BASE_URL", "http://127.0.0.1:9/condense")
    monkeypatch.setenv("CONDENSE_MODEL", "condense-model")
    env = OpenAISummarizer()
    assert (env.base_url, env.model) == ("http://127.0.0.1:9/condense", "condense-model")
    explicit = OpenAISummarizer(base_url="http://127.0.0.1:9/arg", model="arg-model")
    assert (explicit.base_url, explicit.model) == ("http://127.0.0.1:9/arg", "arg-model")


def test_env_configuration_reaches_the_endpoint(
    fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_provider.require_api_key = "condense-key"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # would fail
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    monkeypatch.setenv("CONDENSE_BASE_URL", fake_provider.base_url)
    monkeypatch.setenv("CONDENSE_API_KEY", "condense-key")
    monkeypatch.setenv("CONDENSE_MODEL", "env-model")
    outcome = OpenAISummarizer().summarize_with_report(SPAN, previous=None, target_tokens=100)
    assert not outcome.fell_back
    assert fake_provider.requests[0]["model"] == "env-model"


def test_a_model_is_required() -> None:
    with pytest.raises(InputError, match="CONDENSE_MODEL"):
        OpenAISummarizer(base_url="http://127.0.0.1:9/v1")


def test_a_key_is_required_for_the_default_endpoint() -> None:
    with pytest.raises(InputError, match="CONDENSE_API_KEY"):
        OpenAISummarizer(model="gpt-4o-mini")


def test_missing_sdk_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(InputError, match=r"pip install 'condense\[openai\]'"):
        OpenAISummarizer(base_url="http://127.0.0.1:9/v1", model="m")


def test_rejects_a_target_below_one(fake_provider: FakeProvider) -> None:
    with pytest.raises(InputError, match="target_tokens"):
        make(fake_provider).summarize(SPAN, previous=None, target_tokens=0)
    assert fake_provider.requests == []


def test_max_tokens_parameter_name_and_extra_body(fake_provider: FakeProvider) -> None:
    summarizer = make(
        fake_provider,
        max_tokens_param="max_completion_tokens",
        temperature=0.0,
        extra_body={"top_k": 1},
    )
    run(summarizer)
    request = fake_provider.requests[0]
    assert "max_tokens" not in request
    assert request["max_completion_tokens"] >= 300
    assert request["temperature"] == 0.0
    assert request["top_k"] == 1


# -- async ------------------------------------------------------------------------------------


def arun(summarizer: OpenAISummarizer, previous: str | None = None) -> SummaryOutcome:
    return asyncio.run(
        summarizer.asummarize_with_report(SPAN, previous=previous, target_tokens=300)
    )


def test_async_success_and_update_prompt(fake_provider: FakeProvider) -> None:
    fake_provider.push(Reply("async summary"))
    assert (
        asyncio.run(
            make(fake_provider).asummarize(SPAN, previous="## Files\n- a.py", target_tokens=300)
        )
        == "async summary"
    )
    assert "Update this summary" in prompt_of(fake_provider.requests[0])


def test_async_429_then_success(fake_provider: FakeProvider, waits: list[float]) -> None:
    fake_provider.push(Fail(429, headers={"retry-after-ms": "200"}), Reply("async after wait"))
    outcome = arun(make(fake_provider, backoff_base=0.0))
    (wait,) = waits
    assert 0.2 <= wait <= 0.2 * 1.1
    assert outcome.text == "async after wait"
    assert outcome.attempts == 2


def test_async_fallbacks(fake_provider: FakeProvider) -> None:
    fake_provider.push(Fail(413), Delay(3.0), Empty())
    assert arun(make(fake_provider)).reason == "HTTP 413: fake provider error 413"
    timed_out = arun(make(fake_provider, timeout=0.2, max_attempts=1))
    assert timed_out.fell_back
    assert timed_out.reason == "timed out after 0.2s"
    assert arun(make(fake_provider)).summarizer == "extractive"


def test_async_calls_run_concurrently() -> None:
    """Each answer waits until all four requests are in: calls made one after the other
    would never get one (the barrier's wait is only a guard against a hang)."""
    all_in = threading.Barrier(4, timeout=HANG_GUARD)

    def answer_once_all_are_in(body: dict[str, Any]) -> str:
        all_in.wait()
        return "slow"

    with FakeProvider(responder=answer_once_all_are_in) as fake:
        summarizer = make(fake, timeout=2 * HANG_GUARD, max_attempts=1)
        assert asyncio.run(_four_at_once(summarizer)) == ["slow"] * 4


async def _four_at_once(summarizer: OpenAISummarizer) -> list[str]:
    calls = [summarizer.asummarize(SPAN, previous=None, target_tokens=50) for _ in range(4)]
    return await asyncio.gather(*calls)


def test_max_retries_is_the_old_spelling_of_max_attempts(fake_provider: FakeProvider) -> None:
    with pytest.warns(DeprecationWarning, match="max_retries= is deprecated"):
        summarizer = OpenAISummarizer(base_url=fake_provider.base_url, model="m", max_retries=2)
    assert summarizer.retry.max_attempts == 3
