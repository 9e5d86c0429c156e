"""Per request: read the history, repair what the provider would refuse, compress what
is over the window, and decide the exact bytes to send upstream.

The window is the provider's, counted its way: ``budget`` turns it into condense's tokens
for the whole request (the tools and instructions it sends besides its history, the
output it asks for, the provider's count ratio, learned or measured per model family).

A request that is already valid and within its window leaves here as the very bytes the
client sent (``Prepared.changed`` is False): never re-serialized, so prompt caches keep
hitting. Otherwise the history is repaired for the upstream's profile
(``routing.choose_provider``), compressed when it is over the window (less the output it
asks for, less a margin), and written back in the request's own wire format; turns that
did not change are written as the client sent them (``Conversation.dump``), and a
conversation compressed before reuses its compressed head (``memory``). Thinking that a
compression would unbind on Anthropic's Messages API is kept, and the request carries the
settings that make the API drop the blocks whose prefix changed (``drop_block``).

Work here is CPU-bound; the app runs it in a worker thread.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.compress import CompressionResult, CompressionState, compress
from condense.exceptions import BadRequest, CondenseError, FormatError
from condense.formats import Conversation
from condense.message import text_parts
from condense.providers import get_profile, media_billing
from condense.providers.anthropic import request_thinking
from condense.reduce.thinking import RequestSettings
from condense.repair import repair
from condense.server.apis import Api
from condense.server.budget import Budget, plan_budget
from condense.server.codec import BodyDecodingError, decode
from condense.server.config import ProxySettings, Upstream
from condense.server.memory import ConversationMemory, Entry, conversation_key
from condense.server.replay import compression_keeps_replay, repair_keeps_replay
from condense.server.routing import choose_provider
from condense.server.windows import LearnedWindows
from condense.tokens import context_window, encoding_for_model, request_parts
from condense.tokens.request import requested_output
from condense.turns import current_turn
from condense.types import RawMessage
from condense.validate import validate

__all__ = [
    "HEADROOM",
    "BadRequest",
    "Fitting",
    "Prepared",
    "Preparer",
    "dump_body",
    "keeps_ask",
    "latest_ask",
]

HEADROOM = 0.75
"""A compressed history is made to fit this share of the room, so the next turns can be
appended to the same compressed head before it has to be compressed again."""


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """What to send upstream, and what was done to get there.

    ``body`` is the client's bytes when ``changed`` is False. ``conversation`` is the
    history as read (``None`` when it was not read: a pass-through) and ``messages`` the
    canonical history sent. Token counts are condense's, of the whole request (``None``
    when not counted); ``budget`` is how the request was planned and ``key`` the
    conversation's place in the memory.
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
    budget: Budget | None = None
    fitting: Fitting | None = None
    key: str | None = None
    settings: RequestSettings | None = None
    """Body fields and headers the history sent needs (Anthropic's ``drop_block``)."""


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
        budget = self._budget(api, body, upstream, provider, model, beta)
        fitting = Fitting(
            provider=provider,
            model=model,
            budget=budget,
            thinking=request_thinking(body, format=api.format),
            drop_block=api.format == "anthropic",
        )
        before = budget.count(messages)
        room = budget.room(len(messages))
        key = conversation_key(upstream.url, provider, messages) if room is not None else None
        entry = self.memory.recall(key, messages) if key is not None else None
        invalid = bool(validate(messages, provider=provider))
        as_sent = dataclasses.replace(  # the request goes as it came
            base,
            conversation=conversation,
            messages=messages,
            window=budget.window,
            tokens_before=before,
            tokens_after=before,
            budget=budget,
            fitting=fitting,
            key=key,
        )
        if entry is None and not invalid and (room is None or before <= room.request):
            return as_sent
        work = Work(conversation, messages)
        if entry is not None:
            work.reuse(entry)
        notes: list[str] = []
        try:
            if invalid or work.reused:  # the client's history was validated above
                work.repair(provider)
        except CondenseError as error:  # repair could not heal it: send it as it came
            notes.append(f"repair failed: {error}")
            work = Work(conversation, messages)
        if work.repairs and not repair_keeps_replay(messages, work.messages):
            notes.append("repair not applied: it would edit replay state (thinking, signatures)")
            work = Work(conversation, messages)
            if entry is not None:
                work.reuse(entry)
        after = budget.count(work.messages)
        state = entry.state if entry is not None else None
        target: int | None = None
        room = budget.room(len(work.messages))  # the slack is for the messages sent
        if room is not None and after > room.request:
            target = max(1, int(room.messages * HEADROOM))
            if entry is not None and entry.budget <= room.messages:
                target = entry.budget  # the same budget: the previous summary is folded in
            fitted = fitting.fit(work.messages, messages, target, state, notes)
            if fitted is not None:
                work.messages, state, work.settings = fitted
                work.compressed = True
                after = budget.count(work.messages)
        elif entry is not None:
            target = entry.budget
        if (
            key is not None
            and target is not None
            and api.name != "count_tokens"
            and (work.compressed or entry is not None)
        ):
            self.memory.remember(key, work.entry(messages, state, target, len(raw)))
        if not work.changed(messages):
            return dataclasses.replace(as_sent, notes=tuple(notes))
        return dataclasses.replace(
            as_sent,
            body=dump_body(work.written(), settings=work.settings),
            changed=True,
            settings=work.settings,
            messages=work.messages,
            tokens_after=after,
            repairs=work.repairs,
            compressed=work.compressed,
            reused=work.reused,
            notes=tuple(notes),
        )

    def remember(
        self,
        prepared: Prepared,
        messages: list[RawMessage],
        state: CompressionState | None,
        target: int,
        settings: RequestSettings | None,
    ) -> None:
        """Remember what a retry sent for ``prepared``'s conversation, so the next turn
        starts from it."""
        conversation = prepared.conversation
        if prepared.key is None or conversation is None or prepared.api.name == "count_tokens":
            return
        work = Work(conversation, messages)
        work.settings = settings
        entry = work.entry(conversation.messages, state, target, len(prepared.body))
        self.memory.remember(prepared.key, entry)

    def _budget(
        self,
        api: Api,
        body: dict[str, Any],
        upstream: Upstream,
        provider: str,
        model: str | None,
        beta: str | None,
    ) -> Budget:
        learned = self.learned.get(upstream.url, model)
        window, window_learned = upstream.context_window, False
        if window is None and learned is not None and learned.window is not None:
            window, window_learned = learned.window, True
        if window is None:
            window = context_window(model, anthropic_beta=beta)
        profile = get_profile(provider)
        return plan_budget(
            parts=request_parts(body),
            provider=provider,
            model=model,
            encoding=encoding_for_model(model),
            media=media_billing(profile),
            window=window,
            output=requested_output(body) if api.name != "count_tokens" else 0,
            learned=learned,
            margin=self.settings.margin,
            window_learned=window_learned,
        )


def latest_ask(messages: Sequence[Any]) -> Any:
    """The user message that opened the current turn (``condense.turns``): the ask the
    request is to answer, or ``None``."""
    ask = current_turn(messages).ask
    return messages[ask] if ask is not None else None


def keeps_ask(ask: Any, messages: Sequence[Any]) -> bool:
    """Whether every text of the user message ``ask`` arrives verbatim in ``messages``
    (a summary may share its message: the text need only be inside a user message)."""
    if ask is None:
        return True
    wanted = _texts(ask)
    sent = [
        text
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
        for text in _texts(m)
    ]
    return all(any(text in other for other in sent) for text in wanted)


def _texts(message: dict[str, Any]) -> list[str]:
    return [text for text in text_parts(message.get("content")) if text.strip()]


@dataclass(frozen=True, kw_only=True)
class Fitting:
    """How one request's history is compressed: for its provider and model, counted as
    ``budget`` counts, with the request's thinking setting. Where the history is sent to
    Anthropic's Messages API (``drop_block``), thinking an edit would unbind is kept and
    the API is asked to drop the blocks whose prefix changed (``bound_thinking=
    "drop_block"``: the result's request settings are sent with it)."""

    provider: str
    model: str | None
    budget: Budget
    thinking: object
    drop_block: bool

    def compress(
        self, messages: list[RawMessage], target: int, previous: CompressionState | None
    ) -> CompressionResult:
        return compress(
            messages,
            budget=target,
            provider=self.provider,
            model=self.model,
            encoding=self.budget.encoding,
            tokenizer_margin=False,  # ``target`` is in condense's tokens: planned already
            previous=previous,
            thinking=self.thinking,
            bound_thinking="drop_block" if self.drop_block else "auto",
        )

    def fit(
        self,
        messages: list[RawMessage],
        source: list[RawMessage],
        target: int,
        state: CompressionState | None,
        notes: list[str],
    ) -> tuple[list[RawMessage], CompressionState | None, RequestSettings | None] | None:
        """``messages`` compressed to ``target`` tokens of condense's, keeping the latest
        ask verbatim; when the session's compressed head would lose it, the client's
        whole history ``source`` is compressed afresh instead."""
        attempts = [(messages, state)]
        if messages is not source:
            attempts.append((source, None))
        ask = latest_ask(source)
        for history, previous in attempts:
            try:
                result = self.compress(history, target, previous)
            except CondenseError as error:
                notes.append(f"compression failed: {error}")
                continue
            if not compression_keeps_replay(history, result.messages):
                notes.append("compression not applied: it would edit replay state")
                continue
            if not keeps_ask(ask, result.messages):
                notes.append("compressed head dropped the latest ask: compressed afresh")
                continue
            if not result.report.fits:
                notes.append(
                    f"still over the room ({result.report.tokens_after} tokens for the "
                    f"messages, {target} planned): what may not be reduced is larger"
                )
            return result.messages, result.state, result.request_settings
        return None


class Work:
    """The history on its way out, and the requests whose native forms it may reuse."""

    def __init__(self, conversation: Conversation, messages: list[RawMessage]) -> None:
        self.conversation = conversation
        self.messages = messages
        self.earlier: tuple[Conversation, ...] = ()
        self.repairs = 0
        self.compressed = False
        self.reused = False
        self.settings: RequestSettings | None = None

    def reuse(self, entry: Entry) -> None:
        """Start from what was sent last time, plus the messages new since (the memory
        recalled ``entry`` because the history extends it, ``condense.message.extends``)."""
        self.messages = [*entry.sent.messages, *self.messages[len(entry.source) :]]
        self.earlier = (entry.sent,)
        self.settings = entry.settings
        self.reused = True

    def repair(self, provider: str) -> None:
        """Repair the history for ``provider`` (a valid one comes back as it is: repair
        checks it first, so it is not validated again here)."""
        result = repair(self.messages, provider=provider)
        self.messages = result.messages
        self.repairs += len(result.changes)

    def changed(self, original: Sequence[RawMessage]) -> bool:
        return len(self.messages) != len(original) or any(
            a is not b for a, b in zip(self.messages, original, strict=True)
        )

    def written(self) -> Conversation:
        """The history to send, in the request's shape: turns sent before (this request's
        or the remembered one's) are written as they went."""
        return self.conversation.rewritten(self.messages, earlier=self.earlier)

    def entry(
        self,
        source: Sequence[RawMessage],
        state: CompressionState | None,
        budget: int,
        size: int,
    ) -> Entry:
        """What to remember for a client history ``source``: what is sent for it, with the
        native forms of the messages sent."""
        return Entry(
            source=tuple(source),
            sent=self.written(),
            state=state,
            budget=budget,
            size=size,
            settings=self.settings,
        )


def dump_body(conversation: Conversation, *, settings: RequestSettings | None = None) -> bytes:
    """The request body for ``conversation`` (its own wire format; turns it read or was
    rewritten from, unchanged, written verbatim), with the body fields of ``settings``
    merged in."""
    native = conversation.dump()
    if settings is not None and isinstance(native, dict):
        native = settings.apply_body(native)
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
