"""Repair pass 2: every tool result directly after the call it answers.

A result is matched to its call wherever it sits (the nearest earlier unanswered call
with its id, else a later one); a result without a usable id takes a free call of the
assistant whose tool block holds it, or of the nearest earlier one. Then every call gets
a unique id the profile accepts, shared with its result; calls left unanswered get a
stub result; results that answer nothing are dropped, each with its reason. A call
carrying two ids (``id`` and the ``call_id`` alias that Responses-bridging SDKs write)
is matched by either and ends with one: the id its result names, else the ``call_id``;
the other id travels in the change record. A call
with two results keeps the one worth more (``worth``: a real output beats an error, an
interruption notice or an empty message), the later one between equals; the other one
is dropped with its text in the change record.

Where the profile pairs by id (``results_anywhere_after``: the Responses API), a result
already somewhere after its call stays where it is, with whatever sits between them (the
``developer`` messages Codex puts there); only a result before its call moves, to
directly after the call's own results, and stubs go there too. A result answering a
Responses call item (``local_shell_call`` …, carried in ``responses_items``) is left
where it is under such a profile.
"""

from __future__ import annotations

import hashlib
from typing import Any

from condense.arguments.calls import call_name
from condense.message import CALL_ID_ALIAS, call_ids, calls_made, result_id
from condense.providers import Profile
from condense.repair.ledger import Log, Slot
from condense.repair.worth import result_worth

STUB_RESULT = "[condense: no result was recorded for this tool call]"


def _call_list(slot: Slot) -> list[dict[str, Any]]:
    if slot.role != "assistant":
        return []
    calls = slot.message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _result_id(slot: Slot) -> str | None:
    return result_id(slot.message)


def pair_results(slots: list[Slot], profile: Profile, log: Log) -> list[Slot]:
    """Move each result directly after its call; stub unanswered calls; drop the rest."""
    calls_by_id: dict[str, list[tuple[int, int]]] = {}
    block_owner: list[int | None] = []  # for each slot: the assistant whose tool block holds it
    owner: int | None = None
    for pos, slot in enumerate(slots):
        if slot.role != "tool":
            owner = pos if _call_list(slot) else None
        block_owner.append(owner if slot.role == "tool" else None)
        for c, call in enumerate(_call_list(slot)):
            for call_id in call_ids(call):  # its id, and a call_id alias if it has one
                calls_by_id.setdefault(call_id, []).append((pos, c))

    item_calls = _item_calls(slots) if profile.results_anywhere_after else {}
    answer: dict[tuple[int, int], int] = {}  # (assistant pos, call index) -> result pos
    unmatched: list[int] = []
    for pos, slot in enumerate(slots):
        if slot.role != "tool":
            continue
        result_id = _result_id(slot)
        if result_id in item_calls and item_calls[result_id] < pos:
            continue  # answers a Responses call item: stays where it is
        candidates = calls_by_id.get(result_id, []) if result_id else []
        chosen = _choose_call(candidates, pos, answer)
        if chosen is not None:
            answer[chosen] = pos
        elif candidates:
            _keep_the_better(slots, pos, _held_call(candidates, pos), answer, log)
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
    stay = {
        pos
        for pos, slot in enumerate(slots)
        if slot.role == "tool" and _result_id(slot) in item_calls
    }
    if profile.results_anywhere_after:  # a result after its call stays where it is
        stay.update(result for (call, _), result in answer.items() if result > call)
    return _rebuild(
        slots, answer, block_owner, log, in_call_order=profile.results_in_call_order, stay=stay
    )


def _item_calls(slots: list[Slot]) -> dict[str, int]:
    """The Responses call items the slots carry (``local_shell_call`` …: calls chat has
    no form for) by id, with the position of the message carrying each."""
    found: dict[str, int] = {}
    for pos, slot in enumerate(slots):
        canonical = {i for call in _call_list(slot) for i in call_ids(call)}
        for ident in calls_made(slot.message):
            if ident not in canonical:
                found.setdefault(ident, pos)
    return found


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


def _held_call(candidates: list[tuple[int, int]], pos: int) -> tuple[int, int]:
    """The answered call a second result at ``pos`` competes for: the nearest one before
    it with its id, else the first one."""
    before = [call for call in candidates if call[0] < pos]
    return max(before) if before else candidates[0]


def _keep_the_better(
    slots: list[Slot], pos: int, call: tuple[int, int], answer: dict[tuple[int, int], int], log: Log
) -> None:
    """Two results for one call: keep the one worth more, the later one between equals
    (a real output beats an interruption notice, an error or an empty message); drop the
    other with its text in the change record."""
    held = answer[call]
    earlier, later = slots[held], slots[pos]
    earlier_worth, later_worth = result_worth(earlier.message), result_worth(later.message)
    keep_later = later_worth >= earlier_worth
    dropped = earlier if keep_later else later
    kept_worth, dropped_worth = sorted((earlier_worth, later_worth), reverse=True)
    if keep_later:
        answer[call] = pos
    log.add(
        "drop",
        dropped,
        "duplicate_tool_result",
        f"tool call {_result_id(later)!r} has two results: kept the "
        f"{'later' if keep_later else 'earlier'} one ({kept_worth.describe()}); "
        f"this one was {dropped_worth.describe()}",
        message=dropped.message,
    )


def _home_for(
    slots: list[Slot], pos: int, owner: int | None, answer: dict[tuple[int, int], int]
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
    assistant: Slot, home: int, answer: dict[tuple[int, int], int], result_id: str | None
) -> list[int]:
    """Unanswered calls of ``assistant`` that an id-less or unknown-id result may take.

    A result without an id takes any unanswered call of the assistant right before it;
    a result whose id matches nothing only takes a call that has no id of its own.
    """
    free = []
    for c, call in enumerate(_call_list(assistant)):
        if (home, c) in answer:
            continue
        if result_id is None or not call_ids(call):
            free.append(c)
    return free


def _assign_ids(
    slots: list[Slot], answer: dict[tuple[int, int], int], profile: Profile, log: Log
) -> None:
    """Give every call a unique id the profile accepts, and its result the same id."""
    used: set[str] = set()
    for pos, slot in enumerate(slots):
        calls = _call_list(slot)
        new_calls: list[dict[str, Any]] | None = None
        notes: list[str] = []
        dropped_ids: list[dict[str, str | None]] = []
        missing = aliased = False
        if calls and not profile.unique_ids:
            used = set()  # ids need only be unique within one message
        for c, call in enumerate(calls):
            result_pos = answer.get((pos, c))
            result_id = _result_id(slots[result_pos]) if result_pos is not None else None
            current = call.get("id") if isinstance(call.get("id"), str) else None
            alias = _alias(call, profile)
            final = _acceptable_id(
                _wanted_id(call, current, alias, result_id),
                profile,
                used,
                seed=f"{slot.origin}:{c}",
            )
            used.add(final)
            if final != current or alias is not None:
                missing = missing or current is None
                if alias is not None:
                    aliased = True
                    notes.append(
                        f"tool call {c} id {current!r} and call_id {alias!r} → one id {final!r}"
                    )
                    dropped_ids.append({"id": current, CALL_ID_ALIAS: alias})
                else:
                    notes.append(
                        f"tool call {c} id {current!r} → {final!r}"
                        + (" (duplicate id)" if current and _id_ok(current, profile) else "")
                    )
                if new_calls is None:
                    new_calls = list(calls)
                new_calls[c] = _with_id(call, final, drop_alias=alias is not None)
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
            if aliased:
                code = "tool_call_id_alias"
            log.add("rewrite", slot, code, "; ".join(notes), message=dropped_ids or None)


def _alias(call: dict[str, Any], profile: Profile) -> str | None:
    """The call's ``call_id`` alias, when the profile does not take that key."""
    alias = call.get(CALL_ID_ALIAS)
    if CALL_ID_ALIAS in profile.tool_call_keys or not isinstance(alias, str) or not alias:
        return None
    return alias


def _wanted_id(
    call: dict[str, Any], current: str | None, alias: str | None, result_id: str | None
) -> str:
    """The one id a call should end with: the one its result names, else the ``call_id``
    alias (the id Responses pairs outputs on), else its own ``id``."""
    if result_id is not None and result_id in call_ids(call):
        return result_id
    return alias or current or result_id or ""


def _with_id(call: dict[str, Any], final: str, *, drop_alias: bool) -> dict[str, Any]:
    fixed = {key: value for key, value in call.items() if not (drop_alias and key == CALL_ID_ALIAS)}
    fixed["id"] = final
    return fixed


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
    return _unique(lambda n: f"{stem}_{digest(f'{wanted}|{seed}|{n}')[:12]}", used)


def _unique(make: Any, used: set[str]) -> str:
    n = 0
    while (candidate := make(n)) in used:
        n += 1
    result: str = candidate
    return result


def digest(text: str) -> str:
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
    slots: list[Slot],
    answer: dict[tuple[int, int], int],
    block_owner: list[int | None],
    log: Log,
    *,
    in_call_order: bool,
    stay: set[int],
) -> list[Slot]:
    """Each assistant followed by its results: those already in its block first (in
    their order, or in call order when ``in_call_order``), then moved ones, then stubs.
    The results at ``stay`` are left where they are."""
    out: list[Slot] = []
    for pos, slot in enumerate(slots):
        if slot.role == "tool":
            if pos in stay:
                out.append(slot)
            continue
        out.append(slot)
        calls = _call_list(slot)
        if not calls:
            continue
        results = [
            answer[(pos, c)]
            for c in range(len(calls))
            if (pos, c) in answer and answer[(pos, c)] not in stay
        ]
        in_block = sorted(r for r in results if block_owner[r] == pos)
        block: list[Slot] = []
        block.extend(slots[r] for r in in_block)
        for r in results:
            if block_owner[r] == pos:
                continue
            block.append(slots[r])
            log.add(
                "move",
                slots[r],
                "tool_result_misplaced",
                f"result for tool call {_result_id(slots[r])!r} moved directly after its call",
            )
        for c, call in enumerate(calls):
            if (pos, c) not in answer:
                stub = Slot(
                    {"role": "tool", "tool_call_id": call["id"], "content": STUB_RESULT},
                    None,
                    owned=True,
                )
                block.append(stub)
                log.add(
                    "insert",
                    stub,
                    "unanswered_tool_call",
                    f"stub result for unanswered tool call {call['id']!r} "
                    f"({call_name(call)}) of message {slot.origin}",
                )
        if in_call_order:
            block = _in_call_order(block, calls, log)
        out.extend(block)
    return out


def _in_call_order(block: list[Slot], calls: list[dict[str, Any]], log: Log) -> list[Slot]:
    """``block`` (the results of ``calls``) sorted into the order the calls were made."""
    rank = {call["id"]: c for c, call in enumerate(calls)}
    ordered = sorted(block, key=lambda result: rank.get(_result_id(result), len(calls)))
    for before, after in zip(block, ordered, strict=True):
        if before is not after and after.origin is not None:
            log.add(
                "move",
                after,
                "results_out_of_order",
                f"result for tool call {_result_id(after)!r} moved into call order",
            )
    return ordered
