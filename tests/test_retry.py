"""The retry core: waits computed once, retryability from classify, thin drivers."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

import condense
import condense.errors
from condense.exceptions import InputError
from condense.retry import Backoff, Failure, RetryPolicy, aretry, judge, retry


class Fixed:
    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


class HTTPError(Exception):
    """Shaped like an SDK error: classify reads its status, body and headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status_code = status
        self.body = {"error": {"message": message}}
        self.headers = headers or {}


def test_retry_policy_is_exported_where_it_is_a_parameter_type() -> None:
    assert condense.RetryPolicy is RetryPolicy
    assert condense.errors.RetryPolicy is RetryPolicy


def test_the_policy_waits() -> None:
    policy = RetryPolicy(max_attempts=4, backoff_base=1.0, backoff_max=3.0, max_retry_wait=10)
    low, high = Fixed(0.0), Fixed(1.0)
    assert policy.delay(1, None, low) == 1.0  # type: ignore[arg-type]
    assert policy.delay(2, None, low) == 2.0  # type: ignore[arg-type]
    assert policy.delay(3, None, low) == 3.0  # type: ignore[arg-type]  # capped
    assert policy.delay(2, None, high) == 1.0  # type: ignore[arg-type]  # jitter: half off
    assert policy.delay(4, None, low) is None  # type: ignore[arg-type]  # 4 attempts made
    assert policy.delay(1, 4.0, low) == 4.0  # type: ignore[arg-type]  # as the server asks
    assert policy.delay(1, 4.0, high) == pytest.approx(4.4)  # type: ignore[arg-type]
    assert policy.delay(1, 11.0, low) is None  # type: ignore[arg-type]  # too long


@pytest.mark.parametrize(
    "bad", [{"max_attempts": 0}, {"backoff_base": -1.0}, {"jitter": 1.5}], ids=str
)
def test_an_impossible_policy_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(InputError):
        RetryPolicy(**bad)  # type: ignore[arg-type]


def test_the_core_says_why_it_stops() -> None:
    core = Backoff(RetryPolicy(max_attempts=2, backoff_base=0.0), rng=random.Random(0))
    assert core.after(Failure(reason="x", retryable=True)).wait == 0.0
    assert core.after(Failure(reason="x", retryable=True)).reason == "max_attempts=2 reached"
    fatal = Backoff(RetryPolicy()).after(Failure(reason="x", retryable=False))
    assert fatal.wait is None and "not one a retry can fix" in fatal.reason
    slow = Backoff(RetryPolicy(max_retry_wait=5)).after(
        Failure(reason="x", retryable=True, retry_after=30)
    )
    assert slow.wait is None and slow.reason == "the server asked to wait 30s, more than 5s"


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (HTTPError(429, "Rate limit reached"), True),
        (HTTPError(503, "Service unavailable"), True),
        (HTTPError(529, "Overloaded"), True),
        (TimeoutError("timed out"), True),
        (ConnectionResetError(104, "reset by peer"), True),
        (HTTPError(401, "Incorrect API key provided"), False),
        (HTTPError(400, "messages with role 'tool' must be a response"), False),
        (RuntimeError("a bug"), False),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_retryability_is_what_classify_says(error: Exception, retryable: bool) -> None:
    assert judge(error).retryable is retryable
    action = condense.classify(error).action
    assert (action is condense.Action.BACKOFF) is retryable


def test_retry_after_comes_from_the_one_parser_in_classify() -> None:
    assert judge(HTTPError(429, "slow down", {"retry-after-ms": "1500"})).retry_after == 1.5
    assert judge(HTTPError(429, "slow down", {"retry-after": "2"})).retry_after == 2.0
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    waited = judge(HTTPError(429, "slow down", {"retry-after": when})).retry_after
    assert waited is not None and 25 <= waited <= 30
    assert judge(HTTPError(429, "slow down", {"retry-after": "soon"})).retry_after is None


class Script:
    """A call that raises the scripted errors, then returns ``"done"``."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def test_the_sync_driver_waits_then_succeeds() -> None:
    call = Script(TimeoutError("slow"), HTTPError(429, "limit", {"retry-after": "2"}))
    waits: list[float] = []
    done = retry(call, policy=RetryPolicy(backoff_base=1.0), sleep=waits.append, rng=Fixed(0))  # type: ignore[arg-type]
    assert done.ok and done.value == "done" and done.attempts == 3
    assert waits == [1.0, 2.0]
    assert [f.retryable for f in done.failures] == [True, True]


def test_the_sync_driver_stops_at_a_failure_a_retry_cannot_fix() -> None:
    call = Script(HTTPError(401, "Incorrect API key provided"))
    waits: list[float] = []
    done = retry(call, policy=RetryPolicy(), sleep=waits.append)
    assert not done.ok and done.value is None and done.attempts == 1 and waits == []
    assert call.calls == 1 and "not one a retry can fix" in done.reason


def test_the_async_driver_makes_the_same_waits() -> None:
    errors = [TimeoutError("slow"), TimeoutError("slow"), TimeoutError("slow")]
    sync_waits: list[float] = []
    async_waits: list[float] = []

    async def record(seconds: float) -> None:
        async_waits.append(seconds)

    async def call() -> str:
        return Script(*errors)()  # always the first error: every attempt fails

    policy = RetryPolicy(max_attempts=3, backoff_base=0.5)
    done = retry(
        Script(*errors, *errors), policy=policy, sleep=sync_waits.append, rng=random.Random(7)
    )
    adone = asyncio.run(aretry(call, policy=policy, sleep=record, rng=random.Random(7)))
    assert not done.ok and not adone.ok and done.attempts == adone.attempts == 3
    assert sync_waits == async_waits and len(sync_waits) == 2
    assert adone.reason == "max_attempts=3 reached"


def test_keyboard_interrupt_is_never_retried() -> None:
    def call() -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        retry(call, policy=RetryPolicy(), sleep=lambda seconds: None)
