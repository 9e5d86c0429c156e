"""What the proxy did, per request: one JSON line on stderr (or a log file) and the
recent requests the live page shows.

A record holds the path, model, profile, upstream, status, timings, token counts before
and after, repairs, compression and retries — never message content and never a header
(credentials stay out of logs).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections import deque
from dataclasses import asdict, dataclass, replace
from typing import Any, TextIO

__all__ = ["Journal", "Record"]


@dataclass(frozen=True, kw_only=True)
class Record:
    """One request, as the log and the live page show it. Times are milliseconds: until
    the response's first byte (``latency_ms``) and until its end (``duration_ms``)."""

    id: int
    time: float
    method: str
    path: str
    api: str | None
    model: str | None
    provider: str | None
    upstream: str
    status: int
    stream: bool
    latency_ms: float
    duration_ms: float
    tokens_before: int | None = None
    tokens_after: int | None = None
    """Condense's count of the whole request sent (the retry's, when there was one)."""
    provider_tokens: int | None = None
    """The provider's own count of it, from its answer's ``usage``."""
    window: int | None = None
    repairs: int = 0
    compressed: bool = False
    """The history sent is a compressed one: compressed for this request, by its retry,
    or the compressed head of an earlier turn reused."""
    reused: bool = False
    retried: bool = False
    retry: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["notes"] = list(self.notes)
        return data


class Journal:
    """Keeps the last ``recent`` records and writes each as one JSON line to ``log``
    (a path; ``None``: ``stream``, default stderr)."""

    def __init__(self, *, recent: int = 200, log: str | None = None, stream: TextIO | None = None):
        self._records: deque[Record] = deque(maxlen=recent)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._file: TextIO | None = open(log, "a", encoding="utf-8") if log else None  # noqa: SIM115
        self._stream = self._file or stream or sys.stderr

    def add(self, record: Record) -> None:
        """Number ``record`` (its ``id`` is replaced), keep it and write its line."""
        with self._lock:
            record = replace(record, id=next(self._ids))
            line = json.dumps(record.as_json(), ensure_ascii=False)
            self._records.append(record)
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (OSError, ValueError):  # a closed or full log must not stop the proxy
                pass

    def recent(self) -> list[dict[str, Any]]:
        """The recent records, newest first, as JSON-ready dicts."""
        with self._lock:
            return [record.as_json() for record in reversed(self._records)]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
