"""Getting one summary for one record: retries, backoff, a timeout, and no silent fallback.

A record of a training set is summarized by the summarizer asked for or not at all: when
the ``openai`` summarizer gives up (after its own HTTP retries) it is not allowed to
fall back to ``extractive`` here, and the record keeps its original form, flagged with
the reason. Other summarizers that raise are retried ``retries`` times with
exponential backoff. Async summarizers (``asummarize_with_report`` or ``asummarize``)
run on the engine's event loop under a timeout per record; plain ones run in the worker.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Sequence
from typing import Any

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


class SummaryFailed(Exception):
    """No usable summary; ``reason`` says why (kept in the record's stats)."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


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
    retries: int,
    backoff: float,
) -> SummaryOutcome:
    """One summary, retried; raises :class:`SummaryFailed` when none could be had."""
    reason = "no attempt"
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            outcome = summarize_with_report(
                summarizer, messages, previous=None, target_tokens=target_tokens
            )
        except Exception as error:  # a summarizer's failure, translated at this boundary
            reason = _describe(error)
            continue
        final = _check(outcome, attempt + 1)
        if final is not None:
            return final
        reason = "the summary was empty"
    raise SummaryFailed(reason, retries + 1)


async def summarize_async(
    summarizer: Summarizer,
    messages: Sequence[RawMessage],
    *,
    target_tokens: int,
    retries: int,
    backoff: float,
    timeout: float,
) -> SummaryOutcome:
    """:func:`summarize_sync` for async summarizers, the whole record under ``timeout``."""
    attempts = 0

    async def attempt_all() -> SummaryOutcome:
        nonlocal attempts
        reason = "no attempt"
        for attempt in range(retries + 1):
            if attempt:
                await asyncio.sleep(backoff * 2 ** (attempt - 1))
            attempts += 1
            try:
                outcome = await _call(summarizer, messages, target_tokens)
            except Exception as error:  # translated at this boundary
                reason = _describe(error)
                continue
            final = _check(outcome, attempt + 1)
            if final is not None:
                return final
            reason = "the summary was empty"
        raise SummaryFailed(reason, attempts)

    try:
        return await asyncio.wait_for(attempt_all(), timeout)
    except TimeoutError:
        raise SummaryFailed(f"no summary within the {timeout:g}s timeout", attempts) from None


async def summarize_gated(
    summarizer: Summarizer,
    messages: Sequence[RawMessage],
    *,
    gate: asyncio.Semaphore,
    target_tokens: int,
    retries: int,
    backoff: float,
    timeout: float,
) -> SummaryOutcome | SummaryFailed:
    """:func:`summarize_async` under ``gate`` (the concurrency bound), returning a failure
    instead of raising it so one record's failure never stops the others."""
    async with gate:
        try:
            return await summarize_async(
                summarizer,
                messages,
                target_tokens=target_tokens,
                retries=retries,
                backoff=backoff,
                timeout=timeout,
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


def _check(outcome: SummaryOutcome, attempt: int) -> SummaryOutcome | None:
    """The outcome if usable; raises for a fallback; ``None`` for an empty text."""
    if outcome.fell_back:
        raise SummaryFailed(
            f"{outcome.reason or 'the summarizer failed'} (after {outcome.attempts} attempts)",
            outcome.attempts,
        )
    if not isinstance(outcome.text, str):
        raise SummaryFailed(
            f"the summarizer returned {type(outcome.text).__name__}, not text", attempt
        )
    if not outcome.text.strip():
        return None
    if outcome.attempts != attempt and attempt > 1:
        return SummaryOutcome(
            text=outcome.text,
            summarizer=outcome.summarizer,
            attempts=attempt,
            failures=outcome.failures,
        )
    return outcome


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__
