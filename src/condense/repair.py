"""``repair``: make any history valid for a provider profile, and say what changed.

Repair runs four passes, each fixing one family of rules:

1. **normalize** each message on its own: roles, content shapes, tool-call shapes,
   JSON-object arguments, keys the profile rejects, messages with nothing in them;
2. **pair** every tool result with the call it answers, wherever it sits, and move it
   directly after that call; stub out calls that have no result;
3. **ids**: give every call a unique id the profile accepts, carried to its result;
4. **order**: system prompt first, a user message first, roles alternating.

Contracts: the output always passes ``validate`` for the profile (``repair`` raises
``InvalidOutputError`` rather than return one that does not); the input is never
mutated; messages repair does not touch are returned as the same objects; every drop,
insertion, move, merge and rewrite is listed in ``changes`` with its index and reason,
and a dropped message travels in its change so nothing is lost without a trace; the same
input always gives the same output, and ``repair(repair(x).messages) == repair(x)``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from condense.arguments import normalize_arguments
from condense.exceptions import InputError, InvalidOutputError
from condense.profiles import DEFAULT_PROFILE, FUNCTION_KEYS, Profile, get_profile
from condense.types import RawMessage
from condense.validate import (
    ROLES,
    content_is_well_formed,
    is_empty_content,
    message_violations,
    pairing_violations,
    validate,
)

Action = Literal["drop", "insert", "move", "merge", "rewrite"]

STUB_RESULT = "[condense: no result was recorded for this tool call]"
OPENING_USER = "(continuing an earlier conversation)"

_ROLE_ALIASES = {
    "human": "user",
    "gpt": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "function": "tool",
}


@dataclass(frozen=True, kw_only=True)
class Change:
    """One thing repair did.

    ``index`` is the message's index in the input (``None`` for an inserted message) and
    ``output_index`` its index in the output (``None`` for a dropped one; for a merge,
    the message it was merged into). ``message`` carries a dropped message whole.
    """

    action: Action
    index: int | None
    output_index: int | None
    code: str
    reason: str
    message: Any = None

    def __str__(self) -> str:
        where = f"message {self.index}" if self.index is not None else "new message"
        if self.output_index is not None and self.output_index != self.index:
            where += f" (now {self.output_index})"
        return f"{self.action} {where}: {self.reason} [{self.code}]"


@dataclass(frozen=True, kw_only=True)
class RepairResult:
    """The healed history and every change made to reach it."""

    messages: list[RawMessage]
    changes: tuple[Change, ...]
    provider: str

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def repair(messages: Sequence[Any], provider: str | Profile = DEFAULT_PROFILE) -> RepairResult:
    """Return ``messages`` made valid for ``provider``'s profile, with every change listed."""
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
        raise InputError(
            f"repair expects a list of messages, got {type(messages).__name__}; "
            "use condense.load() to read a file or another wire format"
        )
    profile = get_profile(provider)
    if not validate(messages, profile):  # the common case: nothing to heal
        return RepairResult(messages=list(messages), changes=(), provider=profile.name)
    log = _Log()
    slots = _normalize_all(messages, profile, log)
    all_clean = all(slot.clean for slot in slots) and len(slots) == len(messages)
    if not all_clean or next(pairing_violations(messages, profile), None) is not None:
        slots = _pair_results(slots, profile, log)
    slots = _fix_order(slots, profile, log)
    repaired = [slot.message for slot in slots]
    leftover = validate(repaired, profile)
    if leftover:
        raise InvalidOutputError(profile.name, leftover)
    return RepairResult(messages=repaired, changes=log.changes(slots), provider=profile.name)


# -- bookkeeping -------------------------------------------------------------------------


class _Slot:
    """A message on its way through the passes, remembering where it came from."""

    __slots__ = ("clean", "message", "origin", "owned")

    def __init__(self, message: Any, origin: int | None, *, owned: bool = False) -> None:
        self.message = message
        self.origin = origin
        self.owned = owned  # True once ``message`` is our own copy, safe to edit
        self.clean = False  # True if the message broke no rule on its own

    def edit(self) -> dict[str, Any]:
        """The message as a dict we own (copied from the caller's on first edit)."""
        if not self.owned:
            self.message = dict(self.message)
            self.owned = True
        message: dict[str, Any] = self.message
        return message

    @property
    def role(self) -> str:
        role: str = self.message["role"]
        return role


class _Log:
    def __init__(self) -> None:
        self._entries: list[tuple[Action, _Slot, _Slot | None, str, str, Any]] = []

    def add(
        self,
        action: Action,
        slot: _Slot,
        code: str,
        reason: str,
        *,
        into: _Slot | None = None,
        message: Any = None,
    ) -> None:
        self._entries.append((action, slot, into, code, reason, message))

    def changes(self, final: Sequence[_Slot]) -> tuple[Change, ...]:
        position = {id(slot): i for i, slot in enumerate(final)}
        return tuple(
            Change(
                action=action,
                index=slot.origin,
                output_index=position.get(id(into if into is not None else slot)),
                code=code,
                reason=reason,
                message=message,
            )
            for action, slot, into, code, reason, message in self._entries
        )


# -- pass 1: normalize each message ------------------------------------------------------


def _normalize_all(messages: Sequence[Any], profile: Profile, log: _Log) -> list[_Slot]:
    slots: list[_Slot] = []
    legacy_ids: dict[str, list[str]] = {}  # function name -> ids of legacy calls unanswered
    for index, raw in enumerate(messages):
        slot = _Slot(raw, index)
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


def _normalize_role(slot: _Slot, profile: Profile, log: _Log) -> bool:
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


def _normalize_legacy_function(slot: _Slot, legacy_ids: dict[str, list[str]], log: _Log) -> None:
    """Turn the legacy ``function_call`` / role ``function`` pair into tool calls."""
    message = slot.message
    if slot.role == "assistant" and "function_call" in message:
        call = message["function_call"]
        edited = slot.edit()
        del edited["function_call"]
        if isinstance(call, dict) and not message.get("tool_calls"):
            name = str(call.get("name") or "unknown")
            call_id = "call_" + _digest(f"legacy:{slot.origin}:{name}")
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


def _drop_rejected_keys(slot: _Slot, profile: Profile, log: _Log) -> None:
    allowed = profile.allowed_keys.get(slot.role, frozenset())
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


def _normalize_content(slot: _Slot, log: _Log) -> None:
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


def _normalize_tool_calls(slot: _Slot, profile: Profile, log: _Log) -> None:
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
    function = call.get("function")
    notes: list[str] = []
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
    extra = sorted(str(k) for k in (set(call) - profile.tool_call_keys - {"name", "arguments"}))
    extra += sorted(f"function.{k}" for k in set(function) - FUNCTION_KEYS)
    if extra:
        notes.append(f"removed key(s) {', '.join(extra)}")
    if call.get("type") != "function":
        notes.append(f"type {call.get('type')!r} set to 'function'")
    call_id = call.get("id")
    if not notes and isinstance(call_id, str):
        return call, ""
    fixed: dict[str, Any] = {
        key: value for key, value in call.items() if key in profile.tool_call_keys
    }
    fixed.update(
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    )
    return fixed, "; ".join(notes)


def _normalize_result_id(slot: _Slot, log: _Log) -> None:
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


# -- pass 2: pair every result with its call, then fix ids -------------------------------


def _call_list(slot: _Slot) -> list[dict[str, Any]]:
    if slot.role != "assistant":
        return []
    calls = slot.message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _result_id(slot: _Slot) -> str | None:
    value = slot.message.get("tool_call_id")
    return value if isinstance(value, str) and value else None


def _pair_results(slots: list[_Slot], profile: Profile, log: _Log) -> list[_Slot]:
    """Move each result directly after its call; stub unanswered calls; drop the rest."""
    calls_by_id: dict[str, list[tuple[int, int]]] = {}
    block_owner: list[int | None] = []  # for each slot: the assistant whose tool block holds it
    owner: int | None = None
    for pos, slot in enumerate(slots):
        if slot.role != "tool":
            owner = pos if _call_list(slot) else None
        block_owner.append(owner if slot.role == "tool" else None)
        for c, call in enumerate(_call_list(slot)):
            if isinstance(call.get("id"), str) and call["id"]:
                calls_by_id.setdefault(call["id"], []).append((pos, c))

    answer: dict[tuple[int, int], int] = {}  # (assistant pos, call index) -> result pos
    unmatched: list[int] = []
    for pos, slot in enumerate(slots):
        if slot.role != "tool":
            continue
        result_id = _result_id(slot)
        candidates = calls_by_id.get(result_id, []) if result_id else []
        chosen = _choose_call(candidates, pos, answer)
        if chosen is not None:
            answer[chosen] = pos
        elif candidates:
            log.add(
                "drop",
                slot,
                "duplicate_tool_result",
                f"second result for tool call {result_id!r}; the first one is kept",
                message=slot.message,
            )
        else:
            unmatched.append(pos)

    for pos in unmatched:
        slot = slots[pos]
        home, free = _home_for(slots, pos, block_owner[pos], answer)
        if home is not None:
            answer[(home, free[0])] = pos
            continue
        what = f"tool_call_id {_result_id(slot)!r}" if _result_id(slot) else "no tool_call_id"
        log.add(
            "drop",
            slot,
            "orphan_tool_result" if _result_id(slot) else "missing_tool_call_id",
            f"tool result with {what} answers no tool call in the history",
            message=slot.message,
        )

    _assign_ids(slots, answer, profile, log)
    return _rebuild(slots, answer, block_owner, log)


def _choose_call(
    candidates: list[tuple[int, int]], pos: int, answer: dict[tuple[int, int], int]
) -> tuple[int, int] | None:
    """The call a result at ``pos`` answers: the nearest unanswered call before it with
    its id (first call of that message), else the first unanswered one after it."""
    best: tuple[int, int] | None = None
    for call in candidates:
        if call in answer:
            continue
        if call[0] < pos:
            if best is None or call[0] > best[0]:
                best = call
        elif best is None:
            return call
    return best


def _home_for(
    slots: list[_Slot], pos: int, owner: int | None, answer: dict[tuple[int, int], int]
) -> tuple[int | None, list[int]]:
    """The assistant an unmatched result at ``pos`` most likely answers, and its free calls:
    the one whose tool block holds it, else the nearest earlier one with a free call."""
    result_id = _result_id(slots[pos])
    if owner is not None:
        free = _free_calls(slots[owner], owner, answer, result_id)
        return (owner, free) if free else (None, [])
    for back in range(pos - 1, -1, -1):
        if _call_list(slots[back]):
            free = _free_calls(slots[back], back, answer, result_id)
            if free:
                return back, free
    return None, []


def _free_calls(
    assistant: _Slot, home: int, answer: dict[tuple[int, int], int], result_id: str | None
) -> list[int]:
    """Unanswered calls of ``assistant`` that an id-less or unknown-id result may take.

    A result without an id takes any unanswered call of the assistant right before it;
    a result whose id matches nothing only takes a call that has no id of its own.
    """
    free = []
    for c, call in enumerate(_call_list(assistant)):
        if (home, c) in answer:
            continue
        has_id = isinstance(call.get("id"), str) and bool(call["id"])
        if result_id is None or not has_id:
            free.append(c)
    return free


def _assign_ids(
    slots: list[_Slot], answer: dict[tuple[int, int], int], profile: Profile, log: _Log
) -> None:
    """Give every call a unique id the profile accepts, and its result the same id."""
    used: set[str] = set()
    for pos, slot in enumerate(slots):
        calls = _call_list(slot)
        new_calls: list[dict[str, Any]] | None = None
        notes: list[str] = []
        missing = False
        if calls and not profile.unique_ids:
            used = set()  # ids need only be unique within one message
        for c, call in enumerate(calls):
            result_pos = answer.get((pos, c))
            result_id = _result_id(slots[result_pos]) if result_pos is not None else None
            current = call.get("id") if isinstance(call.get("id"), str) else None
            wanted = current or result_id or ""
            final = _acceptable_id(wanted, profile, used, seed=f"{slot.origin}:{c}")
            used.add(final)
            if final != current:
                missing = missing or current is None
                notes.append(
                    f"tool call {c} id {current!r} → {final!r}"
                    + (" (duplicate id)" if current and _id_ok(current, profile) else "")
                )
                if new_calls is None:
                    new_calls = list(calls)
                new_calls[c] = {**call, "id": final}
            if result_pos is not None and result_id != final:
                result = slots[result_pos]
                result.edit()["tool_call_id"] = final
                log.add(
                    "rewrite",
                    result,
                    "missing_tool_call_id" if result_id is None else "invalid_tool_call_id",
                    f"tool_call_id {result_id!r} → {final!r} to match its call",
                )
        if new_calls is not None:
            slot.edit()["tool_calls"] = new_calls
            code = "tool_call_missing_id" if missing else "invalid_tool_call_id"
            log.add("rewrite", slot, code, "; ".join(notes))


def _id_ok(call_id: str, profile: Profile) -> bool:
    if profile.id_pattern is not None and not profile.id_pattern.match(call_id):
        return False
    return profile.id_max_length is None or len(call_id) <= profile.id_max_length


def _acceptable_id(wanted: str, profile: Profile, used: set[str], *, seed: str) -> str:
    """``wanted`` if the profile accepts it and it is unused, else a deterministic one."""
    if wanted and wanted not in used and _id_ok(wanted, profile):
        return wanted
    if profile.id_exact_length is not None:
        length = profile.id_exact_length
        return _unique(lambda n: _base62(f"{wanted}|{seed}|{n}", length), used)
    cleaned = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "_" for ch in wanted)
    limit = profile.id_max_length or 64
    if cleaned and len(cleaned) <= limit and cleaned not in used and _id_ok(cleaned, profile):
        return cleaned
    stem = (cleaned or "call")[: max(1, limit - 13)]
    return _unique(lambda n: f"{stem}_{_digest(f'{wanted}|{seed}|{n}')[:12]}", used)


def _unique(make: Any, used: set[str]) -> str:
    n = 0
    while (candidate := make(n)) in used:
        n += 1
    result: str = candidate
    return result


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _base62(text: str, length: int) -> str:
    number = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), "big")
    chars = []
    for _ in range(length):
        number, rest = divmod(number, 62)
        chars.append(_ALPHABET[rest])
    return "".join(chars)


def _rebuild(
    slots: list[_Slot],
    answer: dict[tuple[int, int], int],
    block_owner: list[int | None],
    log: _Log,
) -> list[_Slot]:
    out: list[_Slot] = []
    for pos, slot in enumerate(slots):
        if slot.role == "tool":
            continue
        out.append(slot)
        calls = _call_list(slot)
        if not calls:
            continue
        results = [answer[(pos, c)] for c in range(len(calls)) if (pos, c) in answer]
        in_block = sorted(r for r in results if block_owner[r] == pos)
        moved = sorted(r for r in results if block_owner[r] != pos)
        out.extend(slots[r] for r in in_block)
        for r in moved:
            out.append(slots[r])
            log.add(
                "move",
                slots[r],
                "tool_result_misplaced",
                f"result for tool call {_result_id(slots[r])!r} moved directly after its call",
            )
        for c, call in enumerate(calls):
            if (pos, c) not in answer:
                stub = _Slot(
                    {"role": "tool", "tool_call_id": call["id"], "content": STUB_RESULT},
                    None,
                    owned=True,
                )
                out.append(stub)
                log.add(
                    "insert",
                    stub,
                    "unanswered_tool_call",
                    f"stub result for unanswered tool call {call['id']!r} "
                    f"({call['function']['name']}) of message {slot.origin}",
                )
    return out


# -- pass 3: role order ------------------------------------------------------------------


def _fix_order(slots: list[_Slot], profile: Profile, log: _Log) -> list[_Slot]:
    if profile.system_only_at_start:
        slots = _systems_first(slots, log)
    if profile.alternate:
        slots = _merge_same_role(slots, log)
    if profile.first_user:
        slots = _open_with_user(slots, log)
    return slots


def _systems_first(slots: list[_Slot], log: _Log) -> list[_Slot]:
    lead = 0
    while lead < len(slots) and slots[lead].role in ("system", "developer"):
        lead += 1
    late = [s for s in slots[lead:] if s.role in ("system", "developer")]
    for slot in late:
        log.add("move", slot, "system_not_at_start", "system message moved to the system prompt")
    rest = [s for s in slots[lead:] if s.role not in ("system", "developer")]
    return [*slots[:lead], *late, *rest]


def _merge_same_role(slots: list[_Slot], log: _Log) -> list[_Slot]:
    out: list[_Slot] = []
    for slot in slots:
        previous = out[-1] if out else None
        if previous is None or previous.role != slot.role or slot.role not in ("user", "assistant"):
            out.append(slot)
            continue
        merged = previous.edit()
        merged["content"] = _join_content(
            previous.message.get("content"), slot.message.get("content")
        )
        if slot.message.get("tool_calls"):
            merged["tool_calls"] = slot.message["tool_calls"]
        for key, value in slot.message.items():
            merged.setdefault(key, value)
        log.add(
            "merge",
            slot,
            "consecutive_same_role",
            f"second of two {slot.role} messages in a row merged into the first",
            into=previous,
            message=slot.message,
        )
    return out


def _join_content(first: Any, second: Any) -> Any:
    if first is None or first == "" or first == []:
        return second
    if second is None or second == "" or second == []:
        return first
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _as_parts(first) + _as_parts(second)


def _as_parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}]


def _open_with_user(slots: list[_Slot], log: _Log) -> list[_Slot]:
    lead = 0
    while lead < len(slots) and slots[lead].role in ("system", "developer"):
        lead += 1
    if lead == len(slots) or slots[lead].role == "user":
        return slots
    opener = _Slot({"role": "user", "content": OPENING_USER}, None, owned=True)
    log.add(
        "insert",
        opener,
        "first_not_user",
        f"the history opened with a message from {slots[lead].role!r}; "
        "the profile requires a user message first",
    )
    return [*slots[:lead], opener, *slots[lead:]]
