"""Tell which wire format a parsed JSON object is in.

The shape decides: a ``conversations`` list of ``from``/``value`` turns is ShareGPT, an
``input`` list (or typed items) is Responses, and a role/content message list is OpenAI
chat unless it uses Anthropic blocks (``tool_use``, ``tool_result``, ``thinking``, image
``source``) or a top-level ``system``. A list of plain text messages reads the same in
every role-based format and is called ``openai``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from condense.exceptions import FormatError
from condense.formats._common import describe

FORMATS = ("openai", "anthropic", "responses", "sharegpt")

_ANTHROPIC_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "document",
        "search_result",
        "server_tool_use",
        "web_search_tool_result",
    }
)
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
_OPENAI_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call"})
_OPENAI_ROLES = frozenset({"tool", "function", "system", "developer"})  # not Anthropic roles
_HINT = "; pass format= one of " + ", ".join(FORMATS)


def detect_format(obj: object) -> str:
    """The name of ``obj``'s format (one of ``FORMATS``); FormatError when unclear."""
    if isinstance(obj, list):
        return _from_items(obj, anthropic=False)
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object or array, got {describe(obj)}")
    if isinstance(obj.get("conversations"), list):
        return _from_items(obj["conversations"], anthropic=False)
    if isinstance(obj.get("messages"), list):
        return _from_items(obj["messages"], anthropic=obj.get("system") is not None)
    if isinstance(obj.get("input"), list | str):
        return "responses"
    raise FormatError(
        f"cannot tell the format of an object with keys {sorted(obj)[:8]}: expected a "
        "'messages' array (openai, anthropic), 'conversations' (sharegpt) or 'input' "
        "(responses)"
    )


def _from_items(items: list[Any], *, anthropic: bool) -> str:
    from condense.formats.transcripts import first_kind

    transcript = first_kind(items[:1])
    if transcript is not None:  # events of a session, not messages: never misread them
        raise FormatError(
            f"holds {transcript} transcript events, not messages; "
            "read it with condense.load(), which rebuilds its requests"
        )
    signals = set(_signals(items))
    if anthropic:
        signals.add("anthropic")
    if items and not signals & {"sharegpt", "responses", "chat"}:
        raise FormatError(
            "holds no chat message ('role'), ShareGPT turn ('from'/'value') or Responses "
            "item ('type')" + _HINT
        )
    if "sharegpt" in signals:
        if signals & {"responses", "chat"}:
            raise FormatError("mixes ShareGPT turns ('from'/'value') with chat messages" + _HINT)
        return "sharegpt"
    if "responses" in signals:
        return "responses"
    if "openai-structure" in signals and anthropic:
        raise FormatError(
            "has a top-level 'system' (Anthropic) but messages with OpenAI-only roles or keys"
            + _HINT
        )
    if "openai-structure" in signals:
        return "openai"
    if "anthropic" in signals:
        return "anthropic"
    return "openai"


def _signals(items: list[Any]) -> Iterator[str]:
    """What each item looks like. Anything else (a string, a role-less object) is left to
    the adapter: OpenAI histories carry such junk to ``repair``."""
    for item in items:
        if not isinstance(item, dict):
            continue
        if "from" in item and "value" in item:
            yield "sharegpt"
        elif "type" in item:  # chat and Anthropic messages have no type; Responses items do
            yield "responses"
        elif "role" in item:
            yield "chat"
            if item["role"] in _OPENAI_ROLES or not _OPENAI_KEYS.isdisjoint(item):
                yield "openai-structure"
            content = item.get("content")
            for part in content if isinstance(content, list) else ():
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in part):
                    yield "anthropic"
                elif kind in _RESPONSES_PARTS:
                    yield "responses"
