"""Issue 16, point 6: every public function takes a native list or request body as it is
(as ``condense.load`` reads it) and answers in its shape. Before, an Anthropic list
passed directly was read as OpenAI chat: its ``thinking``, ``tool_use`` and
``tool_result`` blocks became text holding JSON."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import condense
from corpus import agent_requests
from native_responses_rules import problems

CLAUDE = [path for path in agent_requests() if path.name.startswith("cc_spotter_")]
CODEX = [path for path in agent_requests() if path.name.startswith("codex_")]
BLOCKS = ("thinking", "tool_use", "tool_result")


def _body(path: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return body


def anthropic_problems(turns: list[Any]) -> list[str]:
    """The Messages API's pairing and block rules, written out on their own: each
    ``tool_use`` answered by a ``tool_result`` at the start of the next user turn, each
    ``tool_result`` answering the turn before, blocks of known types only in their role,
    no block holding another format's JSON as text."""
    found: list[str] = []
    for index, turn in enumerate(turns):
        content = turn["content"] if isinstance(turn["content"], list) else []
        kinds = [block.get("type") for block in content]
        if turn["role"] == "user" and ("tool_use" in kinds or "thinking" in kinds):
            found.append(f"messages.{index}: assistant blocks in a user turn")
        if turn["role"] == "assistant" and "tool_result" in kinds:
            found.append(f"messages.{index}: `tool_result` blocks can only be in `user` messages")
        for block in content:
            text = block.get("text") if block.get("type") == "text" else None
            if isinstance(text, str) and any(f'"type": "{kind}"' in text for kind in BLOCKS):
                found.append(f"messages.{index}: a block written as JSON text")
        uses = [b["id"] for b in content if b.get("type") == "tool_use"]
        if uses:
            after = turns[index + 1]["content"] if index + 1 < len(turns) else []
            leading = []
            for block in after if isinstance(after, list) else []:
                if block.get("type") != "tool_result":
                    break
                leading.append(block["tool_use_id"])
            missing = [u for u in uses if u not in leading]
            if missing and index + 1 < len(turns):
                found.append(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(missing)}"
                )
    return found


def _block_counts(turns: list[Any]) -> dict[str, int]:
    counts = dict.fromkeys(BLOCKS, 0)
    for turn in turns:
        for block in turn["content"] if isinstance(turn["content"], list) else []:
            if block.get("type") in counts:
                counts[block["type"]] += 1
    return counts


@pytest.mark.parametrize("path", CLAUDE, ids=[p.stem for p in CLAUDE])
@pytest.mark.parametrize("provider", ["auto", "anthropic"])
def test_a_native_anthropic_list_is_validated_and_repaired_as_anthropic(
    path: Path, provider: str
) -> None:
    turns = _body(path)["messages"]
    before = copy.deepcopy(turns)
    loaded = condense.load(_body(path))
    assert [str(v) for v in condense.validate(turns, provider=provider)] == [
        str(v) for v in condense.validate(loaded, provider=provider)
    ]
    healed = condense.repair(turns, provider=provider)
    assert healed.provider == "anthropic"
    if not healed.changes:
        assert healed.messages == turns and healed.native == turns
        assert all(a is b for a, b in zip(healed.messages, turns, strict=True))
    assert turns == before


@pytest.mark.parametrize("path", CLAUDE, ids=[p.stem for p in CLAUDE])
def test_a_native_anthropic_list_keeps_its_blocks_through_compress(path: Path) -> None:
    turns = _body(path)["messages"]
    result = condense.compress(turns, budget=16_000)
    assert isinstance(result.messages, list) and result.native == result.messages
    assert {turn["role"] for turn in result.messages} <= {"user", "assistant"}
    assert anthropic_problems(result.messages) == []
    if not any(c.action for c in result.report.repairs):
        counts, before = _block_counts(result.messages), _block_counts(turns)
        assert counts["tool_use"] > 0 or before["tool_use"] == 0
    assert result.report.provider == "anthropic"


def test_a_request_body_comes_back_as_a_body() -> None:
    body = _body(CLAUDE[0])
    body["system"] = "You are Claude Code."
    result = condense.compress(body, budget=8_000)
    assert set(result.native) == set(body)
    assert {k: v for k, v in result.native.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    assert result.messages is result.native["messages"]
    healed = condense.repair(body)
    assert healed.native == body and healed.messages == body["messages"]


def test_places_are_named_in_the_native_list() -> None:
    turns = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "never mind"}]},
    ]
    [found] = condense.validate(turns)
    assert found.provider == "anthropic" and found.location == "messages[1].content[0]"
    assert found.provider_error is not None and "messages.1" in found.provider_error
    healed = condense.repair(turns)
    assert anthropic_problems(healed.messages) == []
    assert healed.messages[2]["content"][0]["type"] == "tool_result"


@pytest.mark.parametrize("path", CODEX, ids=[p.stem for p in CODEX])
def test_a_responses_list_passed_directly(path: Path) -> None:
    items = _body(path)["input"]
    assert condense.validate(items) == []
    assert condense.repair(items).messages == items
    result = condense.compress(items, budget=16_000)
    assert isinstance(result.native, list) and result.messages == result.native
    assert problems(result.native) == []
    assert condense.count_tokens(items) == condense.count_tokens(condense.load(items))


def test_canonical_lists_work_exactly_as_before() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    healed = condense.repair(messages)
    assert healed.native is None and all(
        a is b for a, b in zip(healed.messages, messages, strict=True)
    )
    result = condense.compress(messages, budget=1_000)
    assert result.native is None and result.messages[0] is messages[0]
    assert condense.count_tokens(messages) == condense.count_tokens(
        condense.load(messages).messages
    )


@pytest.mark.parametrize(
    "history",
    [
        [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        ],  # reads the same everywhere
        [{"role": "user", "content": "hi"}, {"role": "tool", "content": "orphan"}],
    ],
)
def test_lists_that_read_as_openai_chat_stay_canonical(history: list[Any]) -> None:
    assert condense.repair(history).native is None


def test_a_single_message_passed_alone_is_still_a_clear_error() -> None:
    with pytest.raises(condense.InputError, match="wrap a single message in a list"):
        condense.count_tokens({"role": "user", "content": "x"})  # type: ignore[arg-type]


def test_canonical_messages_carrying_another_formats_blocks_stay_canonical() -> None:
    """Canonical messages read from an Anthropic file keep its thinking under the
    adapters' own key and its server-tool blocks in their content: passed back as a list
    they are the canonical form, not an Anthropic list to read again."""
    canonical = condense.load(
        {
            "messages": [
                {"role": "user", "content": "search"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "t", "signature": "c2ln"},
                        {
                            "type": "server_tool_use",
                            "id": "srvtoolu_1",
                            "name": "web_search",
                            "input": {},
                        },
                        {
                            "type": "web_search_tool_result",
                            "tool_use_id": "srvtoolu_1",
                            "content": [],
                        },
                        {"type": "text", "text": "found"},
                    ],
                },
            ]
        }
    ).messages
    assert "thinking_blocks" in canonical[1]
    healed = condense.repair(canonical, provider="anthropic")
    assert healed.native is None and healed.messages[1] is canonical[1]
