"""A strict fake provider on 127.0.0.1: it refuses what a real provider refuses.

``StrictProvider("anthropic", context_window=8000)`` serves ``/v1/chat/completions``,
Anthropic's ``/v1/messages`` (and ``/v1/messages/count_tokens``) and ``/v1/responses``
like :class:`~condense.testing.FakeProvider`, streaming and not, but checks every request
the way the provider does, before any scripted answer. Chat requests follow the named
provider; ``/v1/messages`` always follows Anthropic's rules and ``/v1/responses``
OpenAI's Responses rules, whatever the name (they are those providers' own endpoints).
Anthropic requests also need ``max_tokens``. For each request:

1. the history is validated with condense's profile for that provider, and the first
   violation is answered with the provider's own HTTP status, error body shape and error
   text (``Violation.provider_error``, from ``provider-rules.md``; where the real text of
   a rule is not known, a text in the provider's style that names the message);
2. the prompt is counted (condense's tokenizer unless ``token_counter`` is given) and one
   larger than ``context_window`` gets the provider's real overflow message; where the
   provider counts ``max_tokens`` against the window, a prompt that fits but leaves no
   room for it gets the provider's output-limit message;
3. then the script and the responder answer as in ``FakeProvider``.
   :meth:`StrictProvider.fail` builds a scripted 429/500/503/529 in the provider's shape,
   with ``Retry-After`` when asked.

Every refusal is recorded in :attr:`StrictProvider.refusals`. The providers: ``openai``,
``responses``, ``anthropic``, ``gemini``, ``mistral``, ``strict`` (the union of all rules,
OpenAI's body shape), ``minimax`` (OpenAI rules plus a system prompt only at the start,
answered as MiniMax's OpenAI-compatible endpoint does: a 400 with code 2013 texts) and
``minimax-v2`` (the same rules, answered as MiniMax's native API does: HTTP 200 with the
refusal in ``base_resp``).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from condense.exceptions import FormatError
from condense.profiles import PROFILES, Profile
from condense.testing.fake_provider import (
    Fail,
    FakeProvider,
    Responder,
    Step,
    TokenCounter,
    default_responder,
    estimate_request_tokens,
)
from condense.testing.wire import request_messages
from condense.validate import Violation, argument_problem, validate

__all__ = ["PROVIDERS", "Refusal", "StrictProvider", "count_request_tokens"]

Body = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """One request the server refused: its position among the bodies of its API
    (``FakeProvider.bodies(api)``; ``requests`` for chat) and why."""

    request: int
    status: int
    code: str
    message: str
    index: int | None = None
    api: str = "chat"


def count_request_tokens(body: Mapping[str, Any]) -> int:
    """The prompt tokens of a request's messages with condense's default tokenizer."""
    from condense.tokens import count_tokens

    messages = body.get("messages")
    try:
        return count_tokens(messages if isinstance(messages, list) else [])
    except Exception:  # an odd message the tokenizer cannot read: estimate instead
        return estimate_request_tokens(dict(body))


# -- how each provider words and shapes a refusal --------------------------------------------


def _openai_body(status: int, message: str, code: str | None, param: str | None) -> Body:
    kinds = {400: "invalid_request_error", 401: "invalid_request_error", 429: "requests"}
    kind = kinds.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _anthropic_body(status: int, message: str, code: str | None, param: str | None) -> Body:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return {
        "type": "error",
        "error": {"type": kinds.get(status, "api_error"), "message": message},
        "request_id": "req_condense_strict",
    }


def _gemini_body(status: int, message: str, code: str | None, param: str | None) -> Body:
    statuses = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
    }
    return {
        "error": {"code": status, "message": message, "status": statuses.get(status, "INTERNAL")}
    }


def _mistral_body(status: int, message: str, code: str | None, param: str | None) -> Body:
    kind = "invalid_request_message_order" if code == "3230" else "invalid_request_error"
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


def _minimax_body(status: int, message: str, code: str | None, param: str | None) -> Body:
    kind = "bad_request_error" if status < 500 else "api_error"
    return {
        "type": "error",
        "error": {"type": kind, "message": message, "http_code": str(status)},
        "request_id": "condense-strict",
    }


def _minimax_v2_body(status: int, message: str, code: str | None, param: str | None) -> Body:
    number = int(code) if code and code.isdigit() else {429: 1002}.get(status, 1000)
    return {
        "id": "condense-strict",
        "choices": None,
        "created": 0,
        "model": "MiniMax",
        "object": "chat.completion",
        "base_resp": {"status_code": number, "status_msg": message},
    }


_OPENAI_OVERFLOW = (
    "This model's maximum context length is {window} tokens. However, your messages "
    "resulted in {prompt} tokens. Please reduce the length of the messages."
)
_OPENAI_OUTPUT = (
    "This model's maximum context length is {window} tokens. However, you requested "
    "{total} tokens ({prompt} in the messages, {output} in the completion). Please reduce "
    "the length of the messages or completion."
)
_MINIMAX_TEXTS = {
    "orphan_tool_result": "invalid params, tool result's tool id({id}) not found (2013)",
    "tool_result_misplaced": "invalid params, tool call result does not follow tool call (2013)",
    "invalid_tool_call_id": "invalid params, tool call id is invalid (2013)",
    "tool_call_missing_id": "invalid params, tool call id is invalid (2013)",
    "missing_tool_call_id": "invalid params, tool call id is invalid (2013)",
    "duplicate_tool_call_id": "invalid params, tool call id is invalid (2013)",
    "unanswered_tool_call": "invalid params, tool call and result not match (2013)",
    "duplicate_tool_result": "invalid params, tool call and result not match (2013)",
    "arguments_invalid_json": "invalid params, invalid function arguments json string, "
    "tool_call_id: {id} (2013)",
    "arguments_not_object": "invalid params, invalid function arguments json string, "
    "tool_call_id: {id} (2013)",
    "arguments_not_string": "invalid params, invalid function arguments json string, "
    "tool_call_id: {id} (2013)",
    "system_not_at_start": "invalid params, chat content has invalid message role: system (2013)",
    "unknown_role": "invalid params, chat content has invalid message role: {role} (2013)",
}


@dataclass(frozen=True, kw_only=True)
class _Dialect:
    """How one provider checks requests and words its refusals."""

    profile: Profile
    body: Callable[[int, str, str | None, str | None], Body]
    overflow: str
    output_limit: str | None = None
    overflow_code: str | None = None
    rejection_status: int = 400
    texts: Mapping[str, str] = field(default_factory=dict)
    """Refusal texts for codes whose real wording the profile does not carry."""
    generic: str = "Invalid 'messages[{index}]': {detail}."
    own_words: bool = False
    """Never use the profile's texts (they are another provider's words)."""
    code: str | None = None
    codes: Mapping[str, str] = field(default_factory=dict)
    """The provider's own error code per violation code, where it has one."""
    transient: Mapping[int, str] = field(default_factory=dict)


_OPENAI_TRANSIENT = {
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The engine is currently overloaded, please try again later.",
}
_MINIMAX_PROFILE = dataclasses.replace(
    PROFILES["openai"], name="minimax", description="MiniMax", system_only_at_start=True
)


def _minimax(body: Callable[[int, str, str | None, str | None], Body], status: int) -> _Dialect:
    return _Dialect(
        profile=_MINIMAX_PROFILE,
        body=body,
        rejection_status=status,
        overflow="invalid params, context window exceeds limit (2013)",
        texts=_MINIMAX_TEXTS,
        generic="invalid params, invalid chat setting (2013)",
        own_words=True,
        code="2013",
        transient={
            429: "rate limit exceeded(RPM) (1002)",
            500: "unknown error (1000)",
            503: "server is busy, please try again later (1000)",
        },
    )


PROVIDERS: Mapping[str, _Dialect] = {
    "openai": _Dialect(
        profile=PROFILES["openai"],
        body=_openai_body,
        overflow=_OPENAI_OVERFLOW,
        output_limit=_OPENAI_OUTPUT,
        overflow_code="context_length_exceeded",
        transient=_OPENAI_TRANSIENT,
    ),
    "strict": _Dialect(
        profile=PROFILES["strict"],
        body=_openai_body,
        overflow=_OPENAI_OVERFLOW,
        output_limit=_OPENAI_OUTPUT,
        overflow_code="context_length_exceeded",
        transient=_OPENAI_TRANSIENT,
    ),
    "responses": _Dialect(
        profile=PROFILES["responses"],
        body=_openai_body,
        overflow="Your input exceeds the context window of this model. Please adjust your "
        "input and try again.",
        overflow_code="context_length_exceeded",
        generic="Invalid 'input[{index}]': {detail}.",
        transient=_OPENAI_TRANSIENT,
    ),
    "anthropic": _Dialect(
        profile=PROFILES["anthropic"],
        body=_anthropic_body,
        overflow="prompt is too long: {prompt} tokens > {window} maximum",
        output_limit="input length and `max_tokens` exceed context limit: {prompt} + {output} "
        "> {window}, decrease input length or `max_tokens` and try again",
        texts={
            "empty_message": "messages.{index}: all messages must have non-empty content "
            "except for the optional final assistant message",
            "duplicate_tool_call_id": "messages.{index}.content.0: `tool_use` ids must be unique",
            "invalid_tool_call_id": "messages.{index}.content.0.tool_use.id: String should "
            "match pattern '^[a-zA-Z0-9_-]+$'",
            "missing_tool_call_id": "messages.{index}.content.0.tool_result.tool_use_id: "
            "Field required",
            "system_not_at_start": 'Unexpected role "system". The Messages API accepts a '
            'top-level `system` parameter, not "system" as an input message role.',
        },
        generic="messages.{index}: {detail}",
        transient={
            429: "Number of request tokens has exceeded your per-minute rate limit; see the "
            "response headers for current usage. Please reduce the prompt length or the "
            "maximum tokens requested, or try again later.",
            500: "Internal server error",
            503: "Service unavailable",
            529: "Overloaded",
        },
    ),
    "gemini": _Dialect(
        profile=PROFILES["gemini"],
        body=_gemini_body,
        overflow="The input token count ({prompt}) exceeds the maximum number of tokens "
        "allowed ({window}).",
        texts={
            "empty_message": "* GenerateContentRequest.contents[{index}].parts: "
            "contents.parts must not be empty.\n"
        },
        generic="* GenerateContentRequest.contents[{index}]: {detail}\n",
        transient={
            429: "Resource has been exhausted (e.g. check quota).",
            500: "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting",
            503: "The model is overloaded. Please try again later.",
        },
    ),
    "mistral": _Dialect(
        profile=PROFILES["mistral"],
        body=_mistral_body,
        overflow="Prompt contains {prompt} tokens and 0 draft tokens, too large for model "
        "with {window} maximum context length",
        texts={
            "consecutive_same_role": "Unexpected role '{role}' after role '{previous}'",
            "first_not_user": "Unexpected role '{role}' after role '{previous}'",
        },
        generic="Invalid message at index {index}: {detail}",
        # datapizza-labs/datapizza-ai#98: role order is type invalid_request_message_order
        codes={"consecutive_same_role": "3230", "first_not_user": "3230"},
        transient={
            429: "Requests rate limit exceeded",
            500: "Internal server error",
            503: "Service unavailable",
        },
    ),
    "minimax": _minimax(_minimax_body, 400),
    "minimax-v2": _minimax(_minimax_v2_body, 200),
}


class StrictProvider(FakeProvider):
    """A :class:`FakeProvider` that enforces one provider's rules; see the module doc.

    ``provider`` is one of :data:`PROVIDERS`. ``context_window`` (tokens) is enforced
    when given; ``token_counter(body)`` counts a request's prompt (default:
    :func:`count_request_tokens`). ``on_refusal(refusal)`` is called for each refusal,
    from the server's thread. The other arguments are ``FakeProvider``'s.
    """

    def __init__(
        self,
        provider: str = "strict",
        *,
        context_window: int | None = None,
        token_counter: TokenCounter = count_request_tokens,
        script: Iterable[Step] = (),
        responder: Responder = default_responder,
        require_api_key: str | None = None,
        models: Sequence[str] = ("fake-model",),
        host: str = "127.0.0.1",
        port: int = 0,
        on_refusal: Callable[[Refusal], object] | None = None,
    ) -> None:
        try:
            self.dialect = PROVIDERS[provider.lower()]
        except KeyError:
            from condense.exceptions import UnknownNameError

            raise UnknownNameError("strict provider", provider, sorted(PROVIDERS)) from None
        self.provider = provider.lower()
        self.window = context_window
        self.refusals: list[Refusal] = []
        self.on_refusal = on_refusal
        self._refusal_lock = threading.Lock()
        super().__init__(
            script=script,
            responder=responder,
            token_counter=token_counter,
            require_api_key=require_api_key,
            models=models,
            host=host,
            port=port,
        )

    def __enter__(self) -> StrictProvider:
        return self

    @property
    def profile(self) -> Profile:
        """The validator profile this server enforces."""
        return self.dialect.profile

    def fail(self, status: int, *, retry_after: float | None = None) -> Fail:
        """A scripted failure in this provider's shape (push it with :meth:`push`)."""
        d = self.dialect
        message = d.transient.get(status, f"HTTP {status}")
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        if d.rejection_status == 200:  # MiniMax's native API: always 200
            return Fail(200, d.body(status, message, None, None), headers)
        return Fail(status, d.body(status, message, None, None), headers)

    # -- the gate -------------------------------------------------------------------------

    def _gate(self, api: str, body: dict[str, Any]) -> tuple[int, Body] | None:
        """Check a request the way the provider of its API does (see the module doc)."""
        dialect = self._dialect_for(api)
        try:
            messages = request_messages(api, body)
        except FormatError as error:
            return self._refuse(
                "unreadable", f"{_field(api)}: {error.reason}", dialect=dialect, api=api
            )
        if not messages:
            what = f"'{_field(api)}' must be a non-empty array"
            return self._refuse("missing_messages", what, dialect=dialect, api=api)
        if api == "anthropic" and not _positive_int(body.get("max_tokens")):
            return self._refuse(
                "missing_max_tokens", "max_tokens: Field required", dialect=dialect, api=api
            )
        violations = validate(messages, dialect.profile)
        if violations:
            first = violations[0]
            text = self._wording(first, messages, dialect)
            return self._refuse(first.code, text, first.index, dialect=dialect, api=api)
        if self.window is None:
            return None
        prompt = self._count(api, body)
        output = _max_tokens(body) if api != "count_tokens" else None
        figures = {"prompt": prompt, "window": self.window, "output": output or 0}
        if prompt > self.window:
            text = dialect.overflow.format(total=prompt + (output or 0), **figures)
            return self._refuse(
                "context_overflow", text, code=dialect.overflow_code, dialect=dialect, api=api
            )
        template = dialect.output_limit
        if template is not None and output and prompt + output > self.window:
            text = template.format(total=prompt + output, **figures)
            return self._refuse(
                "output_limit", text, code=dialect.overflow_code, dialect=dialect, api=api
            )
        return None

    def _dialect_for(self, api: str) -> _Dialect:
        """Anthropic's and Responses' own endpoints follow their provider; chat the server's."""
        if api in ("anthropic", "count_tokens"):
            return PROVIDERS["anthropic"]
        if api == "responses":
            return PROVIDERS["responses"]
        return self.dialect

    def _wording(self, violation: Violation, messages: list[Any], d: _Dialect) -> str:
        template = d.texts.get(violation.code)
        if template is None and violation.provider_error and not d.own_words:
            return violation.provider_error
        here = messages[violation.index] if violation.index < len(messages) else {}
        before = messages[violation.index - 1] if violation.index > 0 else {"role": "system"}
        fields = _Fields(
            index=str(violation.index),
            detail=violation.detail,
            id=violation.tool_call_id or _broken_call_id(here),
            role=str(here.get("role") if isinstance(here, dict) else "unknown"),
            previous=str(before.get("role") if isinstance(before, dict) else "unknown"),
        )
        return (template or d.generic).format_map(fields)

    def _refuse(
        self,
        reason: str,
        message: str,
        index: int | None = None,
        *,
        code: str | None = None,
        dialect: _Dialect | None = None,
        api: str = "chat",
    ) -> tuple[int, Body]:
        d = dialect or self.dialect
        code = code or d.codes.get(reason) or d.code
        param = None if index is None else f"messages.[{index}]"
        refusal = Refusal(
            request=len(self.bodies(api)) - 1,
            api=api,
            status=d.rejection_status,
            code=reason,
            message=message,
            index=index,
        )
        with self._refusal_lock:
            self.refusals.append(refusal)
        if self.on_refusal is not None:
            self.on_refusal(refusal)
        return d.rejection_status, d.body(400, message, code, param)


class _Fields(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "…"


def _broken_call_id(message: object) -> str:
    """The id of the first call whose arguments are not a JSON object string."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if not isinstance(arguments, str) or argument_problem(arguments) is not None:
            return str(call.get("id") or "")
    return ""


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and _positive_int(value):
            return value
    return None


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _field(api: str) -> str:
    return "input" if api == "responses" else "messages"
