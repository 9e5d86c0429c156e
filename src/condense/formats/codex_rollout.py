"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``; the types are ``session_meta`` (the
session: ``base_instructions``, ``cwd``, …), ``turn_context`` (each turn's settings:
``model``, ``effort``, …), ``response_item`` (an OpenAI Responses item as sent or
received: ``message``, ``reasoning``, ``function_call``, ``function_call_output``,
``custom_tool_call``, ``web_search_call``, …), ``compacted`` (Codex compacted the
context: ``replacement_history`` is the new history) and ``event_msg`` (what the user
saw; not part of any request).

The request of a context is rebuilt the way Codex builds it: ``input`` is the
``response_item`` payloads verbatim, in order, and a ``compacted`` record starts a new
context from its ``replacement_history`` (the context before it is one request of its
own); ``instructions`` is ``session_meta.base_instructions.text``. Not recorded, so
added: ``model`` (the latest ``turn_context``'s), ``tools`` (each tool the context calls,
with an open schema: ``function`` for ``function_call``, ``custom`` for
``custom_tool_call``, ``web_search`` for ``web_search_call``), ``include:
["reasoning.encrypted_content"]`` and ``store: false``, as Codex sends them. The
model's last answer (the items after the last input of the context) is the answer to the
request, not part of it.

Evidence: the real rollouts of ``madshn/localpush`` (``tests/data/corpus/agents/raw``),
whose requests in ``tests/data/corpus/agents`` were rebuilt by these rules independently
of this code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from condense.formats.transcripts import Event, Segment

__all__ = ["requests"]

INCLUDE = ("reasoning.encrypted_content",)
_OUTPUT_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "web_search_call", "local_shell_call"}
)
"""Items only the model writes (with assistant messages): a request does not end in them."""


def requests(events: list[Event]) -> list[Segment]:
    """The request of every context of the rollout, oldest first."""
    instructions: str | None = None
    model: str | None = None
    items: list[Any] = []
    last_line = 0
    segments: list[Segment] = []
    for event in events:
        kind = event.data.get("type")
        payload = event.data.get("payload")
        if not isinstance(payload, Mapping):
            continue
        if kind == "session_meta":
            base = payload.get("base_instructions")
            text = base.get("text") if isinstance(base, Mapping) else None
            instructions = text if isinstance(text, str) else instructions
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
        elif kind == "response_item":
            items.append(payload)
            last_line = event.line
        elif kind == "compacted" and isinstance(payload.get("replacement_history"), list):
            segment = _segment(items, instructions, model, last_line)
            if segment is not None:
                segments.append(segment)
            items = list(payload["replacement_history"])
            last_line = event.line
    segment = _segment(items, instructions, model, last_line)
    if segment is not None:
        segments.append(segment)
    return segments


def _segment(
    items: Sequence[Any], instructions: str | None, model: str | None, line: int
) -> Segment | None:
    sent = len(items)
    while sent and _is_output(items[sent - 1]):
        sent -= 1
    if not sent:
        return None
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    if instructions is not None:
        body["instructions"] = instructions
    body["input"] = list(items[:sent])
    tools = _tools(items[:sent])
    if tools:
        body["tools"] = tools
    body["include"] = list(INCLUDE)
    body["store"] = False
    return Segment(body=body, format="responses", line=line, answer=tuple(items[sent:]))


def _is_output(item: object) -> bool:
    if not isinstance(item, Mapping):
        return False
    if item.get("type") == "message":
        return item.get("role") == "assistant"
    return item.get("type") in _OUTPUT_ITEMS


def _tools(items: Sequence[Any]) -> list[dict[str, Any]]:
    """One open-schema tool per tool the context calls, in order of first call."""
    tools: dict[str, dict[str, Any]] = {}
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind, name = item.get("type"), item.get("name")
        if kind == "web_search_call":
            tools.setdefault("\0web_search", {"type": "web_search"})
        elif kind == "function_call" and isinstance(name, str):
            tools.setdefault(
                name,
                {
                    "type": "function",
                    "name": name,
                    "description": "Codex tool (schema not recorded)",
                    "parameters": {"type": "object", "properties": {}},
                    "strict": False,
                },
            )
        elif kind == "custom_tool_call" and isinstance(name, str):
            tools.setdefault(
                name, {"type": "custom", "name": name, "description": "Codex freeform tool"}
            )
    return list(tools.values())
