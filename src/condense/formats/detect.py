"""Tell which wire format a parsed JSON object is in.

The shape decides: a ``conversations`` list of ``from``/``value`` turns is ShareGPT, an
``input`` list (or typed items) is Responses, a ``contents`` list (or turns holding
``parts``) is Gemini, and a role/content message list is OpenAI chat unless it uses
Anthropic blocks (``tool_use``, ``tool_result``, ``thinking``, image ``source``) or a
top-level ``system``, or Bedrock Converse blocks (typeless one-member unions: ``{"text"}``,
``{"toolUse"}``, ``{"toolResult"}``, ``{"reasoningContent"}`` …, or the request keys
``toolConfig``/``inferenceConfig``). A list of plain text messages reads the same in
every role-based format and is called ``openai``, and so is a list whose messages carry
the adapters' own keys (``thinking_blocks``, ``responses_items``, ``item_id``): it is the
canonical form, whatever blocks of another format its content carries.

To add a format, add its name to ``FORMATS``, what marks it to ``_signals`` (an item) or
``_body_hint`` (a request body), and its place in ``_decide``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from condense.exceptions import FormatError
from condense.formats._common import describe
from condense.formats.bedrock import BODY_KEYS, is_block
from condense.formats.locate import EXTENSION_KEYS

FORMATS = ("openai", "anthropic", "responses", "sharegpt", "gemini", "bedrock")

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
        return _from_items(obj)
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object or array, got {describe(obj)}")
    if isinstance(obj.get("conversations"), list):
        return _from_items(obj["conversations"])
    if isinstance(obj.get("contents"), list):
        return "gemini"
    if isinstance(obj.get("messages"), list):
        return _from_items(obj["messages"], hint=_body_hint(obj))
    if isinstance(obj.get("input"), list | str):
        return "responses"
    raise FormatError(
        f"cannot tell the format of an object with keys {sorted(obj)[:8]}: expected a "
        "'messages' array (openai, anthropic, bedrock), 'conversations' (sharegpt), "
        "'input' (responses) or 'contents' (gemini)"
    )


def _body_hint(body: dict[str, Any]) -> str | None:
    """What a request body's own keys say: Bedrock Converse or Anthropic (a top-level
    ``system``), ``None`` when nothing."""
    system = body.get("system")
    if not BODY_KEYS.isdisjoint(body) or (
        isinstance(system, list) and system and all(is_block(block) for block in system)
    ):
        return "bedrock"
    return "anthropic" if system is not None else None


def _from_items(items: list[Any], *, hint: str | None = None) -> str:
    from condense.formats.transcripts import first_kind

    transcript = first_kind(items[:1])
    if transcript is not None:  # events of a session, not messages: never misread them
        raise FormatError(
            f"holds {transcript} transcript events, not messages; "
            "read it with condense.load(), which rebuilds its requests"
        )
    signals = set(_signals(items))
    if hint is not None:
        signals.add(hint)
    if items and not signals & {"sharegpt", "responses", "chat", "gemini"}:
        raise FormatError(
            "holds no chat message ('role'), ShareGPT turn ('from'/'value'), Gemini turn "
            "('parts') or Responses item ('type')" + _HINT
        )
    return _decide(signals)


def _decide(signals: set[str]) -> str:
    if "sharegpt" in signals:
        if signals & {"responses", "chat", "gemini"}:
            raise FormatError("mixes ShareGPT turns ('from'/'value') with chat messages" + _HINT)
        return "sharegpt"
    if "responses" in signals:
        return "responses"
    if "gemini" in signals:
        if "chat" in signals:
            raise FormatError("mixes Gemini turns ('parts') with chat messages" + _HINT)
        return "gemini"
    if "canonical" in signals:  # the adapters' own keys: canonical messages, whatever
        return "openai"  # blocks of another format they carry in their content
    if "bedrock" in signals:
        if signals & {"openai-structure", "anthropic"}:
            raise FormatError(
                "mixes Bedrock Converse blocks with OpenAI or Anthropic messages" + _HINT
            )
        return "bedrock"
    if "openai-structure" in signals and "anthropic" in signals:
        raise FormatError(
            "has Anthropic blocks or a top-level 'system' but messages with OpenAI-only "
            "roles or keys" + _HINT
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
        elif "parts" in item and "content" not in item:
            yield "gemini"
        elif "role" in item:
            yield "chat"
            if not EXTENSION_KEYS.isdisjoint(item):
                yield "canonical"
            role = item["role"]
            if (isinstance(role, str) and role in _OPENAI_ROLES) or not _OPENAI_KEYS.isdisjoint(
                item
            ):
                yield "openai-structure"
            content = item.get("content")
            for part in content if isinstance(content, list) else ():
                kind = part.get("type") if isinstance(part, dict) else None
                if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in part):
                    yield "anthropic"
                elif kind in _RESPONSES_PARTS:
                    yield "responses"
                elif kind is None and is_block(part):
                    yield "bedrock"
