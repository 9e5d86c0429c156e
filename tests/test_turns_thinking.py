"""Issue 16, one test per defect: thinking is about the turn and the request's mode, the
2026 prefix check, blocks that are not images, compaction state, guesses that loosened
the rules, and text before tool results. Native bodies are judged by
``tests/native_anthropic_rules.py`` (written apart from ``condense.validate``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import condense
from condense.compress import STRIP_IMAGES, compress
from condense.providers import PROFILES
from condense.reduce.images import strip_images
from condense.reduce.mask import mask_tool_outputs
from condense.tokens import count_tokens
from condense.turns import carries_compaction, current_turn
from corpus import agent_requests
from native_anthropic_rules import problems, unbound_thinking

ROOT = Path(__file__).resolve().parent.parent
SIGNATURE = "EqQBCkYIBxgCKkBp" * 12
BULK = "    1  order cache retry schema tenant worker queue invoice\n" * 80
ENABLED = {"type": "enabled", "budget_tokens": 4096}
ADAPTIVE = {"type": "adaptive"}
OLDER = "claude-opus-4-6"  # no preserved thinking
BINDS = "claude-fable-5-1"  # preserved thinking: the prefix check


def _request(name: str) -> Path:
    return next(path for path in agent_requests() if path.stem == name)


def _thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": SIGNATURE}


def _step(n: int, *, thinking: bool) -> list[dict[str, Any]]:
    """One step of a tool loop: an assistant turn (thinking first when ``thinking``) that
    reads a file, and the user turn with its result."""
    blocks: list[dict[str, Any]] = [_thinking(f"step {n}")] if thinking else []
    blocks.append({"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"n": n}})
    result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": BULK}
    return [{"role": "assistant", "content": blocks}, {"role": "user", "content": [result]}]


def _session(*, opening_thinking: bool = True) -> dict[str, Any]:
    """Three finished turns, then the current turn: a loop whose first step opens with
    thinking (or not) and whose later steps carry none, as Claude Code sends them."""
    turns: list[dict[str, Any]] = []
    for n in range(3):
        turns += [{"role": "user", "content": f"Look at module {n}."}]
        turns += _step(n, thinking=True)
        turns += [{"role": "assistant", "content": f"Module {n} is fine."}]
    turns += [{"role": "user", "content": "Now fix the failing test."}]
    turns += _step(10, thinking=opening_thinking)
    turns += _step(11, thinking=False)
    turns += _step(12, thinking=False)
    return {"model": OLDER, "system": "You are a coding agent.", "messages": turns}


def _current_turn(body: dict[str, Any]) -> list[Any]:
    return body["messages"][-6:]


# --- defect 1: accepted loops are called broken, then destroyed ---------------------------


def test_defect_1_an_accepted_claude_loop_is_valid_and_never_rewritten() -> None:
    path = _request("cc_spotter_fa812bfe")
    conversation = condense.load(path)
    body = json.loads(path.read_text(encoding="utf-8"))
    assert condense.validate(conversation) == []
    assert condense.repair(conversation).changes == ()
    result = compress(conversation, budget=16_000)
    sent = conversation.dump(result.messages)
    assert problems(sent) == []
    # the pending tool_use / tool_result pair is there, as sent: the request ends on it
    assert sent["messages"][-2:] == body["messages"][-2:]
    assert sent["messages"][-1]["content"][0]["type"] == "tool_result"
    assert "[called " not in json.dumps(sent)


@pytest.mark.parametrize("thinking", [None, ADAPTIVE, ENABLED, "enabled", "adaptive"])
def test_defect_1_later_steps_without_thinking_are_accepted_in_every_mode(thinking: Any) -> None:
    body = _session()
    conversation = condense.load(body)
    assert condense.validate(conversation, thinking=thinking) == []
    healed = condense.repair(conversation, thinking=thinking)
    assert healed.changes == ()


def test_defect_1_a_turn_opening_without_thinking_is_refused_only_under_budgeted_thinking() -> None:
    body = _session(opening_thinking=False)
    conversation = condense.load(body)
    assert problems({**body, "thinking": ENABLED})  # the API's own rule, written apart
    for thinking in (None, ADAPTIVE):
        assert condense.validate(conversation, thinking=thinking) == []
        assert condense.repair(conversation, thinking=thinking).changes == ()
    found = condense.validate(conversation, thinking=ENABLED)
    assert [v.code for v in found] == ["thinking_missing_in_loop"]
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in str(
        found[0].provider_error
    )
    healed = condense.repair(conversation, thinking=ENABLED)
    # healed without rewriting a call as text: the turn is closed after the steps that
    # carry no thinking, and every call and result is still there
    assert healed.changes and all(c.action == "insert" for c in healed.changes)
    sent = {**conversation.dump(healed.messages), "thinking": ENABLED}
    assert problems(sent) == []
    calls = [m for m in healed.messages if m.get("tool_calls")]
    assert len(calls) == 6 and "[called " not in json.dumps(sent)
    assert condense.validate(healed.messages, provider="anthropic", thinking="enabled") == []


# --- defect 2: the thinking that opens the current turn is stripped ------------------------


def _over(body: dict[str, Any]) -> int:
    """A budget that the current turn fits in, and the whole session does not (in
    condense's tokens: the calls below pass ``tokenizer_margin=False``)."""
    conversation = condense.load(body)
    turn = current_turn(conversation.messages)
    return count_tokens(conversation.messages[turn.start - 1 :]) + 600


def test_defect_2_budgeted_thinking_keeps_the_turn_opening_thinking() -> None:
    body = {**_session(), "thinking": ENABLED}
    conversation = condense.load(body)
    budget = _over(body)
    # the model does not bind: summarize; it binds: hold
    older = compress(conversation, budget=budget, tokenizer_margin=False)
    assert older.report.fits and "summarized" in older.report.actions
    sent = conversation.dump(older.messages)
    assert problems(sent) == [] and sent["messages"][-6:] == _current_turn(body)
    binding = compress(conversation, budget=budget, model=BINDS, tokenizer_margin=False)
    assert binding.report.thinking is not None and binding.report.thinking.action == "hold"
    assert not binding.report.fits and "budgeted thinking" in binding.report.thinking.reason
    assert all(a is b for a, b in zip(binding.messages, conversation.messages, strict=True))
    assert "thinking hold" in binding.report.describe()


def test_defect_2_drop_block_returns_the_request_settings_to_send() -> None:
    body = {**_session(), "thinking": ENABLED}
    conversation = condense.load(body)
    result = compress(
        conversation,
        budget=_over(body),
        model=BINDS,
        bound_thinking="drop_block",
        tokenizer_margin=False,
    )
    assert result.report.fits and result.report.replay_removed == ()
    settings = result.request_settings
    assert settings is not None
    sent = settings.apply_body(conversation.dump(result.messages))
    assert sent["thinking"] == {
        **ENABLED,
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    headers = settings.apply_headers({"Anthropic-Beta": "compact-2026-01-12"})
    assert headers == {"Anthropic-Beta": "compact-2026-01-12,thinking-binding-controls-2026-08-01"}
    assert problems(sent) == [] and unbound_thinking(sent, body) == []
    assert sent["messages"][-6:] == _current_turn(body)  # byte for byte, thinking included
    # nothing bound, nothing to send: a request that fits as it is
    fits = compress(conversation, budget=10**6, model=BINDS, bound_thinking="drop_block")
    assert fits.request_settings is None


def test_defect_2_adaptive_thinking_removes_bound_blocks_the_running_turns_too() -> None:
    body = {**_session(), "thinking": ADAPTIVE}
    conversation = condense.load(body)
    result = compress(conversation, budget=_over(body), model=BINDS)
    assert result.report.thinking is not None and result.report.thinking.action == "remove"
    sent = conversation.dump(result.messages)
    assert problems(sent) == [] and unbound_thinking(sent, body) == []
    removed = result.report.replay_removed
    opening = len(result.messages) - 6
    assert opening in {r.index for r in removed}  # the running turn's, reported
    assert all(r.blocks and r.blocks[0]["type"] == "thinking" for r in removed)


def test_defect_2_an_unknown_mode_never_produces_a_request_one_mode_refuses() -> None:
    messages = condense.load(_session()).messages  # a bare list: mode and model unknown
    result = compress(messages, budget=_over(_session()))
    assert result.report.thinking is not None and result.report.thinking.action == "hold"
    for thinking in (ENABLED, ADAPTIVE):
        sent = {**condense.load(_session()).dump(result.messages), "thinking": thinking}
        assert problems(sent) == [] and unbound_thinking(sent, _session()) == []


# --- defect 3: server-tool and MCP blocks become "[condense: image removed: image]" --------

SERVER_BLOCKS = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
    {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "query", "server_name": "db", "input": {}},
    {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "content": [{"type": "text", "text": "3"}],
    },
    {"type": "server_tool_use", "id": "srvtoolu_2", "name": "code_execution", "input": {}},
    {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {}},
    {"type": "text", "text": "Found it."},
]
IMAGE = {"type": "image", "source": {"type": "url", "url": "https://example.test/a.png"}}


def test_defect_3_server_tool_and_mcp_blocks_are_not_images() -> None:
    assistant = {"role": "assistant", "content": copy.deepcopy(SERVER_BLOCKS)}
    user = {"role": "user", "content": [{"type": "container_upload", "file_id": "f"}, IMAGE]}
    messages = [{"role": "user", "content": "go"}, assistant, user]
    reduced = strip_images(
        messages, [1, 2], need=10**6, cost=lambda m: count_tokens([m], media="anthropic")
    )
    assert reduced.changed == (2,)  # only the message that holds an image
    assert reduced.messages[1] is assistant
    kept = reduced.messages[2]["content"]
    assert kept[0] == {"type": "container_upload", "file_id": "f"}
    assert kept[1]["text"] == "[condense: image removed: https://example.test/a.png]"
    assert "image removed: image]" not in json.dumps(reduced.messages)


def test_defect_3_server_blocks_travel_with_their_unit_through_compress() -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "content": "Search for it."}]
    turns.append({"role": "assistant", "content": copy.deepcopy(SERVER_BLOCKS)})
    for n in range(4):
        turns += [
            {"role": "user", "content": f"ask {n} " + BULK},
            {"role": "assistant", "content": f"ok {n}"},
        ]
    turns.append({"role": "user", "content": "Thanks."})
    body = {"model": OLDER, "messages": turns}
    conversation = condense.load(body)
    assert condense.validate(conversation) == []
    for reductions in ((STRIP_IMAGES,), None):
        options: dict[str, Any] = {} if reductions is None else {"reductions": reductions}
        result = compress(conversation, budget=count_tokens(conversation.messages) // 2, **options)
        sent = conversation.dump(result.messages)
        assert problems(sent) == []
        held = [m for m in result.messages if m is conversation.messages[1]]
        unit = next(u for u in result.report.units if u.start <= 1 < u.stop)
        assert held or unit.action == "summarized"  # kept whole, or named in the report
        assert "image removed" not in json.dumps(sent)


def test_defect_3_any_block_type_is_the_providers_to_judge() -> None:
    future = {"type": "tool_search_tool_result", "tool_use_id": "x", "content": {}}
    unknown = {"type": "a_block_from_2027", "payload": [1, 2]}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}, unknown]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, unknown]},
    ]
    for provider in ("anthropic", "strict", "openai"):
        assert condense.validate(messages, provider=provider) == []
        assert condense.repair(messages, provider=provider).changes == ()
    assert future["type"].endswith("_tool_result")


def test_defect_3_a_masked_result_names_the_blocks_beside_its_text() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    result = {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [
            {"type": "text", "text": BULK},
            {"type": "search_result", "source": "s", "title": "t", "content": []},
        ],
    }
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        result,
    ]
    masked = mask_tool_outputs(messages, [2], need=10**6, cost=lambda m: len(json.dumps(m)))
    text = masked.messages[2]["content"]
    assert masked.messages[2]["tool_call_id"] == "call_1" and "with 1 search_result" in text


# --- defect 4: compaction state is summarized away ----------------------------------------


def _compacted() -> dict[str, Any]:
    """An Anthropic session compacted by the API (``compact_20260112``): the compaction
    block sits in the assistant turn that answered the ask before it."""
    turns: list[dict[str, Any]] = []
    for n in range(4):
        turns += [
            {"role": "user", "content": f"old ask {n} " + BULK},
            {"role": "assistant", "content": f"old {n}"},
        ]
    turns.append({"role": "user", "content": "Keep going."})
    compaction = {"type": "compaction", "content": "Summary of the work so far: modules 0-3 fine."}
    turns.append(
        {"role": "assistant", "content": [compaction, {"type": "text", "text": "Continuing."}]}
    )
    for n in range(4):
        turns += [
            {"role": "user", "content": f"new ask {n} " + BULK},
            {"role": "assistant", "content": f"new {n}"},
        ]
    turns.append({"role": "user", "content": "And now?"})
    return {"model": OLDER, "system": "You are careful.", "messages": turns}


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_defect_4_every_validator_accepts_compaction_state(profile: str) -> None:
    anthropic = condense.load(_compacted()).messages
    responses = condense.load(_request("codex_localpush_019c8a59_loop")).messages
    assert any(carries_compaction(m) for m in anthropic)
    assert any(carries_compaction(m) for m in responses)
    for messages in (anthropic, responses):
        state = [
            part
            for m in messages
            for key in ("content", "responses_items")
            for part in (m.get(key) if isinstance(m.get(key), list) else [])
            if isinstance(part, dict) and part.get("type") == "compaction"
        ]
        healed = condense.repair(messages, provider=profile).messages
        out = [
            part
            for m in healed
            for key in ("content", "responses_items")
            for part in (m.get(key) if isinstance(m.get(key), list) else [])
        ]
        assert state and all(any(p is c for p in out) for c in state), profile
        at = {i for i, m in enumerate(messages) if carries_compaction(m)}
        found = condense.validate(messages, provider=profile)
        assert not [v for v in found if v.index in at and "responses_items" in v.detail]


@pytest.mark.parametrize("budget", [400, 1_500, 4_000])
def test_defect_4_compaction_is_never_summarized_and_what_it_supersedes_goes_first(
    budget: int,
) -> None:
    body = _compacted()
    conversation = condense.load(body)
    result = compress(conversation, budget=budget)
    compaction = next(m for m in conversation.messages if carries_compaction(m))
    assert any(m is compaction for m in result.messages)
    superseded = result.report.superseded
    assert (
        superseded is not None and "before the newest compaction block" in result.report.describe()
    )
    sent = conversation.dump(result.messages)
    assert problems(sent) == []
    assert not any("old ask" in json.dumps(t) for t in sent["messages"])
    assert all(
        u.action != "summarized"
        or not any(carries_compaction(m) for m in result.messages[u.start : u.stop])
        for u in result.report.units
    )


# --- defect 7: a guess loosens the rules --------------------------------------------------


def _generic() -> list[dict[str, Any]]:
    """A valid history from an OpenAI-compatible reasoning server (vLLM, SGLang): some
    turns carry ``reasoning_content``, tool-call turns not always."""
    call = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py"},
        {"role": "assistant", "content": "One file.", "reasoning_content": "It is a.py."},
        {"role": "user", "content": "Thanks."},
    ]


def test_defect_7_reasoning_content_alone_selects_no_provider(tmp_path: Path) -> None:
    messages = _generic()
    assert condense.validate(messages) == []
    choice = condense.repair(messages)
    assert choice.provider == "strict" and "reasoning_content is kept" in choice.provider_reason
    source = tmp_path / "generic.json"
    source.write_text(json.dumps(messages), encoding="utf-8")
    from condense.cli import main

    assert main(["validate", str(source)]) == 0
    assert condense.validate(messages, provider="deepseek")  # its rule, only when named


# --- defect 8: text before tool_result blocks passes validate ----------------------------


def test_defect_8_text_before_tool_results_is_reported_with_the_apis_words_and_repaired() -> None:
    body = _session()
    results = body["messages"][-1]
    body["messages"][-1] = {
        "role": "user",
        "content": [{"type": "text", "text": "(the user typed this)"}, *results["content"]],
    }
    assert problems(body)  # the API's rule, written apart: refused
    conversation = condense.load(body)
    assert conversation.dump() == body  # read in its own order, written back as it came
    found = condense.validate(conversation)
    assert [v.code for v in found] == ["text_before_tool_result"]
    assert found[0].location == f"messages[{len(body['messages']) - 1}]"
    assert found[0].provider_error == (
        f"messages.{len(body['messages']) - 1}: Did not find 1 `tool_result` block(s) at the "
        "beginning of this message. Messages following `tool_use` blocks must begin with a "
        "matching number of `tool_result` blocks."
    )  # apify/tester-mcp-client#12, anthropics/claude-code#37
    healed = condense.repair(conversation)
    assert healed.changes and condense.validate(healed.messages, provider="anthropic") == []
    sent = conversation.dump(healed.messages)
    assert problems(sent) == []
    assert sent["messages"][-1]["content"][0]["type"] == "tool_result"
    assert sent["messages"][-1]["content"][-1]["text"] == "(the user typed this)"


# --- README --------------------------------------------------------------------------------


def test_readme_says_what_condense_does_with_thinking_and_compaction() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Reasoning models") :]
    section = section[: section.index("\n## ", 5)]
    for needed in (
        "adaptive",
        "budgeted",
        "unknown",
        "drop_block",
        "thinking-binding-controls-2026-08-01",
        "request_settings",
        "compaction",
        "current turn",
    ):
        assert needed in section, needed
    assert "writing its calls\nand results as text" not in readme
