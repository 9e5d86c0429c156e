"""Replay-identity refusals: reasoning state the provider says belongs to another
conversation, and the changes that heal each in one retry.

Two 2026 refusals users call "permanently dead", because re-sending the history can
never pass (``classify`` names them ``Category.REPLAY_IDENTITY``):

- **Anthropic, preserved thinking.** A thinking block is bound to everything before it
  (system, tools, earlier messages). Once that prefix changes, the block and every later
  thinking block are invalid: ``messages.1.content.0: Invalid `signature` in `thinking`
  block. The block is bound to a different conversation. Remove the block, or set
  `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".`` Thinking may be
  left out only as a suffix (a block left out between kept ones fails the check too), so
  the heal removes the thinking of the named turn and of every later turn — all thinking
  when the error names no turn. The running turn must still open with its thinking under
  budgeted thinking (``thinking.type == "enabled"``); where that turn's thinking is bound,
  the heal is instead the provider's own mechanism: the same history, sent with
  ``thinking.block_binding.prefix_mismatch_behavior: "drop_block"`` and the beta header
  :data:`BINDING_BETA`, when the caller can send request settings (Anthropic docs, "Fix a
  thinking block bound to a different conversation"; "Prefix checks on thinking blocks").
- **OpenAI Responses and Azure Foundry.** Reasoning items minted in another chain (a
  compaction's or a sub-agent's ``encrypted_content``) replayed into this one:
  ``Conflicting authenticated continuation identities`` (anomalyco/opencode #48942), or
  ``The encrypted content for item rs_… could not be verified`` (openai/codex #3573). The
  heal drops the reasoning items the error names; when it names none, the history alone
  cannot tell which chain minted each item, so the replayed reasoning items that are not
  the current turn's are dropped and the detail says so; failing that, all of them. The
  items that followed a dropped reasoning item lose their ``id`` (an item replayed by id
  needs its reasoning item).

Nothing is dropped without a trace: each heal lists a :class:`~condense.repair.Change`
per message it rewrote or left out, carrying the removed blocks or items. The caller's
messages are never mutated; messages a heal does not touch are the same objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from condense.formats.conversation import layout_locator
from condense.formats.locate import top
from condense.message import ITEM_ID, RESPONSES_ITEMS, THINKING_BLOCKS, is_empty_content
from condense.providers.anthropic import DROP_BLOCK_BETA
from condense.reduce.thinking import EMPTY_TURN
from condense.repair.ledger import Change
from condense.turns import current_turn, turn_start

DROP_BLOCK = "drop_block"
"""The value of ``thinking.block_binding.prefix_mismatch_behavior`` that makes the API
drop mismatching thinking blocks instead of refusing the request."""
BINDING_BETA = DROP_BLOCK_BETA
"""The ``anthropic-beta`` header value that enables ``thinking.block_binding``."""

CODE = "replay_identity"
"""The ``code`` of every change a heal makes."""

_NAMED_BLOCK = re.compile(r"\bmessages\.(\d+)\.content\.\d+", re.IGNORECASE)
_ITEM_ID = re.compile(r"\brs_[A-Za-z0-9_-]+")
_BLOB = re.compile(r"encrypted content (\S+) could not", re.IGNORECASE)
_ELLIPSIS = re.compile(r"\.\.\.|…")


@dataclass(frozen=True, kw_only=True)
class ReplayHeal:
    """One change to try after a replay-identity refusal.

    ``messages`` is the history to send, ``changes`` what was removed from it (empty when
    only a request setting changes), ``detail`` says what was done in words, and
    ``prefix_mismatch_behavior`` is the Anthropic setting to send with it (``None``: none).
    """

    messages: list[Any]
    changes: tuple[Change, ...]
    detail: str
    prefix_mismatch_behavior: str | None = None


def replay_heals(
    messages: Sequence[Any],
    error_text: str,
    *,
    thinking: Mapping[str, Any] | None = None,
    drop_block: bool = False,
) -> Iterator[ReplayHeal]:
    """The heals for a replay-identity refusal worded ``error_text``, most precise first.

    ``messages`` are canonical (OpenAI chat) messages. ``thinking`` is the request's
    Anthropic ``thinking`` setting, as sent (``None`` when unknown); ``drop_block`` says
    whether the caller can send :data:`DROP_BLOCK` with the request.
    """
    if any(_thinking(message) for message in messages):
        yield from _thinking_heals(messages, error_text, _mode(thinking), drop_block)
    if any(_reasoning(message) for message in messages):
        yield from _reasoning_heals(messages, error_text)


# -- Anthropic thinking ------------------------------------------------------------------


def _mode(thinking: Mapping[str, Any] | None) -> str | None:
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    return kind if isinstance(kind, str) else None


def _thinking_heals(
    messages: Sequence[Any], text: str, mode: str | None, drop_block: bool
) -> Iterator[ReplayHeal]:
    start, named = _bound_start(messages, text)
    # the running turn's last step (drop_block keeps the whole turn's thinking, which the
    # turn rule accepts whichever step carries it)
    final = current_turn(messages).last_assistant
    final_bound = final is not None and final >= start and bool(_thinking(messages[final]))
    # budgeted thinking: the running turn must open with its thinking; unknown mode: the
    # provider's own mechanism keeps it, where the caller can send it
    keeps_running_turn = final_bound and mode not in ("adaptive", "disabled")
    if keeps_running_turn and drop_block:
        yield ReplayHeal(
            messages=list(messages),
            changes=(),
            detail="sent thinking.block_binding.prefix_mismatch_behavior='drop_block' (the "
            "running turn's thinking is bound, and it must open the turn)",
            prefix_mismatch_behavior=DROP_BLOCK,
        )
    if keeps_running_turn and mode == "enabled" and not drop_block:
        return  # dropping it would be refused too; nothing else heals this request
    healed, changes = _without_thinking(messages, start)
    where = f"from {named} on" if named else "(the error names no turn: all of it)"
    yield ReplayHeal(
        messages=healed,
        changes=changes,
        detail=f"removed the thinking of {len(changes)} turn(s) {where}",
    )


def _bound_start(messages: Sequence[Any], text: str) -> tuple[int, str | None]:
    """The index of the first message whose thinking is bound, and how the error named
    it (``messages.N``; ``None`` when it names no turn: then the first with thinking)."""
    match = _NAMED_BLOCK.search(text)
    if match:
        turn = int(match.group(1))
        locator = layout_locator("anthropic", messages)
        for index, message in enumerate(messages):
            place = locator.place(index)
            if _thinking(message) and place is not None and top(place.path) == ("messages", turn):
                return index, f"messages.{turn}"
    first = next(index for index, message in enumerate(messages) if _thinking(message))
    return first, None


def _without_thinking(messages: Sequence[Any], start: int) -> tuple[list[Any], tuple[Change, ...]]:
    out: list[Any] = []
    changes: list[Change] = []
    for index, message in enumerate(messages):
        blocks = _thinking(message) if index >= start else None
        if not blocks:
            out.append(message)
            continue
        rest = {key: value for key, value in message.items() if key != THINKING_BLOCKS}
        reason = f"{_count(blocks, 'thinking block')} removed: bound to a different conversation"
        if not rest.get("tool_calls") and is_empty_content(rest.get("content")):
            if index == len(messages) - 1:  # a prefill of nothing but thinking
                changes.append(_change("drop", index, None, reason, message))
                continue
            rest["content"] = EMPTY_TURN  # a turn may not be empty
        out.append(rest)
        changes.append(_change("rewrite", index, len(out) - 1, reason, list(blocks)))
    return out, tuple(changes)


# -- Responses reasoning items -------------------------------------------------------------

Select = Callable[[int, dict[str, Any]], bool]


def _reasoning_heals(messages: Sequence[Any], text: str) -> Iterator[ReplayHeal]:
    ids = set(_ITEM_ID.findall(text))
    blob = _BLOB.search(text)
    pattern = _ELLIPSIS.split(blob.group(1).rstrip(".,;")) if blob else None

    def named(_: int, item: dict[str, Any]) -> bool:
        if item.get("id") in ids:
            return True
        sealed = item.get("encrypted_content")
        if pattern is None or not isinstance(sealed, str):
            return False
        return sealed.startswith(pattern[0]) and sealed.endswith(pattern[-1])

    healed = _without_reasoning(messages, named)
    if healed is not None:
        yield ReplayHeal(
            messages=healed[0],
            changes=healed[1],
            detail=f"dropped the {_count(healed[2], 'reasoning item')} the error names",
        )
    start = turn_start(messages)
    healed = _without_reasoning(messages, lambda index, _: index < start)
    if healed is not None:
        yield ReplayHeal(
            messages=healed[0],
            changes=healed[1],
            detail=f"the error names no item, and the history cannot tell which chain minted "
            f"each: dropped the {_count(healed[2], 'replayed reasoning item')} from before "
            "the current turn",
        )
    healed = _without_reasoning(messages, lambda _, __: True)
    if healed is not None:
        yield ReplayHeal(
            messages=healed[0],
            changes=healed[1],
            detail=f"dropped every replayed reasoning item ({healed[2]}), the current turn's too",
        )


def _without_reasoning(
    messages: Sequence[Any], select: Select
) -> tuple[list[Any], tuple[Change, ...], int] | None:
    """``messages`` without the reasoning items ``select(index, item)`` picks, their
    changes and how many items went; ``None`` when it picks none."""
    out: list[Any] = []
    changes: list[Change] = []
    dropped_total = 0
    for index, message in enumerate(messages):
        items = _reasoning(message)
        dropped = [item for item in items if select(index, item)]
        if not dropped:
            out.append(message)
            continue
        dropped_total += len(dropped)
        rest = _without_ids(message)
        kept = [item for item in message[RESPONSES_ITEMS] if not any(item is d for d in dropped)]
        rest.pop(RESPONSES_ITEMS)
        if kept:
            rest[RESPONSES_ITEMS] = kept
        reason = f"{_count(dropped, 'reasoning item')} removed: minted in another chain"
        if not kept and not rest.get("tool_calls") and is_empty_content(rest.get("content")):
            changes.append(_change("drop", index, None, reason, message))
            continue
        out.append(rest)
        changes.append(_change("rewrite", index, len(out) - 1, reason, dropped))
    if not dropped_total:
        return None
    return out, tuple(changes), dropped_total


def _without_ids(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``message`` whose items (the message's and its calls') carry no id."""
    rest = {key: value for key, value in message.items() if key != ITEM_ID}
    calls = rest.get("tool_calls")
    if isinstance(calls, list):
        rest["tool_calls"] = [
            {key: value for key, value in call.items() if key != ITEM_ID}
            if isinstance(call, dict)
            else call
            for call in calls
        ]
    return rest


# -- shared --------------------------------------------------------------------------------


def _thinking(message: object) -> list[Any]:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    blocks = message.get(THINKING_BLOCKS)
    return blocks if isinstance(blocks, list) else []


def _reasoning(message: object) -> list[dict[str, Any]]:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    items = message.get(RESPONSES_ITEMS)
    return [
        item
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and item.get("type") == "reasoning"
    ]


def _change(
    action: Literal["drop", "rewrite"],
    index: int,
    output_index: int | None,
    reason: str,
    removed: object,
) -> Change:
    return Change(
        action=action,
        index=index,
        output_index=output_index,
        code=CODE,
        reason=reason,
        message=removed,
    )


def _count(things: Sequence[object] | int, noun: str) -> str:
    number = things if isinstance(things, int) else len(things)
    return f"{number} {noun}{'' if number == 1 else 's'}"
