"""The values ``compress`` returns: the result, its report, and the state a later call
reuses. All frozen; the report counts what it was not asked to count only on access."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from condense.compress.assemble import LeftOut
from condense.providers.base import MediaBilling
from condense.reduce.compaction import Superseded
from condense.reduce.thinking import Binding, RequestSettings, ThinkingRemoval
from condense.repair import Change
from condense.tokens.counting import shared_counter
from condense.tokens.request import Room
from condense.types import RawMessage
from condense.units import UnitKind

UnitAction = str
"""What happened to a unit: ``kept`` or the action of the reduction that touched it
first (``deduped``, ``images_removed``, ``masked``, ``shrunk``, ``cut``, ``summarized``,
or the ``action`` of a reduction the caller passed in)."""


@dataclass(frozen=True, slots=True)
class UnitOutcome:
    """What happened to one unit; ``start``/``stop`` index the repaired history."""

    kind: UnitKind
    start: int
    stop: int
    action: UnitAction


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputCut:
    """A tool output cut middle-out (head and tail kept, a marker in the middle saying how
    much): ``index`` in the returned messages, the call it answers, the characters of its
    text ``removed`` of ``total``; ``running``: an output of the running turn, cut as the
    last resort."""

    index: int
    tool_call_id: str
    removed: int
    total: int
    running: bool

    def __str__(self) -> str:
        where = "the running turn's output" if self.running else "output"
        return (
            f"message {self.index}: {where} for {self.tool_call_id} cut middle-out "
            f"({self.removed:,} of {self.total:,} chars)"
        )


@dataclass(frozen=True, kw_only=True)
class CompressionReport:
    """Tokens before and after (real tokens of ``encoding``, the whole request: messages
    and what is sent besides them) and what happened to each unit."""

    budget: int
    """The caller's budget, in the provider's tokens for the whole request."""
    encoding: str
    provider: str
    """The profile the output was made valid for."""
    provider_reason: str
    """Why that profile (with ``provider="auto"``: what in the history chose it)."""
    media: MediaBilling = "openai"
    """How images and documents are counted: the way that provider bills them."""
    fits: bool
    units: tuple[UnitOutcome, ...]
    summarizer: str | None
    summarizer_fell_back: bool
    fallback_reason: str | None
    repairs: tuple[Change, ...]
    replay_removed: tuple[ThinkingRemoval, ...] = ()
    """Replay state left out whole: the thinking blocks removed from kept Anthropic
    turns after the first edit (each with its index in the output, the blocks and why)."""
    thinking: Binding | None = None
    """What was decided for Anthropic thinking an edit would unbind (``keep``,
    ``drop_block``, ``remove``, ``hold``) and why; ``None`` when the history carries no
    thinking or fit as it was."""
    incremental: bool
    superseded: Superseded | None = None
    """The messages before the newest Anthropic compaction block, left out first: the API
    drops them itself (``condense.reduce.compaction``). ``units`` then index the history
    without them."""
    left_out: tuple[LeftOut, ...] = ()
    """Spans replaced by the one-line notice because not even the shortest summary fit
    (messages ``start``–``stop - 1`` of the repaired input)."""
    short_of_target: tuple[int, ...] = ()
    """Messages whose tool-call arguments stay above the shrink target because cutting
    further would destroy identifiers (paths, ids): a best effort."""
    cuts: tuple[OutputCut, ...] = ()
    """Every tool output this call cut middle-out: those kept if at all possible, cut
    before older units were summarized, and the running turn's, as the last resort."""
    room: Room | None = None
    """How the budget was shared out: the tokens of what is sent besides the messages
    (tools, instructions) and the tokenizer's measured error for the model; the messages
    were fitted to ``room.messages``. ``None``: the messages had the whole budget."""
    _input: Sequence[RawMessage] = field(repr=False, compare=False)
    _output: Sequence[RawMessage] = field(repr=False, compare=False)
    _tokens_after: int | None = field(default=None, repr=False, compare=False)
    _protected: Sequence[RawMessage] | int | Callable[[], int] = field(
        default=0, repr=False, compare=False
    )

    @functools.cached_property
    def protected_tokens(self) -> int:
        """Exact tokens of what the result needs at least: under the session policy the
        untouchable part (system, latest ask, the running turn with its tool outputs cut
        to a short head, compaction state); under the training-set policy every unit that
        is not reducible. The result fits whenever this does (a one-line notice aside)."""
        if isinstance(self._protected, int):
            return self._protected + self._fixed
        if callable(self._protected):
            return self._protected() + self._fixed
        counter = shared_counter(self.encoding, media=self.media)
        return counter.messages(self._protected) + self._fixed

    def __getstate__(self) -> dict[str, Any]:
        """For pickling (worker pools, ``BudgetError``): the protected count is resolved,
        since what counts it on demand holds the engine's counter."""
        state = dict(self.__dict__)
        state["protected_tokens"] = self.protected_tokens  # the cached value, read first
        state["_protected"] = 0
        return state

    @functools.cached_property
    def tokens_after(self) -> int:
        """Exact tokens of the output (when the input was returned unchanged because a
        guaranteed bound showed it fits, counted on first access)."""
        if self._tokens_after is not None:
            return self._tokens_after + self._fixed
        return shared_counter(self.encoding, media=self.media).messages(self._output) + self._fixed

    @functools.cached_property
    def tokens_before(self) -> int:
        """Exact tokens of the input (counted on first access, then cached)."""
        return shared_counter(self.encoding, media=self.media).messages(self._input) + self._fixed

    @property
    def _fixed(self) -> int:
        return self.room.fixed if self.room is not None else 0

    @property
    def actions(self) -> Mapping[str, int]:
        """How many units got each action."""
        return dict(Counter(unit.action for unit in self.units))

    def describe(self) -> str:
        """One human line: tokens before → after and units per action."""
        counts = ", ".join(f"{n} {action}" for action, n in sorted(self.actions.items()))
        verdict = "fits" if self.fits else "OVER BUDGET"
        room = self.room
        budget = f"budget {self.budget}"
        if room is not None and room.ratio != 1:  # the counts above are condense's
            budget += f" {room.tokenizer} tokens = {room.request} of condense's"
        line = (
            f"{self.tokens_before} → {self.tokens_after} tokens ({budget}, "
            f"{verdict}); units: {counts or 'none'}"
        )
        if room is not None and (room.fixed or room.ratio != 1):
            line += f"; {room.fixed} sent besides the messages"
            if room.ratio != 1:
                line += f", planned at {room.ratio:g} {room.tokenizer} tokens per token"
        if self.summarizer:
            line += f"; summarizer {self.summarizer}"
            if self.summarizer_fell_back:
                line += f" (fell back: {self.fallback_reason})"
        if self.repairs:
            line += f"; {len(self.repairs)} repair(s)"
        if self.superseded is not None:
            line += f"; {self.superseded}"
        if self.left_out:
            line += f"; {sum(s.stop - s.start for s in self.left_out)} message(s) left out"
        if self.cuts:
            running = sum(cut.running for cut in self.cuts)
            line += f"; {len(self.cuts)} output(s) cut middle-out"
            if running:
                line += f" ({running} of the running turn)"
        if self.short_of_target:
            line += f"; {len(self.short_of_target)} call(s) kept above the shrink target"
        if self.replay_removed:
            line += (
                f"; thinking removed from {len(self.replay_removed)} turn(s) after the "
                f"first edit (message {self.replay_removed[0].edited_at})"
            )
        if self.thinking is not None and self.thinking.action in ("hold", "drop_block"):
            line += f"; thinking {self.thinking}"
        return f"{line}; provider {self.provider} ({self.provider_reason})"


@dataclass(frozen=True, kw_only=True)
class CompressionState:
    """What a later ``compress(previous=state)`` call reuses: the summary so far, and the
    input and output of this call so a grown history is only compressed for its growth."""

    summary: str | None
    source: tuple[RawMessage, ...] = field(repr=False)
    output: tuple[RawMessage, ...] = field(repr=False)
    budget: int
    provider: str
    encoding: str
    tokens: int | None = None
    """Exact tokens of ``output`` when this call counted them: the next call adds only
    what was appended, and returns it as it is when that fits."""


@dataclass(frozen=True, kw_only=True)
class CompressionResult:
    """The compressed history, the summary text (``None`` if nothing was summarized), the
    report, the state to pass as ``previous=`` on the next call, and the request settings
    the messages must be sent with (``None``: none).

    ``messages`` is in the input's shape: canonical messages for canonical input (and
    for a loaded ``Conversation``), the native message list for native input; ``native``
    is then the whole native request (the body for a body), else ``None``
    (``condense.formats.native``). The report indexes canonical messages."""

    messages: list[RawMessage]
    summary: str | None
    report: CompressionReport
    state: CompressionState
    request_settings: RequestSettings | None = None
    """With ``bound_thinking="drop_block"``, when an edit comes before kept thinking: the
    body fields and headers to send (``apply_body``, ``apply_headers``) so that the API
    drops the blocks whose prefix changed instead of refusing the request."""
    native: Any = None
    """For native input: the compressed request in its own format."""
