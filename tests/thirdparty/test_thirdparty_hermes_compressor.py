"""hermes-agent's context-compressor tests, re-expressed against condense's public API.

Source: NousResearch/hermes-agent ``tests/agent/test_context_compressor.py`` (see
``SOURCES.md`` for the versions read). Each test names the upstream test whose intent it
re-expresses; the data is ours. hermes configures protection by message counts
(``protect_first_n``/``protect_last_n``) and a tail token budget; condense's equivalent
is its guarantee (system prompt, latest ask and the running turn untouchable; first ask,
newest results, latest reply and a tail kept if at all possible), so the tests check that
guarantee rather than hermes' counts. Outputs are judged by ``thirdparty_rules`` (the
provider rules written out, and a provider's own token count), never by
``condense.validate``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from thirdparty_rules import (
    assert_accepted,
    calls_of,
    fits_at_provider,
    from_latest_ask,
    frozen,
    holding,
    latest_ask,
    over_budget_line,
    parsed_arguments,
    provider_tokens,
    text_of,
)

import condense
from condense.compress import BudgetError
from condense.testing import DeterministicSummarizer

Message = dict[str, Any]


def _filler(label: str, sentences: int) -> str:
    return " ".join(
        f"{label}: step {i} changed the parser and reran the tests." for i in range(sentences)
    )


def _chat(pairs: int, *, words: int = 30, system: bool = True) -> list[Message]:
    """A plain conversation: optional system prompt, then ``pairs`` ask/reply pairs."""
    messages: list[Message] = (
        [{"role": "system", "content": "You are a coding agent."}] if system else []
    )
    for i in range(pairs):
        messages.append({"role": "user", "content": f"ask {i}: " + _filler(f"u{i}", words // 10)})
        messages.append(
            {"role": "assistant", "content": f"reply {i}: " + _filler(f"a{i}", words // 10)}
        )
    return messages


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _exchange(call_ids: list[str], name: str, output: str) -> list[Message]:
    """One assistant message calling ``name`` once per id, then every result."""
    calls = [_call(call_id, name, {"path": f"src/{call_id}.py"}) for call_id in call_ids]
    return [
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": call_id, "content": output} for call_id in call_ids),
    ]


def _assert_session_guarantees(
    given: list[Message], result: condense.CompressionResult, budget: int
) -> None:
    """What every hermes compression test expects of any output."""
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    running = from_latest_ask(given)
    assert result.messages[-len(running) :] == running, "the latest ask and its turn changed"
    if given[0].get("role") == "system":
        assert result.messages[0] == given[0], "the system prompt changed"


# --- compress(): small histories, the fallback, repeated calls ----------------------


def test_a_history_that_fits_comes_back_unchanged() -> None:
    """hermes ``TestCompress.test_too_few_messages_returns_unchanged``: a short history
    under the threshold is returned as it was — in condense, the same objects."""
    given = _chat(2)
    result = condense.compress(given, budget=provider_tokens(given) + 50)
    assert result.messages == given
    assert all(out is inp for out, inp in zip(result.messages, given, strict=True))
    assert result.summary is None


def test_the_exact_budget_is_not_over_it() -> None:
    """hermes ``TestShouldCompress.test_exact_threshold``: the threshold itself is the
    boundary. condense: a history whose own count equals the budget fits and is kept."""
    given = _chat(6)
    exact = condense.count_tokens(given)
    result = condense.compress(given, budget=exact)
    assert result.messages == given
    assert result.report.fits


def test_a_failed_summarizer_still_yields_a_compressed_valid_history() -> None:
    """hermes ``TestCompress.test_truncation_fallback_no_client`` and
    ``TestSummaryFailureTrackingForGatewayWarning.test_compress_records_fallback_and_dropped_count_on_summary_failure``:
    with no working summarizer, compression still happens, the system prompt stays first,
    and the failure is recorded for the caller to surface."""
    given = _chat(12, words=60)
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget, summarizer=DeterministicSummarizer(fail=True))
    _assert_session_guarantees(given, result, budget)
    assert len(result.messages) < len(given)
    assert result.report.summarizer_fell_back
    assert result.report.fallback_reason


def test_compressing_the_output_again_changes_nothing() -> None:
    """hermes ``TestCompress.test_compression_increments_count`` (compress may be called
    again on its own output): condense's output already fits, so a second call is a no-op."""
    given = _chat(12, words=60)
    budget = provider_tokens(given) // 2
    first = condense.compress(given, budget=budget)
    second = condense.compress(first.messages, budget=budget)
    assert second.messages == first.messages
    assert second.summary is None


def test_the_last_messages_are_kept_verbatim() -> None:
    """hermes ``TestCompress.test_protects_first_and_last``: the newest messages survive
    compression word for word."""
    given = _chat(10, words=60)
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)
    assert result.messages[-2:] == given[-2:]


def test_the_input_list_is_never_mutated() -> None:
    """hermes' compressor works on copies (``_fresh_compaction_message_copy``, #57491):
    the caller's messages are never changed."""
    given = _chat(8, words=60) + _exchange(["call_a", "call_b"], "read_file", "x " * 800)
    given.append({"role": "user", "content": "now fix it"})
    before = frozen(given)
    condense.compress(given, budget=provider_tokens(given) // 3)
    assert given == before


# --- content None and other odd shapes ------------------------------------------------


def test_tool_call_only_assistant_messages_with_none_content_compress() -> None:
    """hermes ``TestGenerateSummaryNoneContent.test_none_content_does_not_crash``: an
    assistant message that only calls tools has ``content: None``; a summary over it
    must not crash, and the output stays valid."""
    given: list[Message] = [{"role": "system", "content": "sys"}]
    for i in range(6):
        given.append({"role": "user", "content": f"do step {i} " + _filler("u", 4)})
        given.extend(_exchange([f"call_{i}"], "search", _filler(f"result {i}", 20)))
        given.append({"role": "assistant", "content": None if i % 2 else f"step {i} done"})
    given.append({"role": "user", "content": "thanks, and now the docs"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)


def test_a_system_prompt_with_none_content_compresses() -> None:
    """hermes ``TestGenerateSummaryNoneContent.test_none_content_in_system_message_compress``:
    ``{"role": "system", "content": None}`` must not stop compression."""
    given = [{"role": "system", "content": None}, *_chat(10, words=60, system=False)]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    assert len(result.messages) < len(given)
    assert result.messages[-1] == given[-1]


def test_tool_calls_without_ids_are_given_ids_and_stay_paired() -> None:
    """hermes ``TestGenerateSummaryNoneContent`` feeds tool calls with no ``id`` and tool
    messages with no ``tool_call_id`` (llama.cpp-style); hermes must not crash. condense:
    the history is repaired (ids given, results paired) and the output is accepted."""
    given: list[Message] = [
        {"role": "user", "content": "do something"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "search"}}]},
        {"role": "tool", "content": "result"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "thanks"},
    ]
    result = condense.compress(given, budget=2_000)
    assert_accepted(result.messages)
    assert result.messages[-1] == given[-1]
    assert any(m.get("role") == "tool" and m.get("content") == "result" for m in result.messages)


def test_an_empty_summary_is_not_inserted_in_place_of_the_turns() -> None:
    """hermes ``TestNonStringContent.test_none_content_treated_as_failure_not_empty_summary``
    (#11978): a summarizer answering nothing must not replace turns with an empty
    summary. condense: an empty summary is a failure — the fallback writes one that says
    something, and the report records it."""

    class Silent:
        name = "silent"

        def summarize(self, messages: Any, *, previous: str | None, target_tokens: int) -> str:
            return ""

    given = _chat(12, words=60)
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget, summarizer=Silent())
    _assert_session_guarantees(given, result, budget)
    if result.summary is not None:
        assert result.summary.strip(), "an empty summary replaced the turns"


# --- tool pairs and the boundary ------------------------------------------------------


def test_parallel_calls_are_never_split_from_their_results() -> None:
    """hermes ``TestCompressWithClient.test_summarization_does_not_split_tool_call_pairs``:
    an assistant message with two parallel calls; after compression every kept call has
    its result and every kept result its call. (hermes' fixture also carries an orphan
    result ``call_x``: it must not survive as an orphan either.)"""
    given: list[Message] = [
        {"role": "user", "content": "Could you address the reviewer comments in PR#71"},
        *_exchange(["call_a", "call_b"], "skill_view", _filler("skill", 40)),
        {"role": "user", "content": "later 1 " + _filler("u", 20)},
        {"role": "assistant", "content": "later 2 " + _filler("a", 20)},
        {"role": "tool", "tool_call_id": "call_x", "content": "later output"},
        {"role": "assistant", "content": "later 3 " + _filler("a", 20)},
        {"role": "user", "content": "later 4"},
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    assert not any(m.get("tool_call_id") == "call_x" for m in result.messages)
    orphan_repairs = [change for change in result.report.repairs if "call_x" in str(change)]
    assert orphan_repairs, "the orphan result was dropped without a word in the report"


def test_the_kept_part_never_starts_with_tool_results() -> None:
    """hermes ``TestCompressWithClient.test_summarization_does_not_start_tail_with_tool_outputs``:
    the cut never leaves tool results whose call was summarized away."""
    given: list[Message] = [
        {"role": "user", "content": "earlier 1 " + _filler("u", 30)},
        {"role": "assistant", "content": "earlier 2 " + _filler("a", 30)},
        {"role": "user", "content": "earlier 3 " + _filler("u", 30)},
        *_exchange(["call_c"], "search_files", _filler("hits", 60)),
        {"role": "user", "content": "latest user"},
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert result.messages[-1] == given[-1]


def test_many_parallel_calls_stay_one_group() -> None:
    """hermes ``TestMinTailUserMessages.test_n3_tool_group_integrity``: a tool group (the
    call message and its results) is contiguous — entirely summarized or entirely kept."""
    given: list[Message] = [{"role": "system", "content": "sys"}]
    for turn in range(5):
        given.append({"role": "user", "content": f"check batch {turn} " + _filler("u", 10)})
        ids = [f"call_{turn}_{k}" for k in range(4)]
        given.extend(_exchange(ids, "read_file", _filler(f"file {turn}", 25)))
        given.append({"role": "assistant", "content": f"batch {turn} read"})
    given.append({"role": "user", "content": "summarize what you found"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)
    for index, message in enumerate(result.messages):
        ids = [call["id"] for call in message.get("tool_calls") or ()]
        if ids:
            following = [
                m.get("tool_call_id") for m in result.messages[index + 1 : index + 1 + len(ids)]
            ]
            assert following == ids, f"the group at {index} is split or reordered"


def test_a_result_answering_a_responses_call_id_is_not_dropped() -> None:
    """hermes ``TestCompressWithClient.test_sanitizer_matches_responses_call_id_when_id_differs``:
    a call carried over from the Responses API has an item ``id`` (``fc_…``) and a
    ``call_id`` (``call_…``); its result answers the ``call_id``. The pair must survive
    as a pair: neither the call unanswered nor the result thrown away."""
    given: list[Message] = [
        {"role": "user", "content": "find the config"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "fc_123",
                    "call_id": "call_123",
                    "type": "function",
                    "function": {"name": "search_files", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_123", "content": "config.yaml"},
        {"role": "user", "content": "open it"},
    ]
    result = condense.repair(given)
    assert_accepted(result.messages)
    assert holding(result.messages, "config.yaml"), "the result was dropped"


# --- the summary's place: roles alternate ---------------------------------------------


ROLE_SHAPES = {
    # hermes test_summary_role_avoids_consecutive_user_messages
    "head assistant, tail assistant": ["user", "assistant"] * 8,
    # hermes test_summary_role_avoids_consecutive_user_when_head_ends_with_user
    "head ends with two users": [
        "system",
        "user",
        "user",
        *(["assistant", "user"] * 6),
        "assistant",
    ],
    # hermes test_double_collision_merges_summary_into_tail
    "head assistant, tail user": [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
        "user",
    ],
    # hermes test_double_collision_user_head_assistant_tail
    "head user, tail assistant": [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
        "user",
        "assistant",
    ],
}


@pytest.mark.parametrize("shape", sorted(ROLE_SHAPES))
def test_no_two_user_or_assistant_messages_in_a_row(shape: str) -> None:
    """hermes ``TestCompressWithClient.test_summary_role_*`` and ``test_double_collision_*``:
    wherever the summary lands, the output never has two user or two assistant messages
    in a row (strict providers and chat templates refuse it), and the summary text is in
    exactly one message."""
    given: list[Message] = []
    for i, role in enumerate(ROLE_SHAPES[shape]):
        words = "" if role == "system" else " " + _filler(f"m{i}", 12)
        given.append({"role": role, "content": f"msg {i}{words}"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    if result.summary is not None:
        assert len(holding(result.messages, result.summary[:60])) == 1


@pytest.mark.parametrize(
    "provider",
    [
        "strict",
        "anthropic",
        "deepseek",
        "openai",
    ],
)
def test_no_profile_gets_a_same_role_run_from_the_summary(provider: str) -> None:
    """hermes ``TestCompressWithClient.test_summary_role_avoids_consecutive_user_messages``
    asks it of every provider hermes serves: the summary never makes two user messages in
    a row. DeepSeek's reasoner refuses them ("deepseek-reasoner does not support
    successive user or assistant messages", deepseek-ai/DeepSeek-R1 #21), as do strict
    chat templates behind OpenAI-compatible servers."""
    given: list[Message] = [{"role": "system", "content": "sys"}]
    for i in range(8):
        given.append({"role": "user", "content": f"question {i} " + _filler("u", 4)})
        given.append({"role": "assistant", "content": f"answer {i} " + _filler("a", 25)})
    given.append({"role": "user", "content": "final question"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget, provider=provider)
    assert_accepted(result.messages)


def test_the_summary_precedes_the_latest_ask() -> None:
    """hermes ``test_user_role_summary_carries_end_marker`` /
    ``test_assistant_role_summary_carries_end_marker``
    (#11475, #33256): a model must not take the summary for the user's fresh request.
    condense: the latest ask is still the last user message with text, after the summary."""
    given = _chat(10, words=60)
    given.append({"role": "user", "content": "FRESH REQUEST: rename the module"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)
    assert result.summary is not None
    assert text_of(latest_ask(result.messages)) == "FRESH REQUEST: rename the module"
    summary_at = result.messages.index(holding(result.messages, result.summary[:60])[0])
    assert summary_at < len(result.messages) - 1


def test_the_latest_ask_is_not_repeated_by_the_summary() -> None:
    """hermes ``TestCompress.test_fallback_summary_does_not_triplicate_latest_user_ask``
    (#49307): the latest ask appears once — as itself, never again as pending work."""
    ask = "PLEASE_COMPUTE_THE_ARITHMETIC_CHAIN_XYZ"
    given = [*_chat(10, words=60), {"role": "user", "content": ask}]
    result = condense.compress(given, budget=provider_tokens(given) // 2)
    assert sum(text_of(message).count(ask) for message in result.messages) == 1


def test_after_a_second_compaction_the_first_visible_message_is_the_users() -> None:
    """hermes ``TestDoubleCompactionSummaryRole``
    ``.test_double_compaction_summary_must_be_user_when_only_system_protected``
    and ``test_double_compaction_user_tail_merges_into_tail`` (#52160): on a later
    compaction of the same session, the first message after the system prompt is a user
    message (Anthropic and Bedrock send the system prompt apart), and there is one summary."""
    session = _chat(10, words=60)
    budget = provider_tokens(session) // 2
    first = condense.compress(session, budget=budget)
    grown = [*session, *_chat(6, words=60, system=False)[:-1]]
    second = condense.compress(grown, budget=budget, previous=first.state)
    _assert_session_guarantees(grown, second, budget)
    visible = [m for m in second.messages if m.get("role") != "system"]
    assert visible[0]["role"] == "user"
    if second.summary is not None:
        assert len(holding(second.messages, second.summary[:60])) == 1


def test_a_session_resumed_from_a_persisted_summary_starts_with_the_user() -> None:
    """hermes ``TestDoubleCompactionSummaryRole``
    ``.test_restart_handoff_without_system_still_starts_with_user``:
    a history that begins with an earlier compaction's summary (as a user message) and no
    system prompt still begins with a user message after compression."""
    given: list[Message] = [
        {
            "role": "user",
            "content": "[CONTEXT COMPACTION] old persisted summary " + _filler("s", 10),
        },
        {"role": "assistant", "content": "handoff acknowledged"},
        *_chat(6, words=60, system=False),
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert result.messages[0]["role"] == "user"


# --- the tail: token budget, large outputs --------------------------------------------


def test_large_old_tool_outputs_do_not_block_compaction() -> None:
    """hermes ``TestTokenBudgetTailProtection.test_large_tool_outputs_no_longer_block_compaction``
    (PR #6240): twenty messages of large tool outputs must not all be protected; the
    history is brought under the budget."""
    given: list[Message] = [
        {"role": "user", "content": "Start task"},
        {"role": "assistant", "content": "On it"},
    ]
    for i in range(10):
        given.extend(_exchange([f"call_{i}"], f"tool_{i}", "x" * 5000))
    given += [
        {"role": "assistant", "content": "Collected everything."},
        {"role": "user", "content": "What's the status?"},
        {"role": "assistant", "content": "Here's what I found..."},
        {"role": "user", "content": "Continue"},
    ]
    budget = provider_tokens(given) // 3
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)


def test_a_tight_budget_keeps_the_turns_before_the_latest_ask() -> None:
    """hermes ``TestTokenBudgetTailProtection.test_tiny_budget_preserves_bounded_recent_turns``
    (#9413) and ``test_min_tail_always_3_messages``: a tight budget must not leave the
    latest ask alone with everything before it summarized — the latest reply before it is
    kept too."""
    given = _chat(8, words=40)
    given.append({"role": "user", "content": "latest ask"})
    budget = provider_tokens(given[:1] + given[-5:]) + 200
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)
    assert result.messages[-2:] == given[-2:], "the reply before the latest ask was not kept"


def test_a_small_conversation_still_compresses() -> None:
    """hermes ``TestTokenBudgetTailProtection.test_small_conversation_still_compresses``:
    nine short messages over the budget are compressed, not returned as they were."""
    given = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Message {i} " + _filler("m", 8),
        }
        for i in range(9)
    ]
    budget = provider_tokens(given) * 2 // 3
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    assert result.messages[-1] == given[-1]


def test_nothing_is_reduced_when_everything_fits() -> None:
    """hermes ``TestTokenBudgetTailProtection.test_prune_short_conv_protects_entire_tail``
    (PR #17025): when the whole history fits, no tool output is pruned — the large one
    comes back verbatim."""
    given: list[Message] = [
        {"role": "user", "content": "read the log"},
        *_exchange(["c0"], "read_file", "x" * 5000),
        {"role": "assistant", "content": "ack"},
        {"role": "user", "content": "recent"},
        {"role": "assistant", "content": "reply"},
    ]
    result = condense.compress(given, budget=provider_tokens(given) + 100)
    assert result.messages == given


def test_an_orphan_result_at_the_start_is_removed_and_reported() -> None:
    """hermes' fixture for PR #17025 starts with a tool result whose call is gone; hermes'
    sanitizer removes orphans (``_sanitize_tool_pairs``). condense: the orphan is removed,
    the removal is in the report (nothing dropped silently), the rest is untouched."""
    given: list[Message] = [
        {"role": "tool", "content": "x" * 500, "tool_call_id": "c0"},
        {"role": "user", "content": "recent"},
        {"role": "assistant", "content": "reply"},
        {"role": "user", "content": "and now?"},
    ]
    result = condense.compress(given, budget=10_000)
    assert_accepted(result.messages)
    assert result.messages == given[1:]
    assert result.report.repairs, "the orphan was dropped without a word in the report"


def test_hidden_replay_fields_count_toward_the_budget() -> None:
    """hermes ``TestTailBudgetCodexReplayFields``
    ``.test_tail_cut_counts_codex_replay_and_reasoning_fields``:
    replayed reasoning (``reasoning_content``) is sent to the provider and billed; a tail
    that ignored it would start the next turn near the limit. condense: the result fits
    counting every field sent, and reasoning is kept whole or left out whole."""
    reasoning = _filler("thinking", 120)
    given: list[Message] = [{"role": "system", "content": "sys"}]
    for i in range(6):
        given.append({"role": "user", "content": f"question {i}"})
        given.append(
            {"role": "assistant", "content": f"answer {i}", "reasoning_content": reasoning}
        )
    given.append({"role": "user", "content": "final question"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget, provider="deepseek")
    assert_accepted(result.messages, alternate=False)  # roles: see the test below
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)
    for message in result.messages:
        if message.get("reasoning_content"):
            assert message["reasoning_content"] == reasoning, "replayed reasoning was edited"


def test_blank_echo_messages_do_not_take_the_latest_asks_place() -> None:
    """hermes ``TestMinTailUserMessages.test_blank_echo_does_not_count_toward_n``
    (#69291): platform echoes (empty user messages) are not asks; the real latest ask is
    kept verbatim even when blank echoes follow it."""
    given = _chat(8, words=60)
    given += [
        {"role": "user", "content": "real latest: ship the release notes"},
        {"role": "assistant", "content": "working on it"},
        {"role": "user", "content": "   "},
        {"role": "assistant", "content": "still working"},
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert holding(result.messages, "real latest: ship the release notes")


def test_the_latest_turn_is_never_split_from_its_ask() -> None:
    """hermes ``TestTurnPairPreservation`` (#10896, #22523): compaction never orphans the
    latest user turn — its ask and the replies and tool results after it are kept
    together, in order."""
    given = _chat(6, words=60)
    given.append({"role": "user", "content": "THE ACTIVE ASK"})
    given.extend(_exchange(["c1"], "run_tests", _filler("pytest", 30)))
    given.append({"role": "assistant", "content": "final reply"})
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget)
    _assert_session_guarantees(given, result, budget)


def _agent_step(step: int, calls: int, output_words: int) -> list[Message]:
    """One agent step: an assistant message with ``calls`` parallel calls, their outputs."""
    ids = [f"call_{step}_{k}" for k in range(calls)]
    message: Message = {
        "role": "assistant",
        "content": f"Step {step}: running the checks.",
        "tool_calls": [_call(call_id, "bash", {"cmd": f"pytest -k {call_id}"}) for call_id in ids],
    }
    outputs = [
        {
            "role": "tool",
            "tool_call_id": call_id,
            "content": " ".join(f"{call_id}:{i}" for i in range(output_words)),
        }
        for call_id in ids
    ]
    return [message, *outputs]


def _multi_step_session(running_output_words: int) -> list[Message]:
    given: list[Message] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing tests in the parser package."},
    ]
    for step in range(8):
        given += _agent_step(step, 1 + step % 3, 60)
    given.append({"role": "user", "content": "New ask: rename parse_file to load_file."})
    for step in range(8, 12):
        given += _agent_step(step, 1, running_output_words)
    return given


def _assert_running_turn_kept(given: list[Message], result: condense.CompressionResult) -> None:
    """The latest ask and every step after it are in the output, in order: the ask and
    the assistant messages word for word, each output answering its call (an output may
    be cut, never dropped)."""
    running = from_latest_ask(given)
    kept = result.messages[-len(running) :]
    assert [m.get("role") for m in kept] == [m.get("role") for m in running]
    for before, after in zip(running, kept, strict=True):
        if before.get("role") == "tool":
            assert after.get("tool_call_id") == before.get("tool_call_id")
        else:
            assert after == before
    assert len(holding(result.messages, "[condense: summary")) <= 1


def test_a_multi_step_turn_keeps_its_ask_and_every_step() -> None:
    """hermes ``TestTurnPairPreservation`` (#10896: the last user message stays in the
    tail; #22523: its pair is never split) on an agent loop: after the latest ask the
    agent ran several steps. The ask is kept as its own message, word for word, and every
    step after it is kept in order; the older steps are what gets summarized — once."""
    given = _multi_step_session(running_output_words=40)
    budget = 3_000
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    _assert_running_turn_kept(given, result)
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)


def test_a_multi_step_turn_too_large_for_the_budget_keeps_its_steps() -> None:
    """The same hermes intent when the steps after the latest ask alone exceed the
    budget: they are still not summarized — their outputs are cut, the ask stays its own
    message, and there is one summary at most."""
    given = _multi_step_session(running_output_words=300)
    result = condense.compress(given, budget=3_000)
    assert_accepted(result.messages)
    _assert_running_turn_kept(given, result)


def test_the_running_turns_large_outputs_are_cut_to_fit() -> None:
    """hermes ``TestTokenBudgetTailProtection.test_large_tool_outputs_no_longer_block_compaction``
    (PR #6240) for the turn in progress: when the outputs the agent has not read yet are
    what breaks the budget, they are cut (head and tail kept, a marker saying how much),
    never dropped, and the result fits. The calls and their ids stay as they were."""
    given: list[Message] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Run the three test suites and tell me what fails."},
        *_agent_step(0, 3, 700),
    ]
    budget = 2_000
    assert provider_tokens(given) > budget
    result = condense.compress(given, budget=budget)
    assert_accepted(result.messages)
    assert result.messages[:3] == given[:3]
    outputs = [m for m in result.messages if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in outputs] == ["call_0_0", "call_0_1", "call_0_2"]
    assert fits_at_provider(result.messages, budget), over_budget_line(result.messages, budget)


def _agent_session_turns(path: str, budget: int) -> Iterator[tuple[list[Message], Any]]:
    """A 40-step agent loop with a new ask every nine steps, compressed after every step
    (fresh, or with ``previous=`` as an agent loop calls it): yields (history, result)."""
    session: list[Message] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing tests in the parser package."},
    ]
    state = None
    for step in range(40):
        if step % 9 == 4:
            session.append({"role": "assistant", "content": f"Checkpoint {step}."})
            session.append({"role": "user", "content": f"New ask {step}: rename x{step}."})
        session += _agent_step(step, 1 + step % 2, 40)
        result = condense.compress(
            session, budget=budget, previous=state if path == "previous" else None
        )
        state = result.state
        yield session, result


@pytest.mark.parametrize("path", ["fresh", "previous"])
def test_every_turn_of_an_agent_session_keeps_the_latest_ask(path: str) -> None:
    """hermes compresses again and again in one session (``compression_count``;
    ``TestSummaryPromptBounding.test_iterative_update_path_is_bounded``: the previous
    summary is folded into the next, never stacked; #10896: the last user message is
    never lost). On every turn, called fresh or with ``previous=``, the output is
    accepted, the latest ask is in it word for word, and there is one summary at most."""
    for step, (session, result) in enumerate(_agent_session_turns(path, 2_500)):
        assert_accepted(result.messages)
        assert latest_ask(session) in result.messages, f"step {step}: the latest ask is gone"
        assert len(holding(result.messages, "[condense: summary")) <= 1, f"step {step}"


def test_every_turn_of_an_agent_session_fits() -> None:
    """The same session, called fresh: every turn fits at the provider — also the turns
    whose steps since the latest ask alone exceed the budget (their outputs are cut)."""
    budget = 2_500
    for step, (_, result) in enumerate(_agent_session_turns("fresh", budget)):
        assert fits_at_provider(result.messages, budget), f"step {step}: " + over_budget_line(
            result.messages, budget
        )


def test_the_incremental_path_fits_whenever_a_fresh_call_does() -> None:
    """hermes' iterative compaction must not cost more than starting over: on every turn
    where a fresh call fits, the call with ``previous=`` fits too."""
    budget = 2_500
    fresh = _agent_session_turns("fresh", budget)
    incremental = _agent_session_turns("previous", budget)
    for step, ((_, alone), (_, resumed)) in enumerate(zip(fresh, incremental, strict=True)):
        if fits_at_provider(alone.messages, budget):
            assert fits_at_provider(resumed.messages, budget), (
                f"step {step}: fresh {provider_tokens(alone.messages)}, with previous= "
                + over_budget_line(resumed.messages, budget)
            )


# --- the summary's size and content ---------------------------------------------------


def test_the_summary_respects_its_cap() -> None:
    """hermes ``TestSummaryTargetRatio.test_summary_cap_scales_with_context``: the summary
    has a ceiling. condense: ``summary_tokens`` caps it (a small allowance for the
    judge's vocabulary)."""
    given = _chat(20, words=80)
    result = condense.compress(given, budget=provider_tokens(given) // 3, summary_tokens=120)
    assert result.summary is not None
    assert provider_tokens([{"role": "user", "content": result.summary}]) <= 120 * 1.05 + 10


def test_a_repeatedly_compacted_summary_stays_bounded() -> None:
    """hermes ``TestSummaryPromptBounding.test_iterative_update_path_is_bounded``: folding
    the previous summary into the next must not grow without bound. condense: over a
    long session compressed every turn with ``previous=``, there is never more than one
    summary and it never exceeds two thirds of the budget."""
    budget = 1_500
    session = _chat(2, words=40)
    state = None
    for turn in range(24):
        session += [
            {"role": "assistant", "content": f"turn {turn} " + _filler(f"a{turn}", 6)},
            {"role": "user", "content": f"next {turn} " + _filler(f"u{turn}", 3)},
        ]
        result = condense.compress(session, budget=budget, previous=state)
        state = result.state
        if result.summary is not None:
            assert len(holding(result.messages, result.summary[:60])) <= 1
            assert provider_tokens([{"role": "user", "content": result.summary}]) <= budget * 2 // 3


def test_a_fallback_summary_names_the_tools_and_files() -> None:
    """hermes ``TestSummaryFailureTrackingForGatewayWarning``
    ``.test_summary_failure_fallback_preserves_tool_paths_and_redacts_secret_context``:
    when the summarizer fails, the fallback still says which tools ran on which files."""
    given: list[Message] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Fix /tmp/project/app.py"},
        {
            "role": "assistant",
            "content": "I will inspect it.",
            "tool_calls": [_call("call-1", "read_file", {"path": "/tmp/project/app.py"})],
        },
        {"role": "tool", "tool_call_id": "call-1", "content": "def main(): ...\n" + "#" * 2000},
        {
            "role": "assistant",
            "content": "Found the bug in /tmp/project/app.py " + _filler("a", 20),
        },
        {"role": "user", "content": "Patch it after this"},
        {
            "role": "assistant",
            "content": "Patching.",
            "tool_calls": [_call("call-2", "patch", {"path": "/tmp/project/app.py"})],
        },
        {"role": "tool", "tool_call_id": "call-2", "content": "patched"},
        {"role": "assistant", "content": "Ready."},
        {"role": "user", "content": "current live request should stay in tail"},
    ]
    budget = provider_tokens(given) // 2
    result = condense.compress(given, budget=budget, summarizer=DeterministicSummarizer(fail=True))
    _assert_session_guarantees(given, result, budget)
    assert result.summary is not None
    assert "read_file" in result.summary
    assert "/tmp/project/app.py" in result.summary


def test_a_summary_does_not_copy_a_secret() -> None:
    """hermes ``TestSummaryFailureTrackingForGatewayWarning``
    ``.test_summary_failure_fallback_preserves_tool_paths_and_redacts_secret_context``:
    a GitHub token in a summarized turn must not be copied into the summary."""
    secret = "ghp_" + "a" * 36
    given: list[Message] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": f"Fix /tmp/project/app.py and never leak {secret}"},
        {"role": "assistant", "content": "Reading it. " + _filler("a", 30)},
        {"role": "user", "content": "go on " + _filler("u", 30)},
        {"role": "assistant", "content": "Done reading. " + _filler("a", 30)},
        {"role": "user", "content": "current live request"},
    ]
    result = condense.compress(given, budget=provider_tokens(given) // 2)
    assert result.summary is not None
    assert "ghp_" not in result.summary


def test_a_single_ask_over_the_budget_is_reported_not_cut() -> None:
    """hermes ``TestShouldCompressPreflight.test_long_messages``: one enormous user message
    is over any threshold — and it is the latest ask, which no compactor may rewrite.
    condense: it comes back whole, the report says the budget is not met, and
    ``strict_budget=True`` raises."""
    given: list[Message] = [{"role": "user", "content": "x " * 20_000}]
    result = condense.compress(given, budget=1_000)
    assert result.messages == given
    assert not result.report.fits
    with pytest.raises(BudgetError):
        condense.compress(given, budget=1_000, strict_budget=True)


# --- PR #12259: tool-call arguments shrunk, JSON kept ---------------------------------


def _notes(repeat: int) -> str:
    return "# Shopping Browser Setup Notes\n\n## Overview\n" + "abc " * repeat


def test_shrunk_arguments_stay_valid_json_with_the_path() -> None:
    """hermes ``TestTruncateToolCallArgsJson.test_shrunken_args_remain_valid_json`` (#11762):
    shrinking an ``arguments`` string keeps it JSON, the path exact, the content shorter."""
    original = json.dumps(
        {"path": "~/.hermes/skills/shopping/browser-setup-notes.md", "content": _notes(400)}
    )
    shrunk = condense.shrink_arguments(original, 300)
    parsed = json.loads(shrunk)
    assert parsed["path"] == "~/.hermes/skills/shopping/browser-setup-notes.md"
    assert len(parsed["content"]) < len(_notes(400))
    assert len(shrunk) < len(original)


def test_shrinking_keeps_numbers_booleans_nulls_and_lists() -> None:
    """hermes ``TestTruncateToolCallArgsJson.test_non_string_leaves_preserved``: only long
    strings are cut; every other value survives exactly."""
    payload = json.dumps(
        {"retries": 3, "enabled": True, "timeout": None, "items": [1, 2, 3], "note": "z" * 500}
    )
    parsed = json.loads(condense.shrink_arguments(payload, 150))
    assert parsed["retries"] == 3
    assert parsed["enabled"] is True
    assert parsed["timeout"] is None
    assert parsed["items"] == [1, 2, 3]
    assert len(parsed["note"]) < 500


def test_arguments_that_are_not_json_become_json_without_losing_text() -> None:
    """hermes' ``_truncate_tool_call_args_json`` passes non-JSON arguments through (the
    MiniMax textual-recovery path), and strict providers then refuse them. condense's
    contract is stronger: the history sent is accepted — the arguments parse to an
    object — and the original text is still in it."""
    broken = '{"path": "notes.md", "content": "# Shopping Browser Setup Note...[truncated]'
    given: list[Message] = [
        {"role": "user", "content": "write the notes"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": broken},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        {"role": "user", "content": "thanks"},
    ]
    result = condense.repair(given)
    assert_accepted(result.messages)
    (call,) = calls_of(result.messages)
    assert "Shopping Browser Setup Note" in json.dumps(parsed_arguments(call))


def _write_file_incident(content_repeat: int) -> list[Message]:
    """PR #12259's incident: a ``write_file`` call with a huge ``content`` argument,
    answered, then "ok" / "done" — the user and the model moved on."""
    arguments = json.dumps(
        {
            "path": "~/.hermes/skills/shopping/browser-setup-notes.md",
            "content": _notes(content_repeat),
        }
    )
    return [
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "please write the browser setup notes file"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"bytes_written": 12727}'},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]


def _incident_budget(given: list[Message], budget: str) -> int:
    if budget.endswith("%"):
        return provider_tokens(given) * int(budget[:-1]) // 100
    return int(budget)


@pytest.mark.parametrize("budget", ["60%", "30%", "900", "400"])
def test_write_file_incident_arguments_are_shrunk_to_fit(budget: str) -> None:
    """hermes PR #12259 (``TestTruncateToolCallArgsJson``
    ``.test_pass3_emits_valid_json_for_downstream_provider``),
    at 60 %, 30 %, 900 and 400 tokens of budget: the huge ``content`` argument is what
    must shrink — the arguments stay valid JSON, the path is kept exactly, and the result
    fits at the provider."""
    given = _write_file_incident(3_000)
    limit = _incident_budget(given, budget)
    assert provider_tokens(given) > limit
    result = condense.compress(given, budget=limit)
    assert_accepted(result.messages)
    calls = [call for call in calls_of(result.messages) if call["function"]["name"] == "write_file"]
    for call in calls:
        arguments = parsed_arguments(call)
        assert arguments["path"] == "~/.hermes/skills/shopping/browser-setup-notes.md"
        assert len(arguments["content"]) < len(_notes(3_000))
    assert result.messages[-2:] == given[-2:]
    assert fits_at_provider(result.messages, limit), over_budget_line(result.messages, limit)


def test_write_file_incident_arguments_are_valid_json_at_every_budget() -> None:
    """hermes PR #12259's regression proper (the 400 loop on MiniMax): whatever the budget,
    no call in the output carries arguments a strict provider cannot parse."""
    given = _write_file_incident(3_000)
    for budget in (provider_tokens(given) * 6 // 10, provider_tokens(given) * 3 // 10, 900, 400):
        result = condense.compress(given, budget=budget)
        assert_accepted(result.messages)
