"""What a whole request costs: its messages, and everything else it sends the model.

A provider counts the whole request against the window, not only the history: the
instructions (Responses ``instructions``; Anthropic's ``system`` is read as a message),
the tool definitions with their schemas, a structured-output schema, and the tool-use
system prompt some providers add when tools are sent. :func:`request_parts` picks those
parts out of a request body and :func:`parts_tokens` counts them:

- a tool definition costs its JSON text (compact, as sent) plus ``TOKENS_PER_TOOL``
  (its framing in the provider's rendering); any tool at all adds the tokenizer's
  ``tools_prompt`` (Anthropic: up to 530 tokens, see ``families``);
- ``instructions`` and Gemini's ``systemInstruction`` cost what a system message with the
  same content costs (``pieces``: framing included);
- a ``response_format`` / ``text.format`` / ``output_format`` JSON schema, and a
  ``tool_choice`` that names a tool, cost their JSON text.

Counts of the JSON texts are remembered (bounded), so an agent that sends the same tools
every turn pays for their BPE once.

:func:`plan_room` turns a budget in the provider's tokens into condense's tokens for the
messages: ``floor(budget / ratio) - fixed - reserve``, where ``ratio`` is the provider's
tokens per condense token (``families``: measured per family, or learned by the proxy)
and ``fixed`` the condense tokens of the parts above.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.tokens.counting import shared_counter
from condense.tokens.families import NO_FAMILY, Tokenizer

__all__ = [
    "OUTPUT_KEYS",
    "PROMPT_PARTS",
    "TOKENS_PER_TOOL",
    "Room",
    "parts_tokens",
    "plan_room",
    "request_parts",
    "requested_output",
]

PROMPT_PARTS = (
    "instructions",
    "systemInstruction",
    "system_instruction",
    "tools",
    "functions",
    "tool_choice",
    "response_format",
    "text",
    "output_format",
)
"""Top-level request keys, besides the history, whose content reaches the model."""
TOKENS_PER_TOOL = 8
OUTPUT_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")
"""The keys that ask room for the output (Chat Completions, Anthropic, Responses)."""
_INSTRUCTIONS = frozenset({"instructions", "systemInstruction", "system_instruction"})
_TOOLS = frozenset({"tools", "functions"})
_MEMO_SIZE = 4096


def request_parts(body: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of ``body`` (a native request) that reach the model besides its history;
    empty values are left out."""
    return {key: body[key] for key in PROMPT_PARTS if body.get(key) not in (None, "", [], {})}


def requested_output(body: Mapping[str, Any]) -> int:
    """The output ``body`` asks room for (``max_tokens`` and its spellings), or 0; a
    provider that counts it refuses prompt + output over the window."""
    for key in OUTPUT_KEYS:
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def parts_tokens(
    parts: Mapping[str, Any],
    *,
    encoding: str,
    tokenizer: Tokenizer = NO_FAMILY,
) -> int:
    """Condense's tokens (``encoding``) of ``parts`` (see the module docstring); the
    tokenizer's ``tools_prompt`` is added when tools are sent."""
    total = 0
    tools = 0
    for key, value in parts.items():
        if key in _INSTRUCTIONS:
            total += shared_counter(encoding).message({"role": "system", "content": value})
        elif key in _TOOLS:
            items = value if isinstance(value, Sequence) and not isinstance(value, str) else [value]
            tools += len(items)
            total += sum(TOKENS_PER_TOOL + _tokens(_json(tool), encoding) for tool in items)
        elif key == "tool_choice":
            total += 0 if isinstance(value, str) else _tokens(_json(value), encoding)
        elif key == "text":  # Responses: {"format": {...}, "verbosity": ...}
            schema = value.get("format") if isinstance(value, Mapping) else None
            if isinstance(schema, Mapping) and schema.get("type") not in (None, "text"):
                total += _tokens(_json(schema), encoding)
        else:  # response_format, output_format
            if not (isinstance(value, Mapping) and value.get("type") in ("text", "json_object")):
                total += _tokens(_json(value), encoding)
    if tools:
        total += tokenizer.tools_prompt
    return total


@dataclass(frozen=True, kw_only=True)
class Room:
    """How a budget in the provider's tokens is shared out, in condense's tokens."""

    budget: int
    """The caller's budget: the provider's tokens for the whole request."""
    tokenizer: str
    """The provider's tokenizer (a name of ``families.TOKENIZERS``, or ``"none"``)."""
    ratio: float
    """The provider's tokens per condense token planned for."""
    fixed: int
    """Condense's tokens of what is sent besides the messages (tools, instructions …)."""
    reserve: int = 0
    """Condense's tokens kept free besides (the proxy: per-message slack)."""
    messages: int
    """Condense's tokens the messages may have (at least 1)."""

    @property
    def request(self) -> int:
        """Condense's tokens the whole request may have."""
        return self.messages + self.fixed


def plan_room(
    budget: int,
    *,
    ratio: float = 1.0,
    fixed: int = 0,
    reserve: int = 0,
    tokenizer: str = NO_FAMILY.name,
) -> Room:
    """The room ``budget`` (the provider's tokens) leaves the messages, in condense's
    tokens: ``floor(budget / ratio) - fixed - reserve``, at least 1."""
    messages = max(1, int(budget / max(ratio, 1e-9)) - fixed - reserve)
    return Room(
        budget=budget,
        tokenizer=tokenizer,
        ratio=ratio,
        fixed=fixed,
        reserve=reserve,
        messages=messages,
    )


# -- counting, remembered per text --------------------------------------------------------

_memo: OrderedDict[tuple[str, int, int], int] = OrderedDict()
_memo_lock = threading.Lock()


def _tokens(text: str, encoding: str) -> int:
    if not text:
        return 0
    key = (encoding, hash(text), len(text))  # no reference to the text is kept
    with _memo_lock:
        found = _memo.get(key)
        if found is not None:
            _memo.move_to_end(key)
            return found
    count = shared_counter(encoding).text(text)
    with _memo_lock:
        _memo[key] = count
        while len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
    return count


def _json(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)
