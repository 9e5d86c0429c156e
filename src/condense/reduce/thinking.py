"""Anthropic thinking under compression: what the provider accepts once something before a
thinking block must change.

Two rules meet here (``provider-rules.md``, "Reasoning models" and "Real traffic and the
2026 additions"):

- **the turn rule**: under budgeted thinking (``{"type": "enabled", …}``) the first
  assistant message of the current turn starts with its thinking; adaptive thinking may
  leave a turn without any (``condense.turns``);
- **the prefix check** ("preserved thinking", Claude Fable 5.1 and later,
  :func:`condense.providers.anthropic.binds_thinking`): a thinking block is bound to
  everything before it (system, tools, earlier messages). Once that prefix differs — a
  summary, a masked result, a repaired message — "that block and every later thinking
  block are invalid, and the API rejects the request with a 400 error or drops the
  invalid blocks, whichever you choose" (platform.claude.com/docs
  build-with-claude/preserved-thinking): ``messages.1.content.0: Invalid `signature` in
  `thinking` block. The block is bound to a different conversation. Remove the block, or
  set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".``
  (…/preserved-thinking/fix-bound-to-a-different-conversation; opencode #48637). Blocks
  may only be left out as a whole tail: "it also fails if a thinking block between
  others was left out or moved" (…/preserved-thinking/prefix-checks).

:func:`decide` chooses, per request, one :class:`Binding`:

=============  ===========================================================================
``keep``       keep every block: the model does not check the prefix (Claude 3, 4, Opus 5
               …), or the caller said its account does not (``bound_thinking="keep"``)
``drop_block`` keep every block and send the API's own mechanism: ``thinking.block_binding
               .prefix_mismatch_behavior: "drop_block"`` with the ``anthropic-beta:
               thinking-binding-controls-2026-08-01`` header (:class:`RequestSettings`,
               only when an edit does come before a block)
``remove``     remove the thinking of every assistant message after the first edit — the
               running turn's too — and report each removal (adaptive or no thinking: no
               turn needs thinking; or the current turn opens without thinking)
``hold``       change nothing before the current turn's opening thinking, and report the
               budget as not met: budgeted thinking needs that block and the prefix check
               refuses it after an edit (or the mode is unknown, and one of the two would
               refuse)
=============  ===========================================================================

:func:`strip_thinking` and :func:`unbind_thinking` carry out ``remove``; each removal is a
:class:`ThinkingRemoval` with the blocks it removed, so nothing is lost without a trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from condense.message import is_empty_content
from condense.providers.anthropic import DROP_BLOCK, DROP_BLOCK_BETA, binds_thinking
from condense.providers.base import THINKING_BLOCKS, Profile
from condense.reduce.base import MARKER
from condense.turns import current_turn
from condense.types import RawMessage

EMPTY_TURN = f"{MARKER} this turn's thinking was left out]"
"""The text of a turn that held nothing but thinking (a turn may not be empty)."""

BoundThinking = Literal["auto", "keep", "drop_block"]
"""The caller's choice (``compress(bound_thinking=...)``): ``auto`` decides per request;
``keep`` keeps every block (an account that does not enforce the prefix check);
``drop_block`` keeps them and returns the request settings that make the API drop the
blocks that fail the check."""
BOUND_THINKING: tuple[BoundThinking, ...] = ("auto", "keep", "drop_block")

Action = Literal["keep", "drop_block", "remove", "hold"]


@dataclass(frozen=True, kw_only=True)
class Binding:
    """What compression does with thinking bound to a prefix it edits, and why."""

    action: Action
    reason: str

    def __str__(self) -> str:
        return f"{self.action}: {self.reason}"


def has_thinking(messages: Sequence[Any]) -> bool:
    """Some assistant message carries thinking blocks."""
    return any(type(m) is dict and m.get(THINKING_BLOCKS) for m in messages)


def decide(
    messages: Sequence[RawMessage],
    *,
    profile: Profile,
    model: str | None,
    choice: BoundThinking,
) -> Binding | None:
    """The :class:`Binding` for ``messages`` (``None``: no thinking, nothing to decide).
    See the module docstring for the table."""
    if not has_thinking(messages):
        return None
    if choice == "keep":
        return Binding(action="keep", reason="kept as asked (bound_thinking='keep')")
    if not binds_thinking(model):
        return Binding(
            action="keep",
            reason=f"model {model!r} does not check thinking against what precedes it",
        )
    if choice == "drop_block":
        return Binding(
            action="drop_block",
            reason="kept; the request settings have the API drop blocks whose prefix changed",
        )
    mode = profile.thinking_mode
    if mode in ("adaptive", "disabled"):
        return Binding(
            action="remove",
            reason=f"{mode} thinking: no turn needs thinking, so bound blocks are removed",
        )
    first = current_turn(messages).first_assistant
    if first is None or not messages[first].get(THINKING_BLOCKS):
        return Binding(
            action="remove",
            reason="the current turn does not open with thinking, so bound blocks are removed",
        )
    why = "budgeted thinking" if mode == "enabled" else "the thinking mode is unknown and"
    return Binding(
        action="hold",
        reason=f"{why} the current turn opens with thinking that an earlier edit would "
        "unbind: nothing before it is changed (send bound_thinking='drop_block', or say "
        "thinking='adaptive' if that is the mode)",
    )


@dataclass(frozen=True, kw_only=True)
class RequestSettings:
    """Settings to send with the returned messages: ``body`` fields to merge into the
    request (dicts merge key by key) and ``headers`` to add (a value joins an existing
    comma-separated header such as ``anthropic-beta``). :meth:`apply_body` and
    :meth:`apply_headers` do both."""

    body: Mapping[str, Any]
    headers: Mapping[str, str]
    reason: str

    def apply_body(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` with :attr:`body` merged in (the input is not mutated). A request
        without a ``thinking`` object gets ``{"type": "adaptive"}``, the default of the
        models that check thinking."""
        merged = _merged(body, self.body)
        thinking = merged.get("thinking")
        if isinstance(thinking, dict) and "type" not in thinking:
            merged["thinking"] = {"type": "adaptive", **thinking}
        return merged

    def apply_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """``headers`` with :attr:`headers` added (names compared case-insensitively)."""
        out = dict(headers)
        for name, value in self.headers.items():
            present = next((key for key in out if key.lower() == name.lower()), None)
            if present is None:
                out[name] = value
                continue
            values = [v.strip() for v in out[present].split(",") if v.strip()]
            if value not in values:
                out[present] = ",".join([*values, value])
        return out


def _merged(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def drop_block_settings(thinking: object) -> RequestSettings:
    """The request settings that make the API drop thinking blocks failing the prefix
    check, for a request whose ``thinking`` setting is ``thinking`` (its object, when
    known, comes back with ``block_binding`` added)."""
    base = dict(thinking) if isinstance(thinking, Mapping) else {}
    return RequestSettings(
        body={"thinking": {**base, **DROP_BLOCK}},
        headers={"anthropic-beta": DROP_BLOCK_BETA},
        reason="an edit comes before kept thinking blocks: the API drops the ones whose "
        "prefix changed instead of refusing the request",
    )


@dataclass(frozen=True, kw_only=True)
class ThinkingRemoval:
    """The thinking blocks removed from one assistant turn of the output."""

    index: int
    """The turn's index in the returned messages."""
    blocks: tuple[Any, ...] = field(repr=False)
    """The removed blocks, verbatim (nothing is lost without a trace)."""
    edited_at: int
    """The index of the first edited message, whose edit unbound these blocks."""

    @property
    def reason(self) -> str:
        return (
            f"thinking bound to an edited prefix (message {self.edited_at} changed); "
            "Anthropic refuses it once the prefix differs"
        )

    def __str__(self) -> str:
        noun = "block" if len(self.blocks) == 1 else "blocks"
        return f"message {self.index}: {len(self.blocks)} thinking {noun} removed: {self.reason}"


def first_edit(output: Sequence[RawMessage], original: Sequence[Any]) -> int | None:
    """The index of the first message of ``output`` that is not the same object as the
    message at that index of ``original`` (``None``: ``output`` starts with all of it and
    adds nothing before its end)."""
    for index, message in enumerate(output):
        if index >= len(original) or message is not original[index]:
            return index
    return None


def bound_after(output: Sequence[RawMessage], original: Sequence[Any]) -> bool:
    """Some thinking block of ``output`` comes after its first edit: it is bound to a
    prefix that changed."""
    edited = first_edit(output, original)
    return edited is not None and has_thinking(output[edited:])


Stripped = Mapping[int, tuple[RawMessage, tuple[Any, ...]]]
"""``id(message) -> (message, removed blocks)`` for turns :func:`strip_thinking` made."""


def strip_thinking(messages: Sequence[RawMessage], start: int) -> tuple[list[RawMessage], Stripped]:
    """``messages`` with the thinking removed from every assistant turn from ``start`` on;
    and what was removed, by the new turn's id.

    A turn that held only thinking gets the one-line :data:`EMPTY_TURN` text, since a
    turn may not be empty. Turns without thinking are the same objects."""
    out = list(messages)
    stripped: dict[int, tuple[RawMessage, tuple[Any, ...]]] = {}
    for index in range(start, len(out)):
        message = out[index]
        blocks = message.get(THINKING_BLOCKS) if message.get("role") == "assistant" else None
        if not blocks:
            continue
        unbound = {key: value for key, value in message.items() if key != THINKING_BLOCKS}
        if not unbound.get("tool_calls") and is_empty_content(unbound.get("content")):
            unbound["content"] = EMPTY_TURN
        out[index] = unbound
        stripped[id(unbound)] = (unbound, tuple(blocks))
    return out, stripped


def unbind_thinking(
    output: Sequence[RawMessage], original: Sequence[Any], *, stripped: Stripped | None = None
) -> tuple[list[RawMessage], tuple[ThinkingRemoval, ...]]:
    """``output`` with the thinking removed from every assistant turn after its first
    edit relative to ``original``; and every removal, including those ``stripped`` names
    (turns the engine already stripped).

    Turns before the first edit are the caller's own objects and keep their thinking: its
    prefix is unchanged.
    """
    edited = first_edit(output, original)
    if edited is None:
        return list(output), ()
    messages, found = strip_thinking(output, edited)
    removals = []
    for index, message in enumerate(messages):
        entry = found.get(id(message)) or (stripped or {}).get(id(message))
        if entry is not None and entry[0] is message:
            removals.append(ThinkingRemoval(index=index, blocks=entry[1], edited_at=edited))
    return messages, tuple(removals)
