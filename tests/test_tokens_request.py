"""What a whole request costs, and how far condense's count is from each provider's.

The judge here is not condense: the model table is checked against the providers'
published windows and tokenizers, the Claude ratio against the ``usage`` Anthropic itself
reported in a real Claude Code transcript (``tests/data/corpus/agents/raw``), and the
budget of a compressed request against a count of everything the request sends.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import condense
from condense import compress
from condense.exceptions import InputError
from condense.tokens import (
    context_window,
    count_tokens,
    encoding_for_model,
    parts_tokens,
    plan_room,
    request_parts,
    tokenizer_for_model,
)
from condense.tokens.families import FAMILIES, TOKENIZERS, bare_model, family_for_model
from condense.tokens.request import TOKENS_PER_TOOL
from corpus import CORPUS

ROOT = Path(__file__).resolve().parent.parent
AGENTS = CORPUS / "agents"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"tool_{n}",
            "description": "Reads a file of the workspace and returns its numbered lines. " * 4,
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
            },
        },
    }
    for n in range(8)
]


def _history(turns: int = 40) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be precise."}]
    for n in range(turns):
        history.append({"role": "user", "content": f"Question {n}: " + "what about it? " * 30})
        history.append({"role": "assistant", "content": f"Answer {n}: " + "it is fine. " * 40})
    history.append({"role": "user", "content": "The latest ask: summarise all of it."})
    return history


# -- the model table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "tokenizer", "window"),
    [
        ("gpt-4o-mini", "openai", 128_000),
        ("gpt-5.1-codex", "openai", 272_000),
        ("openrouter/openai/gpt-4.1", "openai", 1_047_576),
        ("gpt-4-0613", "openai", 8_192),
        ("claude-sonnet-4-5-20250929", "claude", 200_000),
        ("us.anthropic.claude-opus-4-6-v1:0", "claude", 200_000),
        ("claude-3-5-haiku-latest", "claude", 200_000),
        ("claude-opus-4-7", "claude-2026", 200_000),
        ("claude-sonnet-5", "claude-2026", 200_000),
        ("claude-fable-5", "claude-2026", 200_000),
        ("claude-next-thing", "claude-2026", 200_000),  # an unknown Claude: the newer one
        ("gemini-2.5-pro", "gemini", 1_048_576),
        ("google/gemini-1.5-pro-002", "gemini", 2_097_152),
        ("deepseek-chat", "other", 131_072),
        ("qwen2.5-coder-32b", "other", None),
        ("my-own-model", "other", None),
    ],
)
def test_every_model_has_one_family_row(model: str, tokenizer: str, window: int | None) -> None:
    assert tokenizer_for_model(model).name == tokenizer
    assert context_window(model) == window


def test_no_model_means_the_budget_is_in_condenses_tokens() -> None:
    assert tokenizer_for_model(None).ratio == 1.0
    assert tokenizer_for_model("").ratio == 1.0


def test_the_table_has_one_row_per_prefix_and_openai_rows_are_exact() -> None:
    prefixes = [family.prefix for family in FAMILIES]
    assert len(prefixes) == len(set(prefixes))
    for family in FAMILIES:
        assert family.tokenizer.exact == (family.tokenizer.name == "openai")
        assert family.tokenizer.ratio >= 1.0
        assert encoding_for_model(family.prefix) == family.encoding


def test_one_million_window_for_claude_only_with_the_beta() -> None:
    assert context_window("claude-sonnet-4-5", anthropic_beta="context-1m-2025-08-07") == 1_000_000
    assert context_window("gpt-4o", anthropic_beta="context-1m-2025-08-07") == 128_000


def test_bare_model_strips_routing_prefixes() -> None:
    assert bare_model("OpenRouter/Anthropic/Claude-Sonnet-4") == "claude-sonnet-4"
    assert bare_model("ft:gpt-4o-mini:org::x") == "gpt-4o-mini:org::x"
    # a prefix needs a boundary after it: not ``gpt-4``'s row, only the catch-all ``gpt``
    family = family_for_model("gpt-40")
    assert family is not None and family.prefix == "gpt" and family.window is None
    assert family_for_model("gpt2") is None


def _measure() -> Any:
    spec = importlib.util.spec_from_file_location(
        "token_ratios", ROOT / "bench" / "token_ratios.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.corpus
def test_claudes_measured_ratio_is_within_the_planned_one() -> None:
    """Anthropic's own ``usage`` in a real Claude Code transcript, against condense's
    count of the same requests: the planned ratio covers it, and o200k alone would not."""
    module = _measure()
    transcripts = sorted((AGENTS / "raw").glob("claude-code-*.jsonl"))
    assert transcripts
    ratios = [
        ratio
        for path in transcripts
        for segment in module.segments(path)
        if (ratio := segment.ratio(2000)) is not None
    ]
    assert ratios
    planned = TOKENIZERS["claude"].ratio
    assert all(1.0 < ratio <= planned for ratio in ratios), ratios
    assert tokenizer_for_model("claude-sonnet-4-5-20250929") is TOKENIZERS["claude"]
    # the newer tokenizer counts about 30 % more than the older (Anthropic's docs)
    assert TOKENIZERS["claude-2026"].ratio >= 1.3 * max(ratios)


# -- what a request sends besides its messages ---------------------------------------------


def test_request_parts_are_what_reaches_the_model_besides_the_history() -> None:
    body = {
        "model": "m",
        "messages": [],
        "input": [],
        "stream": True,
        "max_tokens": 10,
        "instructions": "Be brief.",
        "tools": TOOLS,
        "tool_choice": "auto",
        "metadata": {"user": "x"},
        "tool_choice_unused": None,
    }
    assert set(request_parts(body)) == {"instructions", "tools", "tool_choice"}
    assert request_parts({"messages": [], "tools": []}) == {}


def test_tools_and_instructions_cost_their_text_and_framing() -> None:
    one = parts_tokens({"tools": TOOLS[:1]}, encoding="o200k_base")
    eight = parts_tokens({"tools": TOOLS}, encoding="o200k_base")
    text = json.dumps(TOOLS[0], separators=(",", ":"))
    assert one == TOKENS_PER_TOOL + condense.tokens.count_text(text)
    assert eight > 7 * one
    claude = parts_tokens({"tools": TOOLS}, encoding="o200k_base", tokenizer=TOKENIZERS["claude"])
    assert claude == eight + 530  # Anthropic's tool-use system prompt, planned at its largest
    instructions = "You are Codex, a coding agent. " * 200
    cost = parts_tokens({"instructions": instructions}, encoding="o200k_base")
    assert cost == count_tokens([{"role": "system", "content": instructions}]) - 3
    assert parts_tokens({"tool_choice": "auto"}, encoding="o200k_base") == 0
    schema = {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"}},
    }
    assert parts_tokens({"response_format": schema}, encoding="o200k_base") > 5
    plain = {"format": {"type": "text"}, "verbosity": "low"}
    assert parts_tokens({"text": plain}, encoding="o200k_base") == 0


def test_plan_room_shares_out_the_budget() -> None:
    room = plan_room(10_000, ratio=1.25, fixed=1_000, reserve=200)
    assert (room.messages, room.request) == (10_000 * 4 // 5 - 1_200, 10_000 * 4 // 5 - 200)
    assert plan_room(100, ratio=1.0, fixed=500).messages == 1


# -- compress counts the whole request --------------------------------------------------------


def test_tools_are_counted_against_the_budget() -> None:
    history = _history()
    budget = 2_000
    fixed = parts_tokens({"tools": TOOLS}, encoding="o200k_base")
    result = compress(history, budget=budget, tools=TOOLS, provider="openai")
    report = result.report
    assert report.fits
    assert report.room is not None and report.room.fixed == fixed
    sent = count_tokens(result.messages) + fixed  # everything the request sends
    assert report.tokens_after == sent <= budget
    assert report.tokens_before == count_tokens(history) + fixed
    without = compress(history, budget=budget, provider="openai")
    assert count_tokens(without.messages) > count_tokens(result.messages)
    assert "sent besides the messages" in report.describe()


def test_tools_must_be_a_list() -> None:
    with pytest.raises(InputError, match="tools must be a list"):
        compress(_history(), budget=1_000, tools={"name": "x"})  # type: ignore[arg-type]


def test_codex_instructions_are_counted() -> None:
    """A Codex request's ``instructions`` go to the model with every request (issue 17:
    "a request reported at 3,952 tokens sends 8,359")."""
    body = json.loads((AGENTS / "codex_localpush_019c8a59.json").read_text(encoding="utf-8"))
    body["instructions"] = (
        "You are Codex, based on GPT-5. You are running as a coding agent. " * 300
    )
    conversation = condense.load(copy.deepcopy(body))
    instructions = parts_tokens(
        {"instructions": body["instructions"], "tools": body["tools"]},
        encoding=encoding_for_model(body["model"]),
        tokenizer=tokenizer_for_model(body["model"]),
    )
    assert instructions > 4_000
    messages = count_tokens(conversation.messages)
    budget = messages + instructions // 2  # the messages alone would fit
    result = compress(conversation, budget=budget, model=body["model"])
    report = result.report
    assert report.tokens_before == messages + instructions
    assert report.fits and report.tokens_after <= budget
    assert count_tokens(result.messages) + instructions == report.tokens_after


@pytest.mark.parametrize(
    ("model", "ratio"),
    [("claude-sonnet-4-5", 1.30), ("claude-opus-4-7", 1.70), ("gemini-2.5-flash", 1.25)],
)
def test_claude_and_gemini_budgets_are_planned_below_by_their_measured_margin(
    model: str, ratio: float
) -> None:
    """By default the budget is in the provider's tokens: condense's count of the result,
    times the family's measured ratio, stays within it; an OpenAI model is counted
    exactly; with ``tokenizer_margin=False`` the budget is in condense's tokens."""
    history = _history()
    budget = 3_000
    result = compress(history, budget=budget, model=model)
    report = result.report
    assert report.room is not None and report.room.ratio == ratio
    assert report.fits
    assert report.tokens_after * ratio <= budget
    exact = compress(history, budget=budget, model="gpt-4o").report
    assert exact.room is not None and exact.room.ratio == 1.0
    # planned below by the margin (what a summary then leaves unused is not planned)
    assert report.room.messages < exact.room.messages <= budget
    assert exact.tokens_after <= budget
    assert "planned at" in report.describe()
    plain = compress(history, budget=budget, model=model, tokenizer_margin=False).report
    assert plain.room is not None and plain.room.ratio == 1.0


def test_without_a_model_or_tools_nothing_changes() -> None:
    history = _history(10)
    tokens = count_tokens(history)
    result = compress(history, budget=tokens)
    assert result.messages == history
    assert result.report.tokens_after == tokens and result.report.budget == tokens
