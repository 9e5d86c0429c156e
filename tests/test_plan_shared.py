"""One planner, two paths (issue 9): a training record and a session with the same
messages, budget and protection policy get the same span replaced.

The two paths count differently on purpose — a dataset counts what the trainer sees
(each turn's text plus ``turn_overhead``), a session what the API bills (each message's
text, its framing and the reply priming) — so the test gives them the same costs: plain
text messages, which cost their text plus 4 tokens either way, a session budget 3 tokens
(the reply priming) above the dataset's target, and a dataset reserve that includes the
24 tokens of the session's summary framing."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense.compress import SUMMARIZE, HeadTailProtection, SessionProtection, compress
from condense.compress.assemble import SUMMARY_OVERHEAD
from condense.datasets import DatasetOptions, RecordProcessor, RecordResult, Status
from condense.datasets.record import NO_ROOM, UNTRAINABLE
from condense.exceptions import InputError
from condense.summarizers import ExtractiveSummarizer
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from profiles import examples

SENTENCE = "the build fails because a test reads a stale cache file so we clear it and rerun"
WORDS = SENTENCE.split(" ")


def conversation(turns: int, seed: int) -> list[dict[str, Any]]:
    """A system prompt, then user and assistant turns of 5 to 400 words, alternating."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful agent."}]
    for index in range(turns):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 400)))
        messages.append({"role": "user" if index % 2 == 0 else "assistant", "content": words})
    return messages


def dataset_span(
    messages: list[dict[str, Any]], options: DatasetOptions
) -> tuple[Status | None, tuple[int, int] | None]:
    """The dataset path's status and the turns its planner chose to replace (``None``:
    nothing). The span written may then move to keep a trainable role order (see
    ``condense.datasets.placement``); a record where no span can is flagged, status
    ``None`` here: a session has no such rule to compare with."""
    line = json.dumps({"messages": messages}).encode()
    result = RecordProcessor(options, ExtractiveSummarizer()).process(line)
    assert isinstance(result, RecordResult)
    if result.reason in (UNTRAINABLE, NO_ROOM):
        return None, None
    if result.status is not Status.COMPRESSED:
        return result.status, None
    assert result.stats is not None
    start, stop = result.stats.get("planned_span", result.stats["span"])
    return result.status, (start, stop)


def session_span(
    messages: list[dict[str, Any]], options: DatasetOptions, summary: int
) -> tuple[bool, tuple[int, int] | None]:
    """Whether the session path fits, and the messages it replaces (``None``: nothing)."""
    result = compress(
        messages,
        budget=options.target_tokens + REPLY_PRIMING_TOKENS,
        protection=options.protection,
        summary_tokens=summary,
        reductions=(SUMMARIZE,),
    )
    replaced = [unit for unit in result.report.units if unit.action == "summarized"]
    if not replaced:
        return result.report.fits, None
    return result.report.fits, (replaced[0].start, replaced[-1].stop)


def assert_same_span(messages: list[dict[str, Any]], options: DatasetOptions, summary: int) -> None:
    """Both paths replace the same span; where the protected turns alone exceed the
    target the dataset keeps the record and flags it, and the session does not fit
    either (it returns the smallest history it found: that is its contract)."""
    status, span = dataset_span(messages, options)
    fits, session = session_span(messages, options, summary)
    if status is None:
        return
    if status is Status.OVER_LIMIT:
        assert not fits
    else:
        assert status in (Status.PASSED, Status.COMPRESSED) and fits
        assert span == session


@settings(max_examples=examples(40), deadline=None)
@given(
    turns=st.integers(min_value=4, max_value=40),
    seed=st.integers(min_value=0, max_value=10_000),
    fraction=st.floats(min_value=0.15, max_value=1.1),
    tail_turns=st.integers(min_value=0, max_value=6),
    summary=st.sampled_from([64, 200, 600]),
)
def test_the_dataset_and_session_paths_replace_the_same_span(
    turns: int, seed: int, fraction: float, tail_turns: int, summary: int
) -> None:
    messages = conversation(turns, seed)
    total = sum(len(str(m["content"]).split()) + 4 for m in messages)  # about the tokens
    options = DatasetOptions(
        target_tokens=max(64, int(total * fraction)),
        tail_turns=tail_turns,
        summary_tokens=summary + SUMMARY_OVERHEAD,
        turn_overhead=4,
    )
    assert_same_span(messages, options, summary)


def test_the_spans_agree_on_a_long_conversation_cut_hard() -> None:
    messages = conversation(60, seed=1)
    options = DatasetOptions(
        target_tokens=3000, tail_turns=4, summary_tokens=200 + SUMMARY_OVERHEAD
    )
    status, span = dataset_span(messages, options)
    assert status is Status.COMPRESSED and span is not None and span[0] > 0
    assert session_span(messages, options, 200) == (True, span)


def test_the_spans_agree_at_every_budget_across_span_boundaries() -> None:
    """Every target from 280 to 440 tokens: short turns put a span boundary every few
    tokens, so an off-by-a-few in either path's rule shows."""
    messages = [{"role": "system", "content": "You are a careful agent."}]
    rng = random.Random(7)
    for index in range(40):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        messages.append({"role": "user" if index % 2 == 0 else "assistant", "content": words})
    spans = set()
    for target in range(280, 440):
        options = DatasetOptions(target_tokens=target, tail_turns=3, summary_tokens=48 + 24)
        assert_same_span(messages, options, 48)
        spans.add(dataset_span(messages, options)[1])
    assert len(spans) > 10  # the sweep crossed many boundaries


@pytest.mark.parametrize(
    "make",
    [
        lambda: compress([{"role": "user", "content": "hi"}], budget=100, protection="head"),
        lambda: HeadTailProtection(tail_messages=-1),
        lambda: HeadTailProtection(tail_messages=2, head_roles="system"),  # type: ignore[arg-type]
        lambda: HeadTailProtection(tail_messages=2, head_roles=("human",)),
        lambda: SessionProtection(tail_tokens=-5),
    ],
)
def test_a_wrong_protection_is_a_clear_input_error(make: Any) -> None:
    with pytest.raises(InputError, match=r"protection|tail_messages|head_roles|tail_tokens"):
        make()
