"""compress keeps replay state with its unit: the running Anthropic turn comes back
verbatim, a summary is never spliced into a reasoning turn, replay turns are never
shrunk, thinking unbound by an edit is removed and reported, and a Responses response
stays whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_support import run_cli as _run
from condense import Conversation, validate
from condense.compress import compress
from condense.providers import PROFILES
from condense.reduce.summary import BRIDGE, choose_placement, find_summary, placed
from condense.reduce.thinking import EMPTY_TURN, strip_thinking, unbind_thinking
from condense.tokens import count_tokens
from condense.units import UnitKind, carries_replay, segment

SIGNATURE = "EqQBCkYIBxgCKkBp" * 12
OUTPUT = "    1  order cache retry schema tenant worker queue invoice\n" * 60


def _thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": SIGNATURE}


def _loop(steps: int, *, final_argument: str = "small") -> dict[str, Any]:
    """An Anthropic thinking session whose current turn is a running tool loop: ``steps``
    finished turns (an ask, a thinking step that reads a file, its result, a reply), then
    the last ask and a step that interleaves thinking, text and a write call whose
    argument is ``final_argument``, with its result."""
    turns: list[dict[str, Any]] = []
    for n in range(steps):
        ask = "Fix the failing checkout." if n == 0 else f"Now check file {n}."
        turns.append({"role": "user", "content": ask})
        turns.append(
            {
                "role": "assistant",
                "content": [
                    _thinking(f"step {n}: read the next file"),
                    {"type": "text", "text": f"Reading file {n}."},
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "read", "input": {"n": n}},
                ],
            }
        )
        turns.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": OUTPUT}
                ],
            }
        )
        turns.append({"role": "assistant", "content": f"File {n} reads fine."})
    turns.append({"role": "user", "content": "Now write the fix."})
    turns.append(
        {
            "role": "assistant",
            "content": [
                _thinking("now write the fix"),
                {"type": "text", "text": "Writing the fix."},
                _thinking("the argument must hold the whole file"),
                {
                    "type": "tool_use",
                    "id": "toolu_final",
                    "name": "write",
                    "input": {"path": "app/checkout.py", "content": final_argument},
                },
            ],
        }
    )
    turns.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_final", "content": "ok"}],
        }
    )
    return {"system": "You are a coding agent.", "messages": turns}


def _final_tokens(conversation: Conversation) -> int:
    return count_tokens(conversation.messages[-3:]) + count_tokens(conversation.messages[:2])


OLDER_MODEL = "claude-opus-4-6"
"""A model without preserved thinking: thinking after an edit stays valid."""


@pytest.mark.parametrize("margin", [40, 150, 400])
def test_the_running_turn_comes_back_byte_identical(margin: int) -> None:
    body = _loop(8, final_argument="x = 1\n" * 400)
    conversation = Conversation.read(body)
    budget = _final_tokens(conversation) + margin  # a little above the running loop
    result = compress(conversation.messages, budget=budget, model=OLDER_MODEL)
    assert result.report.provider == "anthropic"
    assert result.report.thinking is not None and result.report.thinking.action == "keep"
    assert validate(result.messages, provider="anthropic") == []
    dumped = conversation.dump(result.messages)
    assert json.dumps(dumped["messages"][-2:]) == json.dumps(body["messages"][-2:])
    assert dumped["messages"][-2] is body["messages"][-2]  # re-emitted, not re-serialized
    for message in result.messages:  # the summary went into no reasoning turn
        if find_summary(message) is not None:
            assert not carries_replay(message) and not message.get("tool_calls")


def test_a_running_turn_larger_than_the_budget_is_kept_and_reported() -> None:
    body = _loop(3, final_argument="y" * 20_000)
    conversation = Conversation.read(body)
    for options in ({"model": OLDER_MODEL}, {}):  # kept; or held: the mode is unknown
        result = compress(conversation.messages, budget=800, **options)
        assert not result.report.fits
        assert result.report.protected_tokens > 800
        assert result.messages[-2] is conversation.messages[-2]
        assert result.messages[-1] is conversation.messages[-1]
        assert validate(result.messages, provider="anthropic") == []


def test_edited_history_loses_later_thinking_and_reports_each_turn() -> None:
    conversation = Conversation.read(_loop(8))
    messages = conversation.messages
    budget = count_tokens(messages) // 2
    result = compress(messages, budget=budget, thinking="adaptive")
    assert result.report.thinking is not None and result.report.thinking.action == "remove"
    removed = result.report.replay_removed
    assert removed, result.report.describe()
    edited = removed[0].edited_at
    assert all(r.edited_at == edited for r in removed)
    assert result.messages[edited] is not messages[edited]
    for index, message in enumerate(result.messages):  # the running turn's too
        if index > edited:
            assert "thinking_blocks" not in message
    running = len(result.messages) - 2
    assert running in {r.index for r in removed}
    assert {k: v for k, v in messages[-2].items() if k != "thinking_blocks"} == result.messages[
        running
    ]
    assert result.messages[-1] is messages[-1]
    for removal in removed:  # each removal names its turn and carries the blocks
        assert "thinking_blocks" not in result.messages[removal.index]
        assert removal.blocks and all(b["type"] == "thinking" for b in removal.blocks)
        assert "bound to an edited prefix" in removal.reason
    assert "thinking removed from" in result.report.describe()
    kept = compress(messages, budget=budget, thinking="adaptive", keep_bound_thinking=True)
    assert kept.report.replay_removed == ()
    assert any("thinking_blocks" in m for m in kept.messages[:-2])


def test_thinking_before_the_first_edit_and_after_a_resumed_prefix_stays() -> None:
    messages = Conversation.read(_loop(8)).messages
    first = compress(messages, budget=count_tokens(messages) // 2, thinking="adaptive")
    assert first.report.replay_removed
    # the agent ran on the compressed history: new turns are bound to that prefix
    grown = [
        *first.messages,
        {
            "role": "assistant",
            "content": "Fixed.",
            "thinking_blocks": [_thinking("the fix is in")],
        },
        {"role": "user", "content": "Thanks, now add a test."},
    ]
    second = compress(grown, budget=count_tokens(grown) + 100, thinking="adaptive")
    assert all(a is b for a, b in zip(second.messages, grown, strict=True))
    assert second.report.replay_removed == ()


def test_strip_and_unbind_fill_an_empty_turn_and_keep_the_unedited_prefix() -> None:
    only_thinking = {"role": "assistant", "content": None, "thinking_blocks": [_thinking("a")]}
    final = {"role": "assistant", "content": "done", "thinking_blocks": [_thinking("b")]}
    history = [{"role": "user", "content": "go"}, only_thinking, {"role": "user", "content": "?"}]
    stripped, found = strip_thinking([*history, final], 0)
    assert stripped[1] == {"role": "assistant", "content": EMPTY_TURN}
    assert stripped[3] == {"role": "assistant", "content": "done"}  # the final turn's too
    assert [blocks for _, blocks in found.values()] == [
        tuple(only_thinking["thinking_blocks"]),
        tuple(final["thinking_blocks"]),
    ]
    edited = [*history[:2], {"role": "user", "content": "?!"}, final]
    out, removed = unbind_thinking(edited, [*history, final])
    assert [r.index for r in removed] == [3] and removed[0].edited_at == 2
    assert out[1] is only_thinking  # before the edit: its prefix is unchanged
    same, none = unbind_thinking([*history, final], [*history, final])
    assert none == () and all(a is b for a, b in zip(same, [*history, final], strict=True))


# --- Responses ---------------------------------------------------------------------------


def _reasoning(n: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": SIGNATURE}


def _responses_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "Fix it."}]
    for n in range(6):
        items += [
            _reasoning(f"{n}a"),
            {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"Step {n}.", "annotations": []}],
            },
            _reasoning(f"{n}b"),
            {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": "write",
                "arguments": json.dumps({"path": "a.py", "content": "z" * 4000}),
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": f"call_{n}", "output": OUTPUT},
        ]
    return items


def test_one_response_is_one_unit() -> None:
    messages = Conversation.read(_responses_items()).messages
    units = segment(messages)
    assert [u.kind for u in units] == [UnitKind.USER] + [UnitKind.TOOL_EXCHANGE] * 6
    assert all(len(u) == 3 for u in units[1:])  # message + calls + output
    chat = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]
    assert len(segment(chat)) == 3  # plain chat replies stay separate units


def test_responses_items_pass_through_whole() -> None:
    items = _responses_items()
    conversation = Conversation.read(items)
    for budget in (1_500, 3_000, 6_000):
        result = compress(conversation.messages, budget=budget)
        assert result.report.provider == "responses"
        assert "shrunk" not in result.report.actions
        dumped = conversation.dump(result.messages)
        assert validate(result.messages, provider="responses") == []
        kept = [d for d in dumped if any(d is item for item in items)]
        ids = [d.get("id") for d in kept if d.get("id")]
        for n in range(6):  # a response's four items are all kept or all gone
            assert {f"rs_{n}a", f"msg_{n}", f"rs_{n}b", f"fc_{n}"} & set(ids) in (
                set(),
                {f"rs_{n}a", f"msg_{n}", f"rs_{n}b", f"fc_{n}"},
            )
        assert all("status" in d for d in kept if d.get("type") == "function_call")
        # the running response as it came; its output only cut middle-out, as the last
        # resort (issue 17), and named in the report
        cut = {c.tool_call_id for c in result.report.cuts if c.running}
        for sent, item in zip(dumped[-5:], items[-5:], strict=True):
            if item.get("type") == "function_call_output" and item["call_id"] in cut:
                assert "chars cut from the middle" in json.dumps(sent["output"])
                assert {**sent, "output": None} == {**item, "output": None}
            else:
                assert json.dumps(sent) == json.dumps(item)


# --- Gemini, DeepSeek --------------------------------------------------------------------


def _chat(replay: str) -> list[dict[str, Any]]:
    """Eight steps of writes over two turns (the second ask after the sixth step)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix it."}]
    for n in range(8):
        if n == 6:
            messages.append({"role": "user", "content": "Go on."})
        call: dict[str, Any] = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "write", "arguments": json.dumps({"content": "q" * 6000})},
        }
        assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        if replay == "gemini":
            call["extra_content"] = {"google": {"thought_signature": SIGNATURE}}
        elif replay == "deepseek":
            assistant["reasoning_content"] = f"step {n}"
        messages += [assistant, {"role": "tool", "tool_call_id": f"call_{n}", "content": "ok"}]
    return messages


@pytest.mark.parametrize(
    ("replay", "provider", "options"),
    [
        ("gemini", "strict", {}),  # auto: replay state tells what to keep, not whose rules
        ("gemini", "gemini-openai", {"model": "gemini-3-pro"}),
        ("deepseek", "strict", {}),
        ("deepseek", "deepseek", {"model": "deepseek-reasoner"}),
    ],
)
def test_reasoning_turns_are_never_shrunk(
    replay: str, provider: str, options: dict[str, Any]
) -> None:
    messages = _chat(replay)
    result = compress(messages, budget=count_tokens(messages) * 2 // 3, **options)
    assert result.report.provider == provider
    assert "shrunk" not in result.report.actions
    assert validate(result.messages, provider=provider) == []
    for message in result.messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            assert any(message is m for m in messages)
    plain = compress(_chat("none"), budget=count_tokens(messages) * 2 // 3, provider="openai")
    assert "shrunk" in plain.report.actions  # the same history without replay state is


# --- placement ---------------------------------------------------------------------------


def test_placement_never_merges_into_replay_state_and_bridges_when_it_must() -> None:
    anthropic, mistral = PROFILES["anthropic"], PROFILES["mistral"]
    user = {"role": "user", "content": "next"}
    thinking = {"role": "assistant", "content": "x", "thinking_blocks": [_thinking("t")]}
    plain = {"role": "assistant", "content": "x"}
    tool = {"role": "tool", "tool_call_id": "abcdefghi", "content": "r"}
    assert choose_placement(user, plain, anthropic) == "merge_next"
    assert choose_placement(user, thinking, anthropic) == "merge_previous"
    assert choose_placement(user, plain, anthropic, frozen=[plain]) == "merge_previous"
    assert choose_placement(thinking, user, anthropic) == "merge_next"
    assert choose_placement(tool, user, mistral) == "assistant"  # no user after a tool
    assert choose_placement(thinking, thinking, anthropic) == "user"
    assert choose_placement(thinking, user, anthropic, frozen=[user]) == "bridge_user"
    assert placed("bridge_user", "S") == [
        {"role": "user", "content": "S"},
        {"role": "assistant", "content": BRIDGE},
    ]
    assert choose_placement(tool, thinking, mistral) == "merge_previous"
    assert choose_placement(tool, thinking, mistral, frozen=[tool]) == "bridge_assistant"


# --- the command line ---------------------------------------------------------------------


def test_session_reports_removed_thinking_and_keeps_it_on_request(tmp_path: Path) -> None:
    body = _loop(8)
    source = tmp_path / "loop.json"
    source.write_text(json.dumps(body), encoding="utf-8")
    budget = str(count_tokens(Conversation.read(body).messages) // 2)
    out = tmp_path / "out.json"
    done = _run("session", str(source), "--budget", budget, "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["provider"] == "anthropic"
    assert report["replay_removed"] and all(
        entry["blocks"] >= 1 and "bound to an edited prefix" in entry["reason"]
        for entry in report["replay_removed"]
    )
    written = json.loads(out.read_text(encoding="utf-8"))
    running = body["messages"][-2]  # no thinking setting: adaptive; the running turn's goes too
    assert written["messages"][-2]["content"] == [
        block for block in running["content"] if block["type"] != "thinking"
    ]
    assert written["messages"][-1] == body["messages"][-1]
    kept = _run("session", str(source), "--budget", budget, "--json", "--keep-bound-thinking")
    assert kept.returncode == 0, kept.stderr
    assert json.loads(kept.stderr.strip().splitlines()[-1])["replay_removed"] == []
    human = _run("session", str(source), "--budget", budget)
    assert "thinking removed from" in human.stderr


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"role": "assistant", "content": "a", "thinking_blocks": [_thinking("t")]}, True),
        ({"role": "assistant", "content": None, "responses_items": [_reasoning("1")]}, True),
        ({"role": "assistant", "content": "a", "item_id": "msg_1"}, True),
        ({"role": "assistant", "content": "", "reasoning_content": ""}, True),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "item_id": "fc_1"}],
            },
            True,
        ),
        (_chat("gemini")[1], True),
        (_chat("none")[1], False),
        ({"role": "user", "content": "a", "reasoning_content": "r"}, False),
        ({"role": "tool", "tool_call_id": "c", "content": "r", "item_id": "x"}, False),
        ("not a message", False),
    ],
)
def test_what_carries_replay_state(message: Any, expected: bool) -> None:
    assert carries_replay(message) is expected
