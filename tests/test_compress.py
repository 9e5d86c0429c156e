"""compress: always valid, within budget when reachable, protected parts intact, pure."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense import repair, validate
from condense.compress import BudgetError, compress
from condense.compress.plan import layout, reducible_runs
from condense.exceptions import InputError
from condense.providers import PROFILES
from condense.reduce.summary import find_summary
from condense.testing import DeterministicSummarizer
from condense.testing.sessions import synthetic_session
from condense.tokens import count_tokens
from condense.turns import opens_turn
from condense.units import segment
from corpus import corpus_files
from profiles import examples
from strategies import histories


@st.composite
def sessions(draw: st.DrawFn) -> list[Any]:
    history = synthetic_session(
        draw(st.integers(min_value=3, max_value=80)),
        seed=draw(st.integers(min_value=0, max_value=10_000)),
        output_chars=draw(st.sampled_from([40, 400, 3000, 20_000])),
    )
    if draw(st.booleans()):  # an image as a content part, and CJK text
        history.insert(
            2,
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "看这张截图：错误代码 E1234"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                    },
                ],
            },
        )
    return history


def _runs(repaired: list[Any], budget: int) -> int:
    units = segment(repaired)
    plan = layout(
        units,
        tail_tokens=budget // 4,
        unit_tokens=lambda u: count_tokens(repaired[u.start : u.stop]) - 3,
    )
    return len(reducible_runs(units, plan))


@pytest.mark.parametrize("provider", sorted(PROFILES))
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=sessions() | histories(), budget=st.integers(min_value=150, max_value=30_000))
def test_compress_invariants(provider: str, messages: list[Any], budget: int) -> None:
    before = copy.deepcopy(messages)
    if not messages:
        with pytest.raises(InputError, match="holds no message"):
            compress(messages, budget=budget, provider=provider)
        return
    result = compress(messages, budget=budget, provider=provider, tail_tokens=budget // 4)
    assert messages == before, "compress mutated its input"
    assert validate(result.messages, provider=provider) == []
    assert result.report.tokens_after == count_tokens(result.messages, media=result.report.media)
    assert result.report.fits == (result.report.tokens_after <= budget)
    repaired = repair(messages, provider=provider).messages
    if repaired and repaired[0].get("role") == "system":
        assert result.messages[0] == repaired[0]
    users = [m for m in repaired if opens_turn(m)]  # the latest ask: a user message that
    if users:  # says something (blank echoes after it belong to its turn)
        latest = users[-1]
        assert any(m == latest for m in result.messages) or any(
            m.get("role") == "user" and _merged_with_summary(m, latest) for m in result.messages
        )
    if not result.report.fits:  # only when the protected part alone leaves no room
        room_needed = result.report.protected_tokens + 100 * max(1, _runs(repaired, budget))
        assert room_needed > budget, result.report.describe()


_NOTICE = re.compile(r"\[condense: \d+ earlier messages? \([^)]*\) left out to fit the budget\]")


def _without_notices(content: Any) -> Any:
    if isinstance(content, list):
        return [
            p
            for p in content
            if not (isinstance(p, dict) and _NOTICE.fullmatch(str(p.get("text"))))
        ]
    if isinstance(content, str):
        return _NOTICE.sub("", content).strip()
    return content


def _merged_with_summary(message: dict[str, Any], latest: dict[str, Any]) -> bool:
    """``message`` is ``latest`` with summary blocks (or one-line notices) put before or
    after its content."""
    content, original = _without_notices(message.get("content")), latest.get("content")
    if content == original or (
        isinstance(content, str) and isinstance(original, str) and content == original.strip()
    ):
        return content != message.get("content")
    if isinstance(content, str) and isinstance(original, str) and content != original:
        # an older plain user text joined before it (a span left out between them)
        text = original.strip()
        return content.endswith("\n\n" + text) or content.startswith(text + "\n\n")
    if isinstance(content, list) and isinstance(original, list):
        parts = [p for p in content if find_summary({"content": [p]}) is None]
        return parts != content and parts == original
    found = find_summary(message)
    while found is not None:
        content = found[1]
        found = find_summary({"content": content})
    return content != message.get("content") and content == str(original).strip()


NEXT_ASK = {"role": "user", "content": "Thanks. What is left to do?"}
"""Ends a session's running loop: a running turn is never reduced (condense.turns), so the
tests about reducing a long loop ask something after it."""


def test_fits_a_long_session_and_keeps_the_head_byte_identical() -> None:
    session = [*synthetic_session(400, seed=7), NEXT_ASK]
    result = compress(session, budget=20_000)
    assert result.report.fits
    assert result.report.tokens_after <= 20_000
    assert result.messages[0] is session[0]
    assert result.messages[1] is session[1]
    assert result.summary
    assert result.report.actions["summarized"] > 0
    assert result.messages[-1] is session[-1]
    assert result.report.tokens_before == count_tokens(session)


def test_under_budget_returns_the_same_messages() -> None:
    session = synthetic_session(20, seed=1, output_chars=50)
    result = compress(session, budget=100_000)
    assert all(a is b for a, b in zip(result.messages, session, strict=True))
    assert result.summary is None
    assert set(result.report.actions) == {"kept"}


def test_cheap_reductions_come_first() -> None:
    session = synthetic_session(60, seed=3, output_chars=3000)
    total = count_tokens(session)
    result = compress(session, budget=int(total * 0.7))
    assert result.report.fits
    assert "summarized" not in result.report.actions
    assert result.report.actions.get("masked", 0) + result.report.actions.get("deduped", 0) > 0
    masked = [m for m in result.messages if str(m.get("content", "")).startswith("[condense:")]
    assert masked
    assert all("\n" not in m["content"] for m in masked)


def test_parallel_tool_exchanges_stay_whole() -> None:
    session = synthetic_session(300, seed=11, parallel=True)
    for budget in (3_000, 8_000, 30_000):
        result = compress(session, budget=budget, provider="anthropic")
        assert validate(result.messages, provider="anthropic") == []


def test_iterative_summary_folds_the_previous_one() -> None:
    session = [*synthetic_session(300, seed=5), NEXT_ASK]
    first = compress(session, budget=15_000)
    grown = [*first.messages]
    grown += [*synthetic_session(200, seed=6)[2:], NEXT_ASK]
    second = compress(grown, budget=15_000, previous=first.state)
    summaries = [find_summary(m) for m in second.messages]
    assert sum(1 for s in summaries if s is not None) == 1
    assert second.summary is not None
    assert "summary of" not in second.summary  # no summary of a summary header inside


def test_incremental_call_reuses_the_previous_output() -> None:
    session = synthetic_session(500, seed=9)
    first = compress(session, budget=20_000)
    grown = [*session, {"role": "user", "content": "and now deploy it"}]
    second = compress(grown, budget=20_000, previous=first.state)
    assert second.report.incremental
    assert second.messages[-1] is grown[-1]
    assert validate(second.messages) == []
    assert second.report.fits


def test_strict_budget_raises_with_the_best_effort_attached() -> None:
    session = [{"role": "system", "content": "rule " * 3000}, {"role": "user", "content": "hi"}]
    with pytest.raises(BudgetError) as caught:
        compress(session, budget=500, strict_budget=True)
    assert caught.value.result.messages
    assert not compress(session, budget=500).report.fits


def test_failing_summarizer_falls_back_and_says_so() -> None:
    session = [*synthetic_session(200, seed=2), NEXT_ASK]
    result = compress(session, budget=10_000, summarizer=DeterministicSummarizer(fail=True))
    assert result.report.summarizer_fell_back
    assert result.report.fallback_reason
    assert validate(result.messages) == []


def test_a_crash_of_the_summarizer_leaves_a_notice_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Even the fallback summarizer failing (a bug of condense's own) does not cost the
    caller the call: the span gets the one-line notice, the history stays valid and
    within the budget, and the report names the error."""
    import condense.summarizers.extractive as extractive

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("scanner bug")

    monkeypatch.setattr(extractive, "Scan", crash)  # the scan of every span it reads
    session = [*synthetic_session(200, seed=2), NEXT_ASK]
    for summarizer in ("extractive", DeterministicSummarizer(fail=True)):
        result = compress(session, budget=10_000, summarizer=summarizer)
        assert validate(result.messages) == []
        assert result.report.fits
        assert result.report.summarizer_fell_back
        assert result.report.fallback_reason == "RuntimeError: scanner bug"
        assert "fell back: RuntimeError: scanner bug" in result.report.describe()
        assert result.report.left_out
        assert not any(find_summary(message) for message in result.messages)


def test_bad_arguments() -> None:
    from condense import InputError

    with pytest.raises(InputError):
        compress([], budget=0)
    with pytest.raises(InputError):
        compress({"messages": []}, budget=10)  # type: ignore[arg-type]


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("openai/*.jsonl"), ids=lambda path: path.name)
def test_corpus_records_compress_to_a_small_budget(path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        messages = json.loads(line)["messages"]
        total = count_tokens(messages)
        budget = max(2_000, total // 3)
        result = compress(messages, budget=budget)
        assert validate(result.messages) == []
        if result.report.protected_tokens + 300 <= budget:
            assert result.report.fits, (path.name, total, result.report.describe())


def test_summary_block_is_found_standalone_and_merged() -> None:
    from condense.reduce.summary import summary_block, with_block

    block = summary_block("- asked to fix ORD-4102", covered=12)
    assert find_summary({"role": "user", "content": block}) == ("- asked to fix ORD-4102", "")
    before = with_block({"role": "user", "content": "next ask"}, block, first=True)
    assert find_summary(before) == ("- asked to fix ORD-4102", "next ask")
    after = with_block({"role": "assistant", "content": "done"}, block, first=False)
    assert find_summary(after) == ("- asked to fix ORD-4102", "done")
    parts = with_block(
        {"role": "user", "content": [{"type": "text", "text": "x"}]}, block, first=True
    )
    assert find_summary(parts) == ("- asked to fix ORD-4102", "")
    assert find_summary({"role": "tool", "content": "log mentions [condense: summary of"}) is None


@pytest.mark.parametrize("provider", ["anthropic", "gemini", "strict"])
def test_leaving_out_the_first_exchange_keeps_the_latest_ask_as_written(provider: str) -> None:
    """Repair opens a history that starts with a tool exchange with a filler user
    message; when the exchange is left out, the filler meets the latest ask. The ask
    must come out as written, not joined to the filler (found by hypothesis)."""

    def exchange(n: int, output: str) -> list[dict[str, Any]]:
        calls = [
            {
                "id": f"call_{n}_{j}",
                "type": "function",
                "function": {"name": "bash", "arguments": "{}"},
            }
            for j in range(2)
        ]
        return [
            {"role": "assistant", "content": None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": c["id"], "content": output} for c in calls),
        ]

    history = [
        {"role": "system", "content": "You are terse."},
        *exchange(0, "x " * 30),
        {"role": "user", "content": "first part of the ask"},
        {"role": "user", "content": "and its second part"},
        *exchange(3, "done"),
    ]
    repaired = repair(history, provider=provider).messages
    latest = [m for m in repaired if m.get("role") == "user"][-1]
    protected = compress(history, budget=1, provider=provider).report.protected_tokens
    left_out = 0
    for budget in range(protected, count_tokens(repaired)):
        result = compress(history, budget=budget, provider=provider, tail_tokens=0)
        assert result.report.fits, (budget, result.report.describe())
        assert latest in result.messages, (budget, result.report.describe())
        left_out += bool(result.report.left_out)
    assert left_out  # the budgets reach the one where the exchange is left out
