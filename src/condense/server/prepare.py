"""Per request: read the history, repair what the provider would refuse, compress what
is over the window, and decide the exact bytes to send upstream.

A request that is already valid and within its window leaves here as the very bytes the
client sent (``Prepared.changed`` is False): never re-serialized, so prompt caches keep
hitting. Otherwise the history is repaired for the upstream's profile
(``routing.choose_provider``), compressed when it is over the window (less the output it
asks for, less a margin), and written back in the request's own wire format; turns that
did not change are written as the client sent them (``Conversation.dump``), and a
conversation compressed before reuses its compressed head (``memory``).

Work here is CPU-bound; the app runs it in a worker thread.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.compress import CompressionState, compress
from condense.exceptions import BadRequest, CondenseError, FormatError
from condense.formats import Conversation
from condense.formats._common import Group
from condense.repair import repair
from condense.server.apis import Api
from condense.server.codec import BodyDecodingError, decode
from condense.server.config import ProxySettings, Upstream
from condense.server.memory import ConversationMemory, Entry, conversation_key
from condense.server.replay import compression_keeps_replay, repair_keeps_replay
from condense.server.routing import choose_provider
from condense.server.windows import LearnedWindows, builtin_window
from condense.tokens import count_text, count_tokens, encoding_for_model
from condense.types import RawMessage
from condense.validate import validate

__all__ = ["HEADROOM", "BadRequest", "Prepared", "Preparer", "dump_body"]

HEADROOM = 0.75
"""A compressed history is made to fit this share of the room, so the next turns can be
appended to the same compressed head before it has to be compressed again."""
LEARNED_MARGIN = 0.1
"""The margin kept below a window learned from an overflow error (our count differs)."""
_OUTPUT_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """What to send upstream, and what was done to get there.

    ``body`` is the client's bytes when ``changed`` is False. ``conversation`` is the
    history as read (``None`` when it was not read: a pass-through) and ``messages`` the
    canonical history sent. Token counts are condense's (``None`` when not counted).
    """

    api: Api
    upstream: Upstream
    provider: str
    model: str | None
    body: bytes
    changed: bool
    conversation: Conversation | None = None
    messages: list[RawMessage] | None = None
    window: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    repairs: int = 0
    compressed: bool = False
    reused: bool = False
    notes: tuple[str, ...] = ()


class Preparer:
    """Prepares requests with shared memory and learned windows (thread-safe)."""

    def __init__(
        self, settings: ProxySettings, memory: ConversationMemory, learned: LearnedWindows
    ) -> None:
        self.settings = settings
        self.memory = memory
        self.learned = learned

    def prepare(
        self, api: Api, path: str, raw: bytes, *, coding: str | None, beta: str | None
    ) -> Prepared:
        """Prepare one request (see the module doc); :class:`BadRequest` for bad input."""
        body = _parse(api, raw, coding)
        model = body.get("model") if isinstance(body.get("model"), str) else None
        upstream = self.settings.route(path, model)
        provider = choose_provider(path, model, upstream.url, upstream.provider)
        base = Prepared(
            api=api, upstream=upstream, provider=provider, model=model, body=raw, changed=False
        )
        if not _has_history(api, body):
            return dataclasses.replace(base, notes=("no history to look after",))
        try:
            conversation = Conversation.read(body, format=api.format)
        except FormatError as error:
            raise BadRequest(400, f"{api.history_key}: {error}") from None
        messages = conversation.messages
        extra = _extra_tokens(api, body, model)
        before = _count(messages, model, extra)
        window = self._window(upstream, model, beta)
        limit = budget = None
        if window is not None:
            limit, budget = self._room(upstream, model, window, _output(api, body))
        key = conversation_key(upstream.url, provider, messages) if limit is not None else None
        entry = self.memory.recall(key, messages) if key is not None else None
        invalid = bool(validate(messages, provider=provider))
        as_sent = dataclasses.replace(  # the request goes as it came
            base,
            conversation=conversation,
            messages=messages,
            window=window,
            tokens_before=before,
            tokens_after=before,
        )
        if entry is None and not invalid and (limit is None or before <= limit):
            return as_sent
        work = Work(conversation, messages)
        if entry is not None:
            work.reuse(entry)
        notes: list[str] = []
        try:
            work.repair(provider)
        except CondenseError as error:  # repair could not heal it: send it as it came
            notes.append(f"repair failed: {error}")
            work = Work(conversation, messages)
        if work.repairs and not repair_keeps_replay(messages, work.messages):
            notes.append("repair not applied: it would edit replay state (thinking, signatures)")
            work = Work(conversation, messages)
            if entry is not None:
                work.reuse(entry)
        after = _count(work.messages, model, extra)
        state = entry.state if entry is not None else None
        if limit is not None and budget is not None and after > limit:
            if entry is not None and entry.budget <= limit:
                budget = entry.budget
            try:
                result = compress(
                    work.messages,
                    budget=max(1, budget - extra),
                    provider=provider,
                    model=model,
                    previous=state,
                )
            except CondenseError as error:
                notes.append(f"compression failed: {error}")
            else:
                if compression_keeps_replay(work.messages, result.messages):
                    work.messages, state = result.messages, result.state
                    work.compressed = True
                    after = _count(work.messages, model, extra)
                else:
                    notes.append("compression not applied: it would edit replay state")
        if (
            key is not None
            and budget is not None
            and api.name != "count_tokens"
            and (work.compressed or entry is not None)
        ):
            self.memory.remember(key, work.entry(messages, state, budget, len(raw)))
        if not work.changed(messages):
            return dataclasses.replace(as_sent, notes=tuple(notes))
        return dataclasses.replace(
            as_sent,
            body=dump_body(conversation, work.messages, work.groups),
            changed=True,
            messages=work.messages,
            tokens_after=after,
            repairs=work.repairs,
            compressed=work.compressed,
            reused=work.reused,
            notes=tuple(notes),
        )

    def _window(self, upstream: Upstream, model: str | None, beta: str | None) -> int | None:
        if upstream.context_window is not None:
            return upstream.context_window
        learned = self.learned.get(upstream.url, model)
        if learned is not None:
            return learned.window
        return builtin_window(model, anthropic_beta=beta)

    def _room(
        self, upstream: Upstream, model: str | None, window: int, output: int
    ) -> tuple[int, int]:
        """(the most tokens of ours a request may have, the budget to compress to)."""
        learned = self.learned.get(upstream.url, model)
        margin, ratio = self.settings.margin, 1.0
        if learned is not None and upstream.context_window is None:
            margin, ratio = max(margin, LEARNED_MARGIN), learned.ratio
        if output >= window:
            output = 0
        limit = max(1, int((window - output) * (1 - margin) / ratio))
        return limit, max(1, int(limit * HEADROOM))


class Work:
    """The history on its way out, and the native forms known for its messages."""

    def __init__(self, conversation: Conversation, messages: list[RawMessage]) -> None:
        self.messages = messages
        self.groups: tuple[Group, ...] = conversation._groups
        self.repairs = 0
        self.compressed = False
        self.reused = False

    def reuse(self, entry: Entry) -> None:
        """Start from what was sent last time, plus the messages new since."""
        self.messages = [*entry.sent, *self.messages[len(entry.source) :]]
        self.groups = (*entry.groups, *self.groups)
        self.reused = True

    def repair(self, provider: str) -> None:
        if validate(self.messages, provider=provider):
            result = repair(self.messages, provider=provider)
            self.messages = result.messages
            self.repairs += len(result.changes)

    def changed(self, original: Sequence[RawMessage]) -> bool:
        return len(self.messages) != len(original) or any(
            a is not b for a, b in zip(self.messages, original, strict=True)
        )

    def entry(
        self,
        source: Sequence[RawMessage],
        state: CompressionState | None,
        budget: int,
        size: int,
    ) -> Entry:
        """What to remember for a client history ``source``: what is sent for it, and the
        native forms of the messages still sent."""
        sent = {id(message) for message in self.messages}
        groups = tuple(g for g in self.groups if g.messages and id(g.messages[0]) in sent)
        return Entry(
            source=tuple(source),
            sent=tuple(self.messages),
            groups=groups,
            state=state,
            budget=budget,
            size=size,
        )


def dump_body(
    conversation: Conversation, messages: Sequence[RawMessage], groups: Sequence[Group] = ()
) -> bytes:
    """The request body for ``messages`` in the conversation's wire format; turns whose
    messages are unchanged objects (of this or an earlier turn) are written verbatim."""
    if groups:
        conversation = dataclasses.replace(conversation, _groups=tuple(groups))
    native = conversation.dump(messages)
    return json.dumps(native, ensure_ascii=False, separators=(",", ":")).encode()


def _parse(api: Api, raw: bytes, coding: str | None) -> dict[str, Any]:
    try:
        text = decode(raw, coding)
    except BodyDecodingError as error:
        raise BadRequest(400, f"cannot read the request body: {error}") from None
    try:
        body = json.loads(text)
    except UnicodeDecodeError:
        raise BadRequest(400, "the request body is not UTF-8 JSON") from None
    except ValueError as error:
        raise BadRequest(400, f"the request body is not valid JSON ({error})") from None
    if not isinstance(body, dict):
        raise BadRequest(400, "the request body must be a JSON object")
    history = body.get(api.history_key)
    if api.name != "responses" and not isinstance(history, list):
        raise BadRequest(400, f"'{api.history_key}' is required and must be an array of messages")
    if api.name == "responses" and history is not None and not isinstance(history, list | str):
        raise BadRequest(400, "'input' must be a string or an array of input items")
    return body


def _has_history(api: Api, body: dict[str, Any]) -> bool:
    """Whether the proxy looks after this request's history. A Responses request without
    ``input``, or ending in Codex's ``compaction_trigger`` item, goes through untouched."""
    history = body.get(api.history_key)
    if api.name != "responses":
        return True
    if isinstance(history, list) and history:
        last = history[-1]
        if isinstance(last, dict) and last.get("type") == "compaction_trigger":
            return False
    return history is not None


def _output(api: Api, body: dict[str, Any]) -> int:
    if api.name == "count_tokens":
        return 0
    for key in _OUTPUT_KEYS:
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def _count(messages: Sequence[Any], model: str | None, extra: int) -> int:
    try:
        return count_tokens(messages, model=model) + extra
    except (CondenseError, TypeError, ValueError, AttributeError):
        return extra


def _extra_tokens(api: Api, body: dict[str, Any], model: str | None) -> int:
    """Tokens of what the request sends besides its history (tools, instructions, …)."""
    skip = {api.history_key, "system"} if api.format == "anthropic" else {api.history_key}
    rest = {key: value for key, value in body.items() if key not in skip}
    text = json.dumps(rest, ensure_ascii=False, sort_keys=True, default=repr)
    return _text_tokens(text, encoding_for_model(model))


@functools.lru_cache(maxsize=512)
def _text_tokens(text: str, encoding: str) -> int:
    return count_text(text, encoding=encoding)
