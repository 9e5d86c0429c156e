"""The provider's own count of a request, read from its answer as it passes through.

Every answer says how many prompt tokens the provider counted: ``usage.prompt_tokens``
(Chat Completions; a stream's last chunk when the client asked for
``stream_options.include_usage``), ``usage.input_tokens`` (Responses; a stream's
``response.completed`` event), ``usage.input_tokens`` plus the cache read and cache
creation tokens (Anthropic Messages; a stream's ``message_start``), and ``input_tokens``
(Anthropic's ``count_tokens``). :class:`UsageTap` keeps a bounded copy of the bytes the
proxy relays — they are passed on untouched, as they come — and reads that number once
the answer has ended; an answer it cannot read (too large, compressed beyond the copy,
not JSON) simply teaches nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from condense.server.codec import BodyDecodingError, decode

__all__ = ["UsageTap", "prompt_tokens"]

_WHOLE = 1 << 20  # bytes kept in full; beyond that only the head and the tail
_EDGE = 64 << 10
_ANTHROPIC_PARTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class UsageTap:
    """A bounded copy of an answer's bytes (see the module docstring)."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._tail = bytearray()
        self._cut = False

    def feed(self, chunk: bytes) -> None:
        if not self._cut:
            self._chunks.append(chunk)
            self._size += len(chunk)
            if self._size > _WHOLE:
                head = b"".join(self._chunks)
                self._chunks = [head[:_EDGE]]
                self._tail = bytearray(head[-_EDGE:])
                self._cut = True
            return
        self._tail += chunk
        if len(self._tail) > 2 * _EDGE:
            del self._tail[:-_EDGE]

    def prompt_tokens(self, *, content_type: str, content_encoding: str | None) -> int | None:
        """The prompt tokens the answer states, or ``None``."""
        if self._cut:
            if content_encoding:
                return None
            texts = [b"".join(self._chunks), bytes(self._tail)]
        else:
            body = _decoded(b"".join(self._chunks), content_encoding)
            if body is None:
                return None
            texts = [body]
        if content_type.startswith("text/event-stream"):
            return _from_events(texts)
        try:
            return prompt_tokens(json.loads(texts[0]))
        except ValueError:
            return None


def prompt_tokens(payload: object) -> int | None:
    """The prompt tokens stated by one JSON answer or event of any of the APIs."""
    if not isinstance(payload, Mapping):
        return None
    usage = payload.get("usage")
    if not isinstance(usage, Mapping):
        for key in ("message", "response"):  # anthropic message_start, responses events
            inner = payload.get(key)
            if isinstance(inner, Mapping) and isinstance(inner.get("usage"), Mapping):
                usage = inner["usage"]
                break
        else:
            usage = payload if payload.get("type") is None else None  # count_tokens
    if not isinstance(usage, Mapping):
        return None
    if _number(usage.get("prompt_tokens")) is not None:
        return _number(usage.get("prompt_tokens"))
    parts = [_number(usage.get(key)) for key in _ANTHROPIC_PARTS]
    if parts[0] is None:
        return None
    return sum(part or 0 for part in parts)


def _from_events(texts: list[bytes]) -> int | None:
    found: int | None = None
    for data in _event_data(texts):
        try:
            event: Any = json.loads(data)
        except ValueError:
            continue
        tokens = prompt_tokens(event)
        if tokens is not None and tokens > (found or 0):
            found = tokens  # message_start says it first; a later total wins if larger
    return found


def _event_data(texts: list[bytes]) -> Iterator[bytes]:
    for text in texts:
        for line in text.split(b"\n"):
            if line.startswith(b"data:"):
                data = line[5:].strip()
                if data.startswith(b"{") and b"tokens" in data:
                    yield data


def _decoded(raw: bytes, coding: str | None) -> bytes | None:
    try:
        return decode(raw, coding)
    except BodyDecodingError:
        return None


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
