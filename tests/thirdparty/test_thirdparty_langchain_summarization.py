"""LangChain's ``SummarizationMiddleware`` tests, re-expressed against condense.

Source: langchain-ai/langchain
``libs/langchain_v1/tests/unit_tests/agents/middleware/implementations/test_summarization.py``
(see ``SOURCES.md``). LangChain triggers on a token or message count and keeps a number
of messages or tokens (``keep=("messages", n)`` / ``("tokens", n)``), replacing the rest
with one summary message; condense takes one ``budget`` and keeps a tail of
``tail_tokens``. The middleware's own machinery (trigger clauses, model profiles,
``RemoveMessage`` updates, ``lc_source`` metadata, usage-metadata triggers) has no
condense equivalent and is left out (listed in ``SOURCES.md``). LangChain's messages are
mapped to chat dicts (``HumanMessage`` → user, ``AIMessage`` → assistant, ``ToolMessage``
→ tool). Outputs are judged by ``thirdparty_rules``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from thirdparty_rules import (
    assert_accepted,
    fits_at_provider,
    frozen,
    holding,
    over_budget_line,
    provider_tokens,
    text_of,
)

import condense
from condense.compress import BudgetError
from condense.testing import DeterministicSummarizer

Message = dict[str, Any]


def _words(label: str, count: int) -> str:
    return " ".join(f"{label}{i}" for i in range(count))


def _human(text: str) -> Message:
    return {"role": "user", "content": text}


def _ai(text: str, calls: list[str] | None = None) -> Message:
    message: Message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": f"tool_{call_id}", "arguments": "{}"},
            }
            for call_id in calls
        ]
    return message


def _tool(call_id: str, text: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _conversation(turns: int, words: int = 60) -> list[Message]:
    messages: list[Message] = []
    for i in range(turns):
        messages.append(_human(f"Message {2 * i + 1} " + _words("q", words)))
        messages.append(_ai(f"Message {2 * i + 2} " + _words("a", words)))
    return messages


def _summary_messages(result: condense.CompressionResult) -> list[Message]:
    assert result.summary is not None
    return holding(result.messages, result.summary[:60])


# --- no summary when under the trigger ------------------------------------------------


def test_below_the_budget_nothing_happens() -> None:
    """LangChain ``test_summarization_middleware_no_summarization_cases``: below the
    threshold the middleware returns no update — condense returns the same objects."""
    given = [_human("Hello"), _ai("Hi")]
    result = condense.compress(given, budget=1_000)
    assert all(out is inp for out, inp in zip(result.messages, given, strict=True))
    assert len(result.messages) == len(given)
    assert result.summary is None


def test_keeping_everything_means_no_cut() -> None:
    """LangChain ``test_summarization_middleware_cutoff_at_boundary`` and
    ``..._binary_search_edge_cases`` (all messages fit the kept allowance: cutoff 0): when
    the tail allowance holds the whole history and the budget too, nothing is cut."""
    given = _conversation(3, words=10)
    total = provider_tokens(given)
    result = condense.compress(given, budget=total + 50, tail_tokens=total + 50)
    assert result.messages == given


def test_no_summary_when_there_is_no_older_history() -> None:
    """LangChain ``test_summarization_middleware_skips_when_no_safe_cutoff``: one request
    over the trigger with nothing older to drop is not summarized. condense: it is
    returned whole and reported over budget (``strict_budget`` raises)."""
    given = [_human("Current request " + _words("w", 2_000))]
    result = condense.compress(given, budget=1_000)
    assert result.messages == given
    assert result.summary is None
    assert not result.report.fits
    with pytest.raises(BudgetError):
        condense.compress(given, budget=1_000, strict_budget=True)


def test_an_empty_history_is_a_clear_caller_error() -> None:
    """LangChain ``test_summarization_middleware_summary_creation`` (empty input gives
    "No previous conversation history." instead of a crash). condense's contract differs
    honestly: every provider refuses a request with no message, so an empty history is
    a caller mistake — refused with a clear error, never a traceback from inside."""
    with pytest.raises(condense.InputError, match="no message"):
        condense.compress([], budget=1_000)


# --- one summary, the newest messages kept verbatim -----------------------------------


def test_one_summary_replaces_the_old_part_and_the_newest_messages_stay() -> None:
    """LangChain ``test_summarization_middleware_full_workflow`` and
    ``test_summarization_middleware_keep_messages``: the old part is replaced by exactly
    one summary message, and the newest messages follow it unchanged."""
    given = _conversation(8)
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    assert len(_summary_messages(result)) == 1
    assert result.messages[-2:] == given[-2:]
    assert len(result.messages) < len(given)


def test_the_kept_tail_follows_the_token_allowance() -> None:
    """LangChain ``test_summarization_middleware_profile_inference_triggers_summary``
    (``keep=("tokens", 400)`` keeps the last messages worth 400 tokens; a larger
    allowance keeps more): condense's ``tail_tokens`` — every message of the newest
    allowance is kept verbatim, and a larger allowance never keeps fewer of them."""
    given = _conversation(10)
    budget = provider_tokens(given) * 2 // 3
    kept = []
    for allowance in (200, 400, 600):
        result = condense.compress(given, budget=budget, tail_tokens=allowance)
        assert_accepted(result.messages)
        newest = 0
        while (
            newest < len(given) and provider_tokens(given[len(given) - newest - 1 :]) <= allowance
        ):
            newest += 1
        if newest:
            assert result.messages[-newest:] == given[-newest:]
        tail = 0
        while tail < len(result.messages) and result.messages[-tail - 1] is given[-tail - 1]:
            tail += 1
        kept.append(tail)
    assert kept == sorted(kept), f"a larger tail allowance kept fewer messages: {kept}"


def test_a_larger_budget_never_keeps_fewer_messages() -> None:
    """LangChain ``test_summarization_middleware_profile_inference_triggers_summary``: a
    larger allowance keeps more of the conversation ("the cutoff shifts to keep the last
    three messages instead of two"; at the full allowance nothing is summarized). On the
    repository's example session, the messages condense returns untouched never shrink in
    number as the budget grows."""
    session = json.loads((Path(__file__).parents[2] / "examples" / "session.json").read_text())
    untouched = []
    for budget in (24_000, 60_000, 80_000, 100_000):
        result = condense.compress(session, budget=budget)
        assert_accepted(result.messages)
        originals = {id(message) for message in session}
        untouched.append(sum(1 for message in result.messages if id(message) in originals))
    assert untouched == sorted(untouched), f"messages kept untouched per budget: {untouched}"


def test_the_input_is_never_mutated() -> None:
    """LangChain ``test_trigger_copies_mutable_inputs``: the caller's objects are not
    changed by the middleware."""
    given = [
        *_conversation(6),
        _ai("calling", ["c1", "c2"]),
        _tool("c1", "x " * 500),
        _tool("c2", "y"),
    ]
    given.append(_human("go on"))
    before = frozen(given)
    condense.compress(given, budget=provider_tokens(given) // 3)
    assert given == before


# --- AI/tool pairs --------------------------------------------------------------------


def test_token_retention_keeps_an_ai_message_with_its_tool_messages() -> None:
    """LangChain ``test_summarization_middleware_token_retention_preserves_ai_tool_pairs``:
    when the kept part would start on a tool message, the AI message that called it is
    kept too (or both go)."""
    given = [
        _human("first " + _words("h", 40)),
        _ai("A " + _words("a", 60), ["call-1"]),
        _tool("call-1", "T " + _words("t", 30)),
        _human("H " + _words("h", 50)),
        _ai("reply " + _words("r", 40)),
        _human("H " + _words("g", 40)),
    ]
    budget = provider_tokens(given) * 3 // 4
    result = condense.compress(given, budget=budget, tail_tokens=budget // 2)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)


@pytest.mark.parametrize("calls", [3, 10])
def test_parallel_tool_calls_stay_with_their_ai_message(calls: int) -> None:
    """LangChain ``test_summarization_middleware_many_parallel_tool_calls_safety`` and
    ``test_summarization_middleware_find_safe_cutoff_preserves_ai_tool_pair``: an AI
    message with many parallel calls is never separated from any of its results."""
    ids = [f"call_{i}" for i in range(calls)]
    given = [
        *_conversation(4),
        _human(f"calling {calls} tools"),
        _ai(f"calling {calls} tools", ids),
        *(_tool(call_id, f"result_{call_id} " + _words("r", 30)) for call_id in ids),
        _ai("all tools answered " + _words("s", 40)),
        _human("msg2"),
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)


def test_the_cut_at_the_start_of_a_tool_sequence_is_clean() -> None:
    """LangChain ``test_summarization_middleware_cutoff_at_start_of_tool_sequence``: a
    cut just before an AI message that calls a tool keeps the pair whole."""
    given = [
        _human("msg1 " + _words("a", 80)),
        _ai("ack " + _words("b", 80)),
        _human("msg2 " + _words("c", 80)),
        _ai("ai", ["call1"]),
        _tool("call1", "result"),
        _ai("answered"),
        _human("msg3"),
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert holding(result.messages, "answered")


def test_an_orphan_tool_message_does_not_survive_alone() -> None:
    """LangChain ``test_summarization_middleware_find_safe_cutoff_point`` and
    ``..._orphan_tool``: a tool message whose AI message never called it (``call2``) is
    not left in the output as an orphan, and its removal is reported."""
    given = [
        _human("msg1"),
        _ai("ai", ["call1"]),
        _tool("call1", "result1"),
        _tool("call2", "result2"),
        _human("msg2"),
    ]
    result = condense.compress(given, budget=5_000)
    assert_accepted(result.messages)
    assert not any(message.get("tool_call_id") == "call2" for message in result.messages)
    assert any("call2" in str(change) for change in result.report.repairs)


def test_an_ai_message_without_calls_followed_by_a_tool_message() -> None:
    """LangChain ``test_summarization_middleware_find_safe_cutoff_point_orphan_tool``: an
    AI message with no tool calls followed by a tool message (a truly orphan result)."""
    given = [
        _human("msg1"),
        _ai("ai_no_tools"),
        _tool("orphan_call", "orphan_result"),
        _human("msg2"),
    ]
    result = condense.compress(given, budget=5_000)
    assert_accepted(result.messages)
    assert result.messages[-1] == given[-1]


# --- the summarizer -------------------------------------------------------------------


def test_a_failing_summary_model_does_not_break_the_call() -> None:
    """LangChain ``test_summarization_middleware_summary_creation`` (error handling:
    "Error generating summary: Model error") and ``..._async_error_handling``: a model
    error while summarizing is reported, not raised, and the history is still valid."""
    given = _conversation(8)
    budget = provider_tokens(given) // 2
    result = condense.compress(
        given, budget=budget, summarizer=DeterministicSummarizer(fail=ValueError("Model error"))
    )
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    assert result.report.summarizer_fell_back
    assert "Model error" in (result.report.fallback_reason or "")


def test_an_image_url_survives_into_the_summary() -> None:
    """LangChain ``test_create_summary_preserves_image_urls``: the URL of an image in a
    summarized message reaches the summary, so the agent can fetch it again."""
    image_url = "https://example.com/shared-image.png"
    given = [
        _human("start " + _words("s", 20)),
        _ai("ok"),
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this image? " + _words("q", 60)},
                {"type": "image_url", "image_url": {"url": image_url}},
            ],
        },
        _ai("The image shows a cat. " + _words("a", 80)),
        *_conversation(4),
    ]
    result = condense.compress(given, budget=provider_tokens(given) // 2)
    assert_accepted(result.messages)
    assert result.summary is not None
    assert image_url in "\n".join(text_of(message) for message in result.messages)


def test_the_summary_is_identifiable_in_the_result() -> None:
    """LangChain ``test_summarization_middleware_helper_methods`` (the summary message
    carries ``lc_source: "summarization"``): a caller can tell the summary apart. condense:
    ``result.summary`` is the text of exactly one output message, and the units it
    replaced are reported as summarized."""
    given = _conversation(8)
    result = condense.compress(given, budget=provider_tokens(given) // 2)
    assert len(_summary_messages(result)) == 1
    assert result.report.actions.get("summarized", 0) >= 1


# --- parameter validation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("budget", 0),
        ("budget", -5),
        ("budget", True),
        ("budget", 1000.5),
        ("budget", "1000"),
        ("tail_tokens", -1),
        ("tail_tokens", 1.5),
        ("summary_tokens", -1),
    ],
)
def test_invalid_limits_are_refused_with_a_clear_error(keyword: str, value: Any) -> None:
    """LangChain ``test_summarization_middleware_validation_edge_cases`` and
    ``test_trigger_validation_errors`` ("thresholds must be greater than 0", "values must
    be integers", booleans rejected): a bad limit is a caller mistake, refused before any
    work with a message naming it."""
    arguments: dict[str, Any] = {"budget": 1_000, keyword: value}
    with pytest.raises(condense.InputError, match=keyword):
        condense.compress([_human("hello")], **arguments)
