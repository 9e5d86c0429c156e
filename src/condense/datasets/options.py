"""The options of a dataset job: one frozen value, checked once, shipped to every worker."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from condense.datasets.tokenizer import TokenizerSpec, resolve_tokenizer
from condense.exceptions import InputError

DEFAULT_NOTICE = (
    "[CONTEXT SUMMARY] Earlier turns of this trajectory were summarized to fit the context:"
)
SUMMARY_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}
DEFAULT_SUMMARY_TOKENS = 750
DEFAULT_KEEP_LAST = 4
DEFAULT_TURN_OVERHEAD = 4
DEFAULT_SUMMARY_INPUT_CHARS = 48_000  # about the openai summarizer's prompt bound


@dataclass(frozen=True, kw_only=True)
class DatasetOptions:
    """How every record is compressed.

    - ``target_tokens`` — the budget of a whole trajectory: the tokens of every turn's
      text plus ``turn_overhead`` per turn (a chat template's framing);
    - ``keep_last`` — the last turns always kept (the first system, human, gpt and tool
      turns are kept too);
    - ``summary_tokens`` — the room reserved for the summary turn, notice and framing
      included (default: 750, at most a quarter of the target); the summary is cut to it;
    - ``summary_role`` — ``human`` (default), ``gpt`` or ``system``;
    - ``notice`` — the line that opens the summary turn (``""`` for none);
    - ``summary_input_chars`` — what the summarizer reads of the span: its first block
      (the first ask) and its newest blocks within this many characters (summarizers
      read a bounded amount anyway: an LLM prompt is capped, the extractive digest walks
      newest first within a work budget);
    - ``exact_counts`` — also count the summarized span exactly (slower; by default the
      part of it not needed to decide is estimated, flagged in the record's stats);
    - ``retries`` / ``backoff`` — retries of a failed summary, with exponential backoff
      from ``backoff`` seconds; ``timeout`` — seconds per record for an async summary.
    """

    target_tokens: int
    keep_last: int = DEFAULT_KEEP_LAST
    summary_tokens: int | None = None
    summary_role: str = "human"
    notice: str = DEFAULT_NOTICE
    turn_overhead: int = DEFAULT_TURN_OVERHEAD
    exact_counts: bool = False
    summary_input_chars: int = DEFAULT_SUMMARY_INPUT_CHARS
    tokenizer: TokenizerSpec = field(default_factory=lambda: resolve_tokenizer(None))
    retries: int = 2
    backoff: float = 0.5
    timeout: float = 300.0

    def __post_init__(self) -> None:
        if self.target_tokens < 1:
            raise InputError(f"the target must be at least 1 token, got {self.target_tokens}")
        if min(self.keep_last, self.turn_overhead, self.retries, self.summary_input_chars) < 0:
            raise InputError(
                "keep_last, turn_overhead, retries and summary_input_chars must be 0 or more"
            )
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
    def reserve(self) -> int:
        """Tokens set aside for the summary turn, framing included."""
        if self.summary_tokens is not None:
            return self.summary_tokens
        return max(self.turn_overhead + 16, min(DEFAULT_SUMMARY_TOKENS, self.target_tokens // 4))

    def fingerprint(self, summarizer: str) -> str:
        """A digest of everything that shapes the output (not speed or retry settings)."""
        shaping = asdict(self)
        for key in ("retries", "backoff", "timeout"):
            shaping.pop(key)
        shaping["reserve"] = self.reserve
        shaping["summarizer"] = summarizer
        return _digest(shaping)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
