"""openai-agents-python's ``ToolOutputTrimmer`` tests, re-expressed against condense.

Source: openai/openai-agents-python ``tests/extensions/test_tool_output_trimmer.py`` (see
``SOURCES.md``). The trimmer is a ``call_model_input_filter`` that replaces large
``function_call_output`` items of older turns (all but the last ``recent_turns`` user
turns) with a short "[Trimmed: …]" note naming the tool and the original size. condense
does the same under budget pressure (masking old tool outputs, the cheapest reduction
after dedupe), on the same Responses items: the request body is read with
``condense.load`` and written back with ``conversation.dump``. The trimmer trims
unconditionally above ``max_output_chars``; condense reduces only what the budget needs,
so each test gives a budget that masking the old output meets. Outputs are judged by the
Responses API's rules written out in ``thirdparty_rules.responses_violations`` and by a
provider's own count.
"""

from __future__ import annotations

import copy
from typing import Any

from thirdparty_rules import (
    TOKENIZER_ALLOWANCE,
    responses_tokens,
    responses_violations,
)

import condense

Item = dict[str, Any]


def _user(text: str) -> Item:
    return {"role": "user", "content": text}


def _assistant(text: str) -> Item:
    return {"role": "assistant", "content": text}


def _call(call_id: str, name: str, *, namespace: str | None = None) -> Item:
    item: Item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}
    if namespace is not None:
        item["namespace"] = namespace
    return item


def _output(call_id: str, output: Any) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _large(label: str, words: int = 1_500) -> str:
    return " ".join(f"{label}{i}" for i in range(words))


def _body(items: list[Item], instructions: str = "You are helpful.") -> dict[str, Any]:
    return {"model": "gpt-4.1", "instructions": instructions, "input": items}


def _compress(body: dict[str, Any], budget: int) -> tuple[dict[str, Any], Any]:
    """Compress a Responses request body as an agent would send it; return the body to
    send and the result."""
    conversation = condense.load(body)
    result = condense.compress(conversation, budget=budget)
    sent = conversation.dump(result.messages)
    assert isinstance(sent, dict)
    return sent, result


def _assert_sent_ok(sent: dict[str, Any], budget: int) -> None:
    problems = responses_violations(sent["input"])
    assert not problems, "the Responses API refuses this input:\n" + "\n".join(problems)
    used = responses_tokens(sent)
    assert used <= budget * (1 + TOKENIZER_ALLOWANCE), f"{used} provider tokens for {budget}"


def _output_of(sent: dict[str, Any], call_id: str) -> Any:
    (item,) = [
        item
        for item in sent["input"]
        if item.get("type") == "function_call_output" and item.get("call_id") == call_id
    ]
    return item["output"]


def _old_turn_then_two(items_of_old_turn: list[Item]) -> list[Item]:
    """A first turn holding ``items_of_old_turn``, then two more question/answer turns
    (the trimmer's default ``recent_turns=2`` leaves the first turn old)."""
    return [
        _user("q1"),
        *items_of_old_turn,
        _assistant("a1"),
        _user("q2"),
        _assistant("a2"),
        _user("q3"),
        _assistant("a3"),
    ]


def _budget_for_masking(items: list[Item], *, large_words: int) -> int:
    """A budget that masking the large old outputs meets with room to spare."""
    return responses_tokens(_body(items)) - large_words + 200


def test_a_large_old_output_is_trimmed_and_names_its_tool() -> None:
    """``TestTrimming.test_trims_large_old_output``: a large output of an old turn is
    replaced by a short note naming the tool; the call and its ``call_id`` stay paired."""
    items = _old_turn_then_two([_call("c1", "search"), _output("c1", _large("x"))])
    budget = _budget_for_masking(items, large_words=1_500)
    sent, _ = _compress(_body(items), budget)
    _assert_sent_ok(sent, budget)
    trimmed = str(_output_of(sent, "c1"))
    assert "search" in trimmed
    assert len(trimmed) < len(_large("x"))


def test_several_old_outputs_are_all_trimmed() -> None:
    """``TestTrimming.test_multiple_old_outputs_trimmed``: every large output of the old
    turns is trimmed, each note naming its own tool."""
    items = _old_turn_then_two(
        [
            _call("c1", "search"),
            _output("c1", _large("a", 1_000)),
            _call("c2", "execute"),
            _output("c2", _large("b", 2_000)),
        ]
    )
    budget = _budget_for_masking(items, large_words=3_000)
    sent, _ = _compress(_body(items), budget)
    _assert_sent_ok(sent, budget)
    assert "search" in str(_output_of(sent, "c1"))
    assert "execute" in str(_output_of(sent, "c2"))


def test_a_recent_large_output_is_kept_when_trimming_old_ones_suffices() -> None:
    """``TestTrimming.test_preserves_recent_large_output`` (and
    ``test_no_trimming_when_all_recent``): outputs of the recent turns are not trimmed
    while trimming older ones is enough."""
    items = [
        _user("q1"),
        _call("c0", "search"),
        _output("c0", _large("old")),
        _assistant("a1"),
        _user("q2"),
        _call("c1", "search"),
        _output("c1", _large("new", 800)),
        _assistant("a2"),
        _user("q3"),
        _call("c2", "search"),
        _output("c2", _large("newest", 300)),
        _assistant("a3"),
    ]
    budget = _budget_for_masking(items, large_words=1_500)
    sent, _ = _compress(_body(items), budget)
    _assert_sent_ok(sent, budget)
    assert _output_of(sent, "c1") == _large("new", 800)
    assert _output_of(sent, "c2") == _large("newest", 300)


def test_small_old_outputs_are_left_alone() -> None:
    """``TestTrimming.test_preserves_small_old_output``: small outputs are never trimmed —
    condense: while a large one pays for the budget, a small one stays as it was."""
    items = [
        _user("q1"),
        _call("c1", "search"),
        _output("c1", _large("big")),
        _assistant("a1"),
        _user("q2"),
        _call("c2", "lookup"),
        _output("c2", "x" * 100),
        _assistant("a2"),
        _user("q3"),
        _assistant("a3"),
        _user("q4"),
        _assistant("a4"),
    ]
    budget = _budget_for_masking(items, large_words=1_500)
    sent, _ = _compress(_body(items), budget)
    _assert_sent_ok(sent, budget)
    assert _output_of(sent, "c2") == "x" * 100
    assert "search" in str(_output_of(sent, "c1")), "the trimmed output does not name its tool"


def test_user_and_assistant_messages_and_instructions_pass_through() -> None:
    """``TestTrimming.test_preserves_user_and_assistant_messages`` and
    ``test_preserves_instructions``: trimming touches tool outputs only — every user and
    assistant message, and the ``instructions``, are sent as they were."""
    items = [
        _user("q0"),
        _call("c0", "search"),
        _output("c0", _large("x")),
        _assistant("a0"),
        *_old_turn_then_two([_call("c1", "search"), _output("c1", "found it")]),
    ]
    budget = _budget_for_masking(items, large_words=1_500)
    sent, _ = _compress(_body(items, instructions="Custom prompt"), budget)
    _assert_sent_ok(sent, budget)
    assert sent["instructions"] == "Custom prompt"
    messages = [item for item in items if "role" in item]
    assert [item for item in sent["input"] if "role" in item] == messages


def test_the_input_items_are_never_mutated() -> None:
    """``TestTrimming.test_does_not_mutate_original_items``: the filter works on copies."""
    items = _old_turn_then_two([_call("c1", "search"), _output("c1", _large("x"))])
    body = _body(items)
    before = copy.deepcopy(body)
    _compress(body, responses_tokens(body) // 3)
    assert body == before


def test_a_namespaced_tool_call_keeps_its_namespace() -> None:
    """``TestTrimming.test_respects_qualified_tool_names_allowlist`` and
    ``test_namespaced_tools_still_match_bare_allowlist_entries``: MCP calls carry a
    ``namespace``; it is part of the call the API accepted and must be sent back
    unchanged (issue 16: Codex's ``namespace`` was removed as an unknown key)."""
    items = [
        _user("q0"),
        _call("c0", "lookup_account", namespace="crm"),
        _output("c0", "account 7"),
        _assistant("a0"),
        *_old_turn_then_two([_call("c1", "search"), _output("c1", _large("x"))]),
    ]
    sent, _ = _compress(_body(items), 100_000)
    (call,) = [item for item in sent["input"] if item.get("call_id") == "c0" and "name" in item]
    assert call.get("namespace") == "crm"
    assert not responses_violations(sent["input"])


def test_a_structured_old_output_is_trimmed_to_a_valid_output() -> None:
    """``TestTrimming.test_structured_output_previews_text_and_drops_opaque_parts``: an old
    output made of content parts (text and an image) is trimmed to something the API
    still accepts as that call's output."""
    structured = [
        {"type": "input_text", "text": _large("t", 1_200)},
        {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 400},
    ]
    items = _old_turn_then_two([_call("c1", "screenshot"), _output("c1", structured)])
    budget = _budget_for_masking(items, large_words=1_200)
    sent, _ = _compress(_body(items), budget)
    _assert_sent_ok(sent, budget)


def test_a_responses_input_list_passed_directly_keeps_its_calls() -> None:
    """The trimmer's input is the bare list of Responses items (``ModelInputData.input``).
    Given that list directly, condense must treat it as Responses items — the call and
    its output are kept (trimmed at most), never dropped as unknown messages."""
    items = _old_turn_then_two([_call("c1", "search"), _output("c1", _large("x"))])
    result = condense.compress(items, budget=100_000)
    assert not responses_violations(result.messages)
    assert [item.get("call_id") for item in result.messages if "call_id" in item] == ["c1", "c1"]
