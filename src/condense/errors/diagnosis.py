"""What a provider error means for condense: a category and the recovery to apply.

A :class:`Diagnosis` is a pure value. :func:`condense.errors.classify` builds it from
whatever the caller caught; the recovery loop reads ``action`` (and the token figures
and ``retry_after`` that go with it) to decide what to change before the next attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Category(StrEnum):
    """Why the provider refused the request."""

    TOOL_PAIRING = "tool_pairing"
    TOOL_ARGUMENTS = "tool_arguments"
    MESSAGE_FORMAT = "message_format"
    REPLAY_IDENTITY = "replay_identity"
    CONTEXT_OVERFLOW = "context_overflow"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    OUTPUT_LIMIT = "output_limit"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    AUTH = "auth"
    BILLING = "billing"
    CONTENT_FILTER = "content_filter"
    MODEL_NOT_FOUND = "model_not_found"
    NOT_FOUND = "not_found"
    UNKNOWN = "unknown"


class Action(StrEnum):
    """What condense does before trying again (or that it does not try again)."""

    REPAIR = "repair"
    DROP_REPLAY = "drop_replay"
    COMPRESS = "compress"
    BACKOFF = "backoff"
    REDUCE_OUTPUT = "reduce_output"
    FAIL = "fail"


DEFAULT_ACTIONS: Mapping[Category, Action] = MappingProxyType(
    {
        Category.TOOL_PAIRING: Action.REPAIR,
        Category.TOOL_ARGUMENTS: Action.REPAIR,
        Category.MESSAGE_FORMAT: Action.REPAIR,
        Category.REPLAY_IDENTITY: Action.DROP_REPLAY,
        Category.CONTEXT_OVERFLOW: Action.COMPRESS,
        Category.PAYLOAD_TOO_LARGE: Action.COMPRESS,
        Category.OUTPUT_LIMIT: Action.REDUCE_OUTPUT,
        Category.RATE_LIMIT: Action.BACKOFF,
        Category.OVERLOADED: Action.BACKOFF,
        Category.SERVER_ERROR: Action.BACKOFF,
        Category.TIMEOUT: Action.BACKOFF,
        Category.CONNECTION: Action.BACKOFF,
        Category.AUTH: Action.FAIL,
        Category.BILLING: Action.FAIL,
        Category.CONTENT_FILTER: Action.FAIL,
        Category.MODEL_NOT_FOUND: Action.FAIL,
        Category.NOT_FOUND: Action.FAIL,
        Category.UNKNOWN: Action.FAIL,
    }
)
"""The recovery each category gets unless the error text says better (see ``classify``)."""

_WHAT: Mapping[Category, str] = MappingProxyType(
    {
        Category.TOOL_PAIRING: "tool calls and tool results do not pair up",
        Category.TOOL_ARGUMENTS: "a tool call's arguments are not a JSON object",
        Category.MESSAGE_FORMAT: "the provider rejected the shape of the messages",
        Category.REPLAY_IDENTITY: "replayed reasoning state is bound to another conversation",
        Category.CONTEXT_OVERFLOW: "the prompt does not fit the context window",
        Category.PAYLOAD_TOO_LARGE: "the request body is too large",
        Category.OUTPUT_LIMIT: "max_tokens does not fit what the model allows",
        Category.RATE_LIMIT: "rate limited",
        Category.OVERLOADED: "the provider is overloaded",
        Category.SERVER_ERROR: "the provider failed",
        Category.TIMEOUT: "the request timed out",
        Category.CONNECTION: "the connection failed",
        Category.AUTH: "authentication failed",
        Category.BILLING: "out of credit or quota",
        Category.CONTENT_FILTER: "the provider's content filter refused the request",
        Category.MODEL_NOT_FOUND: "the model does not exist or is not available",
        Category.NOT_FOUND: "the server has no such endpoint",
        Category.UNKNOWN: "unrecognised error",
    }
)

_FAIL_HINT: Mapping[Category, str] = MappingProxyType(
    {
        Category.AUTH: "check the API key and its permissions",
        Category.BILLING: "add credits or raise the quota",
        Category.CONTENT_FILTER: "the content itself has to change",
        Category.MODEL_NOT_FOUND: "check the model name and the endpoint",
        Category.NOT_FOUND: "check the base URL: the answer names no model, so the path is wrong",
        Category.UNKNOWN: "the error was not recognised",
    }
)

_MESSAGE_PREVIEW = 160


@dataclass(frozen=True, kw_only=True)
class Diagnosis:
    """A classified provider error.

    ``requested_tokens`` is what the request needed as the provider counted it (prompt
    plus the completion budget when the text states one), ``output_tokens`` the
    completion budget asked for (``max_tokens``), and ``allowed_tokens`` the limit that
    was exceeded: the context window, or the output cap when only ``max_tokens`` is at
    fault. ``message_index`` is the position of the offending message in the list the
    caller passed as ``messages``.
    """

    category: Category
    retryable: bool
    action: Action
    message: str = ""
    status_code: int | None = None
    provider_code: str | None = None
    retry_after: float | None = None
    requested_tokens: int | None = None
    allowed_tokens: int | None = None
    output_tokens: int | None = None
    message_index: int | None = None

    @property
    def input_tokens(self) -> int | None:
        """The prompt's own size, when the figures allow working it out."""
        if self.requested_tokens is None:
            return None
        if self.output_tokens is not None and self.requested_tokens > self.output_tokens:
            return self.requested_tokens - self.output_tokens
        return self.requested_tokens

    @property
    def suggested_max_tokens(self) -> int | None:
        """A ``max_tokens`` that fits, for ``reduce_output``; ``None`` when unknown."""
        if self.action is not Action.REDUCE_OUTPUT or self.allowed_tokens is None:
            return None
        if self.requested_tokens is None:  # the limit is an output cap
            return self.allowed_tokens
        room = self.allowed_tokens - (self.input_tokens or 0)
        return room if room > 0 else None

    def summary(self) -> str:
        """One line for a human: what went wrong and what condense will do about it."""
        head = self.category.value
        facts = [f"HTTP {self.status_code}"] if self.status_code is not None else []
        if self.provider_code:
            facts.append(self.provider_code)
        if self.message_index is not None:
            facts.append(f"message {self.message_index}")
        if facts:
            head += f" ({', '.join(facts)})"
        line = f"{head}: {_WHAT[self.category]}{self._figures()}{self._quote()}; {self._plan()}"
        return " ".join(line.split())

    def _figures(self) -> str:
        parts: list[str] = []
        if self.requested_tokens is not None:
            parts.append(f"{self.requested_tokens} tokens requested")
        if self.output_tokens is not None:
            parts.append(f"max_tokens {self.output_tokens}")
        if self.allowed_tokens is not None:
            parts.append(f"{self.allowed_tokens} allowed")
        return f" [{', '.join(parts)}]" if parts else ""

    def _quote(self) -> str:
        text = " ".join(self.message.split())
        if not text:
            return ""
        if len(text) > _MESSAGE_PREVIEW:
            text = text[: _MESSAGE_PREVIEW - 3].rstrip() + "..."
        return f' - "{text}"'

    def _plan(self) -> str:
        if self.action is Action.REPAIR:
            return "condense will repair the history and retry"
        if self.action is Action.DROP_REPLAY:
            return "condense will drop the reasoning state bound elsewhere and retry"
        if self.action is Action.COMPRESS:
            if self.allowed_tokens is not None:
                limit = self.allowed_tokens
                return f"condense will compress the history below {limit} tokens and retry"
            return "condense will compress the history harder and retry"
        if self.action is Action.REDUCE_OUTPUT:
            fit = self.suggested_max_tokens
            if fit is not None:
                return f"condense will lower max_tokens to {fit} and retry"
            return "condense will lower max_tokens and retry"
        if self.action is Action.BACKOFF:
            if self.retry_after is not None:
                return f"condense will wait {self.retry_after:g}s and retry"
            return "condense will back off and retry"
        hint = _FAIL_HINT.get(self.category, "retrying cannot help")
        return f"condense will not retry: {hint}"
