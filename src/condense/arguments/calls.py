"""The two kinds of tool call, and which one carries JSON arguments.

OpenAI chat has two kinds of tool call (openai-python ``ChatCompletionMessageToolCall
UnionParam``):

- a function call, ``{"id", "type": "function", "function": {"name", "arguments"}}``,
  whose ``arguments`` is text holding one JSON object;
- a custom (free-form) tool call, ``{"id", "type": "custom", "custom": {"name",
  "input"}}``, whose ``input`` is any text: a patch, a grammar-constrained string. The
  Responses API's ``custom_tool_call`` (Codex's ``apply_patch``) reads into this form.

Only a function call has arguments: the JSON rules (``arguments_problem``) and the
shrinker apply to it alone, and a custom call's ``input`` is never parsed, re-encoded or
cut as JSON. Both kinds are answered by ``tool`` messages naming the call's id.
"""

from __future__ import annotations

from typing import Any

from condense.arguments._json import encode

__all__ = [
    "CUSTOM",
    "CUSTOM_KEYS",
    "FUNCTION",
    "as_function_call",
    "call_name",
    "custom_input",
    "function_arguments",
    "is_custom",
]

FUNCTION = "function"
CUSTOM = "custom"
CUSTOM_KEYS = frozenset({"name", "input"})
"""The keys of a custom call's ``custom`` object."""


def is_custom(call: object) -> bool:
    """Whether ``call`` is a custom (free-form) tool call."""
    return isinstance(call, dict) and call.get("type") == CUSTOM


def call_name(call: object) -> str | None:
    """The name of the tool ``call`` calls (function or custom), ``None`` when it has none."""
    if not isinstance(call, dict):
        return None
    body = call.get(CUSTOM if is_custom(call) else FUNCTION)
    name = body.get("name") if isinstance(body, dict) else None
    return name if isinstance(name, str) and name else None


def function_arguments(call: object) -> str | None:
    """The JSON ``arguments`` text of a function call; ``None`` for a custom call, a
    malformed call, or arguments that are not text."""
    if not isinstance(call, dict) or is_custom(call):
        return None
    function = call.get(FUNCTION)
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, str) else None


def custom_input(call: object) -> str | None:
    """The free-text ``input`` of a custom call; ``None`` for any other call."""
    if not is_custom(call):
        return None
    assert isinstance(call, dict)
    body = call.get(CUSTOM)
    text = body.get("input") if isinstance(body, dict) else None
    return text if isinstance(text, str) else None


def as_function_call(call: dict[str, Any]) -> dict[str, Any]:
    """A custom call as a function call, for providers that have no custom tools: the
    text becomes ``{"input": text}`` (nothing is lost; the JSON is valid by
    construction). The call's other keys are kept."""
    body = call.get(CUSTOM)
    name = body.get("name") if isinstance(body, dict) else None
    text = body.get("input") if isinstance(body, dict) else None
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    function = {"name": name if isinstance(name, str) and name else "unknown"}
    function["arguments"] = "{" + encode("input") + ": " + encode(text) + "}"
    kept = {key: value for key, value in call.items() if key not in (CUSTOM, "type")}
    return {**kept, "type": FUNCTION, FUNCTION: function}
