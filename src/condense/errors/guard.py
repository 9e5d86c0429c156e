"""``guard(client)``: the official ``openai`` client, with every chat completion recovered.

Change one line of an agent::

    client = condense.guard(OpenAI())          # or AsyncOpenAI()
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    history = client.last_recovery.messages    # persist: the healed history that was sent

``client.chat.completions.create`` keeps the SDK's signature and return value (a
``ChatCompletion``, or a ``Stream`` with ``stream=True``); it goes through
:func:`~condense.errors.recover`, so a refused history is repaired or compressed and a
rate limit waited out before the SDK's answer comes back. Everything else (``models``,
``responses``, ``with_raw_response``, ``close()``, ``with`` blocks, ...) is the wrapped
client's own.

- The SDK's own retries are turned off for guarded creates (``sdk_retries=0``) so waits
  are not stacked; recover does the backing off, honouring ``Retry-After``.
- ``max_tokens`` (or ``max_completion_tokens``, whichever the call used) is lowered when
  the provider says the answer cannot fit.
- With ``sticky=True`` a healed history keeps being used: when a later call's messages
  start with a history that was healed before (an agent that appends to its own list),
  the healed version is sent in its place, so a fault repaired once never reaches the
  provider again.
- A MiniMax answer of HTTP 200 with an error in ``base_resp`` is treated as the refusal
  it is (:class:`RefusedResponse`).
- Streams are recovered when the failure happens at request time (the usual case: a
  400, 429 or 5xx comes before the first chunk); a stream that breaks midway is not
  replayed.
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from condense.errors.recover import RecoveryResult, arecover, recover
from condense.exceptions import InputError, RecoveryError
from condense.exceptions import RefusedResponse as RefusedResponse  # its home before exceptions.py
from condense.providers import DEFAULT_PROVIDER, Profile, check_provider
from condense.retry import RetryPolicy
from condense.summarizers import Summarizer

C = TypeVar("C")

_REMEMBERED = 8  # healed histories kept for ``sticky``


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
    source: tuple[Any, ...]  # the history as the agent sent it
    sent: tuple[Any, ...]  # the healed history condense sent instead


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
    """Wrap an ``openai.OpenAI`` or ``openai.AsyncOpenAI`` client (see the module doc).

    ``provider`` is the profile histories are repaired for (default ``"auto"``: chosen
    per request from the history and the request's ``model``), ``budget`` caps any
    history condense rewrites, ``max_attempts`` bounds the calls per create.
    ``sdk_retries`` is the SDK's own ``max_retries`` for guarded creates (``None`` keeps
    the client's). ``backoff``, ``sleep`` (a coroutine function for an async client) and
    ``rng`` tune the waits; tests inject them.
    """
    if max_attempts < 1:
        raise InputError(f"max_attempts must be at least 1, not {max_attempts!r}")
    if budget is not None and budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    if not callable(_lookup(client, "chat", "completions", "create")):
        raise InputError(
            f"guard expects an openai.OpenAI or openai.AsyncOpenAI client, not "
            f"{type(client).__name__} (it has no chat.completions.create)"
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
    """The wrapped client: ``chat.completions.create`` is recovered, the rest passes through.

    ``last_recovery`` is the :class:`~condense.errors.RecoveryResult` of the latest
    successful create (its ``messages`` are what was sent, healed: persist them);
    ``client`` is the wrapped client itself.
    """

    def __init__(self, client: C, options: _Options, *, sdk_retries: int | None) -> None:
        self.client = client
        self.last_recovery: RecoveryResult[Any] | None = None
        self._options = options
        sdk: Any = client
        if sdk_retries is not None and hasattr(sdk, "with_options"):
            sdk = sdk.with_options(max_retries=sdk_retries)  # the client's copy, same transport
        self._completions: Any = sdk.chat.completions
        self._async = _is_async(self._completions.create)
        self._healed: deque[_Healed] = deque(maxlen=_REMEMBERED)
        self._lock = threading.Lock()
        self.chat = _Chat(self)

    def __getattr__(self, name: str) -> Any:
        if name == "client":  # not set yet (copy, pickle): do not recurse
            raise AttributeError(name)
        return getattr(self.client, name)

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

    # -- one create ----------------------------------------------------------------------

    def _create(self, messages: list[Any], params: dict[str, Any]) -> Any:
        key = _output_key(params)
        create = self._completions.create

        def call(history: list[Any], max_tokens: int | None = None) -> Any:
            response = create(messages=list(history), **_with(params, key, max_tokens))
            _raise_for_base_resp(response)
            return response

        try:
            result = recover(
                call,
                self._resume(messages),
                sleep=self._options.sleep or time.sleep,
                **self._recover_options(params, key),
            )
        except RecoveryError as failure:
            error = self._failure(failure)
        else:
            return self._done(messages, result)
        raise error

    async def _acreate(self, messages: list[Any], params: dict[str, Any]) -> Any:
        key = _output_key(params)
        create = self._completions.create

        async def call(history: list[Any], max_tokens: int | None = None) -> Any:
            response = await create(messages=list(history), **_with(params, key, max_tokens))
            _raise_for_base_resp(response)
            return response

        try:
            result = await arecover(
                call,
                self._resume(messages),
                sleep=self._options.sleep,
                **self._recover_options(params, key),
            )
        except RecoveryError as failure:
            error = self._failure(failure)
        else:
            return self._done(messages, result)
        raise error

    def _recover_options(self, params: dict[str, Any], key: str) -> dict[str, Any]:
        o = self._options
        model, asked = params.get("model"), params.get(key)
        return {
            "provider": o.provider,
            "budget": o.budget,
            "max_attempts": o.max_attempts,
            "summarizer": o.summarizer,
            "backoff": o.backoff,
            "rng": o.rng,
            "model": model if isinstance(model, str) else None,
            "max_tokens": asked if isinstance(asked, int) else None,
        }

    def _failure(self, failure: RecoveryError) -> BaseException:
        """The exception to raise: ``failure`` itself, or the SDK's with a note."""
        if not self._options.raise_original:
            return failure
        failure.error.add_note(f"condense.guard: {failure}")
        return failure.error

    def _done(self, messages: list[Any], result: RecoveryResult[Any]) -> Any:
        self.last_recovery = result
        sent = result.messages
        unchanged = len(sent) == len(messages) and all(map(_same_object, sent, messages))
        if self._options.sticky and not unchanged:
            with self._lock:
                self._healed.append(_Healed(tuple(messages), tuple(sent)))
        return result.value

    def _resume(self, messages: list[Any]) -> list[Any]:
        """``messages`` with a known healed prefix replaced by its healed version."""
        if not self._options.sticky:
            return messages
        with self._lock:
            remembered = list(self._healed)
        for healed in reversed(remembered):
            size = len(healed.source)
            if len(messages) >= size and all(map(_same, messages, healed.source)):
                return [*healed.sent, *messages[size:]]
        return messages


class _Chat:
    def __init__(self, guarded: GuardedClient[Any]) -> None:
        self._guarded = guarded
        self.completions = _Completions(guarded)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._guarded.client.chat, name)


class _Completions:
    def __init__(self, guarded: GuardedClient[Any]) -> None:
        self._guarded = guarded

    def create(self, *, messages: Iterable[Any], **params: Any) -> Any:
        """``chat.completions.create`` with recovery; same arguments, same result."""
        history = list(messages)
        if self._guarded._async:
            return self._guarded._acreate(history, params)
        return self._guarded._create(history, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._guarded.client.chat.completions, name)


# -- helpers -------------------------------------------------------------------------------


def _lookup(obj: object, *names: str) -> object:
    for name in names:
        obj = getattr(obj, name, None)
    return obj


def _is_async(create: object) -> bool:
    function = inspect.unwrap(create) if callable(create) else create
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(create)


def _output_key(params: dict[str, Any]) -> str:
    return "max_completion_tokens" if "max_completion_tokens" in params else "max_tokens"


def _with(params: dict[str, Any], key: str, max_tokens: int | None) -> dict[str, Any]:
    return params if max_tokens is None else {**params, key: max_tokens}


def _raise_for_base_resp(response: object) -> None:
    extra = getattr(response, "model_extra", None)
    base = extra.get("base_resp") if isinstance(extra, dict) else None
    if isinstance(base, dict) and base.get("status_code") not in (None, 0):
        raise RefusedResponse(response, base)


def _same_object(a: object, b: object) -> bool:
    return a is b


def _same(a: object, b: object) -> bool:
    return a is b or a == b


def _name(provider: str | Profile) -> str:
    return provider.name if isinstance(provider, Profile) else provider
