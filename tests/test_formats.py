"""formats: the public API, exact round trips over the real corpus, loading and detection."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

import condense.formats
from condense.exceptions import FormatError, UnknownNameError
from condense.formats import (
    FORMATS,
    Conversation,
    detect_format,
    from_anthropic,
    from_responses,
    from_sharegpt,
    load,
    load_records,
    parse_text,
    to_anthropic,
    to_responses,
    to_sharegpt,
)
from condense.validate import validate
from corpus import CORPUS, SAMPLE, corpus_files

DATA = Path(__file__).resolve().parent / "data" / "formats"
CORPUS_FILES = corpus_files()
OPENAI_FILES = corpus_files("openai/*.jsonl")
ID = re.compile(r"^[A-Za-z0-9_-]+$")


def _name(path: Path | None) -> str:
    return "missing" if path is None else f"{path.parent.name}/{path.name}"


# --- API ----------------------------------------------------------------------------------


def test_public_api_is_curated_and_sorted() -> None:
    def isort_style(name: str) -> tuple[int, str]:  # constants, classes, functions (RUF022)
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert condense.formats.__all__ == sorted(condense.formats.__all__, key=isort_style)
    for name in condense.formats.__all__:
        assert hasattr(condense.formats, name), name
    assert FORMATS == ("openai", "anthropic", "responses", "sharegpt", "gemini", "bedrock")


def test_conversation_is_a_frozen_keyword_only_value() -> None:
    conversation = Conversation(messages=[{"role": "user", "content": "hi"}], format="openai")
    with pytest.raises(AttributeError):
        conversation.format = "anthropic"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Conversation([{"role": "user", "content": "hi"}])  # type: ignore[misc]
    with pytest.raises(UnknownNameError, match="known: openai, anthropic"):
        Conversation(messages=[], format="vertex")


def test_broken_openai_histories_load_as_they_are() -> None:
    broken = [
        {"role": "tool", "tool_call_id": None, "content": "orphan"},
        "not a message",
        {"content": "no role", "_meta": 1},
    ]
    conversation = load({"messages": broken, "id": 3})
    assert conversation.format == "openai"
    assert conversation.messages == broken  # repair's job, not the loader's
    assert conversation.dump() == {"messages": broken, "id": 3}


def test_replace_keeps_what_dump_needs() -> None:
    conversation = load(TRAJECTORY)
    shorter = dataclasses.replace(conversation, messages=conversation.messages[:1])
    assert shorter.dump() == {"conversations": TRAJECTORY["conversations"][:1]}
    assert shorter.dump()["conversations"][0] is TRAJECTORY["conversations"][0]


def test_a_conversation_built_by_hand_dumps_every_format() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    dumps = {name: Conversation(messages=messages, format=name).dump() for name in FORMATS}
    assert dumps["openai"] == messages
    assert dumps["anthropic"] == to_anthropic(messages)
    assert dumps["anthropic"]["system"] == "Be brief."
    assert dumps["responses"] == to_responses(messages)
    assert dumps["sharegpt"] == to_sharegpt(messages)
    assert [turn["from"] for turn in dumps["sharegpt"]] == ["system", "human", "gpt"]


# --- the real corpus -----------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=_name)
def test_corpus_round_trips_exactly(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    expected_format = "sharegpt" if path.parent.name == "sharegpt" else "openai"
    count = 0
    for conversation in load_records(path):
        count += 1
        text = lines[conversation.line - 1]  # type: ignore[operator]
        record = json.loads(text)
        assert conversation.format == expected_format
        assert conversation.source == str(path)
        assert conversation.dump() == record
        # byte-identical: unchanged turns are the original objects, key order included
        assert json.dumps(conversation.dump(), ensure_ascii=False) == text
        assert conversation.dump(list(conversation.messages)) == record
        # every message a fresh copy: the serializers alone reproduce the record
        assert conversation.dump([dict(m) for m in conversation.messages]) == record
    assert count == sum(1 for line in lines if line.strip())


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=_name)
def test_loading_never_mutates_the_record(path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines()[:40]:
        record = json.loads(line)
        snapshot = copy.deepcopy(record)
        conversation = load(record)
        conversation.dump([dict(m) for m in conversation.messages])
        assert record == snapshot


@pytest.mark.corpus
def test_sharegpt_corpus_puts_results_right_after_their_calls() -> None:
    orphans: list[str] = []
    unanswered: list[str] = []
    exchanges = 0
    for path in corpus_files("sharegpt/*.jsonl"):
        for conversation in load_records(path):
            record_id = conversation.dump()["id"]
            messages = conversation.messages
            index = 0
            while index < len(messages):
                message = messages[index]
                end = index + 1
                while end < len(messages) and messages[end]["role"] == "tool":
                    end += 1
                answers = [m["tool_call_id"] for m in messages[index + 1 : end]]
                if message["role"] == "assistant" and message.get("tool_calls"):
                    ids = [call["id"] for call in message["tool_calls"]]
                    assert all(ID.match(i) for i in ids)
                    assert len(set(ids)) == len(ids)
                    if answers:
                        assert answers == ids, record_id
                        exchanges += 1
                    else:  # quirk: the trajectory ends on a call
                        assert end == len(messages), record_id
                        unanswered.append(record_id)
                elif answers:  # quirk: results of a call written as prose
                    orphans.append(record_id)
                index = end
    assert orphans == [
        "llamafactory/glaive_toolcall_zh_demo/197",
        "llamafactory/glaive_toolcall_zh_demo/293",
    ]
    full = CORPUS != SAMPLE  # the counts of the whole corpus, or of the shipped sample
    assert len(unanswered) == (11 if full else 4)
    assert all(i.startswith("llamafactory/reason_tool_use") for i in unanswered)
    assert exchanges == (211 + 216 + 42 if full else 32)


def _positional(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with call ids replaced by their position and arguments parsed: what
    survives a format that does not store ids or argument spelling."""
    latest: dict[Any, str] = {}
    out = []
    for index, message in enumerate(messages):
        message = dict(message)
        if message.get("tool_calls"):
            calls = []
            for position, call in enumerate(message["tool_calls"]):
                latest[call["id"]] = f"{index}.{position}"
                function = {**call["function"]}
                function["arguments"] = json.loads(function["arguments"])
                calls.append({**call, "id": latest[call["id"]], "function": function})
            message["tool_calls"] = calls
            if message.get("content") == "":
                message["content"] = None  # documented: "" next to tool calls reads as None
        if message.get("role") == "tool":
            message["tool_call_id"] = latest.get(message["tool_call_id"], "orphan")
        out.append(message)
    return out


def _merge_assistant_pairs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses' documented normalization: a text-only assistant message followed by a
    content-less one with tool calls reads back as one message."""
    out: list[dict[str, Any]] = []
    for message in messages:
        before = out[-1] if out else None
        if (
            before is not None
            and before["role"] == message["role"] == "assistant"
            and not before.get("tool_calls")
            and message.get("content") is None
            and message.get("tool_calls")
        ):
            out[-1] = {**before, "tool_calls": message["tool_calls"]}
        else:
            out.append(message)
    return out


# The keys each adapter writes (documented in its module): the rest has no slot in the
# target API, which refuses unknown keys (tau-bench and OpenHands send ``name`` on tool
# results, ToolBench ``valid`` on user messages).
WRITTEN_KEYS = {
    "anthropic": {
        "tool": {"role", "tool_call_id", "content", "is_error", "cache_control"},
        "other": {"role", "content", "tool_calls", "thinking_blocks"},
    },
    "responses": {
        "tool": {"role", "tool_call_id", "content", "item_id", "status"},
        "other": {"role", "content", "tool_calls", "responses_items", "item_id", "status"},
    },
}


def _written(messages: list[dict[str, Any]], format: str) -> list[dict[str, Any]]:
    keys = WRITTEN_KEYS[format]
    return [
        {k: v for k, v in m.items() if k in keys["tool" if m["role"] == "tool" else "other"]}
        for m in messages
    ]


@pytest.mark.corpus
@pytest.mark.parametrize("path", OPENAI_FILES, ids=_name)
def test_openai_corpus_survives_every_other_format(path: Path) -> None:
    for conversation in load_records(path):
        messages = conversation.messages
        # Anthropic: lossless but for argument spelling, "" next to tool calls and the
        # keys Anthropic has no slot for
        assert _positional(from_anthropic(to_anthropic(messages))) == _positional(
            _written(messages, "anthropic")
        )
        # Responses: arguments and ids are kept verbatim
        assert from_responses(to_responses(messages)) == _merge_assistant_pairs(
            _written(messages, "responses")
        )
        # ShareGPT: ids are positional
        assert _positional(from_sharegpt(to_sharegpt(messages))) == _positional(messages)
        # what is written is what the APIs accept: no ``name`` on a result, nothing unknown
        for turn in to_anthropic(messages)["messages"]:
            assert turn.keys() == {"role", "content"}
            for block in turn["content"] if isinstance(turn["content"], list) else ():
                if block["type"] == "tool_result":
                    assert block.keys() <= {"type", "tool_use_id", "content", "is_error"}
        for item in to_responses(messages):
            assert "name" not in item or item["type"] == "function_call"


def test_the_corpus_helpers_can_fail() -> None:
    calls = [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    messages = [
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
    ]
    moved = [messages[0], {**messages[1], "tool_call_id": "b"}]
    assert _positional(messages) != _positional(moved)
    assert _merge_assistant_pairs(messages) == messages
    named = [messages[0], {**messages[1], "name": "f"}]
    assert _written(named, "anthropic") == messages != named


# --- loading -----------------------------------------------------------------------------


def _write(path: Path, *records: Any) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


CHAT = {"id": "r1", "messages": [{"role": "user", "content": "hi"}], "meta": {"k": 1}}
TRAJECTORY = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}


def test_load_reads_objects_json_and_single_record_jsonl(tmp_path: Path) -> None:
    conversation = load(CHAT)
    assert (conversation.format, conversation.source, conversation.line) == ("openai", None, None)
    assert conversation.messages[0] is CHAT["messages"][0]  # the identity adapter copies nothing

    single = _write(tmp_path / "one.jsonl", TRAJECTORY)
    loaded = load(single)
    assert (loaded.format, loaded.source, loaded.line) == ("sharegpt", str(single), 1)
    assert loaded.dump() == TRAJECTORY

    document = tmp_path / "doc.json"
    document.write_text(json.dumps(TRAJECTORY, indent=2), encoding="utf-8")
    assert load(str(document)).dump() == TRAJECTORY
    assert load(document, format="sharegpt").line is None


def test_load_refuses_several_records_and_json_text(tmp_path: Path) -> None:
    many = _write(tmp_path / "many.jsonl", CHAT, CHAT)
    with pytest.raises(FormatError, match="load_records") as caught:
        load(many)
    assert caught.value.source == str(many)
    with pytest.raises(FormatError, match="parse_text"):
        load('{"messages": []}')
    with pytest.raises(FormatError, match="cannot read file"):
        load(tmp_path / "absent.json")
    lines_in_json = _write(tmp_path / "lines.json", CHAT, CHAT)
    with pytest.raises(FormatError, match=r"lines\.json, line 2: .* belong in a \.jsonl file"):
        load(lines_in_json)
    with pytest.raises(FormatError, match="takes a dict, a list or a path"):
        load(42)
    with pytest.raises(UnknownNameError, match="unknown format 'xml'"):
        load(CHAT, format="xml")


def test_load_records_streams_jsonl_with_lines(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(CHAT) + "\n\n" + json.dumps(TRAJECTORY) + "\n", encoding="utf-8")
    records = list(load_records(path))
    assert [(r.format, r.line) for r in records] == [("openai", 1), ("sharegpt", 3)]
    assert [r.dump() for r in records] == [CHAT, TRAJECTORY]


def test_load_records_reads_json_arrays_and_lines(tmp_path: Path) -> None:
    array = tmp_path / "records.json"
    array.write_text(json.dumps([CHAT, TRAJECTORY]), encoding="utf-8")
    assert [r.format for r in load_records(array)] == ["openai", "sharegpt"]
    bare = tmp_path / "messages.json"
    bare.write_text(json.dumps(CHAT["messages"]), encoding="utf-8")
    assert [r.messages for r in load_records(bare)] == [CHAT["messages"]]

    stream = io.StringIO(json.dumps(CHAT) + "\n")
    stream.name = "<stdin>"
    (record,) = load_records(stream)
    assert (record.source, record.line) == ("<stdin>", 1)
    (named,) = load_records([json.dumps(CHAT)], source="batch-7")
    assert named.source == "batch-7"


def test_errors_name_the_file_line_and_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(CHAT) + "\n{not json\n", encoding="utf-8")
    records = load_records(path)
    next(records)
    with pytest.raises(FormatError, match=r"bad\.jsonl, line 2: invalid JSON") as caught:
        next(records)
    assert (caught.value.source, caught.value.line) == (str(path), 2)

    broken = {"conversations": [{"from": "human", "value": "a"}, {"from": "robot", "value": "b"}]}
    _write(path, CHAT, broken)
    with pytest.raises(FormatError, match=r"line 2, message 1: unknown 'from' 'robot'"):
        list(load_records(path))

    _write(path, {"prompt": "hi"})
    with pytest.raises(FormatError, match=r"line 1: cannot tell the format"):
        list(load_records(path))

    with pytest.raises(FormatError, match=r"<lines>, line 1, message 1: a turn must be"):
        list(load_records(['{"conversations": [{"from": "human", "value": "a"}, 7]}']))


def test_parse_text_reads_documents_and_jsonl() -> None:
    pretty = json.dumps(CHAT, indent=2)
    (document,) = parse_text(pretty, source="<stdin>")
    assert (document.source, document.line) == ("<stdin>", None)
    assert document.dump() == CHAT

    jsonl = json.dumps(CHAT) + "\n" + json.dumps(TRAJECTORY) + "\n"
    assert [c.line for c in parse_text(jsonl, source="-")] == [1, 2]
    (single,) = parse_text("\n" + json.dumps(CHAT) + "\n", source="-")
    assert single.line == 2
    array = parse_text(json.dumps([CHAT, TRAJECTORY]), source="-")
    assert [c.format for c in array] == ["openai", "sharegpt"]
    # a JSON string may hold U+2028, which str.splitlines() would split on
    odd = json.dumps({"messages": [{"role": "user", "content": "a\u2028b"}]}, ensure_ascii=False)
    first, _ = parse_text(odd + "\n" + json.dumps(CHAT), source="-")
    assert first.messages[0]["content"] == "a\u2028b"

    with pytest.raises(FormatError, match="is empty"):
        parse_text(" \n", source="<stdin>")
    with pytest.raises(FormatError, match=r"<stdin>, line 3: invalid JSON"):
        parse_text('{\n  "messages": [\n  oops\n]}', source="<stdin>")


# --- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ([], "openai"),
        ([{"role": "user", "content": "plain text reads the same everywhere"}], "openai"),
        ([{"role": "user", "content": "broken histories load"}, 7, {"x": 1}], "openai"),
        ({"messages": [{"role": "tool", "tool_call_id": "a", "content": "x"}]}, "openai"),
        ({"conversations": [{"role": "user", "content": "hi"}]}, "openai"),
        ({"system": "s", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                }
            ],
            "anthropic",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "url", "url": "u"}}],
                }
            ],
            "anthropic",
        ),
        ({"input": "hello"}, "responses"),
        ([{"type": "function_call_output", "call_id": "c", "output": "x"}], "responses"),
        ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], "responses"),
        (TRAJECTORY, "sharegpt"),
        (TRAJECTORY["conversations"], "sharegpt"),
    ],
)
def test_detect_format(obj: Any, expected: str) -> None:
    assert detect_format(obj) == expected


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ("text", "expected a JSON object or array, got a string"),
        ({"prompt": "x"}, "cannot tell the format of an object with keys \\['prompt'\\]"),
        ([{"content": "no role"}], "holds no chat message \\('role'\\), ShareGPT turn"),
        ([1, "x"], "holds no chat message"),
        ([{"from": "human", "value": "a"}, {"role": "user", "content": "b"}], "mixes ShareGPT"),
        (
            {"system": "s", "messages": [{"role": "tool", "tool_call_id": "a", "content": ""}]},
            "top-level 'system'",
        ),
    ],
)
def test_detect_format_explains_what_it_cannot_tell(obj: Any, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        detect_format(obj)


def test_gemini_thought_signatures_pass_through_the_chat_adapter() -> None:
    """Gemini's OpenAI-compatible endpoint keeps ``extra_content`` on tool calls: loading
    and dumping a chat history never touches it, even for a changed message."""
    signature = {"google": {"thought_signature": "CtwBAdHtim9+" * 20}}
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        "extra_content": signature,
    }
    record = {
        "model": "gemini-3-pro-preview",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18 °C"},
        ],
    }
    snapshot = copy.deepcopy(record)
    conversation = load(record)
    dumped = conversation.dump()
    assert dumped == snapshot
    assert dumped["messages"][1]["tool_calls"][0] is call
    edited = [*conversation.messages, {"role": "assistant", "content": "18 °C."}]
    assert conversation.dump(edited)["messages"][1]["tool_calls"][0]["extra_content"] is signature
    assert validate(conversation) == []
    assert record == snapshot
