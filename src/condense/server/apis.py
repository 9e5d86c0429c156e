"""The wire APIs the proxy speaks: which path is which, and how each says "bad request".

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

__all__ = ["API_NAMES", "Api", "api_for_path", "error_body", "error_bytes"]


@dataclass(frozen=True, kw_only=True)
class Api:
    """One wire API: its name, the ``condense.formats`` format of its body, and the body
    key that holds the history."""

    name: str
    format: str
    history_key: str

    @property
    def anthropic_shaped(self) -> bool:
        """Whether errors are answered in Anthropic's shape (else OpenAI's)."""
        return self.format == "anthropic"


APIS: dict[str, Api] = {
    "chat": Api(name="chat", format="openai", history_key="messages"),
    "anthropic": Api(name="anthropic", format="anthropic", history_key="messages"),
    "count_tokens": Api(name="count_tokens", format="anthropic", history_key="messages"),
    "responses": Api(name="responses", format="responses", history_key="input"),
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


_ANTHROPIC_TYPES = {400: "invalid_request_error", 413: "request_too_large", 502: "api_error"}


def error_body(
    api: Api | None, status: int, message: str, *, code: str | None = None
) -> dict[str, Any]:
    """An error body in ``api``'s own shape (OpenAI's when ``api`` is ``None``)."""
    if api is not None and api.anthropic_shaped:
        kind = _ANTHROPIC_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "invalid_request_error" if status < 500 else "upstream_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_bytes(api: Api | None, status: int, message: str, *, code: str | None = None) -> bytes:
    """:func:`error_body` as JSON bytes."""
    return json.dumps(error_body(api, status, message, code=code), ensure_ascii=False).encode()
