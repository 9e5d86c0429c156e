"""What the proxy did to each conversation last time, so the next turn reuses it.

An agent re-sends its whole history every turn. Once the proxy has compressed a
conversation, the next turn's history starts with the same messages; the proxy then sends
what it sent last time plus the messages that are new, so the compressed head stays
byte-identical from turn to turn and the provider's prompt cache keeps hitting. Only when
that no longer fits is the conversation compressed again, folding the previous summary in
(``compress(previous=state)``).

Conversations are keyed by a hash of the upstream, the profile and the first messages of
the history; an entry is used only when its whole remembered history is a prefix of the
new one (compared by value). The store is a bounded LRU, by entries and by bytes.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.compress import CompressionState
from condense.formats import Conversation
from condense.message import extends
from condense.reduce.thinking import RequestSettings
from condense.types import RawMessage

__all__ = ["ConversationMemory", "Entry", "conversation_key"]

_KEY_MESSAGES = 2


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One conversation: the history the client sent (``source``), what the proxy sent
    for it (``sent``: its messages, and the native form of each, see
    ``Conversation.rewritten``), the compression state, the budget it was compressed to
    and the request settings sent with it."""

    source: tuple[RawMessage, ...]
    sent: Conversation
    state: CompressionState | None
    budget: int
    size: int
    """Bytes of the request, for the memory bound."""
    settings: RequestSettings | None = None
    """Request settings the compressed head needs (Anthropic's ``drop_block``)."""


def conversation_key(upstream: str, provider: str, messages: Sequence[Any]) -> str:
    """A hash of the upstream, the profile and the first messages of ``messages``."""
    head = json.dumps(
        [upstream, provider, list(messages[:_KEY_MESSAGES])],
        sort_keys=True,
        ensure_ascii=False,
        default=repr,
    )
    return hashlib.blake2b(head.encode(), digest_size=16).hexdigest()


class ConversationMemory:
    """A thread-safe LRU of :class:`Entry`, at most ``maxsize`` entries and about
    ``maxbytes`` bytes of requests."""

    def __init__(self, *, maxsize: int = 256, maxbytes: int = 256 * 1024 * 1024) -> None:
        self.maxsize = maxsize
        self.maxbytes = maxbytes
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def recall(self, key: str, messages: Sequence[Any]) -> Entry | None:
        """The entry for ``key`` when its remembered history is a prefix of ``messages``."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
        return entry if extends(messages, entry.source) else None

    def remember(self, key: str, entry: Entry) -> None:
        """Store ``entry`` under ``key``, evicting the least recently used as needed."""
        if self.maxsize <= 0:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[key] = entry
            self._bytes += entry.size
            while self._entries and (
                len(self._entries) > self.maxsize or self._bytes > self.maxbytes
            ):
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.size
