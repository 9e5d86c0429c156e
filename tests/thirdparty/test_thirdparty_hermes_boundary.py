"""hermes-agent's boundary-alignment and tool-pair sanitizer tests, re-expressed.

Sources (see ``SOURCES.md``): hermes-agent's regression tests for #75588 (a tool-only
suffix: ``TestTailCutBoundaryClamp``, ``TestCompressEndToEndShortToolSuffix``), its tests
of legacy ``function``-role results
(``test_align_boundary_forward_skips_legacy_function_results``,
``test_align_boundary_backward_keeps_legacy_function_result_with_parent_call``,
``test_system_head_falls_through_to_assistant_summary_role``) and the sanitizer tests of
``tests/agent/test_context_compressor.py`` (``TestSanitizerStripsOrphanedToolCalls``).
hermes aligns its cut with ``_align_boundary_forward``/``_align_boundary_backward``;
condense has no cut to align (its units hold a call and every result), so the intents
are checked on the output: across budgets, no group is ever split, no orphan survives,
and every removal is reported. Judged by ``thirdparty_rules``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from thirdparty_rules import assert_accepted, calls_of, holding, provider_tokens, text_of

import condense

Message = dict[str, Any]


def _call(call_id: str, name: str = "bash") -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps({"cmd": f"run {call_id}"})},
    }


def _group(call_ids: list[str], words: int) -> list[Message]:
    return [
        {"role": "assistant", "content": "", "tool_calls": [_call(c) for c in call_ids]},
        *(
            {
                "role": "tool",
                "tool_call_id": c,
                "content": " ".join(f"{c}-{i}" for i in range(words)),
            }
            for c in call_ids
        ),
    ]


def _grouped_history() -> list[Message]:
    """Asks, replies and tool groups of one to four parallel calls, of uneven sizes."""
    history: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    for turn in range(6):
        history.append({"role": "user", "content": f"task {turn}: " + "please " * 20})
        ids = [f"t{turn}_{k}" for k in range(1 + turn % 4)]
        history += _group(ids, 40 + 60 * (turn % 3))
        history.append({"role": "assistant", "content": f"task {turn} done. " + "ok " * 30})
    history.append({"role": "user", "content": "what is left?"})
    return history


def _assert_groups_whole(messages: list[Message]) -> None:
    """Every call message is followed right away by one result per call, in order."""
    for index, message in enumerate(messages):
        ids = [call["id"] for call in message.get("tool_calls") or ()]
        if ids:
            after = messages[index + 1 : index + 1 + len(ids)]
            assert [m.get("tool_call_id") for m in after] == ids, f"group at {index} split"


@pytest.mark.parametrize("fraction", [0.15, 0.3, 0.45, 0.6, 0.75, 0.9])
def test_no_budget_splits_a_tool_group(fraction: float) -> None:
    """hermes ``test_align_boundary_backward_moves_out_of_tool_group`` /
    ``test_align_boundary_forward_moves_out_of_tool_group`` and
    ``test_align_boundary_forward_moves_from_inside_tool_group``: wherever the budget
    puts the cut, a call and its (parallel) results stay together — both kept or both
    summarized."""
    given = _grouped_history()
    result = condense.compress(given, budget=int(provider_tokens(given) * fraction))
    assert_accepted(result.messages)
    _assert_groups_whole(result.messages)


def test_a_tool_only_suffix_does_not_crash_and_every_drop_is_reported() -> None:
    """hermes #75588 (``TestCompressEndToEndShortToolSuffix``
    ``.test_compress_short_tool_suffix_no_crash_no_llm_unchanged``):
    a system prompt followed only by tool results whose call was summarized away earlier
    must not crash the compressor or call a summarizer. hermes hands it back unchanged;
    a provider would refuse it, so condense removes the orphans — each one in the report,
    its content with it — and sends a history the provider takes."""
    given: list[Message] = [{"role": "system", "content": "sys"}]
    given += [{"role": "tool", "content": f"result {i}", "tool_call_id": "tc1"} for i in range(7)]
    result = condense.compress(given, budget=1_000)
    assert_accepted(result.messages)
    assert result.summary is None
    dropped = [change for change in result.report.repairs if change.action == "drop"]
    assert len(dropped) == 7
    assert {change.message["content"] for change in dropped if change.message} == {
        f"result {i}" for i in range(7)
    }


def test_a_short_history_ending_in_a_tool_group_is_handled() -> None:
    """hermes ``TestTailCutBoundaryClamp.test_tail_cut_never_exceeds_len_messages``: a short
    transcript that ends in a tool group (the group is the turn in progress) compresses
    without error and the group stays whole."""
    given: list[Message] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hello " * 50},
        *_group(["tc1", "tc2"], 30),
    ]
    result = condense.compress(given, budget=provider_tokens(given) + 10)
    assert result.messages == given
    result = condense.compress(given, budget=provider_tokens(given) // 2)
    assert_accepted(result.messages)
    _assert_groups_whole(result.messages)


def test_a_legacy_function_result_stays_with_its_call() -> None:
    """hermes ``test_align_boundary_backward_keeps_legacy_function_result_with_parent_call``:
    a result in the legacy ``function`` role answering a call is one group with it. condense
    rewrites the role to ``tool`` (reported) and keeps the pair together at every budget."""
    given: list[Message] = [
        {"role": "user", "content": "question " + "w " * 200},
        {"role": "assistant", "content": "", "tool_calls": [_call("call-1", "lookup")]},
        {
            "role": "function",
            "tool_call_id": "call-1",
            "name": "lookup",
            "content": "legacy " * 200,
        },
        {"role": "assistant", "content": "answer " + "a " * 200},
        {"role": "user", "content": "and the next one?"},
        *_group(["call-2"], 200),
        {"role": "assistant", "content": "second answer " + "b " * 100},
        {"role": "user", "content": "tail"},
    ]
    for fraction in (0.4, 0.7, 1.0):
        result = condense.compress(given, budget=int(provider_tokens(given) * fraction) + 20)
        assert_accepted(result.messages)
        _assert_groups_whole(result.messages)
        assert not any(m.get("role") == "function" for m in result.messages)
    assert any("function" in str(change) for change in condense.repair(given).changes)


def test_a_legacy_function_result_without_its_call_is_not_kept_as_an_orphan() -> None:
    """hermes ``test_align_boundary_forward_skips_legacy_function_results``: a ``function``
    result whose call is gone is skipped by the boundary. condense: it is not sent as an
    orphan, and the removal is reported."""
    given: list[Message] = [
        {"role": "system", "content": "system"},
        {"role": "function", "name": "old_tool", "content": "legacy result"},
        {"role": "user", "content": "next user"},
    ]
    result = condense.repair(given)
    assert_accepted(result.messages)
    assert result.messages[-1] == given[-1]
    assert result.changes


def test_a_decayed_head_still_gets_one_summary_in_alternation() -> None:
    """hermes ``test_system_head_falls_through_to_assistant_summary_role``: with only the
    system prompt protected (a session compacted before), the middle becomes one summary
    and the roles still alternate."""
    given: list[Message] = [{"role": "system", "content": "system"}]
    for index in range(8):
        given.append({"role": "user", "content": f"middle question {index} " + "q " * 40})
        given.append({"role": "assistant", "content": f"middle answer {index} " + "a " * 40})
    given.append({"role": "user", "content": "latest"})
    result = condense.compress(given, budget=provider_tokens(given) // 3, tail_tokens=0)
    assert_accepted(result.messages)
    assert result.summary is not None
    assert len(holding(result.messages, result.summary[:60])) == 1
    assert text_of(result.messages[-1]) == "latest"


def test_an_unanswered_call_is_answered_or_removed_never_sent() -> None:
    """hermes ``TestSanitizerStripsOrphanedToolCalls.test_sanitizer_strips_orphaned_tool_calls``
    (#51218): a call with no result must not reach the provider. hermes strips it; condense
    answers it with a stub result. Either way the assistant's text is kept, and the change
    is reported."""
    given: list[Message] = [
        {"role": "user", "content": "find it"},
        {
            "role": "assistant",
            "content": "Let me search for that.",
            "tool_calls": [_call("tc_orphan")],
        },
        {"role": "user", "content": "never mind"},
    ]
    result = condense.repair(given)
    assert_accepted(result.messages)
    assert holding(result.messages, "Let me search for that.")
    assert result.changes


def test_only_the_unanswered_call_of_a_parallel_group_is_touched() -> None:
    """hermes ``TestSanitizerStripsOrphanedToolCalls.test_sanitizer_strips_orphaned_keeps_valid``:
    when one of two parallel calls has a result, that pair is kept exactly."""
    given: list[Message] = [
        {"role": "user", "content": "read and search"},
        {"role": "assistant", "content": "", "tool_calls": [_call("tc_valid"), _call("tc_orphan")]},
        {"role": "tool", "tool_call_id": "tc_valid", "content": "file content"},
        {"role": "user", "content": "thanks"},
    ]
    result = condense.repair(given)
    assert_accepted(result.messages)
    valid = [m for m in result.messages if m.get("tool_call_id") == "tc_valid"]
    assert valid == [given[2]]
    assert "tc_valid" in [call["id"] for call in calls_of(result.messages)]
