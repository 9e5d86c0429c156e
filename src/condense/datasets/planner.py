"""The trajectory planner: which blocks to summarize so a record fits its target.

Protected: the blocks holding the first system, human, gpt and tool turns (and every
block before them: the head), and the blocks holding the last ``tail_turns`` turns (the
tail). When those alone exceed the target, the protection weakens: the tail to the last
turn, then the head to the first system and human turns. Between them lies the middle.
When the record is over the target, the span to
summarize is the shortest run of whole blocks *from the start of the middle* such that
everything kept plus ``reserve`` tokens for the summary turn fits the target. When even
summarizing the whole middle leaves less than ``reserve``, the reserve shrinks to the room
left (``Plan.reserve``): a shorter summary, down to the one-line notice, down to leaving
the middle out. Only when the protected turns alone exceed the target is there no span.

Counting is lazy and exact where it matters: the kept part is counted with the real
tokenizer, walking back from the tail, and the span only as far as needed to prove the
record is over the target. The rest of the span is estimated (it is replaced anyway)
unless ``exact`` is set, so a 200k-token trajectory cut to 16k costs about 16k tokens of
tokenizing. A record that fits is always counted in full.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from condense.compress.plan import first_kept
from condense.datasets.trajectory import Block

_FIRST_ROLES = ("system", "human", "gpt", "tool")


class Verdict(StrEnum):
    FITS = "fits"
    SUMMARIZE = "summarize"
    NO_SPAN = "no_span"


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What to do with one record.

    ``span`` is a range of block indices to summarize (empty unless ``SUMMARIZE``).
    ``kept_tokens`` counts every turn outside the span exactly. ``tokens_before`` is
    the whole record, exact when ``exact`` (else the unread part of the span estimated).
    """

    verdict: Verdict
    span: range
    kept_tokens: int
    tokens_before: int
    exact: bool
    reserve: int = 0
    weakened: bool = False
    """True when the policy's protection was weakened to fit (see the module docstring)."""
    """Tokens the summary turn may take (the configured reserve, or less when only less
    is left: see the module docstring)."""


def protected_ranges(
    roles: Sequence[str],
    blocks: Sequence[Block],
    *,
    tail_turns: int,
    first_roles: Sequence[str] = _FIRST_ROLES,
) -> tuple[int, int]:
    """``(head_end, tail_start)``: blocks before ``head_end`` and from ``tail_start`` on
    are protected; ``head_end <= tail_start``."""
    firsts = [roles.index(role) for role in first_roles if role in roles]
    head_end = 0
    if firsts:
        last_first = max(firsts)
        head_end = next(i for i, block in enumerate(blocks) if block.stop > last_first) + 1
    tail_start = len(blocks)
    first_kept_turn = len(roles) - tail_turns
    while tail_start > 0 and tail_turns > 0 and blocks[tail_start - 1].stop > first_kept_turn:
        tail_start -= 1
    return head_end, max(head_end, tail_start)


def plan(
    roles: Sequence[str],
    blocks: Sequence[Block],
    turn_tokens: Callable[[int], int],
    turn_estimate: Callable[[int], int],
    *,
    target: int,
    reserve: int,
    tail_turns: int,
    exact: bool = False,
) -> Plan:
    """Plan one record; ``turn_tokens(i)`` counts turn ``i`` exactly (callers cache it)."""

    def cost(index: int, count: Callable[[int], int] = turn_tokens) -> int:
        block = blocks[index]
        return sum(count(turn) for turn in range(block.start, block.stop))

    # The policy's protection, weakened step by step while the protected turns alone
    # exceed the target: the last turn and the first system and human turns stay.
    tiers: list[tuple[int, Sequence[str]]] = [(tail_turns, _FIRST_ROLES)]
    tiers.append((min(tail_turns, 1), _FIRST_ROLES))
    tiers.append((min(tail_turns, 1), _FIRST_ROLES[:2]))
    weakened = False
    for tier, (tier_tail, tier_roles) in enumerate(tiers):
        weakened = tier > 0
        head_end, tail_start = protected_ranges(
            roles, blocks, tail_turns=tier_tail, first_roles=tier_roles
        )
        kept = sum(cost(i) for i in range(head_end)) + sum(
            cost(i) for i in range(tail_start, len(blocks))
        )
        if kept <= target:
            break
    # Keep the longest run of middle blocks, back from the tail, that leaves room for
    # the summary; what is left before it is the span.
    room = target - reserve - kept
    start = head_end + first_kept(tail_start - head_end, lambda j: cost(head_end + j), room)
    kept += sum(cost(i) for i in range(start, tail_start))  # counted already: cached
    if start == head_end:  # nothing left to summarize: every block was counted
        verdict = Verdict.FITS if kept <= target else Verdict.NO_SPAN
        return Plan(
            verdict=verdict, span=range(0), kept_tokens=kept, tokens_before=kept, exact=True
        )
    # Count the span only until the record is proven over the target.
    total = kept
    counted = start
    while counted > head_end and (total <= target or exact):
        total += cost(counted - 1)
        counted -= 1
    if total <= target:
        return Plan(
            verdict=Verdict.FITS, span=range(0), kept_tokens=total, tokens_before=total, exact=True
        )
    total += sum(cost(i, turn_estimate) for i in range(head_end, counted))
    verdict = Verdict.SUMMARIZE if kept <= target else Verdict.NO_SPAN
    return Plan(
        verdict=verdict,
        span=range(head_end, start) if verdict is Verdict.SUMMARIZE else range(0),
        kept_tokens=kept,
        tokens_before=total,
        exact=counted == head_end,
        reserve=max(0, min(reserve, target - kept)),
        weakened=weakened,
    )
