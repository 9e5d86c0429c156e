"""``repair``: make any history valid for a provider profile, and say what changed.

Repair runs four passes, one module each, each fixing one family of rules:

1. ``normalize``: each message on its own — roles, content shapes, tool-call shapes,
   JSON-object arguments, keys the profile rejects, messages with nothing in them;
2. ``pairing``: every tool result moved directly after the call it answers, wherever it
   sits; unique ids the profile accepts, carried to the results; stubs for calls that
   have no result;
3. ``order``: system prompt first, a user message first, roles alternating, no user
   message right after a tool result where the provider refuses that;
4. ``replay``: what reasoning models' providers need replayed, and typed-block rules;
   before the pairing pass, ``chains`` leaves out Responses reasoning minted in a
   continuation chain a compaction item replaced.

``ledger`` keeps track of where each message came from and of every change.

Contracts: the output always passes ``validate`` for the profile (``repair`` raises
``InvalidOutputError`` rather than return one that does not); the input is never
mutated; messages repair does not touch are returned as the same objects; every drop,
insertion, move, merge and rewrite is listed in ``changes`` with its index and reason,
and a dropped message travels in its change so nothing is lost without a trace; the same
input always gives the same output, and ``repair(repair(x).messages) == repair(x)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from condense._input import check_history
from condense.exceptions import InvalidOutputError
from condense.formats import Conversation
from condense.formats.locate import human, native_words
from condense.formats.native import answer, read_native
from condense.providers import DEFAULT_PROVIDER, Profile, ProviderChoice, choose_provider
from condense.providers.anthropic import request_thinking
from condense.repair.chains import drop_foreign_reasoning
from condense.repair.ledger import Action, Change, Locate, Log, RepairResult, Side
from condense.repair.normalize import normalize_all
from condense.repair.order import OPENING_USER, fix_order
from condense.repair.pairing import STUB_RESULT, pair_results
from condense.repair.replay import fix_replay
from condense.validate import check, pairing_violations

__all__ = ["OPENING_USER", "STUB_RESULT", "Action", "Change", "RepairResult", "repair"]


def repair(
    messages: Sequence[Any] | Conversation,
    *,
    provider: str | Profile | ProviderChoice = DEFAULT_PROVIDER,
    model: str | None = None,
    thinking: object = None,
) -> RepairResult:
    """Return ``messages`` made valid for ``provider``'s profile, with every change listed.

    ``provider="auto"`` (the default) lets the history and ``model`` choose the profile;
    ``RepairResult.provider`` and ``provider_reason`` say which and why. ``thinking`` is
    the request's thinking setting (see :func:`condense.validate`): only a history that is
    broken under a known mode is healed; a tool loop the provider accepts is never
    rewritten.

    ``messages`` may be a loaded :class:`~condense.formats.Conversation`: its format then
    also chooses the profile, each change's ``location`` names the place in the user's
    file (``messages[3].content[1]``, ``input[7]``, ``before messages[4]``), its body's
    ``thinking`` object is the thinking setting unless ``thinking`` says otherwise, and no
    reason names condense's internal keys. Write the result back with
    ``conversation.dump(result.messages)``. A native list or request body (Anthropic,
    Responses, Gemini, Bedrock …) is read the same way, and the result answers in its
    shape (``result.messages`` native, ``result.native`` the whole request; see
    :mod:`condense.formats.native`).
    """
    native = read_native(messages)
    if native is not None:
        healed = repair(native, provider=provider, model=model, thinking=thinking)
        listed, whole = answer(native, healed.messages)
        return replace(healed, messages=listed, native=whole)
    if isinstance(messages, Conversation):
        conversation = messages
        check_history(conversation.messages)
        if thinking is None:
            thinking = request_thinking(conversation.record, format=conversation.format)
        choice = choose_provider(
            provider,
            messages=messages.messages,
            format=messages.format,
            model=model,
            thinking=thinking,
        )
        return _repair(conversation.messages, choice, conversation)
    check_history(messages)
    choice = choose_provider(provider, messages=messages, model=model, thinking=thinking)
    return _repair(messages, choice, None)


def _repair(
    messages: Sequence[Any], choice: ProviderChoice, conversation: Conversation | None
) -> RepairResult:
    profile = choice.profile
    if not check(messages, profile):  # the common case: nothing to heal
        return RepairResult(
            messages=list(messages),
            changes=(),
            provider=profile.name,
            provider_reason=choice.reason,
        )
    log = Log()
    slots = drop_foreign_reasoning(normalize_all(messages, profile, log), log)
    all_clean = all(slot.clean for slot in slots) and len(slots) == len(messages)
    if not all_clean or next(pairing_violations(messages, profile), None) is not None:
        slots = pair_results(slots, profile, log)
    slots = fix_order(slots, profile, log)
    slots = fix_replay(slots, profile, log)
    repaired = [slot.message for slot in slots]
    leftover = check(repaired, profile)
    if leftover:
        raise InvalidOutputError(profile.name, leftover, messages=repaired)
    if conversation is None:
        changes = log.changes(slots)
    else:
        locate = _locator(conversation)
        changes = tuple(
            replace(c, reason=_in_file_terms(c.reason, locate, conversation.format))
            for c in log.changes(slots, locate=locate)
        )
    return RepairResult(
        messages=repaired,
        changes=changes,
        provider=profile.name,
        provider_reason=choice.reason,
    )


def _locator(conversation: Conversation) -> Locate:
    """Input message index → its place in the conversation's file."""
    locator = conversation.locator

    def locate(index: int, side: Side) -> str | None:
        ends = locator.ends(index)
        spot = locator.spot(index) if side == "at" else ends and ends[side == "last"]
        return None if spot is None else human(spot)

    return locate


_MESSAGE_INDEX = re.compile(r"\bmessage (\d+)\b")


def _in_file_terms(reason: str, locate: Locate, format: str) -> str:
    """A change's reason naming the file's places (reasons name input messages as
    ``message N``) and no internal key."""
    reason = _MESSAGE_INDEX.sub(lambda m: locate(int(m[1]), "at") or m[0], reason)
    return reason if format == "openai" else native_words(reason)
