"""The Anthropic Messages API's rules, written out on their own, to judge native request
bodies condense writes — independently of ``condense.validate``.

Nothing here imports condense: the rules are restated from ``shared/provider-rules.md``
(the error texts real users saw, cited there) and from what real accepted Claude Code
requests show (``tests/data/corpus/agents/cc_spotter_*``). :func:`problems` returns one
line per broken rule; an empty list means the body would pass them all.

- ``messages`` is a non-empty list of ``user`` / ``assistant`` turns; the first is the
  user's ("messages: first message must use the "user" role"); roles alternate.
- ``content`` is a non-empty string or a list of typed blocks; a text block has only
  ``type``, ``text``, ``cache_control``, ``citations`` and non-blank text ("text content
  blocks must be non-empty").
- ``tool_use`` blocks only in assistant turns, with ids of ``[a-zA-Z0-9_-]`` unique in the
  request and an object ``input``; each answered in the very next turn, a user turn that
  begins with the ``tool_result`` blocks (``messages.N: `tool_use` ids were found without
  `tool_result` blocks immediately after``; ``Did not find 1 `tool_result` block(s) at the
  beginning of this message``); every ``tool_result`` answers a ``tool_use`` of the turn
  before it (``unexpected `tool_use_id` found in `tool_result` blocks``); ``tool_result``
  only in user turns.
- server tool and MCP blocks: a ``server_tool_use`` / ``mcp_tool_use`` and its result
  block stay in the same assistant turn (``… tool use with id … was found without a
  corresponding … block``).
- thinking blocks only in assistant turns, each with its signature (``data`` for
  ``redacted_thinking``); under budgeted thinking (``thinking.type == "enabled"``) the
  first assistant turn after the last user turn that carries more than tool results
  starts with thinking ("a final `assistant` message must start with a thinking
  block").
- at most four blocks carry ``cache_control`` ("A maximum of 4 blocks with cache_control
  may be provided").
"""

from __future__ import annotations

import re
from typing import Any

_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_TEXT_KEYS = {"type", "text", "cache_control", "citations"}
_THINKING = {"thinking", "redacted_thinking"}
_SERVER_USES = {"server_tool_use", "mcp_tool_use"}


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def _cache_marks(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if "cache_control" in value else 0
        inner = value.get("content") if value.get("type") == "tool_result" else None
        return own + sum(_cache_marks(block) for block in _blocks(inner))
    return 0


def problems(body: dict[str, Any]) -> list[str]:
    """Every rule of the list above that ``body`` breaks, as readable lines."""
    found: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: must be a non-empty list"]
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        found.append("system: must be a string or a list of blocks")
    seen_ids: set[str] = set()
    previous_role = None
    pending: list[str] = []  # tool_use ids the next turn must answer, in order
    marks = sum(_cache_marks(block) for block in _blocks(system))
    for index, turn in enumerate(messages):
        where = f"messages.{index}"
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            found.append(f"{where}: a turn is a user or assistant object")
            continue
        role, content = turn["role"], turn.get("content")
        if index == 0 and role != "user":
            found.append('messages: first message must use the "user" role')
        if role == previous_role:
            found.append(f'{where}: roles must alternate, found two "{role}" turns in a row')
        previous_role = role
        if isinstance(content, str):
            if not content.strip() and not (role == "assistant" and index == len(messages) - 1):
                found.append(f"{where}: all messages must have non-empty content")
            blocks: list[Any] = []
        elif isinstance(content, list):
            blocks = content
            if not blocks and not (role == "assistant" and index == len(messages) - 1):
                found.append(f"{where}: all messages must have non-empty content")
        else:
            found.append(f"{where}: content must be a string or a list of blocks")
            continue
        marks += sum(_cache_marks(block) for block in blocks)
        kinds = [b.get("type") if isinstance(b, dict) else None for b in blocks]
        for position, (block, kind) in enumerate(zip(blocks, kinds, strict=True)):
            at = f"{where}.content.{position}"
            if not isinstance(kind, str):
                found.append(f"{at}: a block needs a string type")
                continue
            if kind == "text":
                extra = set(block) - _TEXT_KEYS
                if extra:
                    found.append(f"{at}.text: extra inputs are not permitted: {sorted(extra)}")
                if not isinstance(block.get("text"), str) or not block["text"].strip():
                    found.append(f"{at}: text content blocks must be non-empty")
            elif kind in _THINKING:
                if role != "assistant":
                    found.append(f"{at}: thinking blocks only in assistant turns")
                key = "signature" if kind == "thinking" else "data"
                if not isinstance(block.get(key), str):
                    found.append(f"{at}: {kind} block without its {key}")
            elif kind == "tool_use":
                if role != "assistant":
                    found.append(f"{at}: tool_use blocks only in assistant turns")
                ident = block.get("id")
                if not isinstance(ident, str) or not _ID.match(ident):
                    found.append(f"{at}.tool_use.id: String should match pattern")
                elif ident in seen_ids:
                    found.append(f"{at}: `tool_use` ids must be unique")
                else:
                    seen_ids.add(ident)
                if not isinstance(block.get("input"), dict):
                    found.append(f"{at}.tool_use.input: Input should be a valid dictionary")
            elif kind == "tool_result" and role != "user":
                found.append(f"{where}: `tool_result` blocks can only be in `user` messages")
        if pending:  # this turn answers the previous assistant turn's calls
            leading = 0
            while leading < len(kinds) and kinds[leading] == "tool_result":
                leading += 1
            answered = [blocks[j].get("tool_use_id") for j in range(leading)]
            missing = [ident for ident in pending if ident not in answered]
            if role != "user" or missing:
                found.append(
                    f"{where}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing or pending)}"
                )
            if any(kind == "tool_result" for kind in kinds[leading:]):
                found.append(
                    f"{where}: Did not find {len(pending)} `tool_result` block(s) at the "
                    "beginning of this message"
                )
        answerable = set(pending)
        for position, (block, kind) in enumerate(zip(blocks, kinds, strict=True)):
            if kind == "tool_result" and block.get("tool_use_id") not in answerable:
                found.append(
                    f"{where}.content.{position}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}"
                )
        pending = [b.get("id") for b, kind in zip(blocks, kinds, strict=True) if kind == "tool_use"]
        if role == "assistant":
            found.extend(_server_tools(where, blocks))
        else:
            pending = []
    if pending:
        found.append(f"messages.{len(messages) - 1}: `tool_use` ids without a next turn")
    if marks > 4:
        found.append(f"A maximum of 4 blocks with cache_control may be provided. Found {marks}.")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        found.extend(_turn_opens_with_thinking(messages))
    return found


def _server_tools(where: str, blocks: list[Any]) -> list[str]:
    uses = {
        b.get("id"): b.get("name")
        for b in blocks
        if isinstance(b, dict) and b.get("type") in _SERVER_USES
    }
    results = {
        b.get("tool_use_id")
        for b in blocks
        if isinstance(b, dict)
        and str(b.get("type", "")).endswith("_tool_result")
        and b.get("type") != "tool_result"
    }
    found = [
        f"{where}: `{name}` tool use with id `{ident}` was found without its result block"
        for ident, name in uses.items()
        if ident not in results
    ]
    found += [f"{where}: a server tool result answers no use: {r}" for r in results - set(uses)]
    return found


def _turn_opens_with_thinking(messages: list[Any]) -> list[str]:
    """Budgeted thinking: the first assistant turn after the last user turn that carries
    more than tool results starts with a thinking block."""
    start = 0
    for index, turn in enumerate(messages):
        content = turn.get("content") if isinstance(turn, dict) else None
        if turn.get("role") == "user" and (
            isinstance(content, str)
            or any(isinstance(b, dict) and b.get("type") != "tool_result" for b in content or [])
        ):
            start = index + 1
    for index in range(start, len(messages)):
        turn = messages[index]
        if turn.get("role") != "assistant":
            continue
        blocks = _blocks(turn.get("content"))
        first = blocks[0].get("type") if blocks and isinstance(blocks[0], dict) else "text"
        if first not in _THINKING:
            return [
                f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{first}`"
            ]
        return []
    return []


def unbound_thinking(sent: dict[str, Any], original: dict[str, Any]) -> list[str]:
    """The prefix check of models with preserved thinking ("a thinking block is bound to
    everything before it": system, tools, earlier messages; ``cache_control`` markers
    excluded): every thinking block of ``sent`` whose prefix is not the one it had in
    ``original``, unless ``sent`` asks the API to drop such blocks
    (``thinking.block_binding.prefix_mismatch_behavior == "drop_block"``)."""
    thinking = sent.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, dict) else None
    if isinstance(binding, dict) and binding.get("prefix_mismatch_behavior") == "drop_block":
        return []

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    def blocks(turn: Any) -> list[Any]:
        content = turn.get("content")
        return content if isinstance(content, list) else [{"type": "text", "text": content}]

    first = 0  # the first turn whose prefix differs from the original's
    if plain(sent.get("system")) == plain(original.get("system")) and plain(
        sent.get("tools")
    ) == plain(original.get("tools")):
        turns, theirs = sent["messages"], original["messages"]
        while first < min(len(turns), len(theirs)) and plain(turns[first]) == plain(theirs[first]):
            first += 1
    found = []
    for index in range(first, len(sent["messages"])):
        mine = blocks(sent["messages"][index])
        theirs = blocks(original["messages"][index]) if index < len(original["messages"]) else []
        for position, block in enumerate(mine):
            if not isinstance(block, dict) or block.get("type") not in _THINKING:
                continue
            same = index == first and plain(mine[: position + 1]) == plain(theirs[: position + 1])
            if not same:
                found.append(
                    f"messages.{index}.content.{position}: Invalid `signature` in `thinking` "
                    "block. The block is bound to a different conversation."
                )
    return found
