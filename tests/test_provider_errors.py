"""Every real error text in ``provider-rules.md``: the history that provokes it is flagged
by ``validate`` with that text, and ``repair`` heals it for the same provider.

Each case cites where the text was seen (``owner/repo #N``, as provider-rules.md does).
"""

from __future__ import annotations

import operator
from typing import Any

import pytest

from condense import repair, validate
from condense.providers.gemini import DUMMY_THOUGHT_SIGNATURE

SYSTEM = {"role": "system", "content": "You are a coding agent."}
USER = {"role": "user", "content": "Fix the failing test."}
REPLY = {"role": "assistant", "content": "Done."}


def call(call_id: str, name: str = "bash", arguments: str = '{"cmd": "ls"}', **extra: Any) -> Any:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        **extra,
    }


def asks(*calls: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls), **extra}


def result(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


THINKING = {"type": "thinking", "thinking": "Let me list the files.", "signature": "EqQBCkYIBxgC"}
REASONING_ITEM = {
    "type": "reasoning",
    "id": "rs_01",
    "summary": [],
    "encrypted_content": "gAAAAABo_c2Q",
}
SIGNED = {"google": {"thought_signature": "CiQBVKhc7v8="}}

# (provider, history, code, the provider's text as condense quotes it, source)
CASES: list[tuple[str, list[Any], str, str, str]] = [
    (
        "openai",
        [USER, result("call_1")],
        "orphan_tool_result",
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        "litellm #4931",
    ),
    (
        "openai",
        [USER, asks(call("call_1"))],
        "unanswered_tool_call",
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_1",
        "openai-agents #1061",
    ),
    (
        "openai",
        [USER, asks(call("call_1")), {"role": "tool", "content": "ok"}],
        "missing_tool_call_id",
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
        "langchain #22600",
    ),
    (
        "openai",
        [{**USER, "id": "m1"}],
        "unknown_key",
        "Additional properties are not allowed ('id' was unexpected) - 'messages.0'",
        "openai-node #1161",
    ),
    (
        "openai",
        [USER, asks(call("call_1", arguments='{"cmd": "ls"')), result("call_1")],
        "arguments_invalid_json",
        "messages.1.tool_calls.0.function.arguments: arguments must be a valid JSON object string",
        "unattributed strict gateway",
    ),
    (
        "openai",
        [USER, asks(call("call_1", arguments={"cmd": "ls"})), result("call_1")],
        "arguments_not_string",
        "Input should be a valid string",
        "deer-flow #4445",
    ),
    (
        "responses",
        [USER, result("call_1")],
        "orphan_tool_result",
        "No tool call found for function call output with call_id call_1.",
        "openai-agents #4827",
    ),
    (
        "responses",
        [USER, asks(call("call_1"))],
        "unanswered_tool_call",
        "No tool output found for function call call_1.",
        "openai-agents #1061",
    ),
    (
        "responses",
        [USER, {"role": "assistant", "content": None, "responses_items": [REASONING_ITEM]}],
        "reasoning_without_following_item",
        "Item 'rs_01' of type 'reasoning' was provided without its required following item.",
        "vercel/ai #7099",
    ),
    (
        "responses",
        [USER, {**USER, "metadata": {}}],
        "unknown_key",
        "Unknown parameter: 'input[1].metadata'.",
        "microsoft/agent-framework #2203",
    ),
    (
        "responses",
        [
            USER,
            asks(call("call_1", item_id="fc_1"), responses_items=[REASONING_ITEM]),
            result("call_1"),
            asks(call("call_2", item_id="fc_2")),
            result("call_2"),
        ],
        "item_without_reasoning",
        "Item 'fc_2' of type 'function_call' was provided without its required 'reasoning' item",
        "mastra #8738",
    ),
    (
        "anthropic",
        [USER, asks(call("toolu_1"))],
        "unanswered_tool_call",
        "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message.",
        "OpenHands #7512",
    ),
    (
        "anthropic",
        [USER, REPLY, result("toolu_9")],
        "orphan_tool_result",
        "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message.",
        "claude-code #14416",
    ),
    (
        "anthropic",
        [
            USER,
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "ran it"},
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
                ],
                "tool_calls": [call("toolu_1")],
            },
        ],
        "tool_result_in_assistant",
        "`tool_result` blocks can only be in `user` messages",
        "Antigravity-Manager #522",
    ),
    (
        "anthropic",
        [USER, asks(call("toolu_1", arguments="[1, 2]")), result("toolu_1")],
        "arguments_not_object",
        "tool_use.input: Input should be a valid dictionary",
        "claude-code #6696",
    ),
    (
        "anthropic",
        [USER, asks(call("toolu_1", text="stray")), result("toolu_1")],
        "unknown_key",
        "Extra inputs are not permitted",
        "claude-code #4378",
    ),
    (
        "anthropic",
        [{**USER, "name": "alice"}, REPLY, {**USER, "name": "alice"}],
        "unknown_key",
        "messages.0.name: Extra inputs are not permitted",
        "claude-code #4378 (the same rule on a turn)",
    ),
    (
        "anthropic",
        [SYSTEM, REPLY, USER],
        "first_not_user",
        'messages: first message must use the "user" role',
        "lobehub #1601",
    ),
    (
        "anthropic",
        [USER, USER, REPLY],
        "consecutive_same_role",
        'messages: roles must alternate between "user" and "assistant", but found multiple '
        '"user" roles in a row',
        "Anthropic (historical)",
    ),
    (
        "anthropic",
        [
            USER,
            {
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch"},
                    {"type": "text", "text": "fetching"},
                ],
            },
            USER,
        ],
        "server_tool_unpaired",
        "`web_fetch` tool use with id `srvtoolu_1` was found without a corresponding "
        "`web_fetch_tool_result` block",
        "anthropic-sdk-python PR #1151",
    ),
    (
        "anthropic",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}
                    for n in range(5)
                ],
            }
        ],
        "too_many_cache_breakpoints",
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        "Anthropic docs",
    ),
    (
        "anthropic",
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": ""}],
            }
        ],
        "empty_text_block",
        "messages: text content blocks must be non-empty",
        "claude-code #59812",
    ),
    (
        "gemini",
        [USER, REPLY, result("call_1")],
        "orphan_tool_result",
        "Please ensure that function response turn comes immediately after a function call turn.",
        "langchain #27799",
    ),
    (
        "gemini",
        [USER, asks(call("call_1"), call("call_2")), result("call_1")],
        "unanswered_tool_call",
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
        "gemini-cli #4504",
    ),
    (
        "gemini",
        [USER, REPLY, asks(call("call_1")), result("call_1")],
        "consecutive_same_role",
        "Please ensure that function call turn comes immediately after a user turn or after a "
        "function response turn.",
        "gemini-cli #26486",
    ),
    (
        "gemini",
        [{**USER, "id": "u1"}],
        "unknown_key",
        'Invalid JSON payload received. Unknown name "id"',
        "gemini-cli #13972",
    ),
    (
        "gemini-openai",
        [
            USER,
            asks(call("call_1", extra_content=SIGNED)),
            result("call_1"),
            USER,
            asks(call("call_2")),
            result("call_2"),
        ],
        "missing_thought_signature",
        "Function call is missing a thought_signature in functionCall parts. This is required "
        "for tools to work correctly",
        "openai-python #2758, semantic-kernel #13417",
    ),
    (
        "mistral",
        [USER, asks(call("call_abcdef12345")), result("call_abcdef12345")],
        "invalid_tool_call_id",
        "Tool call id was call_abcdef12345 but must be a-z, A-Z, 0-9, with a length of 9.",
        "zed #53034",
    ),
    (
        "mistral",
        [USER, asks(call("abcdefghi"), call("bcdefghij")), result("abcdefghi")],
        "unanswered_tool_call",
        "Not the same number of function calls and responses",
        "instructor #724",
    ),
    (
        "mistral",
        [USER, REPLY, result("abcdefghi")],
        "orphan_tool_result",
        "Unexpected role RoleEnum.tool",
        "provider-rules.md (Mistral role order)",
    ),
    (
        "mistral",
        [USER, REPLY],
        "ends_with_assistant",
        "Expected last role to be one of: [tool, user] but got assistant",
        "provider-rules.md (Mistral role order)",
    ),
    (
        "mistral",
        [USER, asks(call("abcdefghi")), result("abcdefghi"), USER],
        "user_after_tool",
        "Unexpected role 'user' after role 'tool'",
        "zed #37021, hermes-agent #20154",
    ),
    (
        "local",
        [USER, asks(call("call_1", arguments='{"path": "a.py" "mode": "r"}')), result("call_1")],
        "arguments_invalid_json",
        "Expecting ',' delimiter: line 1 column 17 (char 16)",
        "vllm #43995",
    ),
    (
        "local",
        [USER, asks(call("call_1", arguments='"ls"')), result("call_1")],
        "arguments_not_object",
        "'str object' has no attribute 'items'",
        "sglang PR #28035",
    ),
    (
        "minimax",
        [USER, result("call_function_x_1")],
        "orphan_tool_result",
        "invalid params, tool result's tool id(call_function_x_1) not found (2013)",
        "provider-rules.md (MiniMax 2013)",
    ),
    (
        "minimax",
        [USER, asks(call("call_1")), REPLY, result("call_1")],
        "tool_result_misplaced",
        "invalid params, tool call result does not follow tool call (2013)",
        "provider-rules.md (MiniMax 2013)",
    ),
    (
        "minimax",
        [USER, asks(call("call_1"), call("call_1")), result("call_1"), result("call_1")],
        "duplicate_tool_call_id",
        "invalid params, tool call id is invalid (2013)",
        "provider-rules.md (MiniMax 2013)",
    ),
    (
        "minimax",
        [USER, asks(call("call_1"))],
        "unanswered_tool_call",
        "invalid params, tool call and result not match (2013)",
        "provider-rules.md (MiniMax 2013)",
    ),
    (
        "minimax",
        [USER, asks(call("call_function_a_1", arguments="{")), result("call_function_a_1")],
        "arguments_invalid_json",
        "invalid params, invalid function arguments json string, tool_call_id: "
        "call_function_a_1 (2013)",
        "provider-rules.md (MiniMax 2013)",
    ),
    (
        "minimax",
        [USER, REPLY, SYSTEM, USER],
        "system_not_at_start",
        "invalid params, chat content has invalid message role: system (2013)",
        "provider-rules.md (MiniMax 2013)",
    ),
    (
        "kimi",
        [USER, asks(call("Shell:58"))],
        "unanswered_tool_call",
        "The following tool_call_ids did not have response messages: Shell:58",
        "provider-rules.md (Moonshot / Kimi)",
    ),
    (
        "kimi",
        [USER, {"role": "tool", "tool_call_id": "", "content": "ok"}],
        "missing_tool_call_id",
        "tool_call_id  is not found",
        "provider-rules.md (Moonshot / Kimi, two spaces sic)",
    ),
    (
        "kimi",
        [
            USER,
            asks(call("call_1"), reasoning_content="I should list files."),
            result("call_1"),
            asks(call("call_2")),
            result("call_2"),
        ],
        "missing_reasoning_content",
        "thinking is enabled but reasoning_content is missing in assistant tool call message "
        "at index 3",
        "kimi-agent-sdk #169, mastra #12592",
    ),
    (
        "deepseek",
        [USER, result("call_1")],
        "orphan_tool_result",
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        "provider-rules.md (DeepSeek)",
    ),
    (
        "deepseek",
        [
            USER,
            asks(call("call_1")),
            result("call_1"),
            asks(call("call_2"), reasoning_content="Now run the tests."),
            result("call_2"),
        ],
        "missing_reasoning_content",
        "Missing `reasoning_content` field in the assistant message at message index 1.",
        "continue #10193, opencode #24722",
    ),
]


@pytest.mark.parametrize(
    ("provider", "history", "code", "text", "source"),
    CASES,
    ids=[f"{c[0]}-{c[2]}" for c in CASES],
)
def test_flagged_with_the_providers_text_and_healed(
    provider: str, history: list[Any], code: str, text: str, source: str
) -> None:
    found = validate(history, provider=provider)
    matching = [v for v in found if v.code == code]
    assert matching, f"{code} not flagged ({source}); found {[v.code for v in found]}"
    assert any(text in (v.provider_error or "") for v in matching), (
        f"{source}: expected {text!r} in {[v.provider_error for v in matching]}"
    )
    healed = repair(history, provider=provider)
    assert validate(healed.messages, provider=provider) == []
    assert healed.changes, "repair said nothing though it changed the history"
    for change in healed.changes:
        if change.action in ("drop", "merge"):
            assert change.message is not None, f"{change} lost its message"


def test_a_signature_less_call_gets_geminis_documented_dummy() -> None:
    history = [USER, asks(call("call_1", extra_content=SIGNED)), result("call_1"), USER]
    history += [asks(call("call_2")), result("call_2")]
    healed = repair(history, provider="gemini-openai")
    assert healed.messages[1] is history[1], "a signed call is never touched"
    extra = healed.messages[4]["tool_calls"][0]["extra_content"]
    assert extra == {"google": {"thought_signature": DUMMY_THOUGHT_SIGNATURE}}


def test_a_loop_whose_later_steps_carry_no_thinking_is_left_as_it_is() -> None:
    """Only the first step of a turn carries thinking (real Claude Code loops): accepted in
    every thinking mode, so repair changes nothing (the turn-start rule under budgeted
    thinking is tested in tests/test_turns_thinking.py)."""
    history = [
        USER,
        asks(call("toolu_1"), thinking_blocks=[THINKING]),
        result("toolu_1", "README.md"),
        asks(call("toolu_2", arguments='{"cmd": "pytest"}')),
        result("toolu_2", "1 failed"),
    ]
    for thinking in (None, "enabled", "adaptive"):
        assert validate(history, provider="anthropic", thinking=thinking) == []
        healed = repair(history, provider="anthropic", thinking=thinking)
        assert healed.changes == () and all(map(operator.is_, healed.messages, history))


def test_reasoning_content_is_never_stripped_or_merged_away() -> None:
    history = [
        USER,
        asks(call("call_1"), reasoning_content="think"),
        result("call_1"),
        {"role": "assistant", "content": "half", "reasoning_content": "more"},
        {"role": "assistant", "content": "done"},
    ]
    for provider in ("auto", "strict", "deepseek", "kimi", "openai", "local"):
        healed = repair(history, provider=provider).messages
        kept = [m.get("reasoning_content") for m in healed if m.get("reasoning_content")]
        assert kept == ["think", "more"], provider
    # a provider that has no field for another's reasoning: removed, and the text travels
    removed = repair(history, provider="anthropic").changes
    carried = [c.message for c in removed if c.code == "unknown_key" and c.message]
    assert {"reasoning_content": "think"} in carried
