"""The OpenAI Responses API's rules on a request's ``input``, written out on their own.

This checker shares no code with ``condense.validate``: it reads the native items, as
the API does, so a test can judge condense's output by the provider's rules rather than
by condense's reading of them. Sources for each rule:

- accepted keys per item type: openai-python ``types/responses/
  response_input_item_param.py`` and the param types it unions (2026-08), and
  openai/codex ``codex-rs/protocol/src/models.rs`` ``ResponseItem`` (what Codex CLI
  sends; real Codex requests in ``tests/data/corpus/agents`` carry ``status`` on
  ``custom_tool_call`` and ``phase`` on messages, and were accepted);
- "No tool output found for function call call_…" / "No tool call found for function
  call output with call_id call_…" (openai-agents #1061, #4827): every call has an output
  somewhere after it and every output a call before it, by ``call_id`` — not by position,
  Codex puts ``developer`` messages between them;
- "Item 'rs_…' of type 'reasoning' was provided without its required following item."
  (vercel/ai #7099): a reasoning item keeps the item that followed it;
- "Item 'fc_…' of type 'function_call' was provided without its required 'reasoning'
  item: 'rs_…'." (mastra #8738): an output item replayed with its id keeps its reasoning;
- compaction items (openai/codex #17335, #26573) stand for everything before them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

_MESSAGE = {"type", "role", "content", "id", "status", "phase"}
ACCEPTED_KEYS: dict[str, set[str]] = {
    "message": _MESSAGE,
    "reasoning": {"type", "id", "summary", "content", "encrypted_content", "status"},
    "function_call": {
        "type",
        "call_id",
        "name",
        "arguments",
        "id",
        "status",
        "namespace",
        "caller",
    },
    "function_call_output": {
        "type",
        "call_id",
        "output",
        "id",
        "status",
        "caller",
        "name",
        "namespace",
    },
    "custom_tool_call": {"type", "call_id", "name", "input", "id", "status", "namespace", "caller"},
    "custom_tool_call_output": {"type", "call_id", "output", "id", "caller", "name"},
    "compaction": {"type", "encrypted_content", "id"},
    "compaction_trigger": {"type"},
    "web_search_call": {"type", "id", "action", "status"},
    "local_shell_call": {"type", "id", "call_id", "action", "status"},
    "item_reference": {"type", "id"},
}
"""Item type → the keys the API accepts on it (types not listed are not checked)."""

CALL_OUTPUTS = {
    "function_call": {"function_call_output"},
    "local_shell_call": {"function_call_output", "local_shell_call_output"},
    "custom_tool_call": {"custom_tool_call_output"},
}
"""Call item type → the output item types that answer it."""

ROLES = {"user", "assistant", "system", "developer"}
TEXT_PARTS = {"input_text", "output_text", "input_image", "input_file", "refusal"}


def items_of(request: Any) -> list[Any]:
    """The ``input`` items of a request body (or the list itself)."""
    return list(request["input"] if isinstance(request, dict) else request)


def problems(request: Any) -> list[str]:
    """Every rule the request's input breaks, as sentences naming ``input[i]``."""
    return list(_problems(items_of(request)))


def _problems(items: Sequence[Any]) -> Iterator[str]:
    calls: dict[str, tuple[int, str]] = {}  # call_id -> (index, type)
    answered: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            yield f"input[{index}] is not an object"
            continue
        kind = item.get("type", "message" if "role" in item else None)
        accepted = ACCEPTED_KEYS.get(str(kind))
        if accepted is not None and not set(item) <= accepted:
            yield f"input[{index}] ({kind}) has unknown keys {sorted(set(item) - accepted)}"
        if kind == "message":
            yield from _message(index, item)
        if kind in CALL_OUTPUTS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                yield f"input[{index}] ({kind}) has no call_id"
            elif call_id in calls:
                yield f"input[{index}]: call_id {call_id} is used by two calls"
            else:
                calls[call_id] = (index, str(kind))
            if kind == "custom_tool_call" and not isinstance(item.get("input"), str):
                yield f"input[{index}]: custom_tool_call input is not a string"
            if kind == "function_call" and not isinstance(item.get("arguments"), str):
                yield f"input[{index}]: function_call arguments is not a string"
        if isinstance(kind, str) and kind.endswith("_call_output"):
            call_id = item.get("call_id")
            made = calls.get(call_id) if isinstance(call_id, str) else None
            if made is None:
                yield f"input[{index}]: No tool call found for {kind} with call_id {call_id}"
            elif kind not in CALL_OUTPUTS[made[1]]:
                yield f"input[{index}]: {kind} answers a {made[1]}"
            elif call_id in answered:
                yield f"input[{index}]: second output for call_id {call_id}"
            else:
                answered.add(str(call_id))
        if kind == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            if not isinstance(following, dict) or following.get("type") == "reasoning":
                yield f"input[{index}]: reasoning item without its following item"
    for call_id, (index, kind) in calls.items():
        if call_id not in answered:
            yield f"input[{index}]: No tool output found for {kind} {call_id}"


def _message(index: int, item: dict[str, Any]) -> Iterator[str]:
    if item.get("role") not in ROLES:
        yield f"input[{index}]: message role {item.get('role')!r}"
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        yield f"input[{index}]: message content is neither text nor a list"
        return
    for position, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in TEXT_PARTS:
            yield f"input[{index}].content[{position}] is not a content part"


def kept_with_neighbours(before: Any, after: Any) -> list[str]:
    """What ``after`` (a request condense made from ``before``) breaks of the rules that
    tie items together across the two: a reasoning item kept in ``after`` is followed by
    the same item as in ``before``; an output item replayed with its id (``fc_…``,
    ``msg_…``, ``ctc_…``) keeps the reasoning item of its response."""
    old, new = items_of(before), items_of(after)
    found: list[str] = []
    where = {_key(item): index for index, item in enumerate(new)}
    for index, item in enumerate(old):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        at = where.get(_key(item))
        if kind == "reasoning" and at is not None and index + 1 < len(old):
            following = new[at + 1] if at + 1 < len(new) else None
            if following != old[index + 1]:
                found.append(f"input[{index}]: reasoning item kept without its following item")
        replayed = str(item.get("id", ""))
        if at is not None and replayed.startswith(("fc_", "msg_", "ctc_")):
            reasoning = _reasoning_of(old, index)
            if reasoning is not None and _key(reasoning) not in where:
                found.append(f"input[{index}]: {replayed} kept without its reasoning item")
    return found


def compactions_kept(before: Any, after: Any) -> bool:
    """Whether every ``compaction`` and ``compaction_trigger`` item of ``before`` is in
    ``after``, unchanged and in order (a compaction item stands for all that came
    before it: leaving it out loses that context)."""

    def kept(items: list[Any]) -> list[Any]:
        return [item for item in items if isinstance(item, dict) and _is_compaction(item)]

    return kept(items_of(after)) == kept(items_of(before))


def _is_compaction(item: dict[str, Any]) -> bool:
    return item.get("type") in ("compaction", "compaction_trigger")


def _reasoning_of(items: Sequence[Any], index: int) -> Any:
    """The reasoning item of the response ``items[index]`` belongs to, if any."""
    for back in range(index - 1, -1, -1):
        item = items[back]
        if not isinstance(item, dict):
            return None
        kind = item.get("type", "message")
        if kind == "reasoning":
            return item
        if kind.endswith("_output") or (kind == "message" and item.get("role") != "assistant"):
            return None
    return None


def _key(item: Any) -> str:
    import json

    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def current_turn(request: Any) -> list[Any]:
    """The items from the last user message carrying text on: the turn the model is
    working on, which must reach the provider as it came."""
    items = items_of(request)
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if isinstance(item, dict) and item.get("role") == "user" and _has_text(item):
            return items[index:]
    return items


def _has_text(item: dict[str, Any]) -> bool:
    content = item.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        isinstance(part, dict)
        and part.get("type") == "input_text"
        and str(part.get("text", "")).strip()
        for part in content
    )
