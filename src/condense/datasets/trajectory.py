"""A record seen as native turns, segmented into units (``condense.units``).

The budget is counted on what the trainer sees, the native turns, and every cut falls
between units: a tool exchange is an assistant message with tool calls plus every tool
result after it. Turns map onto canonical messages like this:

- a ShareGPT ``tool`` turn may become several tool messages, every other turn exactly one
  message, and an OpenAI record's turns *are* its messages;
- a unit starts at every message that is not a tool result, and tool results always join
  the unit before them (a tool exchange takes every result that follows its call);
- results that follow no call (``stray`` units, as in datasets whose calls are prose)
  are glued to the unit before them here, so no cut can separate them from the turn they
  follow in the input.

So the units of the turns are those :func:`condense.units.segment` finds in each turn's
*skeleton* (:func:`skeleton`): a message with the turn's canonical role, marked as
carrying calls when tool turns follow it. Parsing every turn into canonical messages
would cost more than all the rest of the work on a record (tool-call JSON is parsed
and re-serialized for every call), and it would find the same boundaries: the tests
check :func:`turn_units` against :func:`canonical_units`, which segments the real
canonical messages. Turns are parsed into canonical messages only where messages are
needed, for the summarizer (:func:`canonical`); the output is the input's own turn
objects with the summary turn spliced in, so every kept turn is written back verbatim by
construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.exceptions import FormatError
from condense.formats import Conversation, detect_format
from condense.formats.openai import list_key
from condense.formats.sharegpt import turns_of
from condense.message import content_text
from condense.types import RawMessage
from condense.units import Unit, UnitKind, segment

# Native role names, normalized: what "protect the first system/human/gpt/tool" means.
_SHAREGPT_ROLES = {
    "system": "system",
    "human": "human",
    "user": "human",
    "gpt": "gpt",
    "assistant": "gpt",
    "tool": "tool",
}
_OPENAI_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "human",
    "assistant": "gpt",
    "tool": "tool",
}
FORMATS = ("sharegpt", "openai")


@dataclass(frozen=True, kw_only=True)
class Trajectory:
    """A record's native turns, their text, normalized role and skeleton message, and
    their units (turn indices)."""

    record: dict[str, Any]
    format: str
    turns: list[Any]
    texts: list[str]
    roles: list[str]
    skeleton: list[RawMessage]
    units: list[Unit]


def read_trajectory(record: dict[str, Any]) -> Trajectory:
    """The trajectory of a ShareGPT or OpenAI record; :class:`FormatError` (with the turn
    index) for anything a training record cannot hold."""
    format = detect_format(record)
    if format == "sharegpt":
        turns = turns_of(record)
        texts, roles = [], []
        for index, turn in enumerate(turns):
            name = turn.get("from") if isinstance(turn, dict) else None
            role = _SHAREGPT_ROLES.get(name) if isinstance(name, str) else None
            if role is None:
                what = f"unknown 'from' {name!r}" if isinstance(turn, dict) else "not an object"
                raise FormatError(f"turn {index}: {what}; expected system, human, gpt or tool")
            if not isinstance(turn.get("value"), str):
                raise FormatError(f"turn {index}: 'value' must be a string")
            texts.append(turn["value"])
            roles.append(role)
    elif format == "openai":
        turns = record[list_key(record)]
        if not isinstance(turns, list):
            raise FormatError(f"'{list_key(record)}' must be an array")
        for index, message in enumerate(turns):
            if not isinstance(message, dict):
                raise FormatError(f"message {index}: must be a JSON object")
        texts = [message_text(message) for message in turns]
        roles = [_OPENAI_ROLES.get(str(message.get("role")), "human") for message in turns]
    else:
        raise FormatError(
            f"a {format} record; expected a ShareGPT 'conversations' or an OpenAI 'messages' record"
        )
    shape = skeleton(roles)
    return Trajectory(
        record=record,
        format=format,
        turns=turns,
        texts=texts,
        roles=roles,
        skeleton=shape,
        units=glued(segment(shape)),
    )


_SKELETONS: dict[str, RawMessage] = {
    "system": {"role": "system"},
    "human": {"role": "user"},
    "gpt": {"role": "assistant"},
    "tool": {"role": "tool"},
}
_CALLING: RawMessage = {"role": "assistant", "tool_calls": [{}]}


def skeleton(roles: Sequence[str]) -> list[RawMessage]:
    """One stand-in message per turn: the turn's canonical role, an assistant turn marked
    as carrying calls when a tool turn follows it (shared objects: never mutate them)."""
    shape = [_SKELETONS[role] for role in roles]
    for index in range(len(roles) - 1):
        if roles[index] == "gpt" and roles[index + 1] == "tool":
            shape[index] = _CALLING
    return shape


def turn_units(roles: Sequence[str]) -> list[Unit]:
    """The units of turns with these normalized roles (see the module docstring)."""
    return glued(segment(skeleton(roles)))


def glued(units: Sequence[Unit]) -> list[Unit]:
    """``units`` with every ``stray`` unit joined to the unit before it."""
    out: list[Unit] = []
    for unit in units:
        if unit.kind is UnitKind.STRAY and out:
            out[-1] = Unit(out[-1].kind, out[-1].start, unit.stop)
        else:
            out.append(unit)
    return out


def canonical(trajectory: Trajectory, turns: Sequence[Any]) -> Conversation:
    """The conversation of the record with only ``turns`` (whole units, in order)."""
    key = "conversations" if trajectory.format == "sharegpt" else list_key(trajectory.record)
    return Conversation.read({**trajectory.record, key: list(turns)}, format=trajectory.format)


def summary_turn(trajectory: Trajectory, role: str, text: str) -> dict[str, Any]:
    """A new turn holding ``text`` for ``role`` (``human``, ``gpt`` or ``system``), named
    the way the record already names that role."""
    if trajectory.format == "openai":
        return {"role": {"human": "user", "gpt": "assistant"}.get(role, role), "content": text}
    name = next(
        (t["from"] for t, r in zip(trajectory.turns, trajectory.roles, strict=True) if r == role),
        role,
    )
    return {"from": name, "value": text}


JOIN = "\n\n"
"""What separates a summary from the text of the kept turn it joins."""


def joined_turn(trajectory: Trajectory, index: int, text: str, *, first: bool) -> dict[str, Any]:
    """Turn ``index`` with ``text`` put before (``first``) or after its own text, every
    other key and every word of it kept: a ShareGPT ``value`` or an OpenAI ``content``
    (a string, or a list of parts that gains a text part)."""
    turn = trajectory.turns[index]
    key = "value" if trajectory.format == "sharegpt" else "content"
    own = turn.get(key)
    if isinstance(own, list):
        part = {"type": "text", "text": text}
        return {**turn, key: [part, *own] if first else [*own, part]}
    own = own if isinstance(own, str) else ""
    if not own:
        return {**turn, key: text}
    return {**turn, key: f"{text}{JOIN}{own}" if first else f"{own}{JOIN}{text}"}


def turn_text(trajectory: Trajectory, turn: dict[str, Any]) -> str:
    """What a turn of this record puts in front of the model (what is counted)."""
    return turn["value"] if trajectory.format == "sharegpt" else message_text(turn)


def message_text(message: dict[str, Any]) -> str:
    """What an OpenAI message puts in front of the model: its text, then each call's
    name and arguments."""
    text = content_text(message.get("content"))
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return text
    pieces = [text] if text else []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(pieces)


def message_starts(messages: Sequence[RawMessage], roles: Sequence[str]) -> list[int]:
    """For each turn (and one past the end), the index of its first message.

    The k-th run of tool messages answers to the k-th run of tool turns (every turn of
    the run is given the run's first message: no cut falls inside a run); every other
    message to the next turn. Raises :class:`FormatError` if they do not line up.
    """
    starts: list[int] = []
    message = 0
    turn = 0
    while turn < len(roles):
        if message >= len(messages):
            raise FormatError("turns and messages do not line up", index=turn)
        if roles[turn] == "tool":
            if not _is_tool(messages[message]):
                raise FormatError("tool turns and tool messages do not line up", index=turn)
            end = message
            while end < len(messages) and _is_tool(messages[end]):
                end += 1
            while turn < len(roles) and roles[turn] == "tool":
                starts.append(message)
                turn += 1
            message = end
        else:
            if _is_tool(messages[message]):
                raise FormatError("turns and messages do not line up", index=turn)
            starts.append(message)
            message += 1
            turn += 1
    if message != len(messages):
        raise FormatError("turns and messages do not line up")
    starts.append(message)
    return starts


def canonical_units(messages: Sequence[RawMessage], roles: Sequence[str]) -> list[Unit]:
    """The units found by segmenting the canonical ``messages`` and mapping unit
    boundaries back to turns (``stray`` units glued to the unit before them): the
    reference :func:`turn_units` is checked against. Kinds may differ where a turn's
    calls are prose (a ``reply`` here, a ``tool_exchange`` there); boundaries do not."""
    turn_of: dict[int, int] = {}
    for turn, start in enumerate(message_starts(messages, roles)):
        turn_of.setdefault(start, turn)
    return glued(
        [Unit(unit.kind, turn_of[unit.start], turn_of[unit.stop]) for unit in segment(messages)]
    )


def _is_tool(message: object) -> bool:
    return isinstance(message, dict) and message.get("role") == "tool"
