"""How the fake providers count a prompt: their own way, not condense's.

A test that checks condense's budgets against condense's own count proves nothing, so
:class:`ProviderCount` counts the request body as it arrives, in its API's native shape,
with code of its own and, by default, another vocabulary (``cl100k_base``) and other
overheads than condense's ``o200k_base`` count with OpenAI's cookbook framing:

- every message (Chat message, Anthropic turn, Responses item, the Anthropic ``system``
  and the Responses ``instructions``) costs ``per_message`` tokens (4, as OpenAI's
  older models did) plus the tokens of its text: every string in it except ids, types,
  statuses, signatures and encrypted reasoning (not readable text); the ``input`` of a
  tool call and any other object under ``input``/``arguments`` as compact JSON;
- an image or document part costs ``per_image``;
- every tool definition costs ``per_tool`` plus its compact JSON, and a request that
  sends tools ``tools_prompt`` more (the tool-use system prompt Anthropic documents);
- the request costs ``per_request`` (the reply priming);
- the tokens of every text are multiplied by ``scale`` (rounded up): a provider whose
  vocabulary splits text finer than the one counted with — Claude counts 1.11–1.24 times
  o200k's tokens on the corpus's Claude Code traces (``condense.tokens.families``).

All of it is configurable, so a test can make the fake count more than condense does in
whichever way it means to check (``ProviderCount(per_message=8)``,
``ProviderCount(encoding="o200k_base", tools_prompt=530)``, ``ProviderCount(scale=1.24)``
…).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ProviderCount"]

_SKIPPED = frozenset(
    {
        "type",
        "id",
        "call_id",
        "tool_use_id",
        "tool_call_id",
        "status",
        "signature",
        "encrypted_content",
        "cache_control",
        "index",
    }
)
_AS_JSON = frozenset({"input", "arguments"})
_MEDIA = frozenset({"image", "image_url", "input_image", "document", "file", "input_file"})
_HISTORY = {"chat": "messages", "anthropic": "messages", "count_tokens": "messages"}


@dataclass(frozen=True, kw_only=True)
class ProviderCount:
    """A fake provider's prompt count (see the module docstring)."""

    encoding: str = "cl100k_base"
    per_message: int = 4
    per_request: int = 3
    per_tool: int = 10
    tools_prompt: int = 0
    per_image: int = 1000
    scale: float = 1.0

    def count(self, api: str, body: Mapping[str, Any]) -> int:
        """The prompt tokens of a request ``body`` of ``api`` (``chat``, ``anthropic``,
        ``count_tokens`` or ``responses``)."""
        messages: list[Any] = []
        if api == "responses":
            history = body.get("input")
            if body.get("instructions"):
                messages.append({"role": "developer", "content": body["instructions"]})
            if isinstance(history, str):
                messages.append({"role": "user", "content": history})
            elif isinstance(history, list):
                messages.extend(history)
        else:
            if api != "chat" and body.get("system"):
                messages.append({"role": "system", "content": body["system"]})
            history = body.get(_HISTORY.get(api, "messages"))
            if isinstance(history, list):
                messages.extend(history)
        total = self.per_request + sum(self.per_message + self._value(m) for m in messages)
        tools = [*_list(body.get("tools")), *_list(body.get("functions"))]
        if tools:
            total += self.tools_prompt
            total += sum(self.per_tool + self._text(_json(tool)) for tool in tools)
        return total

    def __call__(self, body: Mapping[str, Any]) -> int:
        """The prompt tokens of a Chat Completions ``body``."""
        return self.count("chat", body)

    # -- the walk ----------------------------------------------------------------------------

    def _value(self, value: object) -> int:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, bool | int | float):
            return self._text(str(value))
        if isinstance(value, Mapping):
            if value.get("type") in _MEDIA:
                return self.per_image
            total = 0
            for key, item in value.items():
                if key in _SKIPPED:
                    continue
                if key in _AS_JSON and not isinstance(item, str):
                    total += self._text(_json(item))
                else:
                    total += self._value(item)
            return total
        if isinstance(value, list | tuple):
            return sum(self._value(item) for item in value)
        return 0

    def _text(self, text: str) -> int:
        # tiktoken's tokens (made safe for a million blanks), never condense's counter
        from condense.tokens.encodings import ordinary_encoder

        if not text:
            return 0
        tokens = len(ordinary_encoder(self.encoding)(text))
        return tokens if self.scale == 1.0 else math.ceil(tokens * self.scale)


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
