"""The options of a dataset job: one frozen value, checked once, shipped to every worker."""

from __future__ import annotations

import hashlib
import json
from dataclasses import InitVar, asdict, dataclass, field
from typing import Any

from condense._compat import renamed
from condense.compress.plan import HeadTailProtection
from condense.datasets.tokenizer import TokenizerSpec, resolve_tokenizer
from condense.exceptions import InputError
from condense.retry import RetryPolicy

DEFAULT_NOTICE = (
    "[CONTEXT SUMMARY] Earlier turns of this trajectory were summarized to fit the context:"
)
SUMMARY_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}
DEFAULT_SUMMARY_TOKENS = 750
DEFAULT_TAIL_TURNS = 4
DEFAULT_TURN_OVERHEAD = 4


@dataclass(frozen=True, kw_only=True)
class DatasetOptions:
    """How every record is compressed.

    - ``target_tokens`` — the budget of a whole trajectory: the tokens of every turn's
      text plus ``turn_overhead`` per turn (a chat template's framing);
    - ``tail_turns`` — the last turns always kept (at least the last one; the first
      system, human, gpt and tool turns are kept too, see :attr:`protection`);
      ``compress`` measures its tail in tokens, this one is turns;
    - ``summary_tokens`` — the room reserved for the summary turn, notice and framing
      included (default: 750, at most a quarter of the target); the summary is cut to it;
    - ``summary_role`` — ``human`` (default), ``gpt`` or ``system``;
    - ``notice`` — the line that opens the summary turn (``""`` for none);
    - ``summary_input_chars`` — what the summarizer is given of the span: ``None``
      (default), all of it (the extractive digest reads every message in one linear
      pass, so a fact in the middle of a long trajectory has the same chance as a late
      one; an LLM summarizer's prompt bounds itself); a number, the span's first block
      (the first ask) and its newest units within this many characters, for a
      summarizer whose cost grows with what it is given;
    - ``exact_counts`` — also count the summarized span exactly (slower; by default the
      part of it not needed to decide is estimated, flagged in the record's stats);
    - ``max_attempts`` / ``backoff`` — tries of a summary whose failure is passing (see
      :mod:`condense.retry`), with exponential backoff from ``backoff`` seconds;
      ``timeout`` — seconds per record for an async summary.

    ``keep_last=`` and ``retries=N`` are the old spellings of ``tail_turns=`` and
    ``max_attempts=N + 1``.
    """

    target_tokens: int
    tail_turns: int = DEFAULT_TAIL_TURNS
    summary_tokens: int | None = None
    summary_role: str = "human"
    notice: str = DEFAULT_NOTICE
    turn_overhead: int = DEFAULT_TURN_OVERHEAD
    exact_counts: bool = False
    summary_input_chars: int | None = None
    tokenizer: TokenizerSpec = field(default_factory=lambda: resolve_tokenizer(None))
    max_attempts: int = 3
    backoff: float = 0.5
    timeout: float = 300.0
    keep_last: InitVar[int | None] = None
    retries: InitVar[int | None] = None

    def __post_init__(self, keep_last: int | None, retries: int | None) -> None:
        if keep_last is not None:
            renamed("keep_last", "tail_turns")
            object.__setattr__(self, "tail_turns", keep_last)
        if retries is not None:
            renamed("retries", "max_attempts")
            object.__setattr__(self, "max_attempts", retries + 1)
        if self.target_tokens < 1:
            raise InputError(f"the budget must be at least 1 token, got {self.target_tokens}")
        if min(self.tail_turns, self.turn_overhead, self.summary_input_chars or 0) < 0:
            raise InputError("tail_turns, turn_overhead and summary_input_chars must be 0 or more")
        if self.max_attempts < 1:
            raise InputError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.summary_role not in SUMMARY_ROLES:
            raise InputError(
                f"unknown summary role {self.summary_role!r}; known: {', '.join(SUMMARY_ROLES)}"
            )
        if self.summary_tokens is not None and self.summary_tokens <= self.turn_overhead:
            raise InputError(
                f"summary_tokens must be more than the turn overhead ({self.turn_overhead})"
            )
        if self.timeout <= 0 or self.backoff < 0:
            raise InputError("timeout must be positive and backoff 0 or more")

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of a summary."""
        return RetryPolicy(max_attempts=self.max_attempts, backoff_base=self.backoff)

    @property
    def protection(self) -> HeadTailProtection:
        """The planner's policy: the first system, human, gpt and tool turns and the last
        ``tail_turns`` turns, weakened when they alone exceed the target
        (``condense.compress.plan``). The last turn is kept even with ``tail_turns=0``:
        it is the response a trajectory ends on, and a trainer drops one that ends on
        anything else."""
        return HeadTailProtection(tail_messages=max(1, self.tail_turns))

    @property
    def reserve(self) -> int:
        """Tokens set aside for the summary turn, framing included."""
        if self.summary_tokens is not None:
            return self.summary_tokens
        return max(self.turn_overhead + 16, min(DEFAULT_SUMMARY_TOKENS, self.target_tokens // 4))

    def fingerprint(self, summarizer: str) -> str:
        """A digest of everything that shapes the output (not speed or retry settings)."""
        shaping = asdict(self)
        for key in ("max_attempts", "backoff", "timeout"):
            shaping.pop(key)
        shaping["reserve"] = self.reserve
        shaping["summarizer"] = summarizer
        return _digest(shaping)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
