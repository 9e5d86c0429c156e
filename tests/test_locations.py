"""Reports speak the user's file: violations and repair changes name the turn, block or
item of the file the user gave (``messages[45].content[1]``, ``input[4]``), and the quoted
provider text uses that provider's own paths (Anthropic ``messages.45.content.1``,
Responses ``input[4]``, OpenAI chat ``messages.3.tool_calls.0``). The CLI runs in this
process through ``main(argv)``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cli_support import run_cli as _run
from condense.formats import Conversation, load
from condense.repair import repair
from condense.validate import validate

DATA = Path(__file__).resolve().parent / "data" / "formats"
INTERNAL = ("thinking_blocks", "responses_items", "item_id")


def _fixture(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return body


def _write(path: Path, body: object) -> Path:
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    return path


def _long_anthropic(exchanges: int = 22) -> dict[str, Any]:
    """An agent session: thinking and two parallel calls per turn, a top-level system."""
    turns: list[Any] = [{"role": "user", "content": "Find why the build fails."}]
    for n in range(exchanges):
        turns.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"Step {n}.", "signature": f"sig{n}"},
                    {"type": "tool_use", "id": f"toolu_{n}a", "name": "read", "input": {"n": n}},
                    {"type": "tool_use", "id": f"toolu_{n}b", "name": "run", "input": {"n": n}},
                ],
            }
        )
        turns.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}a", "content": "a"},
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}b", "content": "b"},
                ],
            }
        )
    return {"model": "claude-sonnet-4-5", "system": "You are careful.", "messages": turns}


def _broken_long_anthropic() -> dict[str, Any]:
    """46 turns; a ``name`` on the tool_result at messages[10].content[1] (tau-bench style)
    and a final assistant turn whose call at messages[45].content[1] has no result."""
    body = _long_anthropic()
    body["messages"][10]["content"][1]["name"] = "run"
    body["messages"].append(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Last step.", "signature": "sigZ"},
                {"type": "tool_use", "id": "toolu_last", "name": "run", "input": {}},
            ],
        }
    )
    assert len(body["messages"]) == 46
    return body


# --- where each canonical message came from ----------------------------------------------


def test_the_anthropic_adapter_knows_each_turn_and_block() -> None:
    locator = load(_fixture("anthropic_agent.json")).locator
    spots = [locator.spot(i) for i in range(10)]
    assert spots == [
        ("system",),
        ("messages", 0),
        ("messages", 1),
        ("messages", 2, "content", 0),  # a tool message is its tool_result block
        ("messages", 2, "content", 1),
        ("messages", 2),  # the user's text after the results: the same turn
        ("messages", 3),
        ("messages", 4, "content", 0),
        ("messages", 5),
        ("messages", 6),
    ]
    assert locator.spot(2, call=1) == ("messages", 1, "content", 3)  # after thinking, text
    assert locator.spot(2, part=0) == ("messages", 1, "content", 1)
    assert locator.spot(0, part=1) == ("system", 1)
    assert locator.first_replay(6) == ("messages", 3, "content", 0)


def test_the_responses_adapter_knows_each_item() -> None:
    conversation = load(_fixture("responses_agent.json"))
    locator = conversation.locator
    # one assistant message from a reasoning item and two function_call items
    assert locator.spot(2) == ("input", 3)
    assert locator.ends(2) == (("input", 2), ("input", 4))
    assert locator.spot(2, call=1) == ("input", 4)
    assert locator.spot(2, conversation.messages[2], ident="rs_68a1") == ("input", 2)
    assert locator.spot(2, conversation.messages[2], ident="fc_68a3") == ("input", 4)
    # a message item with its reasoning before it, and a text reply with a call after it
    assert locator.spot(5) == ("input", 8)
    assert locator.spot(9) == ("input", 15)
    assert locator.ends(9) == (("input", 14), ("input", 16))


# --- violations --------------------------------------------------------------------------


def test_a_46_turn_anthropic_file_is_reported_at_its_own_turns() -> None:
    conversation = load(_broken_long_anthropic())
    found = validate(conversation)
    assert [(v.code, v.location) for v in found] == [
        ("unknown_key", "messages[10].content[1].name"),
        ("unanswered_tool_call", "messages[45].content[1]"),
    ]
    name, unanswered = found
    assert name.provider_error == (
        "messages.10.content.1.tool_result.name: Extra inputs are not permitted"
    )
    assert unanswered.provider_error is not None
    assert unanswered.provider_error.startswith(
        "messages.45: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: toolu_last."
    )
    # the canonical list (system, tool messages) has other indices: both must not leak
    assert unanswered.index == 68
    assert "68" not in str(unanswered) + unanswered.provider_error
    assert str(unanswered).startswith("messages[45].content[1]: tool call 'toolu_last'")


def test_check_prints_the_files_own_places(tmp_path: Path) -> None:
    source = _write(tmp_path / "session.json", _broken_long_anthropic())
    done = _run("check", str(source))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"{source}: messages[10].content[1].name: has key 'name' that anthropic does not "
        "accept [unknown_key]"
    )
    assert lines[1] == (
        "    anthropic would answer: messages.10.content.1.tool_result.name: Extra inputs "
        "are not permitted"
    )
    assert lines[2].startswith(f"{source}: messages[45].content[1]: tool call 'toolu_last'")
    assert lines[3].startswith("    anthropic would answer: messages.45: `tool_use` ids were")
    assert "message 68" not in done.stdout and "messages.68" not in done.stdout
    machine = [  # one JSON object per violation
        json.loads(line) for line in _run("validate", str(source), "--json").stdout.splitlines()
    ]
    assert [item["location"] for item in machine] == [
        "messages[10].content[1].name",
        "messages[45].content[1]",
    ]


def test_anthropic_blocks_are_named_by_their_native_index() -> None:
    body = _fixture("anthropic_agent.json")
    body["messages"][1]["content"][3]["input"] = ["not", "an", "object"]
    body["messages"][4]["content"][0]["tool_use_id"] = "toolu_nobody"
    body["messages"][5]["content"][0]["lang"] = "en"
    found = {v.code: v for v in validate(load(body))}
    arguments = found["arguments_not_object"]
    assert arguments.location == "messages[1].content[3]"
    assert arguments.provider_error == (
        "messages.1.content.3.tool_use.input: Input should be a valid dictionary"
    )
    orphan = found["orphan_tool_result"]
    assert orphan.location == "messages[4].content[0]"
    assert orphan.provider_error is not None
    assert orphan.provider_error.startswith(
        "messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_nobody."
    )
    extra = found["unknown_key"]
    assert extra.location == "messages[5].content[0].lang"
    assert extra.provider_error == "messages.5.content.0.text.lang: Extra inputs are not permitted"


def _broken_responses() -> dict[str, Any]:
    body = _fixture("responses_agent.json")
    body["input"][4]["metadata"] = {"trace": "x"}
    body["input"].append({"type": "reasoning", "id": "rs_tail", "summary": []})
    return body


def test_responses_items_are_named_by_their_input_index(tmp_path: Path) -> None:
    found = validate(load(_broken_responses()))
    assert [(v.code, v.location, v.provider_error) for v in found] == [
        ("unknown_key", "input[4].metadata", "Unknown parameter: 'input[4].metadata'."),
        (
            "unanswered_tool_call",
            "input[16]",
            "No tool output found for function call call_Book03.",
        ),
        (
            "reasoning_without_following_item",
            "input[17]",
            "Item 'rs_tail' of type 'reasoning' was provided without its required following item.",
        ),
    ]
    source = _write(tmp_path / "responses.json", _broken_responses())
    done = _run("check", str(source))
    assert done.returncode == 1
    assert f"{source}: input[4].metadata: tool call 1 has key 'metadata'" in done.stdout
    assert "responses would answer: Unknown parameter: 'input[4].metadata'." in done.stdout
    assert f"{source}: input[17]: reasoning item(s)" in done.stdout


def test_other_providers_texts_use_the_request_condense_would_send() -> None:
    """An OpenAI chat history checked for Anthropic: Anthropic's text names the turns and
    blocks of the Anthropic request, not the chat indices (``tool_calls`` never appears)."""
    call = {"type": "function", "function": {"name": "read", "arguments": "[1]"}}
    fine = {"name": "read", "arguments": '{"path": "b"}'}
    messages = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "Read a and b."},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [{"id": "c1", **call}, {"id": "c2", **call, "function": fine}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "A"},
        {"role": "tool", "tool_call_id": "c2", "content": "B", "lang": "en"},
    ]
    found = {v.code: v for v in validate(messages, provider="anthropic")}
    # the system prompt is not a turn; text then the two tool_use blocks
    assert found["arguments_not_object"].provider_error == (
        "messages.1.content.1.tool_use.input: Input should be a valid dictionary"
    )
    assert found["unknown_key"].provider_error == (
        "messages.2.content.1.tool_result.lang: Extra inputs are not permitted"
    )
    assert all(v.location is None for v in found.values())  # a list is no file
    # OpenAI's own paths for OpenAI
    chat = {v.code: v for v in validate(messages, provider="openai")}
    assert chat["arguments_not_object"].provider_error == (
        "messages.2.tool_calls.0.function.arguments: arguments must be a valid JSON object string"
    )
    assert validate(Conversation(messages=messages), provider="openai")[0].location == (
        "messages[2].tool_calls[0]"
    )


def test_an_anthropic_file_checked_for_openai_names_no_internal_key() -> None:
    found = validate(load(_fixture("anthropic_agent.json")), provider="openai")
    thinking = [
        v for v in found if v.location in ("messages[1].content[0]", "messages[3].content[0]")
    ]
    assert [v.detail for v in thinking] == ["has thinking blocks that openai does not accept"] * 2
    assert all(v.provider_error is None for v in thinking)
    for violation in found:
        text = f"{violation} {violation.provider_error} {violation.location}"
        assert not any(key in text for key in INTERNAL), text


@pytest.mark.parametrize("name", ["anthropic_agent.json", "responses_agent.json"])
def test_check_reports_no_internal_key_of_a_valid_file(tmp_path: Path, name: str) -> None:
    """Thinking blocks, reasoning items, item ids, status and phase are the file's own."""
    body = _fixture(name)
    if name == "responses_agent.json":
        body["input"][15]["phase"] = "commentary"
        body["input"].append(
            {"type": "function_call_output", "call_id": "call_Book03", "output": "booked"}
        )
    source = _write(tmp_path / name, body)
    done = _run("check", str(source))
    assert done.returncode == 0, done.stdout
    assert done.stdout == ""
    assert ": valid" in done.stderr


# --- repair ------------------------------------------------------------------------------


def test_repair_changes_name_the_files_places(tmp_path: Path) -> None:
    body = _broken_long_anthropic()
    result = repair(load(body))
    assert [(c.action, c.location) for c in result.changes] == [
        ("rewrite", "messages[10].content[1]"),
        ("insert", "after messages[45]"),
    ]
    assert "messages[45]" in result.changes[1].reason  # "of message 68" in file terms
    assert "68" not in result.changes[1].reason
    source = _write(tmp_path / "session.json", body)
    done = _run("repair", str(source), "-o", str(tmp_path / "healed.json"))
    assert done.returncode == 0, done.stderr
    assert f"{source}: rewrite messages[10].content[1]: removed key(s)" in done.stderr
    assert f"{source}: insert after messages[45]: stub result" in done.stderr
    records = [
        json.loads(line) for line in _run("repair", str(source), "--json").stderr.splitlines()[:2]
    ]
    assert [r["location"] for r in records] == ["messages[10].content[1]", "after messages[45]"]
    healed = json.loads((tmp_path / "healed.json").read_text(encoding="utf-8"))
    assert healed["messages"][:10] == body["messages"][:10]
    assert "name" not in healed["messages"][10]["content"][1]
    assert healed["messages"][46]["content"][0]["tool_use_id"] == "toolu_last"
    assert _run("check", str(tmp_path / "healed.json")).returncode == 0


def test_a_stub_joins_the_turn_of_the_other_results() -> None:
    """Every tool_result answering one assistant turn goes in one user message, stubs
    included, before any text."""
    body = _fixture("anthropic_agent.json")
    del body["messages"][2]["content"][1]  # the second parallel call loses its result
    conversation = load(body)
    result = repair(conversation)
    [stub] = [c for c in result.changes if c.action == "insert"]
    assert stub.location == "before messages[2].content[1]"  # before the user's text
    dumped = conversation.dump(result.messages)
    kinds = [block["type"] for block in dumped["messages"][2]["content"]]
    assert kinds == ["tool_result", "tool_result", "text"]
    assert len(dumped["messages"]) == len(body["messages"])
    assert all(a is b for a, b in zip(dumped["messages"][3:], body["messages"][3:], strict=True))
    assert validate(load(dumped)) == []


def test_a_message_not_read_from_the_file_has_no_place_in_it() -> None:
    """Places follow the message objects: an edited copy has none (its provider text is
    that of the request condense would write), every other message keeps its own."""
    conversation = load(_fixture("anthropic_agent.json"))
    messages = list(conversation.messages)
    messages[4] = {**messages[4], "name": "run"}  # an edited copy of a tool result
    del messages[8]
    edited = dataclasses.replace(conversation, messages=messages)
    assert edited.locator.spot(3) == ("messages", 2, "content", 0)
    assert edited.locator.spot(4) is None
    assert edited.locator.spot(8) == ("messages", 6)
    [found] = validate(edited)
    assert (found.location, str(found)) == (None, f"message 4: {found.detail} [unknown_key]")
    assert found.provider_error == (
        "messages.2.content.1.tool_result.name: Extra inputs are not permitted"
    )


def test_compress_of_a_loaded_file_names_its_repairs_in_the_files_places(
    tmp_path: Path,
) -> None:
    """``compress(condense.load(path))`` works like ``repair``: the format chooses the
    profile and each repair names the file's own turn and block; so does the command."""
    from condense.compress import compress

    source = _write(tmp_path / "session.json", _broken_long_anthropic())
    done = _run("compress", str(source), "--budget", "600", "--show-changes")
    assert done.returncode == 0, done.stderr
    assert f"{source}: rewrite messages[10].content[1]: removed key(s)" in done.stderr
    assert f"{source}: insert after messages[45]: stub result" in done.stderr
    conversation = load(_broken_long_anthropic())
    result = compress(conversation, budget=600)
    assert result.report.provider == "anthropic"
    assert [(c.action, c.location) for c in result.report.repairs] == [
        ("rewrite", "messages[10].content[1]"),
        ("insert", "after messages[45]"),
    ]
    written = conversation.dump(result.messages)
    assert validate(load(written)) == []
    previous = compress(conversation, budget=600)
    grown = [*conversation.messages, {"role": "user", "content": "Go on."}]
    assert compress(grown, budget=650, previous=previous.state).report.fits
