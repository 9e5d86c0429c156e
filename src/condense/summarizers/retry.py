"""When to try a model call again, and how long to wait first.

Pure functions, so the policy is explicit and testable without a server: exponential
backoff with jitter, and a server's ``retry-after-ms`` / ``Retry-After`` (seconds or an
HTTP date) honoured exactly, plus a little jitter, up to ``max_retry_wait``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

# Statuses worth another try: timeouts, conflicts, "too early", rate limits, server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """``max_retries`` tries after the first; backoff ``base * 2**n`` capped at ``backoff_max``.

    A wait the server asks for that is longer than ``max_retry_wait`` is not waited out:
    the caller gives up (and falls back) instead of stalling an agent loop.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_retry_wait: float = 60.0
    jitter: float = 0.5

    def delay(
        self, retry: int, retry_after: float | None, rng: random.Random | None = None
    ) -> float | None:
        """Seconds to wait before retry number ``retry`` (1-based), or ``None``: give up."""
        if retry > self.max_retries:
            return None
        spread = (rng or random).random()
        if retry_after is not None:
            if retry_after > self.max_retry_wait:
                return None
            # Never earlier than asked; a little later spreads out clients that were told
            # the same thing.
            return max(0.0, retry_after) * (1 + 0.1 * spread)
        backoff = min(self.backoff_max, self.backoff_base * 2.0 ** (retry - 1))
        return backoff * (1 - self.jitter * spread)


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP error status is worth another try."""
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after_seconds(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """The wait a response asks for: ``retry-after-ms`` first, then ``Retry-After``.

    ``Retry-After`` may be seconds (fractions allowed) or an HTTP date. Returns ``None``
    when neither header is present or readable. ``headers`` lookups must be
    case-insensitive (as httpx's are) or use lower-case names.
    """
    if not headers:
        return None
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return max(0.0, milliseconds / 1000)
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    if value:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        return max(0.0, moment.timestamp() - (time.time() if now is None else now))
    return None


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number == number and number != float("inf") else None
