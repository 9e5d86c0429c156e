"""The wire APIs the proxy speaks: which path is which, and how each says "bad request"
(in its provider's own error body: ``condense.providers``' builder, as the fakes answer).

Four request kinds carry a history the proxy looks after:

- ``chat`` — OpenAI Chat Completions, ``POST …/chat/completions`` (``messages``);
- ``anthropic`` — Anthropic Messages, ``POST …/messages`` (``system`` + ``messages``);
- ``count_tokens`` — Anthropic's ``POST …/messages/count_tokens`` (same shape, no answer
  text: the client wants the size of the history it will send);
- ``responses`` — OpenAI Responses, ``POST …/responses`` (``input``).

Everything else is passed through untouched. Pure data and functions: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from condense.providers import get_provider

__all__ = ["API_NAMES", "Api", "api_for_path", "error_body", "error_bytes"]


@dataclass(frozen=True, kw_only=True)
class Api:
    """One wire API: its name, the ``condense.formats`` format of its body, the body key
    that holds the history, and the provider whose API it is (its error bodies are that
    provider's; Chat Completions' are OpenAI's, which OpenAI-compatible servers copy)."""

    name: str
    format: str
    history_key: str
    provider: str


APIS: dict[str, Api] = {
    "chat": Api(name="chat", format="openai", history_key="messages", provider="openai"),
    "anthropic": Api(
        name="anthropic", format="anthropic", history_key="messages", provider="anthropic"
    ),
    "count_tokens": Api(
        name="count_tokens", format="anthropic", history_key="messages", provider="anthropic"
    ),
    "responses": Api(
        name="responses", format="responses", history_key="input", provider="responses"
    ),
}
API_NAMES = tuple(APIS)


def api_for_path(path: str) -> Api | None:
    """The API a request path speaks (query string ignored; any path prefix allowed),
    or ``None`` for a path the proxy only passes through."""
    route = path.split("?", 1)[0].rstrip("/")
    if route.endswith("/chat/completions"):
        return APIS["chat"]
    if route.endswith("/messages/count_tokens"):
        return APIS["count_tokens"]
    if route.endswith("/messages"):
        return APIS["anthropic"]
    if route.endswith("/responses"):
        return APIS["responses"]
    return None


def error_body(
    api: Api | None,
    status: int,
    message: str,
    *,
    code: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    """An error body as ``api``'s provider writes it (OpenAI's when ``api`` is ``None``):
    the provider module's own builder (``Refusals.body``)."""
    provider = get_provider(api.provider if api is not None else "openai")
    body: dict[str, Any] = provider.refusals.body(status, message, code, param)
    return body


def error_bytes(api: Api | None, status: int, message: str, *, code: str | None = None) -> bytes:
    """:func:`error_body` as JSON bytes."""
    return json.dumps(error_body(api, status, message, code=code), ensure_ascii=False).encode()
