"""condense.tokens: replayed reasoning and every other sent key count; opaque base64 at rate.

The opaque rate is checked against the real tokenizers on random base64, and the sample
histories under tests/data/formats (an Anthropic agent with thinking blocks, a Responses
agent with encrypted reasoning) are counted through the format adapters.
"""

from __future__ import annotations

import base64
import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense.formats import from_anthropic, from_responses
from condense.tokens import (
    ENCODINGS,
    MEDIA_POLICIES,
    TokenCounter,
    count_message,
    count_text,
    count_tokens,
    estimate_message,
    estimate_text,
    estimate_tokens,
    quick_estimate,
    upper_bound_message,
    upper_bound_tokens,
)
from condense.tokens.opaque import OPAQUE_CHARS_PER_TOKEN, opaque_tokens
from condense.tokens.pieces import METADATA_KEYS, OPAQUE_KEYS, TOKENS_PER_MESSAGE
from profiles import examples

DATA = Path(__file__).parent / "data" / "formats"

REASONING = (
    "The user wants the failing login test fixed without touching the template. The view "
    "passes the form under the key 'from' while the template reads 'form', so the fix is "
    "a one-word change in app/views/login.py. I should run the whole suite afterwards to "
    "make sure nothing else depended on the typo, then report what changed and why. "
)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def random_base64(size: int, seed: int) -> str:
    return b64(random.Random(seed).randbytes(size))


def n(text: str, encoding: str = "o200k_base") -> int:
    return count_text(text, encoding=encoding)


# ---------------------------------------------------------------------------------------
# The opaque rate, against the real tokenizers
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(("size", "tolerance"), [(96, 0.15), (1024, 0.04), (16_384, 0.02)])
def test_opaque_rate_matches_the_tokenizer_on_random_base64(
    encoding: str, size: int, tolerance: float
) -> None:
    for seed in range(8):
        text = random_base64(size, seed)
        real = n(text, encoding)
        assert abs(opaque_tokens(len(text), encoding) - real) <= tolerance * real, (size, seed)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_opaque_rate_errs_high_on_long_base64(encoding: str) -> None:
    text = random_base64(300_000, 7)  # 400 kB, like a long encrypted reasoning item
    real = n(text, encoding)
    counted = opaque_tokens(len(text), encoding)
    assert real <= counted <= 1.01 * real
    assert OPAQUE_CHARS_PER_TOKEN[encoding] == pytest.approx(len(text) / real, rel=0.01)


@given(chars=st.integers(0, 10**9), encoding=st.sampled_from(ENCODINGS))
def test_opaque_tokens_never_exceed_characters(chars: int, encoding: str) -> None:
    tokens = opaque_tokens(chars, encoding)
    assert (tokens == 0) == (chars == 0)
    assert tokens <= chars


# ---------------------------------------------------------------------------------------
# Replay state counts
# ---------------------------------------------------------------------------------------


def test_long_reasoning_content_is_counted() -> None:
    reasoning = (REASONING * 40)[:9000]
    plain = {"role": "assistant", "content": "Fixed: the view now passes 'form'."}
    replayed = {**plain, "reasoning_content": reasoning}
    for encoding in ENCODINGS:
        exact = n(reasoning, encoding)
        assert exact > 1500
        gained = count_message(replayed, encoding=encoding) - count_message(
            plain, encoding=encoding
        )
        assert gained == exact
        estimated = estimate_message(replayed, encoding=encoding) - estimate_message(
            plain, encoding=encoding
        )
        assert abs(estimated - exact) <= 0.15 * exact
    assert quick_estimate(replayed) - quick_estimate(plain) == 9000 // 4
    assert upper_bound_message(replayed) - upper_bound_message(plain) == 9000
    session = [{"role": "user", "content": "Fix the login test."}, replayed]
    assert count_tokens(session) > 1500 + count_tokens(session[:1])


def test_thinking_blocks_count_text_and_signatures() -> None:
    signature = random_base64(600, 1)
    redacted = random_base64(900, 2)
    message = {
        "role": "assistant",
        "content": "Done.",
        "thinking_blocks": [
            {"type": "thinking", "thinking": REASONING, "signature": signature},
            {"type": "redacted_thinking", "data": redacted},
        ],
    }
    base = count_message({"role": "assistant", "content": "Done."})
    for encoding in ENCODINGS:
        expected = (
            count_message({"role": "assistant", "content": "Done."}, encoding=encoding)
            + n(REASONING, encoding)
            + opaque_tokens(len(signature) + len(redacted), encoding)
        )
        assert count_message(message, encoding=encoding) == expected
    assert count_message(message) > base + 1000


def test_responses_items_count_summaries_and_encrypted_content() -> None:
    encrypted = random_base64(3000, 3)
    items = [
        {
            "type": "reasoning",
            "id": "rs_68a1",
            "status": "completed",
            "summary": [
                {"type": "summary_text", "text": "Two cities: call get_weather twice."},
                {"type": "summary_text", "text": "Then compare."},
            ],
            "encrypted_content": encrypted,
        },
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "weather Oslo"},
        },
    ]
    message = {"role": "assistant", "content": None, "responses_items": items}
    expected = (
        count_message({"role": "assistant", "content": None})
        + n("Two cities: call get_weather twice.")
        + n("Then compare.")
        + n("weather Oslo")
        + opaque_tokens(len(encrypted), "o200k_base")
    )
    assert count_message(message) == expected


def test_gemini_thought_signatures_on_tool_calls_count() -> None:
    signature = random_base64(400, 4)
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    signed = {**call, "extra_content": {"google": {"thought_signature": signature}}}
    plain = {"role": "assistant", "content": None, "tool_calls": [call]}
    replayed = {"role": "assistant", "content": None, "tool_calls": [signed]}
    for encoding in ENCODINGS:
        gained = count_message(replayed, encoding=encoding) - count_message(
            plain, encoding=encoding
        )
        assert gained == opaque_tokens(len(signature), encoding)


def test_unknown_keys_are_counted_and_labels_are_not() -> None:
    plain = {"role": "assistant", "content": "ok"}
    extra = {
        **plain,
        "reasoning": "thinking out loud",  # OpenRouter / vLLM spelling
        "reasoning_details": [
            {"type": "reasoning.text", "text": "step one", "signature": "c2lnbmF0dXJl"},
            {"type": "reasoning.encrypted", "data": "ZW5jcnlwdGVk", "id": "r1"},
        ],
        "provider_fields": {"score": 0.5, "labels": ["a", "b"], "note": None},
    }
    expected = (
        count_message(plain)
        + n("thinking out loud")
        + n("step one")
        + n("0.5")
        + n("a")
        + n("b")
        + opaque_tokens(len("c2lnbmF0dXJl") + len("ZW5jcnlwdGVk"), "o200k_base")
    )
    assert count_message(extra) == expected
    labelled = {**plain, **dict.fromkeys(METADATA_KEYS, "x" * 50)}
    assert count_message(labelled) == count_message(plain)
    tool = {"role": "tool", "tool_call_id": "c1", "content": "done", "is_error": True}
    assert count_message(tool) == 3 + n("tool") + n("c1") + n("done") + n("true")
    signed_message = {**plain, "signature": "c2lnbmF0dXJl"}
    assert count_message(signed_message) == count_message(plain) + opaque_tokens(12, "o200k_base")


def test_opaque_megabytes_are_not_run_through_bpe(monkeypatch: pytest.MonkeyPatch) -> None:
    encrypted = random_base64(1_500_000, 5)  # 2 MB of ciphertext
    message = {
        "role": "assistant",
        "content": None,
        "responses_items": [{"type": "reasoning", "summary": [], "encrypted_content": encrypted}],
    }
    seen: list[int] = []
    counter = TokenCounter(maxsize=0)
    from condense.tokens import encodings

    real = encodings.text_counter("o200k_base")

    def watch(name: str) -> Callable[[str], int]:
        def count(text: str) -> int:
            seen.append(len(text))
            return real(text)

        return count

    monkeypatch.setattr("condense.tokens.counting.text_counter", watch)
    total = counter.message(message)
    assert total == count_message({"role": "assistant", "content": None}) + opaque_tokens(
        len(encrypted), "o200k_base"
    )
    assert max(seen) < 100


# ---------------------------------------------------------------------------------------
# Real histories through the adapters
# ---------------------------------------------------------------------------------------


def strip_replay(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    replay = {"thinking_blocks", "responses_items", "reasoning_content"}
    return [{k: v for k, v in m.items() if k not in replay} for m in messages]


def test_anthropic_sample_counts_its_thinking() -> None:
    native = json.loads((DATA / "anthropic_agent.json").read_text())
    messages = from_anthropic(native)
    blocks = [b for turn in native["messages"] for b in turn["content"] if isinstance(b, dict)]
    thinking = [b["thinking"] for b in blocks if b.get("type") == "thinking"]
    opaque = sum(
        len(b.get("signature") or b.get("data") or "") for b in blocks if "thinking" in b["type"]
    )
    assert thinking and opaque
    gained = count_tokens(messages, media="anthropic") - count_tokens(
        strip_replay(messages), media="anthropic"
    )
    assert gained >= sum(n(text) for text in thinking) + opaque_tokens(opaque, "o200k_base")


def test_responses_sample_counts_its_reasoning() -> None:
    native = json.loads((DATA / "responses_agent.json").read_text())
    messages = from_responses(native)
    reasoning = [i for i in native["input"] if i.get("type") == "reasoning"]
    summaries = [s["text"] for item in reasoning for s in item["summary"]]
    encrypted = sum(len(item["encrypted_content"]) for item in reasoning)
    gained = count_tokens(messages) - count_tokens(strip_replay(messages))
    assert gained >= sum(n(text) for text in summaries) + opaque_tokens(encrypted, "o200k_base")


# ---------------------------------------------------------------------------------------
# Properties: replay state only ever adds, bounds stay bounds, caches stay correct
# ---------------------------------------------------------------------------------------

any_text = st.text(st.characters(exclude_categories=()), max_size=80)
opaque_text = st.binary(max_size=300).map(b64)
thinking_block = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": any_text, "signature": opaque_text}
    ),
    st.fixed_dictionaries({"type": st.just("redacted_thinking"), "data": opaque_text}),
)
reasoning_item = st.fixed_dictionaries(
    {
        "type": st.just("reasoning"),
        "id": st.just("rs_1"),
        "summary": st.lists(
            st.fixed_dictionaries({"type": st.just("summary_text"), "text": any_text}), max_size=3
        ),
        "encrypted_content": opaque_text,
    }
)
base_messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "user", "tool"])},
    optional={
        "content": any_text
        | st.none()
        | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": any_text}), max_size=3),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.just("call_1"),
                    "type": st.just("function"),
                    "function": st.fixed_dictionaries({"name": any_text, "arguments": any_text}),
                }
            ),
            max_size=3,
        ),
        "name": any_text,
    },
)
replay_state = st.fixed_dictionaries(
    {},
    optional={
        "reasoning_content": any_text,
        "thinking_blocks": st.lists(thinking_block, max_size=3),
        "responses_items": st.lists(reasoning_item, max_size=2),
        "x_unknown": any_text,
    },
)


def replay_text(state: dict[str, Any]) -> tuple[list[str], int]:
    """The texts and the opaque characters that ``state`` adds, written out by hand."""
    texts: list[str] = []
    opaque = 0
    if "reasoning_content" in state:
        texts.append(state["reasoning_content"])
    if "x_unknown" in state:
        texts.append(state["x_unknown"])
    for block in state.get("thinking_blocks", []):
        if block["type"] == "thinking":
            texts.append(block["thinking"])
            opaque += len(block["signature"])
        else:
            opaque += len(block["data"])
    for item in state.get("responses_items", []):
        texts.extend(s["text"] for s in item["summary"])
        opaque += len(item["encrypted_content"])
    return texts, opaque


@given(
    message=base_messages,
    state=replay_state,
    signatures=st.lists(opaque_text, max_size=3),
    media=st.sampled_from(MEDIA_POLICIES),
)
@settings(max_examples=examples(200), deadline=None)
def test_replay_state_adds_at_least_its_text(
    message: dict[str, Any], state: dict[str, Any], signatures: list[str], media: str
) -> None:
    replayed = copy.deepcopy({**message, **state})
    for call, signature in zip(replayed.get("tool_calls", []), signatures, strict=False):
        call["extra_content"] = {"google": {"thought_signature": signature}}
    texts, opaque = replay_text(state)
    opaque += sum(len(s) for s in signatures[: len(replayed.get("tool_calls", []))])
    snapshot = copy.deepcopy(replayed)
    for encoding in ENCODINGS:
        without = count_message(message, encoding=encoding, media=media)
        with_state = count_message(replayed, encoding=encoding, media=media)
        added = sum(n(text, encoding) for text in texts) + opaque_tokens(opaque, encoding)
        assert with_state >= without + added
        assert with_state == TokenCounter(encoding=encoding, media=media, maxsize=0).message(
            replayed
        )
        assert upper_bound_message(replayed, media=media) >= with_state
        estimated = estimate_message(replayed, encoding=encoding, media=media)
        assert estimated >= estimate_message(message, encoding=encoding, media=media) + sum(
            estimate_text(text, encoding=encoding) for text in texts
        )
    assert quick_estimate(replayed, media=media) >= quick_estimate(message, media=media)
    assert replayed == snapshot  # counting never changes a message


@given(session=st.lists(st.tuples(base_messages, replay_state), max_size=6))
@settings(max_examples=examples(60), deadline=None)
def test_totals_and_bounds_hold_with_replay_state(session: list[Any]) -> None:
    messages = [{**message, **state} for message, state in session]
    for encoding in ENCODINGS:
        total = count_tokens(messages, encoding=encoding)
        assert upper_bound_tokens(messages) >= total
        assert total == sum(count_message(m, encoding=encoding) for m in messages) + 3
        assert estimate_tokens(messages, encoding=encoding) >= TOKENS_PER_MESSAGE * len(messages)


def test_cached_count_follows_replay_state_changed_in_place() -> None:
    counter = TokenCounter()
    message: dict[str, Any] = {"role": "assistant", "content": "ok", "thinking_blocks": []}
    before = counter.message(message)
    message["thinking_blocks"].append(
        {"type": "thinking", "thinking": REASONING, "signature": "QUJD"}
    )
    after = counter.message(message)
    assert after == before + n(REASONING) + opaque_tokens(4, "o200k_base")
    message["thinking_blocks"][0]["signature"] = "QUJD" * 100
    assert counter.message(message) == before + n(REASONING) + opaque_tokens(400, "o200k_base")
    assert {"signature", "encrypted_content", "thought_signature"} <= OPAQUE_KEYS
