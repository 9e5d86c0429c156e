"""Test doubles: summarizers whose output depends only on their inputs.

Use it in your own tests where a real summarizer would be slow, random or need a
network: ``DeterministicSummarizer()`` returns text like ::

    summary of 12 messages: first user ask: fix the bug in io.py; tools: bash, edit;
    previous: summary of 4 messages: ...

cut to the target size. It can also be told to fail or to return oversize text, so the
fallback paths of the code that calls it get exercised::

    DeterministicSummarizer(fail=True)          # raises CondenseRuntimeError every call
    DeterministicSummarizer(fail=TimeoutError("slow"))   # raises that exception
    DeterministicSummarizer(fail_times=2)       # fails twice, then works
    DeterministicSummarizer(oversize=True)      # returns about 3x target_tokens

Every call is recorded in ``calls`` as a :class:`SummaryCall`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.exceptions import CondenseRuntimeError, InputError
from condense.summarizers._text import clip, content_text, fit_tokens, one_line, tokens_to_chars
from condense.types import RawMessage


@dataclass(frozen=True, kw_only=True)
class SummaryCall:
    """One recorded call: what the summarizer was given (the messages are not kept)."""

    message_count: int
    previous: str | None
    target_tokens: int


class DeterministicSummarizer:
    """Deterministic, I/O-free summarizer for tests; optionally fails or oversizes."""

    name = "deterministic"

    def __init__(
        self,
        *,
        fail: bool | BaseException = False,
        fail_times: int | None = None,
        oversize: bool = False,
    ) -> None:
        """``fail``: raise on every call (``True`` raises :class:`CondenseRuntimeError`,
        an exception instance is raised as is). ``fail_times``: raise only on the first
        that many calls. ``oversize``: return about three times ``target_tokens``."""
        if fail_times is not None and fail_times < 0:
            raise InputError(f"fail_times must be 0 or more, got {fail_times}")
        self.fail = fail
        self.fail_times = fail_times
        self.oversize = oversize
        self.calls: list[SummaryCall] = []

    def summarize(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> str:
        """Return ``summary of N messages: …`` within ``target_tokens`` (unless oversize)."""
        self.calls.append(
            SummaryCall(message_count=len(messages), previous=previous, target_tokens=target_tokens)
        )
        failing = bool(self.fail) if self.fail_times is None else len(self.calls) <= self.fail_times
        if failing:
            if isinstance(self.fail, BaseException):
                raise self.fail
            raise CondenseRuntimeError(
                f"DeterministicSummarizer was configured to fail (call {len(self.calls)})"
            )
        text = describe(messages, previous)
        if self.oversize:
            limit = tokens_to_chars(max(target_tokens, 1))
            return (text + " ") * (3 * limit // (len(text) + 1) + 1)
        return fit_tokens(lambda limit: clip(text, limit), target_tokens)


def describe(messages: Sequence[RawMessage], previous: str | None) -> str:
    """The untrimmed text: message count, first user ask, tool names, previous summary."""
    parts = [f"summary of {len(messages)} messages"]
    ask = next((text for m in messages if _role(m) == "user" if (text := _user_text(m))), "")
    if ask:
        parts.append(f"first user ask: {ask}")
    tools: list[str] = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(name, str) and name not in tools:
                tools.append(name)
    if tools:
        parts.append(f"tools: {', '.join(tools)}")
    if previous:
        parts.append(f"previous: {one_line(previous)}")
    return "; ".join(parts)


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _user_text(message: RawMessage) -> str:
    return clip(one_line(content_text(message.get("content"), 400)), 200)
