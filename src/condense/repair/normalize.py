"""Repair pass 1: make each message well-formed on its own.

Roles, content shapes, tool-call shapes, JSON-object arguments, keys the profile rejects,
the legacy ``function_call`` form, and messages with nothing in them. A custom (free-form)
tool call keeps its text ``input`` as it is where the profile takes custom calls, and is
written as a function call holding the text elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from condense.arguments import normalize_arguments
from condense.arguments.calls import CUSTOM, CUSTOM_KEYS, as_function_call, is_custom
from condense.message import CALL_ID_ALIAS
from condense.providers import Profile
from condense.providers.base import FUNCTION_KEYS
from condense.repair.ledger import Log, Slot
from condense.repair.pairing import digest
from condense.validate import ROLES, content_is_well_formed, is_empty_content, message_violations
from condense.validate.messages import accepted_keys

_ROLE_ALIASES = {
    "human": "user",
    "gpt": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "function": "tool",
}


def normalize_all(messages: Sequence[Any], profile: Profile, log: Log) -> list[Slot]:
    slots: list[Slot] = []
    legacy_ids: dict[str, list[str]] = {}  # function name -> ids of legacy calls unanswered
    for index, raw in enumerate(messages):
        slot = Slot(raw, index)
        if profile.blocks is not None and _has_result_blocks(raw):
            slots.append(slot)
            slots.extend(_results_out_of_assistant(slot, log))
            if _is_empty(slot.message, profile):
                slots.pop(slots.index(slot))
                log.add("drop", slot, "empty_message", "assistant message is empty", message=raw)
            continue
        if next(message_violations(index, raw, profile), None) is None:
            slot.clean = True
            slots.append(slot)  # already clean on its own: the common case
            continue
        if not isinstance(raw, dict):
            log.add("drop", slot, "invalid_message", "not a JSON object", message=raw)
            continue
        if not _normalize_role(slot, profile, log):
            continue
        _normalize_legacy_function(slot, legacy_ids, log)
        _drop_rejected_keys(slot, profile, log)
        _normalize_content(slot, log)
        if slot.role == "assistant":
            _normalize_tool_calls(slot, profile, log)
        elif slot.role == "tool":
            _normalize_result_id(slot, log)
        if _is_empty(slot.message, profile):
            log.add("drop", slot, "empty_message", f"{slot.role} message is empty", message=raw)
            continue
        slots.append(slot)
    return slots


def _normalize_role(slot: Slot, profile: Profile, log: Log) -> bool:
    role = slot.message.get("role")
    fixed = role.strip().lower() if isinstance(role, str) else None
    fixed = _ROLE_ALIASES.get(fixed or "", fixed)
    if fixed == "developer" and not profile.developer_role:
        fixed = "system"
    if fixed not in ROLES:
        log.add("drop", slot, "unknown_role", f"unknown role {role!r}", message=slot.message)
        return False
    if fixed != role:
        slot.edit()["role"] = fixed
        log.add("rewrite", slot, "unknown_role", f"role {role!r} rewritten as {fixed!r}")
    return True


def _normalize_legacy_function(slot: Slot, legacy_ids: dict[str, list[str]], log: Log) -> None:
    """Turn the legacy ``function_call`` / role ``function`` pair into tool calls."""
    message = slot.message
    if slot.role == "assistant" and "function_call" in message:
        call = message["function_call"]
        edited = slot.edit()
        del edited["function_call"]
        if isinstance(call, dict) and not message.get("tool_calls"):
            name = str(call.get("name") or "unknown")
            call_id = "call_" + digest(f"legacy:{slot.origin}:{name}")
            legacy_ids.setdefault(name, []).append(call_id)
            edited["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": call.get("arguments")},
                }
            ]
        log.add("rewrite", slot, "unknown_key", "legacy function_call rewritten as tool_calls")
    elif slot.role == "tool" and "tool_call_id" not in message and "name" in message:
        pending = legacy_ids.get(str(message["name"]))
        if pending:
            slot.edit()["tool_call_id"] = pending.pop(0)
            log.add("rewrite", slot, "missing_tool_call_id", "legacy function result given its id")


def _drop_rejected_keys(slot: Slot, profile: Profile, log: Log) -> None:
    allowed = accepted_keys(slot.message, profile)
    rejected = [key for key in slot.message if key not in allowed]
    if not rejected:
        return
    removed = {key: slot.message[key] for key in rejected}
    edited = slot.edit()
    for key in rejected:
        del edited[key]
    private = any(isinstance(k, str) and k.startswith("_") for k in rejected)
    names = ", ".join(repr(k) for k in rejected)
    log.add(
        "rewrite",
        slot,
        "private_key" if private else "unknown_key",
        f"removed key(s) {profile.name} rejects: {names}",
        message=removed,
    )


def _normalize_content(slot: Slot, log: Log) -> None:
    message = slot.message
    content = message.get("content")
    role = slot.role
    if content_is_well_formed(content):
        if content is None and role != "assistant":
            slot.edit()["content"] = ""
            log.add("rewrite", slot, "invalid_content", f"{role} message content None set to ''")
        return
    slot.edit()["content"] = _coerce_content(content)
    log.add(
        "rewrite",
        slot,
        "invalid_content",
        f"content of type {type(content).__name__} rewritten as text",
    )


def _coerce_content(content: object) -> str | list[dict[str, Any]]:
    if isinstance(content, list):
        parts: list[dict[str, Any]] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("type"), str):
                parts.append(part)
            elif isinstance(part, str):
                parts.append({"type": "text", "text": part})
            else:
                parts.append({"type": "text", "text": _as_text(part)})
        return parts
    return _as_text(content)


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _normalize_tool_calls(slot: Slot, profile: Profile, log: Log) -> None:
    if "tool_calls" not in slot.message:
        return
    calls = slot.message["tool_calls"]
    if calls is None:
        return
    if not isinstance(calls, list) or not calls:
        del slot.edit()["tool_calls"]
        what = "empty" if isinstance(calls, list) else f"a {type(calls).__name__}"
        code = "empty_tool_calls" if isinstance(calls, list) else "tool_call_malformed"
        log.add("rewrite", slot, code, f"removed tool_calls that was {what}")
        return
    fixed: list[dict[str, Any]] = []
    reasons: list[str] = []
    for position, call in enumerate(calls):
        new_call, reason = _normalize_call(call, profile)
        if reason:
            reasons.append(f"tool call {position}: {reason}")
        if new_call is not None:
            fixed.append(new_call)
    if not reasons:
        return
    edited = slot.edit()
    if fixed:
        edited["tool_calls"] = fixed
    else:
        del edited["tool_calls"]
    code = "tool_call_malformed"
    if all("arguments" in r for r in reasons):
        code = "arguments_invalid_json"
    log.add("rewrite", slot, code, "; ".join(reasons), message=None)


def _normalize_call(call: object, profile: Profile) -> tuple[dict[str, Any] | None, str]:
    """Return the call in canonical shape (``None`` if unusable) and what was changed."""
    if not isinstance(call, dict):
        return None, f"dropped a tool call that was a {type(call).__name__}: {_as_text(call)}"
    if is_custom(call):
        call, note = _normalize_custom_call(call, profile)
        if call is None or is_custom(call):
            return call, note
        notes = [note]  # rewritten as a function call: checked like one below
    else:
        notes = []
    function = call.get("function")
    if not isinstance(function, dict):
        if "name" in call or "arguments" in call:
            function = {"name": call.get("name"), "arguments": call.get("arguments")}
            notes.append("name/arguments moved into 'function'")
        else:
            return None, f"dropped a tool call without a function: {_as_text(call)}"
    name = function.get("name")
    if not isinstance(name, str) or not name:
        name = "unknown"
        notes.append("missing function name set to 'unknown'")
    arguments, why = normalize_arguments(function.get("arguments"))
    if why:
        notes.append(f"arguments: {why}")
    alias = call.get(CALL_ID_ALIAS)
    keep_alias = isinstance(alias, str) and bool(alias)  # pairing turns the two ids into one
    known = (
        profile.tool_call_keys | {"name", "arguments"} | ({CALL_ID_ALIAS} if keep_alias else set())
    )
    extra = sorted(str(k) for k in set(call) - known)
    extra += sorted(f"function.{k}" for k in set(function) - FUNCTION_KEYS)
    if extra:
        notes.append(f"removed key(s) {', '.join(extra)}")
    if call.get("type") != "function":
        notes.append(f"type {call.get('type')!r} set to 'function'")
    call_id = call.get("id")
    if not notes and isinstance(call_id, str):
        return call, ""
    fixed: dict[str, Any] = {
        key: value
        for key, value in call.items()
        if key in profile.tool_call_keys or (keep_alias and key == CALL_ID_ALIAS)
    }
    fixed.update(
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    )
    return fixed, "; ".join(notes)


def _normalize_custom_call(
    call: dict[str, Any], profile: Profile
) -> tuple[dict[str, Any] | None, str]:
    """A custom (free-form) tool call in the shape ``profile`` takes, and what changed:
    kept as a custom call where the profile takes them (its ``input`` stays text, never
    parsed as JSON), else rewritten as a function call whose arguments hold the text."""
    body = call.get(CUSTOM)
    if not isinstance(body, dict):
        return None, f"dropped a custom tool call without its custom object: {_as_text(call)}"
    if not profile.custom_tool_calls:
        return as_function_call(call), (
            f"custom tool call written as a function call with arguments {{'input': …}} "
            f"({profile.name} has no custom tools)"
        )
    notes: list[str] = []
    name, text = body.get("name"), body.get("input")
    if not isinstance(name, str) or not name:
        name = "unknown"
        notes.append("missing custom tool name set to 'unknown'")
    if not isinstance(text, str):
        text = "" if text is None else _as_text(text)
        notes.append("input rewritten as text")
    allowed = (profile.tool_call_keys - {"function"}) | {CUSTOM}
    extra = sorted(str(k) for k in set(call) - allowed)
    extra += sorted(f"custom.{k}" for k in set(body) - CUSTOM_KEYS)
    if extra:
        notes.append(f"removed key(s) {', '.join(extra)}")
    if not notes and isinstance(call.get("id"), str):
        return call, ""
    fixed = {key: value for key, value in call.items() if key in allowed}
    fixed.update({"id": call.get("id"), "type": CUSTOM, CUSTOM: {"name": name, "input": text}})
    return fixed, "; ".join(notes)


def _normalize_result_id(slot: Slot, log: Log) -> None:
    value = slot.message.get("tool_call_id", None)
    if value is None or isinstance(value, str):
        return
    slot.edit()["tool_call_id"] = str(value)
    log.add("rewrite", slot, "missing_tool_call_id", "tool_call_id rewritten as a string")


def _is_empty(message: dict[str, Any], profile: Profile) -> bool:
    role = message["role"]
    content = message.get("content")
    if role == "assistant":
        if message.get("tool_calls") or message.get("refusal"):
            return False
        return content is None or (profile.no_empty_text and is_empty_content(content))
    return role == "user" and profile.no_empty_text and is_empty_content(content)


def _has_result_blocks(message: object) -> bool:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return False
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "tool_result" for part in content
    )


def _results_out_of_assistant(slot: Slot, log: Log) -> list[Slot]:
    """Move ``tool_result`` blocks out of an assistant message into tool messages after it
    (Anthropic: ``tool_result`` blocks can only be in ``user`` messages)."""
    content = slot.message["content"]
    kept = [p for p in content if not (isinstance(p, dict) and p.get("type") == "tool_result")]
    moved: list[Slot] = []
    for part in content:
        if not (isinstance(part, dict) and part.get("type") == "tool_result"):
            continue
        result = {"role": "tool", "tool_call_id": part.get("tool_use_id")}
        result["content"] = part.get("content", "")
        result.update({k: v for k, v in part.items() if k in ("is_error", "cache_control")})
        moved.append(Slot(result, slot.origin, owned=True))
    slot.edit()["content"] = kept or None
    log.add(
        "move",
        slot,
        "tool_result_in_assistant",
        f"{len(moved)} tool_result block(s) moved out of the assistant message into results",
    )
    return moved
