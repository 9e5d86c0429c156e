"""The training-signal checker: are tool calls and their responses intact?

``check_trajectory(record)`` lists every problem of a ShareGPT trajectory or an OpenAI
``messages`` record:

- ``unbalanced_tags`` — a turn whose ``<tool_call>`` / ``</tool_call>`` or
  ``<tool_response>`` / ``</tool_response>`` tags do not pair up;
- ``orphan_response`` — a tool turn (or message) that does not directly follow the gpt
  turn whose calls it answers (or another tool turn answering the same calls);
- ``extra_responses`` — more responses than the calls they follow;
- ``missing_responses`` — a gpt turn whose calls are not all answered before the next
  turn that is not a tool turn (or the end).

condense never adds a problem: the dataset compressor's output has at most the problems
its input had (real datasets do end on an unanswered call). The tests assert this on
every record they compress.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.exceptions import FormatError

_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>(.*?)</tool_response>", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem at ``turn`` (0-based index in the record's turn list)."""

    turn: int
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"turn {self.turn}: {self.kind}: {self.detail}"


def check_trajectory(record: Any) -> list[Problem]:
    """Every problem of a ShareGPT record (``conversations``) or an OpenAI record
    (``messages``, or a bare message list)."""
    if isinstance(record, dict) and isinstance(record.get("messages"), list):
        return _check_messages(record["messages"])
    turns = record.get("conversations") if isinstance(record, dict) else record
    if not isinstance(turns, list):
        raise FormatError(
            "expected a record with 'conversations' or 'messages', or a list of turns, "
            f"got {type(record).__name__}"
        )
    if turns and all(isinstance(t, dict) and "role" in t and "from" not in t for t in turns):
        return _check_messages(turns)
    return _check_turns(turns)


def _check_turns(turns: Sequence[Any]) -> list[Problem]:
    problems: list[Problem] = []
    calls = answered = 0
    caller = -1  # the gpt turn whose calls are being answered
    for index, turn in enumerate(turns):
        role = turn.get("from") if isinstance(turn, dict) else None
        value = turn.get("value") if isinstance(turn, dict) else None
        text = value if isinstance(value, str) else ""
        for tag in ("tool_call", "tool_response"):
            if text.count(f"<{tag}>") != text.count(f"</{tag}>"):
                problems.append(Problem(index, "unbalanced_tags", f"<{tag}> tags do not pair up"))
        if role == "tool":
            if caller < 0:
                problems.append(
                    Problem(index, "orphan_response", "follows no gpt turn with tool calls")
                )
                continue
            answered += _response_count(text, calls - answered)
            if answered > calls:
                problems.append(
                    Problem(index, "extra_responses", f"{answered} responses to {calls} calls")
                )
                caller = -1
            continue
        _close(problems, caller, calls, answered)
        caller, answered = -1, 0
        if role in ("gpt", "assistant"):
            calls = sum(1 for match in _CALL.finditer(text) if _is_call(match[1]))
            caller = index if calls else -1
    _close(problems, caller, calls, answered)
    return problems


def _close(problems: list[Problem], caller: int, calls: int, answered: int) -> None:
    if caller >= 0 and answered < calls:
        problems.append(
            Problem(caller, "missing_responses", f"{calls - answered} of {calls} calls unanswered")
        )


def _is_call(text: str) -> bool:
    try:
        payload = json.loads(text)
    except ValueError:
        return False
    return isinstance(payload, dict) and isinstance(payload.get("name"), str)


def _response_count(text: str, waiting: int) -> int:
    """Responses in a tool turn: its ``<tool_response>`` blocks (an untagged turn is one),
    a single block packing ``waiting`` ≥ 2 parallel results as a JSON array counting as
    that many."""
    blocks = _RESPONSE.findall(text)
    if not blocks or _RESPONSE.sub("", text).strip():
        return 1
    if len(blocks) == 1 and waiting >= 2:
        try:
            items = json.loads(blocks[0])
        except ValueError:
            return 1
        if isinstance(items, list) and len(items) == waiting:
            return waiting
    return len(blocks)


def _check_messages(messages: Sequence[Any]) -> list[Problem]:
    problems: list[Problem] = []
    waiting: set[str] = set()
    caller = -1
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            answer = message.get("tool_call_id")
            if caller < 0:
                problems.append(
                    Problem(index, "orphan_response", "follows no assistant message with calls")
                )
            elif answer in waiting:
                waiting.discard(answer)
            else:
                problems.append(
                    Problem(index, "extra_responses", f"answers no waiting call ({answer!r})")
                )
            continue
        if caller >= 0 and waiting:
            problems.append(
                Problem(caller, "missing_responses", f"{len(waiting)} calls unanswered")
            )
        calls = message.get("tool_calls") if role == "assistant" else None
        ids = [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        waiting = {i for i in ids if isinstance(i, str)}
        caller = index if ids else -1
    if caller >= 0 and waiting:
        problems.append(Problem(caller, "missing_responses", f"{len(waiting)} calls unanswered"))
    return problems
