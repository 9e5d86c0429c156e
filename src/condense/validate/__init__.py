"""``validate``: list every way a history breaks a provider's rules.

The validator never raises on odd input: a message that is not even a dict is itself a
violation. Each violation names the message index, a stable code, a human sentence and,
where a provider's real error text is known, the error it would return. The rules live
in one module per family: ``messages`` (each message on its own), ``pairing``, ``order``,
``replay`` (reasoning state), ``blocks`` (typed content blocks), ``chains`` (Responses
reasoning from a replaced continuation chain); ``fast`` proves the common case valid in
one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense._input import check_history
from condense.formats import Conversation
from condense.formats.native import read_native
from condense.message import is_empty_content
from condense.providers import DEFAULT_PROVIDER, Profile, ProviderChoice, choose_provider
from condense.providers.anthropic import request_thinking
from condense.validate.blocks import block_violations
from condense.validate.chains import chain_violations
from condense.validate.fast import plainly_valid
from condense.validate.messages import (
    ROLES,
    argument_problem,
    content_is_well_formed,
    message_violations,
)
from condense.validate.order import order_violations
from condense.validate.pairing import pairing_violations
from condense.validate.replay import replay_violations
from condense.validate.report import Violation, localize

__all__ = [
    "ROLES",
    "Violation",
    "all_violations",
    "argument_problem",
    "check",
    "content_is_well_formed",
    "is_empty_content",
    "message_violations",
    "pairing_violations",
    "validate",
]


def validate(
    messages: Sequence[Any] | Conversation,
    *,
    provider: str | Profile | ProviderChoice = DEFAULT_PROVIDER,
    model: str | None = None,
    thinking: object = None,
) -> list[Violation]:
    """Return every rule of ``provider``'s profile that ``messages`` breaks, in order.

    ``provider="auto"`` (the default) lets the history and ``model`` choose the profile
    (see :func:`condense.providers.choose_provider`). An empty list means the provider
    will accept the history's structure. The input is only read. Each violation's
    ``provider_error`` uses the paths of the request that provider receives (for
    Anthropic, the turns and blocks condense would write; see :mod:`.report`).

    ``thinking`` is the request's thinking setting (its ``thinking`` object, or
    ``"enabled"``, ``"adaptive"``, ``"disabled"``). Under budgeted thinking (``enabled``)
    the first assistant message of the current turn must start with thinking; a history
    whose mode is unknown is never reported for what one of the modes accepts.

    ``messages`` may be a loaded :class:`~condense.formats.Conversation`: then its format
    also chooses the profile (an Anthropic file gets Anthropic's rules), its body's
    ``thinking`` object is the thinking setting unless ``thinking`` says otherwise, and each
    violation's ``location`` names the place in the user's file (``messages[3].content[1]``,
    ``input[7]``), its ``provider_error`` uses that file's paths when the file is in the
    provider's own format, and no text names condense's internal keys. A native list
    or request body (Anthropic, Responses, Gemini, Bedrock …) is read the same way
    (:mod:`condense.formats.native`).
    """
    messages = read_native(messages) or messages
    check_history(
        messages.messages if isinstance(messages, Conversation) else messages, need_message=False
    )
    if isinstance(messages, Conversation):
        if thinking is None:
            thinking = request_thinking(messages.record, format=messages.format)
        choice = choose_provider(
            provider,
            messages=messages.messages,
            format=messages.format,
            model=model,
            thinking=thinking,
        )
        found = check(messages.messages, choice.profile)
        return localize(found, choice.profile, messages.messages, conversation=messages)
    choice = choose_provider(provider, messages=messages, model=model, thinking=thinking)
    return localize(check(messages, choice.profile), choice.profile, messages)


def check(messages: Sequence[Any], profile: Profile) -> list[Violation]:
    """Every violation of ``profile`` in ``messages`` (the profile already chosen)."""
    if plainly_valid(messages, profile):
        return []
    return all_violations(messages, profile)


def all_violations(messages: Sequence[Any], profile: Profile) -> list[Violation]:
    """Every violation of ``profile``, found rule by rule (no fast path)."""
    found = [
        *(v for i, m in enumerate(messages) for v in message_violations(i, m, profile)),
        *pairing_violations(messages, profile),
        *order_violations(messages, profile),
        *replay_violations(messages, profile),
        *block_violations(messages, profile),
        *chain_violations(messages, profile),
    ]
    found.sort(key=lambda v: v.index)
    return _one_finding_per_defect(found, messages)


_EXPLAINED = frozenset({"unanswered_tool_call", "tool_result_misplaced", "orphan_tool_result"})


def _one_finding_per_defect(found: list[Violation], messages: Sequence[Any]) -> list[Violation]:
    """A user turn with text before its results is one defect: the pairing findings it
    explains (the call "unanswered", its results "misplaced") are left out, so the report
    quotes the provider's own words for it once."""
    turns = [v.index for v in found if v.code == "text_before_tool_result"]
    if not turns:
        return found
    explained: set[int] = set()
    for start in turns:
        explained.add(start - 1)  # the assistant message whose calls the turn answers
        after = start
        while after < len(messages) and isinstance(messages[after], dict):
            role = messages[after].get("role")
            if role not in ("user", "tool"):
                break
            explained.add(after)
            after += 1
    return [v for v in found if not (v.code in _EXPLAINED and v.index in explained)]
