"""Trying a call again after a passing failure: one core, thin sync and async drivers.

- :class:`RetryPolicy` — how many attempts, the exponential backoff with jitter between
  them, and how long a server's ``Retry-After`` is waited out.
- :func:`judge` — whether a failure is worth another attempt and how long the server
  asked to wait, both read off :func:`condense.errors.classify`: what classify says to
  back off from (rate limits, overload, 5xx, timeouts, dropped connections, cut-off
  bodies) is retried, anything else is not. ``Retry-After`` is parsed there, once.
- :class:`Backoff` — the core: fed each failure, it gives the wait before the next
  attempt or the reason to stop. It never sleeps, so the openai summarizer, ``recover``
  and the dataset engine share the same waits and tests need no clock.
- :func:`retry` / :func:`aretry` — the drivers: call, judge, wait, call again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from condense.exceptions import InputError

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """At most ``max_attempts`` calls in all; backoff ``backoff_base * 2**n`` seconds,
    capped at ``backoff_max``, each shortened by up to ``jitter`` of itself at random.

    A wait the server asks for is honoured (plus up to 10%, so clients told the same
    thing do not come back together) unless it is longer than ``max_retry_wait``: then
    the caller stops at once instead of stalling an agent loop.
    """

    max_attempts: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_retry_wait: float = 60.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InputError(f"max_attempts must be at least 1, not {self.max_attempts!r}")
        if min(self.backoff_base, self.backoff_max, self.max_retry_wait) < 0:
            raise InputError("backoff_base, backoff_max and max_retry_wait must be 0 or more")
        if not 0 <= self.jitter <= 1:
            raise InputError(f"jitter must be a share in [0, 1], not {self.jitter!r}")

    def delay(
        self, retry: int, retry_after: float | None, rng: random.Random | None = None
    ) -> float | None:
        """Seconds to wait before retry number ``retry`` (1-based), or ``None``: stop."""
        if retry >= self.max_attempts:
            return None
        spread = (rng or random).random()
        if retry_after is not None:
            if retry_after > self.max_retry_wait:
                return None
            return max(0.0, retry_after) * (1 + 0.1 * spread)
        backoff = min(self.backoff_max, self.backoff_base * 2.0 ** (retry - 1))
        return backoff * (1 - self.jitter * spread)


@dataclass(frozen=True, kw_only=True)
class Failure:
    """One failed attempt: why, whether another attempt can succeed, and the wait the
    server asked for (seconds, ``None`` when it did not say)."""

    reason: str
    retryable: bool
    retry_after: float | None = None


def judge(error: BaseException) -> Failure:
    """``error`` as a :class:`Failure`: retryable when :func:`~condense.errors.classify`
    says to back off; the reason is the error's text on one line."""
    from condense.errors.classify import classify
    from condense.errors.diagnosis import Action

    diagnosis = classify(error)
    text = " ".join(str(error).split())
    reason = f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__
    return Failure(
        reason=reason,
        retryable=diagnosis.action is Action.BACKOFF,
        retry_after=diagnosis.retry_after,
    )


@dataclass(frozen=True)
class Verdict:
    """What to do after a failure: wait ``wait`` seconds and try again, or stop
    (``wait is None``) because of ``reason``."""

    wait: float | None
    reason: str = ""


class Backoff:
    """The retry core: the waits of one call's attempts under ``policy``.

    ``after(failure)`` is called once per failed attempt, in order; ``rng`` makes the
    jitter reproducible.
    """

    def __init__(self, policy: RetryPolicy, *, rng: random.Random | None = None) -> None:
        self.policy = policy
        self.rng = rng
        self.failures = 0

    def after(self, failure: Failure) -> Verdict:
        """The wait before the next attempt, or why there is none."""
        self.failures += 1
        if not failure.retryable:
            return Verdict(None, "the error is not one a retry can fix")
        wait = self.policy.delay(self.failures, failure.retry_after, self.rng)
        if wait is not None:
            return Verdict(wait)
        asked, limit = failure.retry_after, self.policy.max_retry_wait
        if asked is not None and asked > limit and self.failures < self.policy.max_attempts:
            return Verdict(None, f"the server asked to wait {asked:g}s, more than {limit:g}s")
        return Verdict(None, f"max_attempts={self.policy.max_attempts} reached")


@dataclass(frozen=True, kw_only=True)
class Retried(Generic[T]):
    """How a retried call ended: ``value`` when ``ok``; ``attempts`` calls were made,
    ``failures`` lists each failed one, oldest first, and ``reason`` says why the
    driver stopped when it was not ``ok``."""

    ok: bool
    value: T | None
    attempts: int
    failures: tuple[Failure, ...] = ()
    reason: str = ""


def retry(
    call: Callable[[], T],
    *,
    policy: RetryPolicy,
    judge: Callable[[BaseException], Failure] = judge,
    sleep: Callable[[float], Any] = time.sleep,
    rng: random.Random | None = None,
) -> Retried[T]:
    """Call ``call()`` until it returns or ``policy`` says stop; never raises for a
    failure of ``call`` (an ``Exception``; ``KeyboardInterrupt`` goes through)."""
    core, failures = Backoff(policy, rng=rng), _Failures()
    while True:
        try:
            value = call()
        except Exception as error:  # judged, then retried or reported
            verdict = failures.add(core, judge(error))
            if verdict.wait is None:
                return failures.gave_up(verdict)
            sleep(verdict.wait)
        else:
            return failures.succeeded(value)


async def aretry(
    call: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    judge: Callable[[BaseException], Failure] = judge,
    sleep: Callable[[float], Awaitable[Any]] | None = None,
    rng: random.Random | None = None,
) -> Retried[T]:
    """:func:`retry` for a coroutine function ``call`` (``sleep``: ``asyncio.sleep``
    unless given; asyncio is imported here, not with condense, as it takes ~40 ms)."""
    if sleep is None:
        import asyncio

        sleep = asyncio.sleep
    core, failures = Backoff(policy, rng=rng), _Failures()
    while True:
        try:
            value = await call()
        except Exception as error:  # judged, then retried or reported
            verdict = failures.add(core, judge(error))
            if verdict.wait is None:
                return failures.gave_up(verdict)
            await sleep(verdict.wait)
        else:
            return failures.succeeded(value)


@dataclass
class _Failures:
    """What the two drivers record, written once."""

    seen: list[Failure] = field(default_factory=list)

    def add(self, core: Backoff, failure: Failure) -> Verdict:
        self.seen.append(failure)
        return core.after(failure)

    def gave_up(self, verdict: Verdict) -> Retried[Any]:
        attempts = len(self.seen)
        return Retried(
            ok=False,
            value=None,
            attempts=attempts,
            failures=tuple(self.seen),
            reason=verdict.reason,
        )

    def succeeded(self, value: T) -> Retried[T]:
        return Retried(ok=True, value=value, attempts=len(self.seen) + 1, failures=tuple(self.seen))
