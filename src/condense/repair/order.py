"""Repair pass 3: role order — the system prompt first, a user message first (and at all),
no two user or two assistant messages in a row where the profile forbids them, and no
user message right after a tool result where the profile refuses that (Mistral).

Two messages of the same role are merged, except when one carries replay state
(thinking, reasoning): that state must not move or mix, so a one-line message of the other
role is put between them instead. Under a profile that accepts same-role runs (OpenAI),
the runs the caller sent stay, but none that repair itself made (by dropping or moving a
message from between two of one role): many OpenAI-compatible servers' chat templates
refuse them."""

from __future__ import annotations

from condense.message import carries_replay, join_content
from condense.providers import Profile
from condense.repair.ledger import Log, Slot

OPENING_USER = "(continuing an earlier conversation)"
BRIDGE_TEXT = {
    "user": "(continue)",
    "assistant": "(tool results received)",
}
"""The text of a message put between two that may not stand next to each other."""


def fix_order(slots: list[Slot], profile: Profile, log: Log) -> list[Slot]:
    if profile.system_only_at_start:
        slots = _systems_first(slots, log)
    slots = _merge_same_role(slots, log, made_only=not profile.alternate)
    if not profile.user_after_tool:
        slots = _bridge_user_after_tool(slots, log)
    if profile.first_user or not slots:
        slots = _open_with_user(slots, log)
    if not profile.ends_with_assistant and slots and slots[-1].role == "assistant":
        reason = "user message appended: the provider wants the last message from the user"
        slots = [*slots, bridge("user", "ends_with_assistant", reason, log)]
    return slots


def bridge(role: str, code: str, reason: str, log: Log) -> Slot:
    """A one-line message of ``role`` put in by repair, logged as an insertion."""
    bridge = Slot({"role": role, "content": BRIDGE_TEXT[role]}, None, owned=True)
    log.add("insert", bridge, code, reason)
    return bridge


def _bridge_user_after_tool(slots: list[Slot], log: Log) -> list[Slot]:
    out: list[Slot] = []
    for slot in slots:
        if out and out[-1].role == "tool" and slot.role == "user":
            out.append(
                bridge(
                    "assistant",
                    "user_after_tool",
                    "assistant message put between a tool result and the user message after "
                    "it (the provider refuses a user message right after a tool result)",
                    log,
                )
            )
        out.append(slot)
    return out


def _carries_replay(slot: Slot) -> bool:
    return carries_replay(slot.message)


def _systems_first(slots: list[Slot], log: Log) -> list[Slot]:
    lead = 0
    while lead < len(slots) and slots[lead].role in ("system", "developer"):
        lead += 1
    late = [s for s in slots[lead:] if s.role in ("system", "developer")]
    for slot in late:
        log.add("move", slot, "system_not_at_start", "system message moved to the system prompt")
    rest = [s for s in slots[lead:] if s.role not in ("system", "developer")]
    return [*slots[:lead], *late, *rest]


def _adjacent_in_input(first: Slot, second: Slot) -> bool:
    return (
        first.origin is not None and second.origin is not None and second.origin == first.origin + 1
    )


def _merge_same_role(slots: list[Slot], log: Log, *, made_only: bool) -> list[Slot]:
    """Merge (or bridge) two messages of one role in a row; with ``made_only``, only a pair
    that was not side by side in the input."""
    out: list[Slot] = []
    for slot in slots:
        previous = out[-1] if out else None
        if previous is None or previous.role != slot.role or slot.role not in ("user", "assistant"):
            out.append(slot)
            continue
        if made_only and _adjacent_in_input(previous, slot):
            out.append(slot)
            continue
        if _carries_replay(previous) or _carries_replay(slot):
            other = "user" if slot.role == "assistant" else "assistant"
            reason = (
                f"{other} message put between two {slot.role} messages in a row (one carries "
                "replay state, which must not be merged)"
            )
            out.extend((bridge(other, "consecutive_same_role", reason, log), slot))
            continue
        merged = previous.edit()
        merged["content"] = join_content(
            previous.message.get("content"), slot.message.get("content")
        )
        calls = slot.message.get("tool_calls")
        if calls:  # both messages' calls, in order: a merge never loses a call
            earlier = previous.message.get("tool_calls")
            merged["tool_calls"] = [*earlier, *calls] if isinstance(earlier, list) else calls
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


def _open_with_user(slots: list[Slot], log: Log) -> list[Slot]:
    lead = 0
    while lead < len(slots) and slots[lead].role in ("system", "developer"):
        lead += 1
    if lead < len(slots) and slots[lead].role == "user":
        return slots
    opener = Slot({"role": "user", "content": OPENING_USER}, None, owned=True)
    if lead == len(slots):
        log.add("insert", opener, "no_user_message", "the history had no user message")
    else:
        log.add(
            "insert",
            opener,
            "first_not_user",
            f"the history opened with a message from {slots[lead].role!r}; "
            "the profile requires a user message first",
        )
    return [*slots[:lead], opener, *slots[lead:]]
