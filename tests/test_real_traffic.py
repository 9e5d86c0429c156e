"""Real traffic is the judge (issue 16): every Claude Code request in
``tests/data/corpus/agents`` was accepted by Anthropic (the session went on), so

- ``validate`` finds nothing in it, under ``auto`` and under ``anthropic``;
- ``repair`` changes nothing;
- ``compress`` at 4k, 16k and 64k returns a request that passes the Messages API's rules
  as ``tests/native_anthropic_rules.py`` writes them out (independently of
  ``condense.validate``), with the current turn byte for byte as it came, and every block
  of the input either in the output or named in the report.

The Codex requests are judged by the Responses reader's own tests; here only that the
engine keeps the one the reader already reads clean (``codex_localpush_019c8a59_loop``)
valid, its compaction item and its running turn untouched.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import condense
from condense.compress import CompressionResult, compress
from condense.compress.assemble import without_notices
from condense.providers.base import THINKING_BLOCKS
from condense.reduce.summary import find_summary
from condense.turns import carries_compaction, current_turn
from corpus import agent_requests
from native_anthropic_rules import problems, unbound_thinking

CLAUDE = [path for path in agent_requests() if path.stem.startswith("cc_")]
CODEX_LOOP = next(path for path in agent_requests() if path.stem == "codex_localpush_019c8a59_loop")
BUDGETS = (4_000, 16_000, 64_000)
PROVIDERS = ("auto", "anthropic")


@cache
def _load(path: Path) -> condense.Conversation:
    return condense.load(path)


def _body(path: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return body


def test_the_corpus_holds_the_requests_this_file_is_about() -> None:
    assert len(CLAUDE) >= 15 and all(problems(_body(path)) == [] for path in CLAUDE)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("path", [*CLAUDE, CODEX_LOOP], ids=lambda p: p.stem)
def test_an_accepted_request_validates_clean(path: Path, provider: str) -> None:
    conversation = _load(path)
    chosen = provider if provider == "auto" or path.stem.startswith("cc_") else "responses"
    assert condense.validate(conversation, provider=chosen) == []


@pytest.mark.parametrize("path", [*CLAUDE, CODEX_LOOP], ids=lambda p: p.stem)
def test_repair_leaves_an_accepted_request_as_it_is(path: Path) -> None:
    conversation = _load(path)
    healed = condense.repair(conversation)
    assert healed.changes == ()
    assert all(a is b for a, b in zip(healed.messages, conversation.messages, strict=True))
    assert conversation.dump(healed.messages) == _body(path)


def _native_turn_start(turns: list[Any]) -> int:
    """Independently of condense.turns: the native turns after the last user turn that
    carries more than tool results."""
    start = 0
    for index, turn in enumerate(turns):
        content = turn["content"]
        if turn["role"] == "user" and (
            isinstance(content, str) or any(b.get("type") != "tool_result" for b in content)
        ):
            start = index + 1
    return start


def _accounted(conversation: condense.Conversation, result: CompressionResult) -> list[str]:
    """Every input message is in the output as the same object, or the report names what
    happened to it: its unit reduced, its messages superseded by a compaction, or its
    thinking removed whole (the rest of it kept); or it is kept with the summary (or the
    notice) of a replaced span put before or after its content."""
    report, given = result.report, conversation.messages
    assert report.repairs == ()
    shift = 0
    if report.superseded is not None:
        shift = report.superseded.stop - report.superseded.start - report.superseded.opener
    reduced = {
        index + shift
        for unit in report.units
        if unit.action != "kept"
        for index in range(unit.start, unit.stop)
    }
    out = {id(message) for message in result.messages}
    removed = {id(block) for r in report.replay_removed for block in r.blocks}
    missing = []
    for index, message in enumerate(given):
        if id(message) in out or index in reduced:
            continue
        if report.superseded is not None and report.superseded.start <= index < shift:
            continue
        blocks = message.get(THINKING_BLOCKS) or []
        rest = {k: v for k, v in message.items() if k != THINKING_BLOCKS}
        if blocks and all(id(b) in removed for b in blocks) and rest in result.messages:
            continue
        if any(_with_summary(m, message) or _joined(m, message) for m in result.messages):
            continue
        missing.append(f"message {index} ({message.get('role')}) is gone without a report")
    return missing


def _with_summary(message: dict[str, Any], original: dict[str, Any]) -> bool:
    """``message`` is ``original`` (every other key the same object) with a summary block
    or a notice before or after its content."""
    if message.keys() != original.keys() or any(
        message[k] is not original[k] for k in original if k != "content"
    ):
        return False
    content, original_content = message.get("content"), original.get("content")
    if isinstance(content, list):
        rest = [p for p in content if find_summary({"content": [p]}) is None]
        return without_notices(rest) == (original_content or [])
    found = find_summary({"content": content})
    rest = found[1] if found is not None else without_notices(content)
    return rest == (original_content or "").strip() and rest != content


def _joined(message: dict[str, Any], original: dict[str, Any]) -> bool:
    """``message`` holds ``original``'s text whole, joined with the text of the message of
    its role on the other side of a span left out (so that no same-role run is made)."""
    text, part = message.get("content"), original.get("content")
    if message.get("role") != original.get("role") or not isinstance(text, str):
        return False
    if not isinstance(part, str) or not part:
        return False
    return text.startswith(f"{part}\n\n") or text.endswith(f"\n\n{part}")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.stem)
def test_compress_returns_a_request_anthropic_accepts(
    path: Path, budget: int, provider: str
) -> None:
    conversation = _load(path)
    body = _body(path)
    result = compress(conversation, budget=budget, provider=provider)
    assert result.report.provider == "anthropic"
    sent = conversation.dump(result.messages)
    if result.request_settings is not None:
        sent = result.request_settings.apply_body(sent)
    assert problems(sent) == []
    # the current turn, byte for byte (claude-opus-4-6 does not bind thinking to its
    # prefix, so nothing in it changes)
    start = _native_turn_start(body["messages"])
    tail = body["messages"][start:]
    if tail:
        assert json.dumps(sent["messages"][-len(tail) :]) == json.dumps(tail)
    turn = current_turn(conversation.messages)
    kept = result.messages[len(result.messages) - (turn.stop - turn.start) :]
    assert all(a is b for a, b in zip(kept, conversation.messages[turn.start :], strict=True))
    assert _accounted(conversation, result) == []
    if result.report.fits:
        assert result.report.tokens_after <= budget


@pytest.mark.parametrize("budget", BUDGETS)
def test_compress_keeps_a_codex_request_valid_with_its_compaction(budget: int) -> None:
    conversation = _load(CODEX_LOOP)
    result = compress(conversation, budget=budget)
    assert result.report.provider == "responses"
    assert condense.validate(result.messages, provider="responses") == []
    compaction = [m for m in conversation.messages if carries_compaction(m)]
    assert compaction and all(any(m is c for m in result.messages) for c in compaction)
    turn = current_turn(conversation.messages)
    tail = conversation.messages[turn.start :]
    assert all(a is b for a, b in zip(result.messages[-len(tail) :], tail, strict=True))
    assert _accounted(conversation, result) == []


BINDING_MODEL = "claude-opus-5-5"
"""A model with preserved thinking: each thinking block is checked against its prefix."""
ENABLED = {"type": "enabled", "budget_tokens": 4096}


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.stem)
def test_with_preserved_thinking_no_request_fails_either_thinking_rule(
    path: Path, budget: int
) -> None:
    """On a model that checks thinking against its prefix, under adaptive thinking (the
    bodies send none: the model's default), with ``drop_block``, and under budgeted
    thinking: the request sent passes the API's rules and the prefix check."""
    conversation = _load(path)
    body = _body(path)
    for options in ({}, {"bound_thinking": "drop_block"}, {"thinking": ENABLED}):
        result = compress(conversation, budget=budget, model=BINDING_MODEL, **options)
        sent = {**conversation.dump(result.messages), "thinking": options.get("thinking")}
        if "thinking" not in options:
            del sent["thinking"]
        if result.request_settings is not None:
            sent = result.request_settings.apply_body(sent)
            assert options.get("bound_thinking") == "drop_block"
            assert sent["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
            assert dict(result.request_settings.headers) == {
                "anthropic-beta": "thinking-binding-controls-2026-08-01"
            }
        assert problems(sent) == [], options
        assert unbound_thinking(sent, body) == [], options
        binding = result.report.thinking  # None: no thinking, or nothing had to change
        if binding is None or binding.action != "remove":
            assert result.report.replay_removed == ()
        if binding is not None and "thinking" in options:  # budgeted: never dropped
            assert binding.action in ("hold", "remove")
        if binding is not None and binding.action == "hold":
            assert result.messages == conversation.messages or result.report.repairs
