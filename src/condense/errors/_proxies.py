"""The attribute paths of a guarded client: every way an SDK sends a history leads to
``guard``'s recovery, everything else to the wrapped client itself.

A guarded resource (``chat.completions``, ``responses``, ``messages``, ``beta.messages``;
see ``_endpoints.ENDPOINTS``) is reached three ways, and each is guarded:

- directly: ``client.chat.completions.create(...)``, ``.parse(...)``, ``.stream(...)``;
- raw: ``client.chat.completions.with_raw_response.create(...)``, or
  ``client.with_raw_response.chat.completions.create(...)`` (what langchain-openai calls);
- streamed: ``client.messages.with_streaming_response.create(...)`` (a context manager).

Calls that return their answer (``create``, ``parse``, a raw ``create``; a ``Stream`` when
``stream=True``) are recovered as they are made; the context managers (``.stream(...)``,
``with_streaming_response``) open their request on entering, so entering is recovered:
the refusal arrives there, before the first event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from condense.errors._endpoints import CHAT, ENDPOINTS, GUARDED_METHODS, Endpoint
from condense.exceptions import RefusedResponse

if TYPE_CHECKING:
    from condense.errors.guard import GuardedClient

DIRECT = "direct"
MODES = ("with_raw_response", "with_streaming_response")


def walk(root: object, path: tuple[str, ...]) -> Any:
    """``root`` followed along ``path`` (``AttributeError`` where it stops)."""
    node: Any = root
    for name in path:
        node = getattr(node, name)
    return node


def view(root: object, path: tuple[str, ...], mode: str) -> Any:
    """The SDK object at ``path`` in ``mode`` (``with_raw_response``: its raw twin)."""
    node = walk(root, path)
    return node if mode == DIRECT else getattr(node, mode)


class Node:
    """A path that leads towards guarded resources (``client``, ``client.chat``,
    ``client.beta``, ``client.with_raw_response`` …)."""

    def __init__(self, guarded: GuardedClient[Any], path: tuple[str, ...], mode: str) -> None:
        self._guarded = guarded
        self._path = path
        self._mode = mode

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        path = (*self._path, name)
        endpoint = ENDPOINTS.get(path)
        if endpoint is not None and _has(self._guarded.client, path):
            return Resource(self._guarded, path, endpoint, self._mode)
        if name in MODES and not self._path and self._mode == DIRECT:
            return Node(self._guarded, (), name)
        if any(key[: len(path)] == path for key in ENDPOINTS) and _has(self._guarded.client, path):
            return Node(self._guarded, path, self._mode)
        return getattr(view(self._guarded.client, self._path, self._mode), name)

    def __repr__(self) -> str:
        return f"<guarded {'.'.join(('client', *self._path))}>"


class Resource:
    """A guarded resource: its history-sending methods are recovered, the rest is the
    wrapped client's own."""

    def __init__(
        self, guarded: GuardedClient[Any], path: tuple[str, ...], endpoint: Endpoint, mode: str
    ) -> None:
        self._guarded = guarded
        self._path = path
        self._endpoint = endpoint
        self._mode = mode

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in MODES and self._mode == DIRECT:
            return Resource(self._guarded, self._path, self._endpoint, name)
        if name in GUARDED_METHODS and not (name == "stream" and self._mode != DIRECT):
            method = getattr(view(self._guarded.sdk, self._path, self._mode), name, None)
            if callable(method):
                return Method(self._guarded, self._endpoint, method, self._entered(name))
        return getattr(view(self._guarded.client, self._path, self._mode), name)

    def _entered(self, name: str) -> bool:
        """Whether the method returns a context manager that sends on entering."""
        return name == "stream" or self._mode == "with_streaming_response"

    def __repr__(self) -> str:
        where = ".".join(("client", *self._path) + (() if self._mode == DIRECT else (self._mode,)))
        return f"<guarded {where}>"


class Method:
    """One guarded SDK method: same keyword arguments, same result."""

    def __init__(
        self, guarded: GuardedClient[Any], endpoint: Endpoint, method: Any, entered: bool
    ) -> None:
        self._guarded = guarded
        self._endpoint = endpoint
        self._method = method
        self._entered = entered
        self._async = guarded.is_async

    def __call__(self, **params: Any) -> Any:
        if self._entered:
            manager = AsyncEntered if self._async else Entered
            return manager(self._guarded, self._endpoint, self._method, params)
        check = self._endpoint is CHAT
        if self._async:
            return self._guarded.arun(self._endpoint, _asender(self._method, check), params)
        return self._guarded.run(self._endpoint, _sender(self._method, check), params)

    def __repr__(self) -> str:
        return f"<guarded {getattr(self._method, '__qualname__', 'method')}>"


@dataclass(frozen=True)
class Opened:
    """A context manager the SDK returned, and what entering it gave."""

    manager: Any
    value: Any


class Entered:
    """``with guarded.messages.stream(...) as stream:`` — entering is recovered."""

    def __init__(
        self, guarded: GuardedClient[Any], endpoint: Endpoint, method: Any, params: dict[str, Any]
    ) -> None:
        self._guarded = guarded
        self._endpoint = endpoint
        self._method = method
        self._params = params
        self._manager: Any = None

    def __enter__(self) -> Any:
        def send(kwargs: dict[str, Any]) -> Opened:
            manager = self._method(**kwargs)
            return Opened(manager, manager.__enter__())

        opened = self._guarded.run(self._endpoint, send, self._params)
        self._manager = opened.manager
        return opened.value

    def __exit__(self, *exc_info: Any) -> Any:
        return None if self._manager is None else self._manager.__exit__(*exc_info)


class AsyncEntered(Entered):
    """``async with guarded.messages.stream(...) as stream:`` — entering is recovered."""

    async def __aenter__(self) -> Any:
        async def send(kwargs: dict[str, Any]) -> Opened:
            manager = self._method(**kwargs)
            return Opened(manager, await manager.__aenter__())

        opened = await self._guarded.arun(self._endpoint, send, self._params)
        self._manager = opened.manager
        return opened.value

    async def __aexit__(self, *exc_info: Any) -> Any:
        return None if self._manager is None else await self._manager.__aexit__(*exc_info)


def _sender(method: Any, check: bool) -> Any:
    """``method`` called with the arguments; with ``check``, a MiniMax refusal inside a
    200 (an error in ``base_resp``) is raised as the refusal it is."""

    def send(kwargs: dict[str, Any]) -> Any:
        response = method(**kwargs)
        if check:
            raise_for_base_resp(response)
        return response

    return send


def _asender(method: Any, check: bool) -> Any:
    """:func:`_sender` for a coroutine method."""

    async def send(kwargs: dict[str, Any]) -> Any:
        response = await method(**kwargs)
        if check:
            raise_for_base_resp(response)
        return response

    return send


def raise_for_base_resp(response: object) -> None:
    """Raise :class:`RefusedResponse` for a MiniMax answer of HTTP 200 that is a refusal."""
    extra = getattr(response, "model_extra", None)
    base = extra.get("base_resp") if isinstance(extra, dict) else None
    if isinstance(base, dict) and base.get("status_code") not in (None, 0):
        raise RefusedResponse(response, base)


def _has(root: object, path: tuple[str, ...]) -> bool:
    try:
        walk(root, path)
    except AttributeError:
        return False
    return True
