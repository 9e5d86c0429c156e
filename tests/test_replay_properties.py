"""compress on reasoning-model histories, for each provider: the output validates, replay
state of kept units is byte-identical, the current turn is untouched (Anthropic thinking
bound to an edited prefix aside, removed whole and reported), nothing is lost without a
report entry, and the reported tokens are the tokens of what is returned."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense import Conversation, validate
from condense.compress import CompressionResult, compress
from condense.compress.assemble import without_notices
from condense.providers.base import THINKING_BLOCKS
from condense.reduce.summary import find_summary
from condense.reduce.thinking import EMPTY_TURN
from condense.tokens import count_tokens
from condense.turns import current_turn
from condense.units import carries_replay
from profiles import examples
from reasoning_strategies import (
    anthropic_bodies,
    gemini_histories,
    responses_inputs,
    thinking_chat_histories,
)

FRACTIONS = st.floats(min_value=0.08, max_value=0.95)
PROPERTY = settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _compress(
    messages: Sequence[Any], fraction: float, expected: str, **options: Any
) -> CompressionResult:
    budget = max(200, int(count_tokens(messages) * fraction))
    result = compress(messages, budget=budget, **options)
    report = result.report
    assert report.provider == expected, report.provider_reason
    assert report.repairs == ()  # the generated histories are valid as sent
    assert validate(result.messages, provider=expected) == []
    assert report.tokens_after == count_tokens(
        result.messages, encoding=report.encoding, media=report.media
    )
    assert report.fits == (report.tokens_after <= budget)
    _replay_state_kept_whole(messages, result)
    _running_turn_untouched(messages, result)
    _nothing_lost_without_an_entry(messages, result)
    return result


def _same(a: object, b: object) -> bool:
    return a is b


def _present(message: object, messages: Sequence[Any]) -> bool:
    return any(m is message for m in messages)


def _replay_state_kept_whole(messages: Sequence[Any], result: CompressionResult) -> None:
    """Every output message that is not the caller's own object carries no replay state,
    or is a kept turn whose thinking was removed whole (and reported)."""
    removed = {r.index: r for r in result.report.replay_removed}
    for index, message in enumerate(result.messages):
        if _present(message, messages):
            continue
        assert not carries_replay(message), (index, message)
        removal = removed.get(index)
        if removal is None:
            continue
        sources = [
            m
            for m in messages
            if len(m.get(THINKING_BLOCKS) or ()) == len(removal.blocks)
            and all(map(_same, m[THINKING_BLOCKS], removal.blocks))
        ]
        assert len(sources) == 1
        rest = {k: v for k, v in sources[0].items() if k != THINKING_BLOCKS}
        if message.get("content") == EMPTY_TURN and rest.get("content") is None:
            rest["content"] = EMPTY_TURN
        assert message.keys() == rest.keys()
        assert all(message[k] is rest[k] or message[k] == EMPTY_TURN for k in rest)


def _running_turn_untouched(messages: Sequence[Any], result: CompressionResult) -> None:
    """The current turn comes back as the same objects, in order; a message whose
    thinking was removed (reported) is the same message without it, and a tool output
    cut middle-out as the last resort (reported, issue 17) the same output shortened."""
    tail = list(messages[current_turn(messages).start :])
    if not tail:
        return
    out = result.messages[-len(tail) :]
    removed = {r.index - (len(result.messages) - len(tail)) for r in result.report.replay_removed}
    cut = {c.tool_call_id for c in result.report.cuts}
    for position, (got, sent) in enumerate(zip(out, tail, strict=True)):
        if position in removed:
            assert {k: v for k, v in sent.items() if k != THINKING_BLOCKS}.keys() <= got.keys()
        elif sent.get("role") == "tool" and sent.get("tool_call_id") in cut:
            assert {**got, "content": None} == {**sent, "content": None}
        else:
            assert got is sent


def _nothing_lost_without_an_entry(messages: Sequence[Any], result: CompressionResult) -> None:
    """Each input message is returned as itself, or its unit is reported summarized,
    masked, deduped or shrunk, or its thinking removal is reported."""
    kept = {id(m) for m in result.messages}
    unbound = {id(r.blocks[0]) for r in result.report.replay_removed}
    merged = [
        m
        for m in result.messages
        if find_summary(m) is not None
        or without_notices(m.get("content")) != m.get("content")
        or (m.get("role") in ("user", "assistant") and id(m) not in {id(x) for x in messages})
    ]
    for unit in result.report.units:
        for message in messages[unit.start : unit.stop]:
            if id(message) in kept:
                assert unit.action != "summarized"
                continue
            if unit.action == "kept" and any(_with_summary(m, message) for m in merged):
                continue
            if unit.action == "kept" or (carries_replay(message) and unit.action != "summarized"):
                blocks = message.get(THINKING_BLOCKS)
                assert blocks and id(blocks[0]) in unbound, (unit, message)
    if "summarized" in result.report.actions:
        assert result.summary or result.report.left_out


def _with_summary(message: dict[str, Any], original: dict[str, Any]) -> bool:
    """``message`` is ``original`` with summary blocks or notices put before or after its
    content, or an older text of its role joined before it (a span left out between)."""
    if message.keys() != original.keys():
        return False
    content = original.get("content")
    if isinstance(content, list):
        parts = [p for p in message["content"] if find_summary({"content": [p]}) is None]
        return without_notices(parts) == content
    rest: Any = without_notices(message.get("content"))
    if (
        isinstance(rest, str)
        and isinstance(content, str)
        and (rest.endswith("\n\n" + content) or rest.startswith(content + "\n\n"))
    ):
        return True
    while (found := find_summary({"content": rest})) is not None:
        rest = found[1]
    return isinstance(content, str) and rest == content.strip()


# --- Anthropic ---------------------------------------------------------------------------


@PROPERTY
@given(body=anthropic_bodies(), fraction=FRACTIONS)
def test_anthropic_thinking_histories(body: dict[str, Any], fraction: float) -> None:
    conversation = Conversation.read(body)
    messages = conversation.messages
    result = _compress(messages, fraction, "anthropic")
    dumped = conversation.dump(result.messages)["messages"]
    turns = body["messages"]
    assistants = [m for m in messages if m["role"] == "assistant"]
    native = [t for t in turns if t["role"] == "assistant"]
    for message, turn in zip(assistants, native, strict=True):
        if _present(message, result.messages):  # a kept turn is re-emitted verbatim
            assert _present(turn, dumped)
    for turn in dumped:  # thinking only ever comes back inside an original turn
        blocks = turn["content"] if isinstance(turn["content"], list) else []
        if any(b.get("type") in ("thinking", "redacted_thinking") for b in blocks):
            assert _present(turn, turns)
    binding = result.report.thinking
    running = current_turn(messages).first_assistant is not None
    if running and not result.report.replay_removed:  # the final native turns, byte for byte
        tail = len(turns) - [i for i, t in enumerate(turns) if t["role"] == "assistant"][-1]
        assert json.dumps(dumped[-tail:]) == json.dumps(turns[-tail:])
    if binding is not None and binding.action == "hold":
        assert all(map(_same, result.messages, messages))  # nothing changed
    edited = [r.edited_at for r in result.report.replay_removed]
    assert len(set(edited)) <= 1
    for index, message in enumerate(result.messages):  # no thinking after the first edit
        if edited and index > edited[0]:
            assert not message.get(THINKING_BLOCKS)


@PROPERTY
@given(body=anthropic_bodies(), fraction=FRACTIONS)
def test_anthropic_keep_bound_thinking(body: dict[str, Any], fraction: float) -> None:
    messages = Conversation.read(body).messages
    result = _compress(messages, fraction, "anthropic", keep_bound_thinking=True)
    assert result.report.replay_removed == ()
    for message in result.messages:
        if message.get("role") == "assistant" and not _present(message, messages):
            assert not message.get(THINKING_BLOCKS)  # only summaries and bridges are new


# --- OpenAI Responses --------------------------------------------------------------------

_OUTPUT_TYPES = ("reasoning", "function_call")


def _responses(items: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The items of each model response: maximal runs of reasoning, assistant message
    and function_call items."""
    groups: list[list[dict[str, Any]]] = []
    run: list[dict[str, Any]] = []
    for item in [*items, {"type": "end"}]:
        output = item["type"] in _OUTPUT_TYPES or (
            item["type"] == "message" and item["role"] == "assistant"
        )
        if output:
            run.append(item)
        elif run:
            groups.append(run)
            run = []
    return groups


@PROPERTY
@given(items=responses_inputs(), fraction=FRACTIONS)
def test_responses_reasoning_items(items: list[dict[str, Any]], fraction: float) -> None:
    conversation = Conversation.read(items)
    result = _compress(conversation.messages, fraction, "responses")
    dumped = conversation.dump(result.messages)
    for group in _responses(items):  # each response kept whole, verbatim, or left out
        positions = [i for i, d in enumerate(dumped) if any(d is item for item in group)]
        if positions:
            assert [dumped[i] for i in positions] == group
            assert all(map(_same, (dumped[i] for i in positions), group))
            assert positions == list(range(positions[0], positions[0] + len(group)))
    for item in dumped:  # output items only ever come back as the caller's objects
        if item["type"] in _OUTPUT_TYPES or "id" in item:
            assert _present(item, items)
    if items[-1]["type"] == "function_call_output":
        last = _responses(items)[-1]
        start = max(i for i, item in enumerate(items) if item is last[0])
        cut = {c.tool_call_id for c in result.report.cuts if c.running}  # the last resort
        for sent, item in zip(dumped[-(len(items) - start) :], items[start:], strict=True):
            if item["type"] == "function_call_output" and item["call_id"] in cut:
                assert {**sent, "output": None} == {**item, "output": None}
            else:
                assert json.dumps(sent) == json.dumps(item)


# --- Gemini, DeepSeek, Kimi ------------------------------------------------------------


@PROPERTY
@given(messages=gemini_histories(), fraction=FRACTIONS, native=st.booleans())
def test_gemini_thought_signatures(
    messages: list[dict[str, Any]], fraction: float, native: bool
) -> None:
    provider = "gemini" if native else "strict"
    options = {"provider": "gemini"} if native else {}  # auto: strict, the signatures kept
    _compress(messages, fraction, provider, **options)


@PROPERTY
@given(messages=thinking_chat_histories(), fraction=FRACTIONS, kimi=st.booleans())
def test_reasoning_content(messages: list[dict[str, Any]], fraction: float, kimi: bool) -> None:
    provider = "kimi" if kimi else "strict"
    # auto: reasoning_content alone selects no provider (strict, the state kept)
    options = {"model": "kimi-k2-thinking"} if kimi else {}
    _compress(messages, fraction, provider, **options)
