"""Getting one summary for one record: retries, backoff, a timeout, and no silent fallback.

A record of a training set is summarized by the summarizer asked for or not at all: when
the ``openai`` summarizer gives up (after its own HTTP retries) it is not allowed to
fall back to ``extractive`` here, and the record keeps its original form, flagged with
the reason. A summarizer that raises is tried again by :mod:`condense.retry` when
:func:`~condense.errors.classify` says the failure is passing (a timeout, a dropped
connection, a rate limit), up to the options' ``max_attempts``; an empty summary or any
other failure flags the record at once. Async summarizers (``asummarize_with_report`` or
``asummarize``) run on the engine's event loop under a timeout per record; plain ones
run in the worker.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Any

from condense.exceptions import SummaryFailed as SummaryFailed  # its home before exceptions.py
from condense.retry import Retried, RetryPolicy, aretry, retry
from condense.summarizers import (
    Summarizer,
    SummaryOutcome,
    get_summarizer,
    summarize_with_report,
)
from condense.types import RawMessage


class NoFallback:
    """A fallback that produces nothing: the failure is reported, not papered over."""

    name = "none"

    def summarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        del messages, previous, target_tokens
        return ""


def build_summarizer(name_or_obj: str | Summarizer | None, **options: Any) -> Summarizer:
    """The summarizer by name (``openai`` set up without a fallback) or the object."""
    if isinstance(name_or_obj, str) and name_or_obj.strip().lower() == "openai":
        options.setdefault("fallback", NoFallback())
    return get_summarizer(name_or_obj, **options)


def is_async(summarizer: Summarizer) -> bool:
    """Whether ``summarizer`` offers a coroutine API (then the engine awaits it)."""
    method = getattr(summarizer, "asummarize_with_report", None) or getattr(
        summarizer, "asummarize", None
    )
    return method is not None and inspect.iscoroutinefunction(method)


def summarize_sync(
    summarizer: Summarizer,
    messages: Sequence[RawMessage],
    *,
    target_tokens: int,
    policy: RetryPolicy,
) -> SummaryOutcome:
    """One summary, retried; raises :class:`SummaryFailed` when none could be had."""

    def attempt() -> SummaryOutcome:
        return summarize_with_report(
            summarizer, messages, previous=None, target_tokens=target_tokens
        )

    return _result(retry(attempt, policy=policy))


async def summarize_async(
    summarizer: Summarizer,
    messages: Sequence[RawMessage],
    *,
    target_tokens: int,
    policy: RetryPolicy,
    timeout: float,
) -> SummaryOutcome:
    """:func:`summarize_sync` for async summarizers, the whole record under ``timeout``."""
    attempts = 0

    async def attempt() -> SummaryOutcome:
        nonlocal attempts
        attempts += 1
        return await _call(summarizer, messages, target_tokens)

    try:
        done = await asyncio.wait_for(aretry(attempt, policy=policy), timeout)
    except TimeoutError:
        raise SummaryFailed(f"no summary within the {timeout:g}s timeout", attempts) from None
    return _result(done)


async def summarize_gated(
    summarizer: Summarizer,
    messages: Sequence[RawMessage],
    *,
    gate: asyncio.Semaphore,
    target_tokens: int,
    policy: RetryPolicy,
    timeout: float,
) -> SummaryOutcome | SummaryFailed:
    """:func:`summarize_async` under ``gate`` (the concurrency bound), returning a failure
    instead of raising it so one record's failure never stops the others."""
    async with gate:
        try:
            return await summarize_async(
                summarizer, messages, target_tokens=target_tokens, policy=policy, timeout=timeout
            )
        except SummaryFailed as failure:
            return failure


async def _call(
    summarizer: Summarizer, messages: Sequence[RawMessage], target_tokens: int
) -> SummaryOutcome:
    reporting = getattr(summarizer, "asummarize_with_report", None)
    if reporting is not None:
        outcome: SummaryOutcome = await reporting(
            messages, previous=None, target_tokens=target_tokens
        )
        return outcome
    text = await summarizer.asummarize(  # type: ignore[attr-defined]
        messages, previous=None, target_tokens=target_tokens
    )
    return SummaryOutcome(text=str(text), summarizer=summarizer.name)


def _result(done: Retried[SummaryOutcome]) -> SummaryOutcome:
    """The usable summary of a retried call, its attempts counted; else
    :class:`SummaryFailed`. A summary that came back unusable is not asked for again."""
    outcome = done.value
    if not done.ok or outcome is None:
        raise SummaryFailed(done.failures[-1].reason, done.attempts)
    if outcome.fell_back:
        reason = outcome.reason or "the summarizer failed"
        raise SummaryFailed(f"{reason} (after {outcome.attempts} attempts)", outcome.attempts)
    if not isinstance(outcome.text, str):
        raise SummaryFailed(
            f"the summarizer returned {type(outcome.text).__name__}, not text", done.attempts
        )
    if not outcome.text.strip():
        raise SummaryFailed("the summary was empty", done.attempts)
    if done.attempts > 1:
        return SummaryOutcome(
            text=outcome.text,
            summarizer=outcome.summarizer,
            attempts=done.attempts,
            failures=outcome.failures,
        )
    return outcome
