"""Replay-identity refusals: classified, and healed in one retry by recover and by guard.

The two 2026 refusals users call "permanently dead" (re-sending the history can never
pass):

- Anthropic, preserved thinking: a thinking block whose prefix changed is "bound to a
  different conversation" (opencode #48637; Anthropic docs, "Fix a thinking block bound
  to a different conversation" and "Prefix checks on thinking blocks");
- OpenAI Responses / Azure Foundry: reasoning items minted in another chain, "Conflicting
  authenticated continuation identities" (anomalyco/opencode #48942), and the encrypted
  content of an item that cannot be verified (openai/codex #3573, anomalyco/opencode
  #29879).

The providers' rules are written out here, in the test, and are the judge: a fake
provider on 127.0.0.1 applies them to what the official SDKs send through ``guard``.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense.errors import Action, Category, RecoveryError, classify, guard, recover
from condense.errors.replay import BINDING_BETA, replay_heals
from condense.formats import Conversation
from condense.testing import Fail, FakeProvider
from profiles import examples
from proxy_support import running_proxy
from reasoning_strategies import anthropic_bodies, responses_inputs

# -- the refusals, as the providers word them -----------------------------------------------


def bound_text(turn: int, block: int = 0) -> str:
    """Anthropic's refusal of a thinking block whose prefix changed (opencode #48637)."""
    return (
        f"messages.{turn}.content.{block}: Invalid `signature` in `thinking` block. The block "
        "is bound to a different conversation. Remove the block, or set "
        '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )


def anthropic_body(message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_011CZ",
    }


CONFLICT = "Conflicting authenticated continuation identities"  # anomalyco/opencode #48942


def responses_body(message: str, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }


class ProviderError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        self.status_code = status
        self.body = body
        super().__init__(f"Error code: {status} - {body}")


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ProviderError(400, anthropic_body(bound_text(1))), id="anthropic-bound"),
        pytest.param((400, anthropic_body(bound_text(5, 2))), id="anthropic-bound-tuple"),
        pytest.param(ProviderError(400, responses_body(CONFLICT)), id="responses-conflict"),
        # Azure may answer it as a permission problem: the words still win
        pytest.param((401, responses_body(CONFLICT)), id="responses-conflict-401"),
        # openai/codex #3573 (an Azure resource switch)
        pytest.param(
            (
                400,
                responses_body("The encrypted content for item rs_68a1f0c2 could not be verified."),
            ),
            id="responses-unverified-item",
        ),
        # anomalyco/opencode #29879
        pytest.param(
            (
                400,
                responses_body(
                    "The encrypted content gAAA...= could not be verified. Reason: Encrypted "
                    "content could not be decrypted or parsed.",
                    "invalid_encrypted_content",
                ),
            ),
            id="responses-invalid-encrypted-content",
        ),
    ],
)
def test_replay_identity_refusals_are_classified_with_a_way_out(error: object) -> None:
    diagnosis = classify(error)
    assert diagnosis.category is Category.REPLAY_IDENTITY
    assert diagnosis.action is Action.DROP_REPLAY and diagnosis.retryable
    assert "drop the reasoning state" in diagnosis.summary()


# -- the providers' rules, written out --------------------------------------------------------


def anthropic_refusal(
    request: dict[str, Any], headers: dict[str, str], bound: set[str]
) -> str | None:
    """Anthropic's preserved-thinking checks: every kept thinking block whose signature is
    ``bound`` is refused (named by its path) unless the request sends
    ``prefix_mismatch_behavior: "drop_block"`` with its beta header; blocks may be left
    out only as a suffix (``sig-0``, ``sig-1`` … in order, no gap); under budgeted
    thinking the running turn opens with its thinking."""
    thinking = request.get("thinking") or {}
    dropping = (thinking.get("block_binding") or {}).get("prefix_mismatch_behavior") == "drop_block"
    if dropping and BINDING_BETA not in headers.get("anthropic-beta", ""):
        return "thinking.block_binding: requires the thinking-binding-controls-2026-08-01 beta"
    kept: list[str] = []
    for turn, message in enumerate(request["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        for position, block in enumerate(content):
            if block.get("type") != "thinking":
                continue
            kept.append(block["signature"])
            if block["signature"] in bound and not dropping:
                return bound_text(turn, position)
    if kept != [f"sig-{n}" for n in range(len(kept))]:
        return "a thinking block between others was left out or moved"
    last = request["messages"][-1]
    running = isinstance(last["content"], list) and any(
        b.get("type") == "tool_result" for b in last["content"]
    )
    if running and thinking.get("type") == "enabled":
        opening = request["messages"][-2]["content"][0]
        if opening.get("type") != "thinking":
            return (
                f"messages.{len(request['messages']) - 2}.content.0.type: Expected `thinking` or "
                f"`redacted_thinking`, but found `{opening.get('type')}`."
            )
    return None


def responses_refusal(items: Sequence[Any], foreign: set[str]) -> str | None:
    """Responses: a reasoning item minted in another chain is refused; an item replayed
    with its id needs the reasoning item before it (provider-rules.md, mastra #8738)."""
    reasoning_before = False  # in the response this item came from
    for item in items:
        kind = item.get("type", "message")
        if kind == "reasoning":
            if item["encrypted_content"] in foreign:
                return CONFLICT
            reasoning_before = True
        elif kind == "function_call" or item.get("role") == "assistant":
            if "id" in item and not reasoning_before:
                return (
                    f"Item '{item['id']}' of type '{kind}' was provided without its required "
                    "'reasoning' item."
                )
        else:  # an input item: the next response starts after it
            reasoning_before = False
    return None


def thinking(serial: int) -> dict[str, Any]:
    return {"type": "thinking", "thinking": f"step {serial}", "signature": f"sig-{serial}"}


def anthropic_session() -> list[dict[str, Any]]:
    """A running tool loop; every assistant turn opens with its thinking."""
    return [
        {"role": "user", "content": "Why does the refund test fail?"},
        {"role": "assistant", "content": [thinking(0), {"type": "text", "text": "Let me look."}]},
        {"role": "user", "content": "Go ahead."},
        {
            "role": "assistant",
            "content": [
                thinking(1),
                {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "orders.py:41"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                thinking(2),
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "def refund("}
            ],
        },
    ]


def responses_session() -> list[dict[str, Any]]:
    """A sub-agent's reasoning replayed in an earlier turn; the current turn's own."""
    return [
        {"type": "message", "role": "user", "content": "Summarise the repo."},
        {"type": "reasoning", "id": "rs_sub", "summary": [], "encrypted_content": "gAAAsub-agent"},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "It is a shop.", "annotations": []}],
        },
        {"type": "message", "role": "user", "content": "Now fix the refund test."},
        {"type": "reasoning", "id": "rs_now", "summary": [], "encrypted_content": "gAAAthis-chain"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read",
            "arguments": "{}",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "def refund(): ..."},
    ]


# -- through recover, with a call that applies the rules ----------------------------------------


class Anthropic:
    """A model call that speaks canonical messages, writes them as Anthropic would receive
    them and applies the preserved-thinking rules."""

    def __init__(self, bound: set[str], mode: str) -> None:
        self.bound = bound
        self.mode = mode
        self.sent: list[str] = []

    def __call__(self, history: list[Any], prefix_mismatch_behavior: str | None = None) -> str:
        request: dict[str, Any] = Conversation(messages=history, format="anthropic").dump()
        request["thinking"] = {"type": self.mode}
        headers = {}
        if prefix_mismatch_behavior:
            request["thinking"]["block_binding"] = {
                "prefix_mismatch_behavior": prefix_mismatch_behavior
            }
            headers["anthropic-beta"] = BINDING_BETA
        self.sent.append(json.dumps(request, sort_keys=True))
        refusal = anthropic_refusal(request, headers, self.bound)
        if refusal is not None:
            raise ProviderError(400, anthropic_body(refusal))
        return "ok"


@pytest.mark.parametrize("mode", ["adaptive", "enabled"])
def test_recover_heals_bound_thinking_in_one_retry(mode: str) -> None:
    history = Conversation.read({"messages": anthropic_session()}, format="anthropic").messages
    before = copy.deepcopy(history)
    call = Anthropic(bound={"sig-1", "sig-2"}, mode=mode)

    result = recover(call, history, thinking={"type": mode})

    assert len(call.sent) == 2 and call.sent[0] != call.sent[1]
    assert history == before  # the caller's list is untouched
    if mode == "adaptive":  # the bound blocks go, the running turn's too, and it says so
        assert result.prefix_mismatch_behavior is None
        kept = [b for m in result.messages for b in m.get("thinking_blocks", [])]
        assert kept == [thinking(0)]
        assert [c.code for c in result.repairs] == ["replay_identity", "replay_identity"]
        assert [c.message for c in result.repairs] == [[thinking(1)], [thinking(2)]]
    else:  # the running turn must open with thinking: the provider's own mechanism
        assert result.prefix_mismatch_behavior == "drop_block"
        assert result.messages == history and not result.repairs and not result.changed


def test_recover_cannot_drop_what_budgeted_thinking_needs_without_the_setting() -> None:
    history = Conversation.read({"messages": anthropic_session()}, format="anthropic").messages

    def call(messages: list[Any]) -> str:  # cannot send request settings
        raise ProviderError(400, anthropic_body(bound_text(3)))

    with pytest.raises(RecoveryError, match="no change condense can make heals this"):
        recover(call, history, thinking={"type": "enabled", "budget_tokens": 2048})


class Responses:
    """A model call that writes canonical messages as Responses input items and applies
    the chain rule."""

    def __init__(self, foreign: set[str], message: str = CONFLICT) -> None:
        self.foreign = foreign
        self.message = message
        self.sent: list[list[Any]] = []

    def __call__(self, history: list[Any]) -> str:
        items = Conversation(messages=history, format="responses").dump()
        self.sent.append(items)
        if responses_refusal(items, self.foreign) is not None:
            raise ProviderError(400, responses_body(self.message))
        return "ok"


def test_recover_drops_reasoning_from_another_chain_in_one_retry() -> None:
    history = Conversation.read(responses_session(), format="responses").messages
    call = Responses(foreign={"gAAAsub-agent"})

    result = recover(call, history)

    assert len(call.sent) == 2 and call.sent[0] != call.sent[1]
    assert "the error names no item" in result.attempts[0].detail
    kept = [item for item in call.sent[-1] if item.get("type") == "reasoning"]
    assert kept == [responses_session()[4]]  # the current turn's reasoning, byte-identical
    assert "msg_1" not in json.dumps(call.sent[-1])  # its reasoning is gone: no id


def test_recover_drops_the_item_the_error_names() -> None:
    # openai/codex #3573: the error names the item that cannot be verified
    history = Conversation.read(responses_session(), format="responses").messages
    call = Responses(
        foreign={"gAAAthis-chain"},
        message="The encrypted content for item rs_now could not be verified.",
    )

    result = recover(call, history)

    assert len(call.sent) == 2
    assert result.attempts[0].detail == "dropped the 1 reasoning item the error names"
    assert [i["id"] for i in call.sent[-1] if i.get("type") == "reasoning"] == ["rs_sub"]


# -- through guard, the official SDKs over HTTP --------------------------------------------------


def _headers(server: FakeProvider, body: dict[str, Any]) -> dict[str, str]:
    return dict(next(r.headers for r in reversed(server.log) if r.json is body))


def anthropic_server(bound: set[str]) -> FakeProvider:
    def respond(body: dict[str, Any]) -> Any:
        refusal = anthropic_refusal(body, _headers(server, body), bound)
        return "healed" if refusal is None else Fail(400, anthropic_body(refusal))

    server = FakeProvider(responder=respond)
    return server


def _sent_bodies(server: FakeProvider, api: str) -> list[str]:
    bodies = [json.dumps(b, sort_keys=True) for b in server.bodies(api)]
    assert len(set(bodies)) == len(bodies), "a refused payload was sent again"
    return bodies


def test_guard_heals_bound_thinking_under_adaptive_thinking() -> None:
    with anthropic_server(bound={"sig-1", "sig-2"}) as server:
        client = guard(anthropic.Anthropic(base_url=server.base_url[:-3], api_key="t"))
        reply = client.messages.create(
            model="claude-fable-5-1",
            max_tokens=512,
            thinking={"type": "adaptive"},
            messages=anthropic_session(),
        )
        assert reply.content[0].text == "healed"
        first, second = server.bodies("anthropic")
        _sent_bodies(server, "anthropic")
        assert first["messages"] == anthropic_session()  # sent as the agent gave it
        assert second["messages"][:3] == anthropic_session()[:3]  # untouched prefix, byte-same
        assert [
            b["signature"] for m in second["messages"] for b in _blocks(m) if "signature" in b
        ] == ["sig-0"]
        client.close()


def test_guard_sends_drop_block_under_budgeted_thinking_and_keeps_sending_it() -> None:
    with anthropic_server(bound={"sig-1", "sig-2"}) as server:
        client = guard(anthropic.Anthropic(base_url=server.base_url[:-3], api_key="t"))
        request: dict[str, Any] = {
            "model": "claude-fable-5-1",
            "max_tokens": 4096,
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "messages": anthropic_session(),
        }
        client.messages.create(**request)
        first, second = server.bodies("anthropic")
        assert second["messages"] == first["messages"]  # the history itself is not touched
        assert second["thinking"] == {
            "type": "enabled",
            "budget_tokens": 2048,
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        }
        assert BINDING_BETA in server.log[-1].headers["anthropic-beta"]
        assert client.last_recovery is not None
        assert client.last_recovery.prefix_mismatch_behavior == "drop_block"

        # the next turn of the same conversation carries the setting from the start
        request["messages"] = [
            *anthropic_session(),
            {"role": "assistant", "content": [{"type": "text", "text": "Found it."}]},
            {"role": "user", "content": "Fix it."},
        ]
        client.messages.create(**request)
        third = server.bodies("anthropic")[-1]
        assert third["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
        assert len(server.bodies("anthropic")) == 3
        _sent_bodies(server, "anthropic")
        client.close()


def test_guard_heals_bound_thinking_on_the_beta_messages_stream_async() -> None:
    async def main(server: FakeProvider) -> str:
        raw = anthropic.AsyncAnthropic(base_url=server.base_url[:-3], api_key="t")
        async with (
            guard(raw) as client,
            client.beta.messages.stream(
                model="claude-fable-5-1",
                max_tokens=4096,
                thinking={"type": "enabled", "budget_tokens": 2048},
                betas=["interleaved-thinking-2025-05-14"],
                messages=anthropic_session(),
            ) as stream,
        ):
            return str(await stream.get_final_text())

    with anthropic_server(bound={"sig-2"}) as server:
        assert asyncio.run(main(server)) == "healed"
        assert server.log[-1].headers["anthropic-beta"] == (
            f"interleaved-thinking-2025-05-14,{BINDING_BETA}"
        )
        _sent_bodies(server, "anthropic")


@pytest.mark.parametrize("form", ["create", "with_raw_response", "stream"])
def test_guard_drops_reasoning_from_another_chain(form: str) -> None:
    def respond(body: dict[str, Any]) -> Any:
        refusal = responses_refusal(body["input"], {"gAAAsub-agent"})
        return "healed" if refusal is None else Fail(400, responses_body(refusal))

    with FakeProvider(responder=respond) as server:
        client = guard(openai.OpenAI(base_url=server.base_url, api_key="t"))
        kwargs = {"model": "gpt-5.5", "input": responses_session(), "store": False}
        if form == "create":
            text = client.responses.create(**kwargs).output_text
        elif form == "with_raw_response":
            text = client.with_raw_response.responses.create(**kwargs).parse().output_text
        else:
            with client.responses.stream(**kwargs) as stream:
                text = stream.get_final_response().output_text
        assert text == "healed"
        first, second = server.bodies("responses")
        assert first["input"] == responses_session()
        assert [i for i in second["input"] if i.get("type") == "reasoning"] == [
            responses_session()[4]
        ]
        _sent_bodies(server, "responses")
        client.close()


# -- properties: what a heal keeps ---------------------------------------------------------------


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):  # a turn written afresh may carry its text as a string
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=anthropic_bodies(), pick=st.integers(min_value=0, max_value=10**6))
def test_a_bound_thinking_heal_removes_a_suffix_and_nothing_else(
    body: dict[str, Any], pick: int
) -> None:
    native = copy.deepcopy(body)
    conversation = Conversation.read(native, format="anthropic")
    places = [
        (turn, position)
        for turn, message in enumerate(native["messages"])
        for position, block in enumerate(_blocks(message))
        if block.get("type") in ("thinking", "redacted_thinking")
    ]
    turn, position = places[pick % len(places)]

    heal = next(
        replay_heals(
            conversation.messages, bound_text(turn, position), thinking={"type": "adaptive"}
        )
    )
    written = conversation.dump(heal.messages)

    assert native == body  # nothing the caller holds is mutated

    def replay(messages: list[dict[str, Any]]) -> list[Any]:
        return [
            b
            for m in messages
            for b in _blocks(m)
            if b.get("type") in ("thinking", "redacted_thinking")
        ]

    before, after = replay(body["messages"]), replay(written["messages"])
    first_bound = next(index for index, (t, _) in enumerate(places) if t == turn)
    assert after == before[:first_bound]  # a prefix, byte-identical: no gap, nothing edited
    removed = [
        b for change in heal.changes if isinstance(change.message, list) for b in change.message
    ]
    assert len(removed) + len(after) == len(before)  # every removed block is in a change

    def others(messages: list[dict[str, Any]]) -> list[Any]:
        return [
            b
            for m in messages
            for b in _blocks(m)
            if b.get("type") not in ("thinking", "redacted_thinking")
        ]

    assert others(written["messages"]) == others(body["messages"])


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=responses_inputs())
def test_a_foreign_reasoning_heal_keeps_the_current_turn_and_every_other_item(
    items: list[Any],
) -> None:
    original = copy.deepcopy(items)
    conversation = Conversation.read(items, format="responses")
    heals = list(replay_heals(conversation.messages, CONFLICT))
    assert heals
    for heal in heals:
        written = conversation.dump(heal.messages)
        assert items == original
        assert responses_refusal(written, foreign=set()) is None  # no id'd item lost its reasoning
        others = [i for i in written if i.get("type") != "reasoning"]
        assert [_without_id(i) for i in others] == [
            _without_id(i) for i in original if i.get("type") != "reasoning"
        ]
    last_user = max(i for i, item in enumerate(original) if item.get("role") == "user")
    current = [i for i in original[last_user:] if i.get("type") == "reasoning"]
    kept = [i for i in conversation.dump(heals[0].messages) if i.get("type") == "reasoning"]
    if any(i.get("type") == "reasoning" for i in original[:last_user]):
        assert kept == current  # the first heal keeps the current turn's reasoning as it was


def _without_id(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key != "id"}


# -- through the proxy: its one retry goes through recover ---------------------------------------


def test_the_proxy_heals_bound_thinking_in_its_one_retry(tmp_path: Path) -> None:
    with (
        anthropic_server(bound={"sig-1", "sig-2"}) as upstream,
        running_proxy(["--upstream", upstream.base_url.removesuffix("/v1")], tmp_path) as proxy,
    ):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-test", max_retries=0)
        reply = client.messages.create(
            model="claude-fable-5-1",
            max_tokens=512,
            thinking={"type": "adaptive"},
            messages=anthropic_session(),
        )
        client.close()
        assert reply.content[0].text == "healed"
        first, second = upstream.bodies("anthropic")
        assert first["messages"] == anthropic_session()  # forwarded as it came
        kept = [b["signature"] for m in second["messages"] for b in _blocks(m) if "signature" in b]
        assert kept == ["sig-0"]
        _sent_bodies(upstream, "anthropic")
