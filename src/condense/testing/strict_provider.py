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
2. the prompt is counted the fake's own way (:class:`~condense.testing.ProviderCount`:
   another vocabulary and other overheads than condense's, so no test passes merely
   because condense and its fake agree; ``token_counter`` replaces it) and one larger
   than ``context_window`` gets the provider's real overflow message; where the
   provider counts ``max_tokens`` against the window, a prompt that fits but leaves no
   room for it gets the provider's output-limit message;
3. then the script and the responder answer as in ``FakeProvider``.
   :meth:`StrictProvider.fail` builds a scripted 429/500/503/529 in the provider's shape,
   with ``Retry-After`` when asked.

Every refusal is recorded in :attr:`StrictProvider.refusals`. The providers are those of
``condense.providers`` (each module holds its rules and how it refuses: status, body shape,
texts) plus ``minimax-v2``, MiniMax's native API, which answers a refusal with HTTP 200
and ``base_resp``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.exceptions import FormatError
from condense.providers import PROVIDERS as ALL_PROVIDERS
from condense.providers import Profile, Refusals, minimax
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
    """The prompt tokens of a request's messages with condense's default tokenizer: a
    ``token_counter`` for a fake that agrees with condense on purpose (the default
    counts its own way)."""
    from condense.tokens import count_tokens

    messages = body.get("messages")
    try:
        return count_tokens(messages if isinstance(messages, list) else [])
    except Exception:  # an odd message the tokenizer cannot read: estimate instead
        return estimate_request_tokens(dict(body))


# -- how each provider words and shapes a refusal: read from ``condense.providers`` ----------


@dataclass(frozen=True)
class _Dialect:
    """One provider's rules and how it refuses (both from its ``providers`` module)."""

    profile: Profile
    refusals: Refusals


PROVIDERS: Mapping[str, _Dialect] = {
    **{name: _Dialect(p.profile, p.refusals) for name, p in ALL_PROVIDERS.items()},
    # MiniMax's native API: the same rules, refused with HTTP 200 and ``base_resp``
    "minimax-v2": _Dialect(minimax.PROFILE, minimax.NATIVE_REFUSALS),
}


class StrictProvider(FakeProvider):
    """A :class:`FakeProvider` that enforces one provider's rules; see the module doc.

    ``provider`` is one of :data:`PROVIDERS`. ``context_window`` (tokens) is enforced
    when given; ``token_counter`` counts a request's prompt (default: a
    :class:`~condense.testing.ProviderCount`). ``on_refusal(refusal)`` is called for each refusal,
    from the server's thread. The other arguments are ``FakeProvider``'s.
    """

    def __init__(
        self,
        provider: str = "strict",
        *,
        context_window: int | None = None,
        token_counter: TokenCounter | None = None,
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
        message = d.refusals.transient.get(status, f"HTTP {status}")
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        if d.refusals.rejection_status == 200:  # MiniMax's native API: always 200
            return Fail(200, d.refusals.body(status, message, None, None), headers)
        return Fail(status, d.refusals.body(status, message, None, None), headers)

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
        violations = validate(messages, provider=dialect.profile)
        if violations:
            first = violations[0]
            text = self._wording(first, messages, dialect)
            return self._refuse(first.code, text, first.index, dialect=dialect, api=api)
        return self._size_gate(api, body, self.window)

    def _refusals(self, api: str) -> Refusals:
        return self._dialect_for(api).refusals

    def _refuse_size(
        self, api: str, reason: str, text: str, refusals: Refusals
    ) -> tuple[int, Body]:
        dialect = self._dialect_for(api)
        return self._refuse(reason, text, code=refusals.overflow_code, dialect=dialect, api=api)

    def _dialect_for(self, api: str) -> _Dialect:
        """Anthropic's and Responses' own endpoints follow their provider; chat the server's."""
        if api in ("anthropic", "count_tokens"):
            return PROVIDERS["anthropic"]
        if api == "responses":
            return PROVIDERS["responses"]
        return self.dialect

    def _wording(self, violation: Violation, messages: list[Any], d: _Dialect) -> str:
        template = d.refusals.texts.get(violation.code)
        if template is None and violation.provider_error and not d.refusals.own_words:
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
        return (template or d.refusals.generic).format_map(fields)

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
        code = code or d.refusals.codes.get(reason) or d.refusals.code
        param = None if index is None else f"messages.[{index}]"
        refusal = Refusal(
            request=len(self.bodies(api)) - 1,
            api=api,
            status=d.refusals.rejection_status,
            code=reason,
            message=message,
            index=index,
        )
        with self._refusal_lock:
            self.refusals.append(refusal)
        if self.on_refusal is not None:
            self.on_refusal(refusal)
        return d.refusals.rejection_status, d.refusals.body(400, message, code, param)


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


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _field(api: str) -> str:
    return "input" if api == "responses" else "messages"
