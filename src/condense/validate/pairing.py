"""Pairing: every result directly after its call, one result per call, in call order
where the profile wants it; call ids unique.

Where the profile pairs by id (``results_anywhere_after``: the Responses API), a result
may come anywhere after its call, with other messages between them: every call needs a
result somewhere after it, and every result a call somewhere before it. Responses call
items that ride in ``responses_items`` (``local_shell_call`` …) may be answered by a tool
message too (Codex answers ``local_shell_call`` with a ``function_call_output``); such
items are only kept with their answers (``condense.units``), not checked: chat has no
form for them, so nothing could be stubbed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense.message import answers, calls_made, result_id
from condense.message import call_ids as ids_of_call
from condense.providers import Profile
from condense.validate.report import Violation, violation


def call_ids(message: object) -> list[str | None]:
    """The ids of an assistant message's tool calls (``None`` for a missing id)."""
    return [ids[0] if ids else None for ids in _call_id_sets(message)]


def _call_aliases(message: object) -> dict[str, str]:
    """The second id of each call that has two (``call_id``), mapped to its first."""
    return {ids[1]: ids[0] for ids in _call_id_sets(message) if len(ids) > 1}


def _call_id_sets(message: object) -> list[tuple[str, ...]]:
    """Every id of each tool call of an assistant message (see ``units.call_ids``)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls")
    return [ids_of_call(call) for call in calls] if isinstance(calls, list) else []


def pairing_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Results directly after their call (anywhere after it, where the profile pairs by
    id), one per call (in call order where the profile wants it); call ids unique."""
    if profile.results_anywhere_after:
        yield from _pairing_by_id(messages, profile)
        return
    all_call_ids: set[str] = set()
    for message in messages:
        all_call_ids.update(i for ids in _call_id_sets(message) for i in ids)
    seen_ids: set[str] = set()
    open_calls: dict[str, bool] = {}  # id -> answered, for the current tool block
    order: list[str] = []  # the calls of the current block, in call order
    aliases: dict[str, str] = {}  # a call's call_id -> its id, for the current tool block
    block_owner: int | None = None
    for index, message in enumerate(messages):
        is_tool = isinstance(message, dict) and message.get("role") == "tool"
        if not is_tool and block_owner is not None:
            yield from _unanswered(block_owner, open_calls, profile)
            block_owner, open_calls, aliases = None, {}, {}
        ids = call_ids(message)
        if ids:
            if not profile.unique_ids:
                seen_ids = set()  # ids need only be unique within one message
            for call_id in ids:
                if call_id is None:
                    continue
                if call_id in seen_ids:
                    yield violation(
                        profile,
                        index,
                        "duplicate_tool_call_id",
                        f"tool call id {call_id!r} is used more than once",
                        id=call_id,
                    )
                seen_ids.add(call_id)
            block_owner = index
            open_calls = {i: False for i in ids if i is not None}
            order = [i for i in ids if i is not None]
            aliases = _call_aliases(message)
            continue
        if not is_tool:
            continue
        answered = result_id(message)
        if answered not in open_calls and answered in aliases:
            answered = aliases[answered]  # the result names its call by the call_id alias
        if answered is None:
            yield violation(
                profile, index, "missing_tool_call_id", "tool message has no tool_call_id"
            )
        elif answered in open_calls and not open_calls[answered]:
            open_calls[answered] = True
            if profile.results_in_call_order and order and order[0] != answered:
                yield violation(
                    profile,
                    index,
                    "results_out_of_order",
                    f"result for tool call {answered!r} comes before the results of calls "
                    "made before it",
                    id=answered,
                )
            if answered in order:
                order.remove(answered)
        elif answered in open_calls:
            yield violation(
                profile,
                index,
                "duplicate_tool_result",
                f"second result for tool call {answered!r}",
                id=answered,
            )
        elif answered in all_call_ids:
            yield violation(
                profile,
                index,
                "tool_result_misplaced",
                f"result for tool call {answered!r} is not directly after its call",
                id=answered,
            )
        else:
            yield violation(
                profile,
                index,
                "orphan_tool_result",
                f"result for tool call {answered!r}, which no assistant message made",
                id=answered,
            )
    if block_owner is not None:
        yield from _unanswered(block_owner, open_calls, profile)


def _unanswered(owner: int, open_calls: dict[str, bool], profile: Profile) -> Iterator[Violation]:
    for call_id, answered in open_calls.items():
        if not answered:
            yield violation(
                profile,
                owner,
                "unanswered_tool_call",
                f"tool call {call_id!r} has no result directly after it",
                id=call_id,
            )


def _pairing_by_id(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Every call answered once, somewhere after it; every result answering a call made
    before it; call ids unique where the profile wants it."""
    first_call: dict[str, int] = {}  # every id a call may be named by -> its first message
    for index, message in enumerate(messages):
        for ident in calls_made(message):
            first_call.setdefault(ident, index)
    open_calls: dict[str, int] = {}  # unanswered call (its first id) -> its message
    unchecked: set[str] = set()  # unanswered Responses call items (see module docstring)
    answered: set[str] = set()
    aliases: dict[str, str] = {}  # a call's call_id -> its id
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        id_sets = _call_id_sets(message)
        if id_sets and not profile.unique_ids:
            seen_ids = set()  # ids need only be unique within one message
        for ids in id_sets:
            if not ids:
                continue
            if ids[0] in seen_ids:
                yield violation(
                    profile,
                    index,
                    "duplicate_tool_call_id",
                    f"tool call id {ids[0]!r} is used more than once",
                    id=ids[0],
                )
            seen_ids.add(ids[0])
            open_calls[ids[0]] = index
            answered.discard(ids[0])
            aliases.update((alias, ids[0]) for alias in ids[1:])
        is_tool = isinstance(message, dict) and message.get("role") == "tool"
        if not is_tool:  # Responses call and output items this message carries
            canonical = {ident for ids in id_sets for ident in ids}
            unchecked.update(i for i in calls_made(message) if i not in canonical)
            for ident in answers(message):
                open_calls.pop(aliases.get(ident, ident), None)
                unchecked.discard(ident)
            continue
        result = result_id(message)
        answering = aliases.get(result, result) if result is not None else None
        if answering is None:
            yield violation(
                profile, index, "missing_tool_call_id", "tool message has no tool_call_id"
            )
        elif answering in open_calls:
            del open_calls[answering]
            answered.add(answering)
        elif answering in unchecked:
            unchecked.discard(answering)
        elif answering in answered:
            yield violation(
                profile,
                index,
                "duplicate_tool_result",
                f"second result for tool call {answering!r}",
                id=answering,
            )
        elif answering in first_call:
            yield violation(
                profile,
                index,
                "tool_result_misplaced",
                f"result for tool call {answering!r} comes before its call",
                id=answering,
            )
        else:
            yield violation(
                profile,
                index,
                "orphan_tool_result",
                f"result for tool call {answering!r}, which no assistant message made",
                id=answering,
            )
    for call_id, owner in open_calls.items():
        yield violation(
            profile,
            owner,
            "unanswered_tool_call",
            f"tool call {call_id!r} has no result after it",
            id=call_id,
        )
