"""Counting only what decides gives what counting everything gives (issue 18, Speed).

- ``lower_bound_text`` / ``lower_bound_message`` never exceed the real BPE count, in
  either shipped encoding (judged by tiktoken itself, not by condense's counter), on
  adversarial text and on real corpus messages; with ``above`` they stay bounds;
- ``run_reductions`` given some counts as ``None`` (not counted yet) returns the very
  result it returns with every count exact — messages, counts, actions, short of target —
  on generated and real sessions, at budgets from tight to loose, whichever messages
  were left uncounted;
- the mask's remembered placeholder is the placeholder made afresh;
- the walk that proves a history fits once reduced, from its oldest units on, gives what
  the plain walk gives.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense.compress import DEFAULT_REDUCTIONS, SessionProtection, compress
from condense.compress import measure as measure_module
from condense.compress.plan import make_plan
from condense.compress.reductions import ladder, run_reductions
from condense.formats.sharegpt import from_sharegpt
from condense.reduce import mask
from condense.repair import repair
from condense.summarizers._text import forget
from condense.testing.sessions import synthetic_session
from condense.tokens.counting import TokenCounter
from condense.tokens.encodings import ENCODINGS, get_encoding
from condense.tokens.estimate import lower_bound_message, lower_bound_text
from condense.tokens.pieces import message_pieces
from condense.types import RawMessage
from condense.units import segment
from corpus import corpus_files
from profiles import examples

# whitespace of every kind, "/" after a newline (one piece in o200k), apostrophes (one
# piece with the letters before them), CamelCase, marks, digits of other scripts
ALPHABET = " \t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000/.\\_-'\"{}:,aZsStTdé中\u0301٣19"


def real_count(text: str, encoding: str) -> int:
    return len(get_encoding(encoding).encode_ordinary(text))


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40) | st.text(max_size=40))
def test_the_lower_bound_never_exceeds_the_bpe_count(text: str) -> None:
    for encoding in ENCODINGS:
        assert lower_bound_text(text) <= real_count(text, encoding)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=3000, max_size=9000), st.integers(0, 3000))
def test_a_bound_read_in_parts_is_still_a_bound(text: str, above: int) -> None:
    bound = lower_bound_text(text, above=above)
    assert bound <= min(real_count(text, encoding) for encoding in ENCODINGS)
    assert bound <= lower_bound_text(text)
    if lower_bound_text(text) > above:
        assert bound > above  # it reads on until the bound passes ``above``


def corpus_messages() -> list[RawMessage]:
    found: list[RawMessage] = []
    for path in corpus_files("openai/*.jsonl") + corpus_files("sharegpt/*.jsonl"):
        with path.open(encoding="utf-8") as handle:
            for line in list(handle)[:20]:
                record = json.loads(line)
                found += record["messages"] if "messages" in record else from_sharegpt(record)
    return found


def test_the_lower_bound_of_real_messages_is_below_their_count() -> None:
    messages = corpus_messages()
    assert len(messages) > 200
    bounded = counted = 0
    for encoding in ENCODINGS:
        counter = TokenCounter(encoding=encoding)
        for message in messages:
            bound = lower_bound_message(message)
            assert bound <= counter.message(message)
            assert lower_bound_message(message, above=40) <= bound
            bounded, counted = bounded + bound, counted + counter.message(message)
    assert bounded > counted / 3  # tight enough to decide without BPE


def sessions() -> list[list[RawMessage]]:
    found = [synthetic_session(n, seed=n) for n in (30, 90, 240)]
    found.append(synthetic_session(60, seed=7, output_chars=400, parallel=False))
    for path in corpus_files("openai/*.jsonl")[:3]:
        with path.open(encoding="utf-8") as handle:
            joined = [m for line in list(handle)[:6] for m in json.loads(line)["messages"]]
        found.append(repair(joined).messages)
    return found


SESSIONS = sessions()


def reduce_with(
    history: list[RawMessage], budget: int, counts: list[int | None], counter: TokenCounter
) -> tuple[Any, ...]:
    units = segment(history)
    plan = make_plan(
        units,
        protection=SessionProtection(tail_tokens=500),
        messages=history,
        unit_tokens=lambda u: sum(counter.counts(history[u.start : u.stop])),
    )
    reduced = run_reductions(
        history,
        counts,
        plan=plan,
        rungs=ladder(plan, DEFAULT_REDUCTIONS),
        budget=budget,
        counter=counter,
    )
    return reduced.messages, reduced.counts, reduced.actions, reduced.short_of_target


@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(range(len(SESSIONS))),
    st.floats(0.02, 1.2),
    st.randoms(use_true_random=False),
)
def test_reductions_with_counts_missing_equal_those_with_every_count(
    which: int, share: float, rng: random.Random
) -> None:
    history = SESSIONS[which]
    counter = TokenCounter()
    exact = counter.counts(history)
    budget = max(1, int(share * sum(exact)))
    # left uncounted: any messages (the engine leaves out what its walk reduced)
    missing: list[int | None] = [None if rng.random() < 0.7 else n for n in exact]
    plain = reduce_with(history, budget, list(exact), counter)
    assert reduce_with(history, budget, missing, TokenCounter()) == plain


@pytest.mark.parametrize("which", range(len(SESSIONS)))
def test_nothing_counted_gives_the_same_at_every_budget(which: int) -> None:
    history = SESSIONS[which]
    counter = TokenCounter()
    total = sum(counter.counts(history))
    for share in (0.05, 0.2, 0.5, 0.8, 1.0):
        budget = int(share * total)
        plain = reduce_with(history, budget, list(counter.counts(history)), counter)
        lazy = reduce_with(history, budget, [None] * len(history), TokenCounter())
        assert lazy == plain


def test_a_message_replaced_is_not_counted() -> None:
    """What the reductions replace is not tokenized where its bound tells: a session
    whose old outputs are masked costs BPE over what is kept, not over everything."""
    history = synthetic_session(120, seed=3)
    total = sum(TokenCounter().counts(history))
    lazy = TokenCounter()
    kept, _, actions, _ = reduce_with(history, total // 3, [None] * len(history), lazy)
    assert actions
    counted = [m for m in history if hash(message_pieces(m)) in lazy._cache]
    replaced = [m for m, out in zip(history, kept, strict=True) if out is not m]
    assert all(m in counted for m in history if m in kept)  # what is sent is counted
    size = sum(len(json.dumps(m)) for m in history)
    assert sum(len(json.dumps(m)) for m in counted) < size / 2
    assert sum(len(json.dumps(m)) for m in replaced if m in counted) < size / 5


def test_the_remembered_placeholder_is_the_one_made_afresh() -> None:
    rng = random.Random(5)
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    for _ in range(50):
        output = "\n".join(
            f"line {i} ERROR code={rng.randint(0, 999)} host=db{i}:5432" for i in range(80)
        )
        arguments = json.dumps({"command": f"pytest -k t{rng.randint(0, 9)}"})
        call = {**call, "function": {"name": "bash", "arguments": arguments}}
        first = mask.placeholder(call, output, {"document": 1})
        assert first == mask._placeholder(call, output, {"document": 1})
        assert mask.placeholder(call, output, {"document": 1}) == first
        other = mask.placeholder(call, output + "\nexit code 3")
        assert other == mask._placeholder(call, output + "\nexit code 3", None)
    forget()
    assert not mask._placeholders


WALKED = [
    *SESSIONS[:4],
    synthetic_session(150, seed=11, output_chars=1200),
    synthetic_session(40, seed=12, output_chars=9000),
]


def test_the_walk_proven_oldest_first_gives_what_the_newest_first_walk_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where every unit reduced fits, the walk proves it from the oldest units on and
    stops there (``measure._fits_reduced``); the plain walk reduces every unit newest
    first. Both give the same output and report, at every budget."""
    proven: list[bool] = []
    fits_reduced = measure_module._fits_reduced

    def recorded(*args: Any, **kwargs: Any) -> bool:
        proven.append(fits_reduced(*args, **kwargs))
        return proven[-1]

    fast, plain = [], []
    for history in WALKED:
        total = sum(TokenCounter().counts(history))
        for share in (0.03, 0.08, 0.15, 0.3, 0.6):
            budget = max(50, int(total * share))
            with monkeypatch.context() as patch:
                patch.setattr(measure_module, "_fits_reduced", recorded)
                fast.append(compress(history, budget=budget))
            with monkeypatch.context() as patch:
                patch.setattr(measure_module, "_likely_fits", lambda *args: False)
                forget()
                plain.append(compress(history, budget=budget))
    assert True in proven  # the proof ended walks
    for one, other in zip(fast, plain, strict=True):
        assert one.messages == other.messages
        assert one.summary == other.summary
        assert one.report.units == other.report.units
        assert one.report.tokens_after == other.report.tokens_after
        assert one.report.short_of_target == other.report.short_of_target
