"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is one event: ``type`` (``user``, ``assistant``, ``system``, ``progress``,
``summary``, ``file-history-snapshot``, …), ``uuid``, ``parentUuid``, ``isSidechain`` and,
for ``user``/``assistant``, the API ``message``. Claude Code writes one event per content
block of a response, all with the response's ``message.id``; a tool result is a ``user``
event whose parent is the event holding its ``tool_use``.

The request at a point of the session is rebuilt the way Claude Code builds it:

- **the thread**: the ``parentUuid`` chain from the newest ``user``/``assistant`` event
  back to the root, or to a ``compact_boundary`` (Claude Code starts a fresh context
  there; the boundary's ``logicalParentUuid`` is where the context before it ended, and
  that context is read the same way). Events on abandoned branches are left out, and so
  are sidechains (subagent threads, ``isSidechain``) — except in a subagent's own file,
  where every event is one.
- **turns**: consecutive events of one response (same ``message.id``) are one assistant
  turn; results of parallel calls, which sit off the thread as siblings, are brought back
  in call order; consecutive user events are one user turn, ``tool_result`` blocks first.
- **left out, as Claude Code does not send them**: events of other types, ``<synthetic>``
  assistant events (written by Claude Code itself, not the model), whitespace-only text
  blocks of an assistant turn, and assistant turns holding nothing but thinking (a
  response interrupted while it thought).
- **not recorded, so added**: ``model`` (the session's), ``max_tokens`` (32,000, Claude
  Code's default), ``tools`` (each tool the context calls, with an open schema: the real
  ones are not recorded), and ``thinking: {"type": "adaptive"}`` for the models on which
  Claude Code uses adaptive thinking. There is no ``system``: it is not recorded.

Blocks (thinking with its signature, tool_use with its ``caller``, tool_result, images)
are copied verbatim. Evidence: the real sessions of ``marot/spotter``
(``tests/data/corpus/agents/raw``), whose requests in ``tests/data/corpus/agents`` were
rebuilt by these rules independently of this code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from condense.formats.transcripts import Event, Segment

__all__ = ["MAX_TOKENS", "requests"]

MAX_TOKENS = 32_000
"""Claude Code's default ``max_tokens``: transcripts do not record it."""
ADAPTIVE_MODELS = ("claude-opus-4-6", "claude-sonnet-4-6")
"""Models on which Claude Code thinks adaptively (``thinking: {"type": "adaptive"}``)."""
SYNTHETIC_MODEL = "<synthetic>"
_THINKING = frozenset({"thinking", "redacted_thinking"})


@dataclass
class _Turn:
    role: str
    blocks: list[Any]
    response: str | None = None  # an assistant turn's message.id
    plain: str | None = None  # a user turn of one event whose content is a string
    calls: list[str] = field(default_factory=list)


def requests(events: list[Event]) -> list[Segment]:
    """The request of every context of the session, oldest first (see the module doc)."""
    messages = [e for e in events if e.data.get("type") in ("user", "assistant")]
    if not messages:
        return []
    sidechain = all(e.data.get("isSidechain") is True for e in messages)
    by_uuid = {e.data["uuid"]: e for e in events if isinstance(e.data.get("uuid"), str)}
    results = _results_by_call(e for e in messages if bool(e.data.get("isSidechain")) == sidechain)
    ours = [e for e in messages if bool(e.data.get("isSidechain")) == sidechain]
    segments: list[Segment] = []
    leaf: Event | None = ours[-1] if ours else None
    seen: set[int] = set()
    while leaf is not None and leaf.line not in seen:
        seen.add(leaf.line)
        thread, boundary = _thread(leaf, by_uuid)
        request = _request(thread, results)
        if request is not None:
            body, answer = request
            segments.append(Segment(body=body, format="anthropic", line=leaf.line, answer=answer))
        parent = boundary.data.get("logicalParentUuid") if boundary is not None else None
        leaf = _newest_message(by_uuid.get(parent), by_uuid) if isinstance(parent, str) else None
    segments.reverse()
    return segments


# -- the thread ------------------------------------------------------------------------


def _thread(leaf: Event, by_uuid: Mapping[str, Event]) -> tuple[list[Event], Event | None]:
    """The events from the root (or the compact boundary) to ``leaf``, oldest first, and
    the boundary that starts them (``None`` at the root)."""
    chain: list[Event] = []
    seen: set[int] = set()
    event: Event | None = leaf
    while event is not None and event.line not in seen:
        seen.add(event.line)
        if event.data.get("type") == "system" and event.data.get("subtype") == "compact_boundary":
            chain.reverse()
            return chain, event
        chain.append(event)
        parent = event.data.get("parentUuid")
        event = by_uuid.get(parent) if isinstance(parent, str) else None
    chain.reverse()
    return chain, None


def _newest_message(event: Event | None, by_uuid: Mapping[str, Event]) -> Event | None:
    """The nearest ``user``/``assistant`` event at or above ``event`` on its thread."""
    seen: set[int] = set()
    while event is not None and event.line not in seen:
        seen.add(event.line)
        if event.data.get("type") in ("user", "assistant"):
            return event
        parent = event.data.get("parentUuid")
        event = by_uuid.get(parent) if isinstance(parent, str) else None
    return None


def _results_by_call(events: Any) -> dict[str, Any]:
    """Every ``tool_result`` block of the session by the id of the call it answers."""
    found: dict[str, Any] = {}
    for event in events:
        if event.data.get("type") != "user":
            continue
        for block in _blocks(event.data.get("message")):
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                call = block.get("tool_use_id")
                if isinstance(call, str):
                    found.setdefault(call, block)
    return found


# -- the request -----------------------------------------------------------------------


def _request(
    thread: Sequence[Event], results: Mapping[str, Any]
) -> tuple[dict[str, Any], tuple[Any, ...]] | None:
    turns: list[_Turn] = []
    model: str | None = None
    for event in thread:
        kind = event.data.get("type")
        message = event.data.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, Mapping):
            continue
        if kind == "assistant":
            if message.get("model") == SYNTHETIC_MODEL:
                continue
            if isinstance(message.get("model"), str):
                model = message["model"]
            _add_response(turns, message)
        else:
            _add_user(turns, message)
    turns = [t for t in turns if t.role == "user" or _sendable(t)]
    messages = _merge_users(turns, results)
    sent = len(messages)
    while sent and messages[sent - 1]["role"] == "assistant":
        sent -= 1  # the answer to the request, not part of it
    if not sent:
        return None
    messages, answer = messages[:sent], tuple(messages[sent:])
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    body["max_tokens"] = MAX_TOKENS
    if model is not None and model.startswith(ADAPTIVE_MODELS):
        body["thinking"] = {"type": "adaptive"}
    tools = _tools(messages)
    if tools:
        body["tools"] = tools
    body["messages"] = messages
    return body, answer


def _add_response(turns: list[_Turn], message: Mapping[str, Any]) -> None:
    response = message.get("id") if isinstance(message.get("id"), str) else None
    blocks = [
        block
        for block in _blocks(message)
        if not (
            isinstance(block, Mapping)
            and block.get("type") == "text"
            and not str(block.get("text") or "").strip()
        )
    ]
    current = _same_response(turns, response)
    if current is None:
        current = _Turn("assistant", blocks, response=response)
        turns.append(current)
    else:
        current.blocks.extend(blocks)
    for block in blocks:
        if (
            isinstance(block, Mapping)
            and block.get("type") == "tool_use"
            and isinstance(block.get("id"), str)
        ):
            current.calls.append(block["id"])


def _same_response(turns: Sequence[_Turn], response: str | None) -> _Turn | None:
    """The assistant turn of ``response`` if it is the latest one and only results of its
    calls came after it: Claude Code writes each parallel call as its own event, with
    the result of one call threaded between it and the next call."""
    if response is None:
        return None
    for turn in reversed(turns):
        if turn.role == "assistant":
            return turn if turn.response == response else None
        if turn.plain is not None or not all(
            isinstance(block, Mapping) and block.get("type") == "tool_result"
            for block in turn.blocks
        ):
            return None
    return None


def _add_user(turns: list[_Turn], message: Mapping[str, Any]) -> None:
    content = message.get("content")
    plain = content if isinstance(content, str) else None
    turns.append(_Turn("user", _blocks(message), plain=plain))


def _sendable(turn: _Turn) -> bool:
    """An assistant turn Claude Code sends: it holds something besides thinking."""
    return any(
        not (isinstance(block, Mapping) and block.get("type") in _THINKING) for block in turn.blocks
    )


def _merge_users(turns: Sequence[_Turn], results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The turns as API messages: consecutive user turns joined (results first, the
    results of the previous assistant turn's calls in call order)."""
    messages: list[dict[str, Any]] = []
    index = 0
    calls: list[str] = []
    while index < len(turns):
        turn = turns[index]
        if turn.role == "assistant":
            messages.append({"role": "assistant", "content": list(turn.blocks)})
            calls = turn.calls
            index += 1
            continue
        run = [turn]
        index += 1
        while index < len(turns) and turns[index].role == "user":
            run.append(turns[index])
            index += 1
        messages.append({"role": "user", "content": _user_content(run, calls, results)})
        calls = []
    return messages


def _user_content(run: Sequence[_Turn], calls: Sequence[str], results: Mapping[str, Any]) -> Any:
    if len(run) == 1 and run[0].plain is not None and not calls:
        return run[0].plain
    answered: list[Any] = []
    others: list[Any] = []
    seen: set[str] = set()
    for call in calls:  # parallel results, wherever they sit, in call order
        block = results.get(call)
        if block is not None:
            answered.append(block)
            seen.add(call)
    for turn in run:
        if turn.plain is not None:
            others.append({"type": "text", "text": turn.plain})
            continue
        for block in turn.blocks:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                if block.get("tool_use_id") not in seen:
                    answered.append(block)
            else:
                others.append(block)
    return [*answered, *others]


def _tools(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One open-schema tool per name the context calls, in order of first call."""
    names: list[str] = []
    for message in messages:
        if message["role"] != "assistant":
            continue
        for block in message["content"]:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                name = block.get("name")
                if isinstance(name, str) and name not in names:
                    names.append(name)
    return [
        {
            "name": name,
            "description": f"Claude Code tool {name} (schema not recorded)",
            "input_schema": {"type": "object"},
        }
        for name in names
    ]


def _blocks(message: object) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []
