"""Gemini ``contents`` and Bedrock Converse: read, written back byte for byte, places
named in the user's file, and every output judged by the API's own rules as written out
in ``native_chat_rules`` (no condense code)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import condense
from condense.formats import detect_format, from_bedrock, from_gemini, to_bedrock, to_gemini
from native_chat_rules import bedrock_problems, gemini_problems
from profiles import examples

QUICK = settings(
    max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow], deadline=None
)
TEXT = st.text(
    alphabet=st.sampled_from([*'ab \n{}"\\:', "é", "中", "🚀"]), min_size=1, max_size=16
).filter(str.strip)
WORD = st.text(alphabet="abcdefgh", min_size=1, max_size=8)
SIGNATURE = st.text(alphabet="ABCDEFabcdef0123456789+/=", min_size=4, max_size=24)
ARGS = st.dictionaries(
    st.sampled_from(["path", "cmd", "n"]), st.one_of(WORD, st.integers()), max_size=3
)
BULK = "\n".join(f"line {n}: " + "lorem ipsum dolor sit amet " * 4 for n in range(400))


# --- Gemini -----------------------------------------------------------------------------


@st.composite
def gemini_requests(draw: st.DrawFn) -> dict[str, Any]:
    """Gemini requests as gemini-cli sends them: user asks, model turns of thoughts, text
    and parallel calls (the first signed), one response turn per call turn."""
    snake = draw(st.booleans())
    ids = draw(st.booleans())
    key = (
        {
            "functionCall": "function_call",
            "functionResponse": "function_response",
            "thoughtSignature": "thought_signature",
        }
        if snake
        else {}
    )

    def k(name: str) -> str:
        return key.get(name, name)

    contents: list[dict[str, Any]] = []
    serial = 0
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        contents.append({"role": "user", "parts": [{"text": draw(TEXT)}]})
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            parts: list[dict[str, Any]] = []
            if draw(st.booleans()):
                parts.append({"text": draw(TEXT), "thought": True})
            if draw(st.booleans()):
                parts.append({"text": draw(TEXT)})
            names = draw(
                st.lists(st.sampled_from(["read_file", "run_shell"]), min_size=1, max_size=3)
            )
            for n, name in enumerate(names):
                call: dict[str, Any] = {"name": name, "args": draw(ARGS)}
                if ids:
                    call["id"] = f"fc-{serial}-{n}"
                part: dict[str, Any] = {k("functionCall"): call}
                if n == 0:
                    part[k("thoughtSignature")] = draw(SIGNATURE)
                parts.append(part)
            contents.append({"role": "model", "parts": parts})
            responses = []
            for n, name in enumerate(names):
                value = draw(
                    st.one_of(st.builds(lambda t: {"output": t}, TEXT), st.just({"error": "boom"}))
                )
                response: dict[str, Any] = {"name": name, "response": value}
                if ids:
                    response["id"] = f"fc-{serial}-{n}"
                responses.append({k("functionResponse"): response})
            contents.append({"role": "user", "parts": responses})
            serial += 1
        last: dict[str, Any] = {"text": draw(TEXT)}
        if draw(st.booleans()):
            last[k("thoughtSignature")] = draw(SIGNATURE)
        contents.append({"role": "model", "parts": [last]})
    request: dict[str, Any] = {"contents": contents, "generationConfig": {"temperature": 0}}
    if draw(st.booleans()):
        request["systemInstruction"] = {"role": "user", "parts": [{"text": draw(TEXT)}]}
    return request


@QUICK
@given(gemini_requests())
def test_gemini_round_trip_is_lossless_and_reads_what_the_api_accepts(
    request: dict[str, Any],
) -> None:
    before = copy.deepcopy(request)
    ids = "id" in json.dumps(request)
    assert gemini_problems(request, ids_allowed=ids) == []  # the generator's own check
    conversation = condense.load(request)
    assert conversation.format == "gemini" and detect_format(request["contents"]) == "gemini"
    assert conversation.dump() == request and request == before
    assert condense.validate(conversation) == []
    assert condense.repair(conversation).changes == ()


@QUICK
@given(gemini_requests())
def test_a_fresh_gemini_write_is_valid_and_reads_back(request: dict[str, Any]) -> None:
    """The canonical messages written afresh (as after any change) break no Gemini rule,
    keep every thought signature with its part, and read back to the same messages."""
    messages = [dict(m) for m in from_gemini(request)]
    fresh = to_gemini(messages)
    assert gemini_problems(fresh) == []
    assert _signatures(fresh) == _signatures(request)
    # ids the request had are not written without a record that uses them (the read
    # ones are positional then): the pairing is what must survive
    assert _paired(from_gemini(fresh)) == _paired(from_gemini(request))


def _paired(messages: list[Any]) -> list[Any]:
    """``messages`` with each call id replaced by its rank, so pairings compare."""
    rank: dict[str, int] = {}
    out = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "id": rank.setdefault(call["id"], len(rank))}
                for call in message["tool_calls"]
            ]
        if message["role"] == "tool":
            message["tool_call_id"] = rank.get(message["tool_call_id"], -1)
        out.append(message)
    return out


def _signatures(request: Any) -> list[str]:
    found = []
    for turn in request["contents"]:
        for part in turn["parts"]:
            for key in ("thoughtSignature", "thought_signature"):
                if key in part:
                    found.append(part[key])
    return found


@QUICK
@given(gemini_requests(), st.sampled_from([300, 1_000, 4_000]))
def test_compressing_a_gemini_request_returns_one_gemini_accepts(
    request: dict[str, Any], budget: int
) -> None:
    request = copy.deepcopy(request)
    big = {
        "functionCall": {"name": "read_file", "args": {"path": "big"}},
        "thoughtSignature": "A==",
    }
    request["contents"][:0] = [  # an earlier turn holding a large output
        {"role": "user", "parts": [{"text": "read the big file"}]},
        {"role": "model", "parts": [big]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "read_file", "response": {"output": BULK}}}],
        },
        {"role": "model", "parts": [{"text": "read it"}]},
    ]
    ids = '"id"' in json.dumps(request)
    result = condense.compress(request, budget=budget)
    assert isinstance(result.native, dict) and result.messages == result.native["contents"]
    assert gemini_problems(result.native, ids_allowed=ids) == []


def _call(args: dict[str, Any] | None = None, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": "read_file", "args": args or {}}}
    return {**part, "thoughtSignature": signature} if signature else part


def _response(output: str = "ok") -> dict[str, Any]:
    return {"functionResponse": {"name": "read_file", "response": {"output": output}}}


def test_compress_keeps_the_current_gemini_turn_as_it_came() -> None:
    turn = [  # a shape hypothesis found (budget 300): the turn's first steps are summarized
        {"role": "user", "parts": [{"text": ":"}]},
        {"role": "model", "parts": [{"text": '"b:}', "thought": True}, _call({}, "0000"), _call()]},
        {"role": "user", "parts": [_response(":"), _response(":")]},
        {"role": "model", "parts": [_call({"path": "a", "cmd": "a", "n": "a"}, "0000")]},
        {"role": "user", "parts": [_response(":")]},
        {"role": "model", "parts": [{"text": ":}a\n:}"}]},
    ]
    earlier = [
        {"role": "user", "parts": [{"text": ":"}]},
        {"role": "model", "parts": [{"text": ":"}]},
        {"role": "user", "parts": [{"text": ":"}]},
        {"role": "model", "parts": [_call({}, "0000"), _call()]},
        {"role": "user", "parts": [_response(":"), _response(":")]},
        {"role": "model", "parts": [{"text": ":", "thought": True}, _call({}, "0000")]},
        {"role": "user", "parts": [_response(":")]},
        {"role": "model", "parts": [{"text": ":"}]},
    ]
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "read the big file"}]},
            {"role": "model", "parts": [_call({"path": "big"}, "A==")]},
            {"role": "user", "parts": [_response(BULK)]},
            {"role": "model", "parts": [{"text": "read it"}]},
            *earlier,
            *turn,
        ]
    }
    result = condense.compress(request, budget=300)
    assert gemini_problems(result.native) == []
    assert result.native["contents"][-len(turn) :] == turn


def test_gemini_places_are_named_in_the_users_file() -> None:
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "ok"},
                    {"functionCall": {"name": "ls", "args": {}}},
                    {"functionCall": {"name": "cat", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a"}}}],
            },
        ]
    }
    found = condense.validate(request, provider="gemini")
    assert [(v.code, v.location) for v in found] == [
        ("unanswered_tool_call", "contents[1].parts[2]")
    ]
    healed = condense.repair(request, provider="gemini")
    [change] = healed.changes
    assert change.action == "insert" and change.location is not None
    assert gemini_problems(healed.native) == []
    assert healed.native["contents"][2]["parts"][0] == request["contents"][2]["parts"][0]


def test_a_gemini_signature_stays_byte_identical_with_its_part_through_compress() -> None:
    signed = {
        "functionCall": {"name": "run_shell", "args": {"cmd": "ls"}},
        "thoughtSignature": "Cj4B/+sig==",
    }
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "old ask"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"name": "read_file", "args": {"path": "a"}},
                        "thoughtSignature": "old==",
                    }
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "read_file", "response": {"output": BULK}}}
                ],
            },
            {"role": "model", "parts": [{"text": "read it"}]},
            {"role": "user", "parts": [{"text": "now run ls"}]},
            {"role": "model", "parts": [signed]},
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "run_shell", "response": {"output": "a.py"}}}
                ],
            },
        ]
    }
    result = condense.compress(request, budget=600)
    assert result.report.fits
    assert result.native["contents"][-2:] == request["contents"][-2:]
    assert gemini_problems(result.native) == []


# --- Bedrock Converse -------------------------------------------------------------------


def _converse(text_parts: int = 1) -> dict[str, Any]:
    return {
        "modelId": "anthropic.claude-sonnet-4-5",
        "system": [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "list the files"}] * text_parts},
            {
                "role": "assistant",
                "content": [
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": "use ls", "signature": "EqQB=="}
                        }
                    },
                    {"text": "Listing."},
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                            "name": "ls",
                            "input": {"path": "."},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                            "content": [{"json": {"files": ["a.py"]}}],
                            "status": "success",
                        }
                    }
                ],
            },
        ],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "ls", "inputSchema": {"json": {"type": "object"}}}}]
        },
        "inferenceConfig": {"maxTokens": 512},
    }


def test_a_bedrock_converse_body_is_not_misread_as_openai_chat() -> None:
    """Read as OpenAI chat, its typeless blocks became JSON text once repaired (a 22-token
    request counted 67). Now it is its own format, and nothing becomes text."""
    body = _converse()
    assert detect_format(body) == "bedrock" and detect_format(body["messages"]) == "bedrock"
    messages = from_bedrock(body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["function"] == {"name": "ls", "arguments": '{"path": "."}'}
    assert messages[2]["thinking_blocks"] == [body["messages"][1]["content"][0]]
    for native in (body, body["messages"]):
        assert condense.validate(native) == []
        healed = condense.repair(native)
        assert healed.changes == () and healed.native == native
    assert condense.count_tokens(body["messages"]) < condense.count_tokens(
        [{"role": "user", "content": json.dumps(body["messages"])}]
    )


def test_bedrock_round_trip_and_a_fresh_write_are_valid() -> None:
    body = _converse()
    assert condense.load(body).dump() == body
    fresh = to_bedrock([dict(m) for m in from_bedrock(body)])
    assert bedrock_problems(fresh) == []
    assert fresh["messages"] == body["messages"] and fresh["system"] == body["system"]


def test_a_bedrock_result_after_a_new_stub_joins_the_results_turn() -> None:
    """Every result answering one turn goes in one user message: a stub repair adds next
    to an unchanged turn of results joins it."""
    body = _converse()
    second = {"toolUse": {"toolUseId": "tooluse_second", "name": "ls", "input": {}}}
    body["messages"][1]["content"].append(second)
    assert any("Expected toolResult" in p for p in bedrock_problems(body))
    healed = condense.repair(body)
    assert [c.action for c in healed.changes] == ["insert"]
    assert bedrock_problems(healed.native) == []
    results = healed.native["messages"][2]
    assert [b["toolResult"]["toolUseId"] for b in results["content"]] == [
        "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
        "tooluse_second",
    ]


@st.composite
def converse_requests(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    serial = 0
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        ask = [{"text": draw(TEXT)}]
        if messages and messages[-1]["role"] == "user":
            messages[-1]["content"].extend(ask)
        else:
            messages.append({"role": "user", "content": ask})
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            blocks: list[dict[str, Any]] = []
            if draw(st.booleans()):
                blocks.append(
                    {
                        "reasoningContent": {
                            "reasoningText": {"text": draw(TEXT), "signature": draw(SIGNATURE)}
                        }
                    }
                )
            if draw(st.booleans()):
                blocks.append({"text": draw(TEXT)})
            ids = [
                f"tooluse_{serial}_{n}" for n in range(draw(st.integers(min_value=1, max_value=3)))
            ]
            blocks.extend(
                {"toolUse": {"toolUseId": i, "name": "ls", "input": draw(ARGS)}} for i in ids
            )
            messages.append({"role": "assistant", "content": blocks})
            results = [
                {
                    "toolResult": {
                        "toolUseId": i,
                        "content": [
                            draw(
                                st.one_of(
                                    st.builds(lambda t: {"text": t}, TEXT),
                                    st.just({"json": {"ok": True}}),
                                )
                            )
                        ],
                    }
                }
                for i in ids
            ]
            messages.append({"role": "user", "content": results})
            serial += 1
        messages.append({"role": "assistant", "content": [{"text": draw(TEXT)}]})
    body: dict[str, Any] = {"messages": messages, "inferenceConfig": {"maxTokens": 100}}
    if draw(st.booleans()):
        body["system"] = [{"text": draw(TEXT)}]
    return body


@QUICK
@given(converse_requests())
def test_converse_round_trip_is_lossless_and_a_fresh_write_is_valid(body: dict[str, Any]) -> None:
    before = copy.deepcopy(body)
    assert bedrock_problems(body) == []
    conversation = condense.load(body)
    assert conversation.format == "bedrock"
    assert conversation.dump() == body and body == before
    assert condense.validate(conversation) == []
    fresh = to_bedrock([dict(m) for m in conversation.messages])
    assert bedrock_problems(fresh) == []
    assert from_bedrock(fresh) == conversation.messages


@QUICK
@given(converse_requests(), st.sampled_from([200, 800, 4_000]))
def test_compressing_a_converse_request_returns_one_converse_accepts(
    body: dict[str, Any], budget: int
) -> None:
    body = copy.deepcopy(body)
    body["messages"][1:1] = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "tooluse_big", "name": "cat", "input": {}}}],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_big", "content": [{"text": BULK}]}},
                {"text": "go on"},
            ],
        },
    ]
    result = condense.compress(body, budget=budget)
    assert bedrock_problems(result.native) == []
    assert result.messages == result.native["messages"]


def test_gemini_signatures_on_parts_of_their_own_stay_where_they_came() -> None:
    """Shapes Gemini streams end with: a signature on an empty text part, a part holding
    only a signature after the calls, a signed thought without text."""
    model = {
        "role": "model",
        "parts": [
            {"thought": True, "thoughtSignature": "ZW5j"},
            {"functionCall": {"name": "fs_read", "args": {"p": 1}}},
            {"functionCall": {"name": "fs_read", "args": {}}},
            {"thoughtSignature": "Yg=="},
        ],
    }
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            model,
            {"role": "user", "parts": [_response("1"), _response("2")]},
            {
                "role": "model",
                "parts": [{"text": "Final answer."}, {"text": "", "thoughtSignature": "c2ln"}],
            },
            {"role": "user", "parts": [{"text": "next"}]},
        ]
    }
    conversation = condense.load(request)
    assert conversation.dump() == request
    assert condense.validate(conversation) == []
    from condense.units import carries_replay

    assert carries_replay(conversation.messages[1]) and carries_replay(conversation.messages[4])
    for budget in (60, 10_000):
        result = condense.compress(request, budget=budget)
        out = json.dumps(result.native["contents"])
        for turn in (model, request["contents"][3]):  # kept as it came, or left out whole
            signatures = [p["thoughtSignature"] for p in turn["parts"] if "thoughtSignature" in p]
            kept = turn in result.native["contents"]
            assert kept or not any(f'"{s}"' in out for s in signatures)
        assert gemini_problems(result.native) == []
