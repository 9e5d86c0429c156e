"""``guard(client)``: an official SDK client whose every model call heals a refused history.

Change one line of an agent::

    client = condense.guard(OpenAI())          # or AsyncOpenAI, Anthropic, AsyncAnthropic …
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    history = client.last_request["messages"]  # persist: the healed history that was sent

What is guarded, for ``openai.OpenAI`` / ``AsyncOpenAI`` (and ``AzureOpenAI`` /
``AsyncAzureOpenAI``) and ``anthropic.Anthropic`` / ``AsyncAnthropic`` (and the Bedrock,
Vertex and Foundry clients, which share the Messages resource):

- ``chat.completions.create`` / ``.parse`` / ``.stream``, ``responses.create`` / ``.parse`` /
  ``.stream``, ``messages.create`` / ``.parse`` / ``.stream`` and ``beta.messages.*`` the same,
  streaming or not (``stream=True``);
- their ``with_raw_response`` forms, on the resource or on the client
  (``client.with_raw_response.chat.completions.create``, what langchain-openai calls), and
  their ``with_streaming_response`` forms.

Each keeps the SDK's signature and return value, and goes through
:func:`~condense.errors.recover`: a refused history is repaired, an overflow compressed, a
replay-identity refusal healed (bound thinking or foreign reasoning dropped, or Anthropic's
``drop_block`` sent), a rate limit waited out, before the SDK's answer comes back. The
Responses and Anthropic histories are native (``input`` items; ``messages`` and
``system``): they are read with :mod:`condense.formats`, healed as canonical messages and
written back, so unchanged turns go out exactly as the agent gave them. Everything else
(``models``, ``embeddings``, ``close()``, ``with`` blocks …) is the wrapped client's own.

- The SDK's own retries are turned off for guarded calls (``sdk_retries=0``) so waits are
  not stacked; recover does the backing off, honouring ``Retry-After``.
- The output cap (``max_tokens``, ``max_completion_tokens`` or ``max_output_tokens``,
  whichever the call used) is lowered when the provider says the answer cannot fit.
- With ``sticky=True`` a healed history keeps being used: when a later call's history
  starts with one that was healed before (an agent that appends to its own list), the
  healed version is sent in its place — with the ``drop_block`` setting, when that was
  what healed it — so a fault repaired once never reaches the provider again.
- A MiniMax answer of HTTP 200 with an error in ``base_resp`` is treated as the refusal it
  is (:class:`RefusedResponse`).
- Streams are recovered when the failure happens at request time (the usual case: a 400,
  429 or 5xx comes before the first event); a stream that breaks midway is not replayed.
- When recovery gives up, :class:`~condense.errors.RecoveryError` is raised, or, with
  ``raise_original=True``, the SDK's own exception (with a note saying what condense
  tried), so existing ``except openai.APIError`` handlers keep working.
"""

from __future__ import annotations

import inspect
import random
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from condense.errors._endpoints import ENDPOINTS, Endpoint, Request
from condense.errors._proxies import Node, Opened, walk
from condense.errors.recover import RecoveryResult, arecover, recover
from condense.exceptions import InputError, RecoveryError
from condense.exceptions import RefusedResponse as RefusedResponse  # its home before exceptions.py
from condense.message import resumed
from condense.providers import DEFAULT_PROVIDER, Profile, check_provider
from condense.retry import RetryPolicy
from condense.summarizers import Summarizer

C = TypeVar("C")

_REMEMBERED = 8  # healed histories kept for ``sticky``
_MISSING = object()

Send = Callable[[dict[str, Any]], Any]
ASend = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class _Options:
    provider: str | Profile
    budget: int | None
    max_attempts: int
    summarizer: str | Summarizer
    backoff: RetryPolicy | None
    sleep: Callable[[float], Any] | None
    rng: random.Random | None
    sticky: bool
    raise_original: bool


@dataclass(frozen=True)
class _Healed:
    endpoint: str
    source: tuple[Any, ...]  # the history as the agent sent it
    sent: tuple[Any, ...]  # the healed history condense sent instead
    setting: str | None  # Anthropic's prefix_mismatch_behavior, when it healed the history


def guard(
    client: C,
    *,
    provider: str | Profile = DEFAULT_PROVIDER,
    budget: int | None = None,
    max_attempts: int = 3,
    summarizer: str | Summarizer = "extractive",
    sdk_retries: int | None = 0,
    sticky: bool = True,
    raise_original: bool = False,
    backoff: RetryPolicy | None = None,
    sleep: Callable[[float], Any] | None = None,
    rng: random.Random | None = None,
) -> GuardedClient[C]:
    """Wrap an ``openai`` or ``anthropic`` client, sync or async (see the module doc).

    ``provider`` is the profile histories are repaired for (default ``"auto"``: chosen
    per request from the history and the request's ``model``; the Responses and Messages
    APIs are their providers' own), ``budget`` caps any history condense rewrites,
    ``max_attempts`` bounds the calls per request. ``sdk_retries`` is the SDK's own
    ``max_retries`` for guarded calls (``None`` keeps the client's). ``backoff``,
    ``sleep`` (a coroutine function for an async client) and ``rng`` tune the waits;
    tests inject them.
    """
    if max_attempts < 1:
        raise InputError(f"max_attempts must be at least 1, not {max_attempts!r}")
    if budget is not None and budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    if not any(callable(_create(client, path)) for path in ENDPOINTS):
        raise InputError(
            f"guard expects an openai or anthropic client, not {type(client).__name__} (it "
            "has none of chat.completions.create, responses.create, messages.create)"
        )
    options = _Options(
        provider=check_provider(provider),
        budget=budget,
        max_attempts=max_attempts,
        summarizer=summarizer,
        backoff=backoff,
        sleep=sleep,
        rng=rng,
        sticky=sticky,
        raise_original=raise_original,
    )
    return GuardedClient(client, options, sdk_retries=sdk_retries)


class GuardedClient(Generic[C]):
    """The wrapped client: calls that send a history are recovered, the rest passes through.

    ``last_recovery`` is the :class:`~condense.errors.RecoveryResult` of the latest
    successful guarded call (its ``messages`` are the canonical history that was sent);
    ``last_request`` is that call's arguments as sent, the history in the API's own shape
    (``messages`` and ``system``, or ``input``) and Anthropic's ``drop_block`` setting
    (``thinking``, beta header) when condense turned it on: persist it. ``client`` is the
    wrapped client itself.
    """

    def __init__(self, client: C, options: _Options, *, sdk_retries: int | None) -> None:
        self.client = client
        self.last_recovery: RecoveryResult[Any] | None = None
        self.last_request: dict[str, Any] | None = None
        self._options = options
        sdk: Any = client
        if sdk_retries is not None and hasattr(sdk, "with_options"):
            sdk = sdk.with_options(max_retries=sdk_retries)  # the client's copy, same transport
        self.sdk: Any = sdk
        """The client guarded calls are sent through (the SDK's own retries off)."""
        self.is_async = any(_is_async(_create(client, path)) for path in ENDPOINTS)
        self._healed: deque[_Healed] = deque(maxlen=_REMEMBERED)
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if name in ("client", "sdk", "_options", "_healed", "_lock"):  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(Node(self, (), "direct"), name)

    def __repr__(self) -> str:
        return f"condense.guard({self.client!r}, provider={_name(self._options.provider)!r})"

    def __enter__(self) -> GuardedClient[C]:
        self.client.__enter__()  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.client.__exit__(*exc_info)  # type: ignore[attr-defined]

    async def __aenter__(self) -> GuardedClient[C]:
        await self.client.__aenter__()  # type: ignore[attr-defined]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.__aexit__(*exc_info)  # type: ignore[attr-defined]

    # -- one guarded call ------------------------------------------------------------------

    def run(self, endpoint: Endpoint, send: Send, params: dict[str, Any]) -> Any:
        """``send(kwargs)`` with ``params``, recovered; the value ``send`` returned."""
        prepared = self._prepare(endpoint, params)
        if isinstance(prepared, dict):
            return send(prepared)  # no history that condense can read: sent as given
        request, source, setting = prepared
        sent: list[dict[str, Any]] = []
        call = _caller(request, setting, sent, send)
        try:
            result = recover(
                call,
                request.messages,
                sleep=self._options.sleep or time.sleep,
                **self._recover_options(request),
            )
        except RecoveryError as failure:
            error = self._failure(failure)
        else:
            return self._done(request, source, result, sent[-1], setting)
        raise error

    async def arun(self, endpoint: Endpoint, send: ASend, params: dict[str, Any]) -> Any:
        """:meth:`run` for a coroutine ``send``."""
        prepared = self._prepare(endpoint, params)
        if isinstance(prepared, dict):
            return await send(prepared)
        request, source, setting = prepared
        sent: list[dict[str, Any]] = []
        call = _acaller(request, setting, sent, send)
        try:
            result = await arecover(
                call,
                request.messages,
                sleep=self._options.sleep,
                **self._recover_options(request),
            )
        except RecoveryError as failure:
            error = self._failure(failure)
        else:
            return self._done(request, source, result, sent[-1], setting)
        raise error

    def _prepare(
        self, endpoint: Endpoint, params: dict[str, Any]
    ) -> tuple[Request, Any, str | None] | dict[str, Any]:
        """The request to recover (with the agent's own history and the setting a sticky
        heal carries), or the arguments to send as they are."""
        history = params.get(endpoint.history, _MISSING)
        if history is _MISSING:
            return params
        if not isinstance(history, str | bytes | dict | list) and hasattr(history, "__iter__"):
            history = list(history)  # a generator is read once
            params = {**params, endpoint.history: history}
        native, setting = self._resume(endpoint, history)
        request = Request.read(endpoint, params, native)
        if request is None:
            return params
        return request, history, setting

    def _recover_options(self, request: Request) -> dict[str, Any]:
        o = self._options
        provider = o.provider
        if isinstance(provider, str) and provider == DEFAULT_PROVIDER and request.endpoint.profile:
            provider = request.endpoint.profile  # the Responses and Messages APIs' own rules
        return {
            "provider": provider,
            "budget": o.budget,
            "max_attempts": o.max_attempts,
            "summarizer": o.summarizer,
            "backoff": o.backoff,
            "rng": o.rng,
            "model": request.model,
            "max_tokens": request.max_tokens(),
            "thinking": request.thinking,
        }

    def _failure(self, failure: RecoveryError) -> BaseException:
        """The exception to raise: ``failure`` itself, or the SDK's with a note."""
        if not self._options.raise_original:
            return failure
        failure.error.add_note(f"condense.guard: {failure}")
        return failure.error

    def _done(
        self,
        request: Request,
        source: Any,
        result: RecoveryResult[Any],
        kwargs: dict[str, Any],
        setting: str | None,
    ) -> Any:
        if isinstance(result.value, Opened):  # a stream: its value is what entering gave
            self.last_recovery = replace(result, value=result.value.value)
        else:
            self.last_recovery = result
        self.last_request = kwargs
        setting = result.prefix_mismatch_behavior or setting
        sent = kwargs.get(request.endpoint.history)
        if self._options.sticky and isinstance(source, list) and isinstance(sent, list):
            unchanged = setting is None and len(sent) == len(source) and all(map(_is, sent, source))
            if not unchanged:
                with self._lock:
                    self._healed.append(
                        _Healed(request.endpoint.name, tuple(source), tuple(sent), setting)
                    )
        return result.value

    def _resume(self, endpoint: Endpoint, history: Any) -> tuple[Any, str | None]:
        """``history`` with a known healed prefix replaced by its healed version, and the
        setting that heal carries."""
        if not self._options.sticky or not isinstance(history, list):
            return history, None
        with self._lock:
            remembered = list(self._healed)
        for healed in reversed(remembered):
            if healed.endpoint != endpoint.name:
                continue
            resumed_history = resumed(history, healed.source, healed.sent)
            if resumed_history is not None:
                return resumed_history, healed.setting
        return history, None


# -- the call recover makes ------------------------------------------------------------------


def _caller(
    request: Request, setting: str | None, sent: list[dict[str, Any]], send: Send
) -> Callable[..., Any]:
    """``call(history, max_tokens=None[, prefix_mismatch_behavior=None])`` for recover:
    the SDK call with ``history`` written back in the API's own shape."""

    def arguments(history: list[Any], max_tokens: int | None, behavior: str | None) -> Any:
        kwargs = request.kwargs(
            history, max_tokens=max_tokens, prefix_mismatch_behavior=behavior or setting
        )
        sent.append(kwargs)
        return send(kwargs)

    if request.endpoint.settings:

        def call_with_settings(
            history: list[Any],
            max_tokens: int | None = None,
            prefix_mismatch_behavior: str | None = None,
        ) -> Any:
            return arguments(history, max_tokens, prefix_mismatch_behavior)

        return call_with_settings

    def call(history: list[Any], max_tokens: int | None = None) -> Any:
        return arguments(history, max_tokens, None)

    return call


def _acaller(
    request: Request, setting: str | None, sent: list[dict[str, Any]], send: ASend
) -> Callable[..., Awaitable[Any]]:
    """:func:`_caller` for a coroutine ``send``."""

    async def arguments(history: list[Any], max_tokens: int | None, behavior: str | None) -> Any:
        kwargs = request.kwargs(
            history, max_tokens=max_tokens, prefix_mismatch_behavior=behavior or setting
        )
        sent.append(kwargs)
        return await send(kwargs)

    if request.endpoint.settings:

        async def call_with_settings(
            history: list[Any],
            max_tokens: int | None = None,
            prefix_mismatch_behavior: str | None = None,
        ) -> Any:
            return await arguments(history, max_tokens, prefix_mismatch_behavior)

        return call_with_settings

    async def call(history: list[Any], max_tokens: int | None = None) -> Any:
        return await arguments(history, max_tokens, None)

    return call


# -- helpers -------------------------------------------------------------------------------


def _create(client: object, path: tuple[str, ...]) -> object:
    try:
        return getattr(walk(client, path), "create", None)
    except AttributeError:
        return None


def _is_async(create: object) -> bool:
    if not callable(create):
        return False
    return inspect.iscoroutinefunction(inspect.unwrap(create)) or inspect.iscoroutinefunction(
        create
    )


def _is(a: object, b: object) -> bool:
    return a is b


def _name(provider: str | Profile) -> str:
    return provider.name if isinstance(provider, Profile) else provider
