"""Selection by information: properties of the key-fact scan and the digest built on it."""

from __future__ import annotations

import itertools
import json
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense.summarizers import ExtractiveSummarizer
from condense.summarizers import digest as dg
from condense.summarizers._text import forget
from condense.summarizers.salient import (
    info_score,
    is_observation,
    key_lines,
    salient,
    strip_think,
)
from condense.tokens import count_text
from profiles import examples

Message = dict[str, Any]
GENERIC = [
    "ok",
    "done, nothing to report here",
    "processing the next batch of records now",
    "INFO worker heartbeat ok",
    "all good so far, continuing with the work",
    "reading the configuration and starting up",
]
IDENTIFIED = [
    "ERROR [E4417] reconciliation aborted at src/jobs/ledger_sync.py:218",
    "psycopg.OperationalError: connection to db-replica-07.internal:6432 failed",
    "3f9c2a7d1e is the first bad commit",
    "the runbook is https://wiki.example.internal/runbooks/ledger-4417",
    "retry_backoff_ms = 3471",
    "FAILED tests/test_payout.py::test_partial_refund_race - AssertionError",
    "customer account ACCT-88213, ticket OPS-4127",
    "p99 latency: 1843 ms (budget 800 ms)",
]

words = st.text(alphabet=string.ascii_lowercase + " ", min_size=3, max_size=60)


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def work(outputs: list[str], asks: list[str] | None = None) -> list[Message]:
    """A session: each output answers a bash call; asks come in between."""
    messages: list[Message] = []
    asks = list(asks or [])
    for number, output in enumerate(outputs):
        if asks:
            messages.append({"role": "user", "content": asks.pop(0)})
        messages.append(
            {
                "role": "assistant",
                "content": "Running it.",
                "tool_calls": [call(f"c{number}", "bash", command=f"make step{number}")],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": output})
    messages.extend({"role": "user", "content": ask} for ask in asks)
    return messages


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.sampled_from(GENERIC) | words, min_size=1, max_size=40),
    st.sampled_from(IDENTIFIED),
    st.data(),
)
def test_an_identifier_line_is_preferred_over_generic_ones(
    noise: list[str], fact: str, data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(noise)))
    output = "\n".join([*noise[:at], fact, *noise[at:]])
    assert key_lines(output, count=1) == [fact]
    [chosen] = salient(work([output]), limit=1)
    assert chosen.text == fact
    assert all(info_score(fact) > info_score(line) for line in noise)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.sampled_from(IDENTIFIED) | words, min_size=1, max_size=30), st.data())
def test_the_scan_is_deterministic_chronological_and_never_repeats(
    lines: list[str], data: st.DataObject
) -> None:
    outputs = ["\n".join(lines[i::3]) for i in range(3)]
    limit = data.draw(st.integers(1, 12))
    first = salient(work(outputs), limit=limit)
    assert first == salient(work(outputs), limit=limit)
    assert len(first) <= limit
    assert [c.position for c in first] == sorted(c.position for c in first)
    assert len({c.text for c in first}) == len(first)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(IDENTIFIED) | st.sampled_from(GENERIC) | words, max_size=40),
    st.integers(1, 8),
    st.integers(24, 400),
)
def test_key_lines_never_exceed_their_size(lines: list[str], count: int, size: int) -> None:
    kept = key_lines("\n".join(lines), count=count, max_chars=size)
    assert len(kept) <= count
    assert sum(len(line) for line in kept) + 3 * max(0, len(kept) - 1) <= size


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.text(alphabet=string.ascii_letters + " ", min_size=5, max_size=50).filter(
            lambda ask: ask.strip()
        ),
        min_size=1,
        max_size=6,
        unique=True,
    ),
    st.lists(st.sampled_from(IDENTIFIED) | st.sampled_from(GENERIC), min_size=1, max_size=12),
    st.integers(60, 3_000),
)
def test_the_digest_keeps_every_ask_and_never_exceeds_its_size(
    asks: list[str], outputs: list[str], target: int
) -> None:
    asks = [f"Please do {ask.strip()}" for ask in asks]
    span = work(outputs, asks)
    text = ExtractiveSummarizer().summarize(span, previous=None, target_tokens=target)
    assert count_text(text) <= target
    assert text == ExtractiveSummarizer().summarize(span, previous=None, target_tokens=target)
    if target >= 120 * len(asks):  # room for every ask: each is there, verbatim
        found = dg.parse(text).sections[dg.ASKS]
        for ask in asks:
            assert ask in found


def test_every_planted_fact_survives_a_long_span_at_a_small_target() -> None:
    noise = [f"2025-03-{d:02d}T10:00:07Z INFO {GENERIC[d % 6]}" for d in range(1, 29)]
    outputs = ["\n".join([*noise, fact, *noise]) for fact in IDENTIFIED]
    filler = ["\n".join(noise * 3) for _ in range(40)]
    span = work([*filler[:20], *outputs, *filler[20:]], ["Fix the ledger job."])
    text = ExtractiveSummarizer().summarize(span, previous=None, target_tokens=1_200)
    assert count_text(text) <= 1_200
    for fact in IDENTIFIED:
        assert fact in text


def test_a_previous_summary_is_shrunk_by_rank_not_by_its_tail() -> None:
    generic = [f"- the worker step {i} went through as planned" for i in range(40)]
    previous = "\n".join(
        ["## Scope", "- 500 messages summarized", f"## {dg.KEY}", *generic, f"- {IDENTIFIED[0]}"]
    )
    new = work(["nothing new here, carrying on"], ["Go on."])
    text = ExtractiveSummarizer().summarize(new, previous=previous, target_tokens=150)
    assert count_text(text) <= 150
    assert IDENTIFIED[0] in text  # the last line of the previous summary, the best one
    assert "- 503 messages summarized" in text  # 500 before, 3 now


def test_observations_in_user_messages_are_not_asks() -> None:
    span: list[Message] = [
        {"role": "user", "content": "Fix the crash in parser.c please."},
        {"role": "assistant", "content": "```\nmake test\n```"},
        {
            "role": "user",
            "content": "EXECUTION TIMED OUT\n(Open file: n/a)\n(Current directory: /repo)\nbash-$",
        },
        {"role": "assistant", "content": "```\nopen parser.c\n```"},
        {
            "role": "user",
            "content": "[File: /repo/parser.c (420 lines total)]\n1:#include <stdio.h>\n"
            "(Current directory: /repo)\nbash-$",
        },
    ]
    assert not is_observation(span[0]["content"], first=True)
    assert is_observation(span[2]["content"], first=False)
    assert is_observation(span[4]["content"], first=False)
    text = ExtractiveSummarizer().summarize(span, previous=None, target_tokens=400)
    asks = dg.parse(text).sections[dg.ASKS]
    assert list(asks) == ["Fix the crash in parser.c please."]


def test_think_blocks_are_reasoning_not_the_last_state() -> None:
    span: list[Message] = [
        {"role": "user", "content": "What is the next earnings date for TSLA?"},
        {
            "role": "assistant",
            "content": "<think>\nThe user wants dates. I should call the tool.\n</think>\n"
            "The next earnings date is 2025-04-22; EPS last quarter was 0.73.",
        },
    ]
    text = ExtractiveSummarizer().summarize(span, previous=None, target_tokens=300)
    state = dg.parse(text).last_state
    assert "2025-04-22" in state
    assert "<think>" not in text and "I should call the tool" not in text
    assert strip_think("<think>a</think>b") == " b"


def test_repeated_actions_are_aggregated_with_counts_and_ranges() -> None:
    span: list[Message] = [{"role": "user", "content": "Read every log part."}]
    for i in range(120):
        span.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{i}", "bash", command=f"cat logs/part{i}.log")],
            }
        )
        span.append({"role": "tool", "tool_call_id": f"c{i}", "content": "INFO fine\n" * 3})
    text = ExtractiveSummarizer().summarize(span, previous=None, target_tokens=300)
    assert "cat logs/part0.log … cat logs/part119.log (×120)" in text
    assert "logs/part0.log … logs/part119.log ×120" in text
    assert "cat logs/part57.log" not in text


_LINE_TEXT = st.text(
    alphabet=st.sampled_from(list("abcxyzEFRT_-./:=#%0123456789 ms\"'[]()")), max_size=60
)


@settings(max_examples=examples(200), deadline=None)
@given(lines=st.lists(_LINE_TEXT, min_size=1, max_size=8))
def test_a_line_is_worth_the_same_whatever_was_valued_before(lines: list[str]) -> None:
    """Without a span, a line's worth is a function of the line alone: valuing other
    lines first (words are valued once and remembered) changes nothing."""
    alone = []
    for line in lines:
        forget()
        alone.append(info_score(line))
    forget()
    assert [info_score(line) for line in lines] == alone


def test_further_words_of_a_line_count_less_and_less() -> None:
    """Each further specific word adds less than the one before (a dump of ids is not
    worth its length in facts), and a line never loses worth by saying more."""
    ids = ["E4417", "ACCT-88213", "db-07.internal:6432", "3f9c2a7d1e", "OPS-4127", "x.py:218"]
    worth = [info_score(" ".join(ids[:n])) for n in range(1, len(ids) + 1)]
    steps = [after - before for before, after in itertools.pairwise(worth)]
    assert all(step > 0 for step in steps)
    assert all(later < earlier for earlier, later in itertools.pairwise(steps))
