"""condense.tokens: offline vocabularies, model → encoding, exact counts, estimate, bound."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import hashlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st

import condense.tokens
from condense.exceptions import CondenseRuntimeError, InputError, UnknownNameError
from condense.tokens import (
    DEFAULT_ENCODING,
    ENCODINGS,
    TokenCounter,
    count_message,
    count_text,
    count_tokens,
    encoding_for_model,
    estimate_message,
    estimate_text,
    estimate_tokens,
    get_encoding,
    upper_bound_message,
    upper_bound_text,
    upper_bound_tokens,
)
from condense.tokens import encodings as encodings_module
from condense.tokens.media import billing
from condense.tokens.pieces import (
    LOW_DETAIL_IMAGE_TOKENS,
    MEDIA_PART_TOKENS,
    REPLY_PRIMING_TOKENS,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
    TOKENS_PER_TOOL_CALL,
)
from profiles import examples

# The digests tiktoken pins in tiktoken_ext/openai_public.py, written out independently.
PINNED_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
URLS = {
    "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken": "o200k_base",
    "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken": "cl100k_base",
}


def shipped_vocabulary(name: str) -> bytes:
    gz = (resources.files("condense.tokens") / "data" / f"{name}.tiktoken.gz").read_bytes()
    return gzip.decompress(gz)


# ---------------------------------------------------------------------------------------
# Public API and import-time behaviour
# ---------------------------------------------------------------------------------------


def test_public_api_is_curated_and_sorted() -> None:
    def isort_style(name: str) -> tuple[int, str]:  # ruff RUF022: CONSTANTS, Classes, rest
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert condense.tokens.__all__ == sorted(condense.tokens.__all__, key=isort_style)
    assert set(condense.tokens.__all__) == {
        "DEFAULT_ENCODING",
        "DEFAULT_MEDIA",
        "ENCODINGS",
        "MEDIA_POLICIES",
        "CacheInfo",
        "Media",
        "Room",
        "TokenCounter",
        "count_message",
        "count_text",
        "context_window",
        "count_tokens",
        "encoding_for_model",
        "estimate_message",
        "estimate_text",
        "estimate_tokens",
        "get_encoding",
        "parts_tokens",
        "plan_room",
        "quick_estimate",
        "request_parts",
        "tokenizer_for_model",
        "upper_bound_message",
        "upper_bound_text",
        "upper_bound_tokens",
    }
    for name in condense.tokens.__all__:
        assert hasattr(condense.tokens, name)
    assert DEFAULT_ENCODING == "o200k_base"
    assert ENCODINGS == ("o200k_base", "cl100k_base")


def test_import_loads_no_vocabulary() -> None:
    code = (
        "import sys, condense.tokens\n"
        "from condense.tokens import encodings\n"
        "assert encodings._loaded == {}, encodings._loaded\n"
        "assert 'tiktoken_ext.openai_public' not in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------------------------------
# Shipped vocabularies: digests, tampering, agreement with tiktoken itself
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
def test_shipped_vocabulary_matches_pinned_digest(name: str) -> None:
    assert hashlib.sha256(shipped_vocabulary(name)).hexdigest() == PINNED_SHA256[name]
    assert encodings_module._SPECS[name].sha256 == PINNED_SHA256[name]


@pytest.mark.parametrize("name", ENCODINGS)
def test_tampered_vocabulary_is_refused(name: str) -> None:
    raw = bytearray(shipped_vocabulary(name))
    raw[1000] ^= 0x01
    with pytest.raises(CondenseRuntimeError, match=f"{name} vocabulary .* is damaged"):
        encodings_module.load_encoding(name, data=gzip.compress(bytes(raw)))


def test_truncated_vocabulary_is_refused() -> None:
    raw = shipped_vocabulary("cl100k_base")
    with pytest.raises(CondenseRuntimeError, match="damaged"):
        encodings_module.load_encoding("cl100k_base", data=gzip.compress(raw[:-100]))


def test_vocabulary_that_is_not_gzip_is_refused() -> None:
    with pytest.raises(CondenseRuntimeError, match="not valid gzip"):
        encodings_module.load_encoding("o200k_base", data=b"not a gzip stream")


def test_missing_vocabulary_file_is_refused() -> None:
    spec = dataclasses.replace(encodings_module._SPECS["o200k_base"], resource="gone.gz")
    with pytest.raises(CondenseRuntimeError, match="missing"):
        encodings_module._read_resource(spec)


@pytest.mark.parametrize("name", ENCODINGS)
def test_specs_match_tiktoken_openai_public(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, str | None] = {}

    def no_download(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["hash"] = expected_hash
        return {b"!": 0}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", no_download)
    reference = getattr(openai_public, name)()
    spec = encodings_module._SPECS[name]
    assert spec.pat_str == reference["pat_str"]
    assert spec.special_tokens == reference["special_tokens"]
    assert spec.sha256 == seen["hash"]


@pytest.fixture(scope="module")
def vocab_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("vocab")
    paths = {}
    for name in ENCODINGS:
        paths[name] = folder / f"{name}.tiktoken"
        paths[name].write_bytes(shipped_vocabulary(name))
    return paths


@pytest.fixture(scope="module")
def tiktoken_reference(vocab_files: dict[str, Path]) -> Iterator[dict[str, tiktoken.Encoding]]:
    """tiktoken's own Encoding objects, built by its own loader from local copies."""
    real_loader = tiktoken.load.load_tiktoken_bpe

    def local(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return real_loader(str(vocab_files[URLS[url]]), expected_hash)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken: "" disables its cache
        patch.setattr(openai_public, "load_tiktoken_bpe", local)
        yield {name: tiktoken.Encoding(**getattr(openai_public, name)()) for name in ENCODINGS}


@pytest.mark.parametrize("name", ENCODINGS)
def test_ranks_match_tiktoken_loader(
    name: str, tiktoken_reference: dict[str, tiktoken.Encoding]
) -> None:
    ours = get_encoding(name)
    assert ours._mergeable_ranks == tiktoken_reference[name]._mergeable_ranks
    assert ours.n_vocab == tiktoken_reference[name].n_vocab


@given(text=st.text(max_size=300))
@settings(max_examples=examples(150), deadline=None)
def test_encoding_agrees_with_tiktoken(
    tiktoken_reference: dict[str, tiktoken.Encoding], text: str
) -> None:
    for name in ENCODINGS:
        ours = get_encoding(name)
        tokens = ours.encode_ordinary(text)
        assert tokens == tiktoken_reference[name].encode_ordinary(text)
        assert ours.decode(tokens) == text


KNOWN_IDS = [
    # The examples and tiktoken's own published test vectors.
    ("o200k_base", "hello world", [24912, 2375]),
    ("o200k_base", "お誕生日おめでとう", [8930, 9697, 243, 128225, 8930, 17693, 4344, 48669]),
    ("cl100k_base", "hello world", [15339, 1917]),
    ("cl100k_base", "rer", [38149]),
    ("cl100k_base", "'rer", [2351, 81]),
    ("cl100k_base", "today\n \n", [31213, 27907]),
    ("cl100k_base", "today\n  \n", [31213, 14211]),
    ("cl100k_base", " \x850", [220, 126, 227, 15]),
    ("cl100k_base", "👍", [9468, 239, 235]),
    ("cl100k_base", "\ud83d\udc4d", [9468, 239, 235]),
]


@pytest.mark.parametrize(("name", "text", "ids"), KNOWN_IDS)
def test_known_token_ids(name: str, text: str, ids: list[int]) -> None:
    encoding = get_encoding(name)
    assert encoding.encode(text) == ids
    assert count_text(text, encoding=name) == len(ids)


def test_special_tokens_are_registered_but_counted_as_text() -> None:
    cl100k = get_encoding("cl100k_base")
    assert cl100k.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]
    assert count_text("<|endoftext|>", encoding="cl100k_base") > 1
    assert get_encoding("o200k_base").n_vocab == 200019
    assert cl100k.n_vocab == 100277


def test_get_encoding_is_cached() -> None:
    assert get_encoding("o200k_base") is get_encoding("o200k_base")
    assert get_encoding("o200k_base").name == "o200k_base"


def test_get_encoding_loads_once_under_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    gate = threading.Barrier(8)

    def slow_load(name: str) -> object:
        calls.append(name)
        threading.Event().wait(0.05)
        return object()

    monkeypatch.setattr(encodings_module, "_loaded", {})
    monkeypatch.setattr(encodings_module, "load_encoding", slow_load)
    results: list[object] = []

    def worker() -> None:
        gate.wait()
        results.append(encodings_module.get_encoding("cl100k_base"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == ["cl100k_base"]
    assert len({id(result) for result in results}) == 1


def test_loading_needs_no_network_and_writes_no_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network or tiktoken download used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken.registry, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(cache))
    monkeypatch.setattr(encodings_module, "_loaded", {})
    for name in ENCODINGS:
        encoding = encodings_module.get_encoding(name)
        assert len(encoding.encode_ordinary("offline works")) > 0
    assert not cache.exists()


@pytest.mark.parametrize("bad", ["p50k_base", "gpt2", "", "O200K_BASE"])
def test_unknown_encoding_names_the_known_ones(bad: str) -> None:
    with pytest.raises(UnknownNameError) as info:
        get_encoding(bad)
    assert info.value.kind == "encoding"
    assert info.value.known == ENCODINGS
    assert "o200k_base" in str(info.value)
    for call in (
        lambda: count_tokens([], encoding=bad),
        lambda: count_text("x", encoding=bad),
        lambda: TokenCounter(encoding=bad),
        lambda: estimate_text("x", encoding=bad),
        lambda: estimate_tokens([], encoding=bad),
    ):
        with pytest.raises(UnknownNameError):
            call()


# ---------------------------------------------------------------------------------------
# Model → encoding
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4o-2024-08-06", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-4.5-preview", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5-mini", "o200k_base"),
        ("gpt-5.1", "o200k_base"),
        ("o1", "o200k_base"),
        ("o1-preview", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-oss-120b", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("azure/gpt-4o", "o200k_base"),
        ("openrouter/openai/gpt-4.1", "o200k_base"),
        ("  GPT-4O  ", "o200k_base"),
        ("ft:gpt-4o-mini-2024-07-18:org::abc", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-4-32k", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-16k", "cl100k_base"),
        ("azure/gpt-35-turbo", "cl100k_base"),
        ("openai/gpt-4", "cl100k_base"),
        ("ft:gpt-3.5-turbo-0613:org::id", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("text-embedding-ada-002", "cl100k_base"),
        ("claude-3-5-sonnet-20241022", "o200k_base"),
        ("anthropic/claude-sonnet-4", "o200k_base"),
        ("meta-llama/Llama-3.1-70B-Instruct", "o200k_base"),
        ("qwen2.5-coder", "o200k_base"),
        ("mistral-large", "o200k_base"),
        ("gemini-2.0-flash", "o200k_base"),
        ("gpt-4-but-not-really-x", "cl100k_base"),
        ("gpt-40", "o200k_base"),
        ("o10-preview", "o200k_base"),
        ("", "o200k_base"),
        (None, "o200k_base"),
    ],
)
def test_encoding_for_model(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


# ---------------------------------------------------------------------------------------
# Counting messages
# ---------------------------------------------------------------------------------------

# OpenAI cookbook, "How to count tokens with tiktoken", section 6: the API reported 129
# prompt tokens for gpt-4 / gpt-3.5-turbo and 124 for gpt-4o / gpt-4o-mini.
COOKBOOK_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates "
        "corporate jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on "
        "opportunities for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the "
        "client deliverable.",
    },
]


@pytest.mark.parametrize(
    ("model", "expected"),
    [("gpt-4", 129), ("gpt-3.5-turbo", 129), ("gpt-4o", 124), ("gpt-4o-mini", 124)],
)
def test_count_tokens_matches_openai_api_counts(model: str, expected: int) -> None:
    assert count_tokens(COOKBOOK_MESSAGES, model=model) == expected


def test_explicit_encoding_wins_over_model() -> None:
    assert count_tokens(COOKBOOK_MESSAGES, model="gpt-4o", encoding="cl100k_base") == 129


def test_message_counting_rules() -> None:
    enc = "o200k_base"

    def n(text: str) -> int:
        return count_text(text, encoding=enc)

    assert count_message({"role": "user", "content": "hello world"}) == 3 + n("user") + 2
    named = {"role": "user", "name": "bob", "content": "hi"}
    assert count_message(named) == TOKENS_PER_MESSAGE + n("user") + n("hi") + n("bob") + 1
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "cat", "arguments": '{"a":1}'}},
        ],
    }
    assert count_message(call) == (
        TOKENS_PER_MESSAGE
        + n("assistant")
        + 2 * TOKENS_PER_TOOL_CALL
        + n("ls")
        + n("{}")
        + n("cat")
        + n('{"a":1}')
    )
    result = {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}
    assert count_message(result) == 3 + n("tool") + n("c1") + n("a.txt")
    parts = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            {"type": "image_url", "image_url": {"url": "https://x/z.png", "detail": "low"}},
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
        ],
    }
    remote_image = billing("openai").remote_image  # no header to read: the most it can cost
    assert count_message(parts) == (
        3 + n("user") + n("look") + remote_image + MEDIA_PART_TOKENS + LOW_DETAIL_IMAGE_TOKENS
    )
    legacy = {"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}
    assert count_message(legacy) == 3 + n("assistant") + TOKENS_PER_TOOL_CALL + n("f") + n("{}")
    flattened = {"role": "assistant", "tool_calls": [{"name": "f", "arguments": "{}"}]}
    assert count_message(flattened) == count_message(legacy)
    labels = {"role": "user", "content": "hi", "id": "msg_123", "cache_control": {"a": "b"}}
    assert count_message(labels) == count_message({"role": "user", "content": "hi"})
    extra = {"role": "user", "content": "hi", "id": "msg_123", "timestamp": 5}  # sent: counted
    assert count_message(extra) == count_message({"role": "user", "content": "hi"}) + n("5")
    assert TOKENS_PER_NAME == 1


def test_count_tokens_is_sum_of_messages_plus_priming() -> None:
    for encoding in ENCODINGS:
        total = sum(count_message(m, encoding=encoding) for m in COOKBOOK_MESSAGES)
        assert count_tokens(COOKBOOK_MESSAGES, encoding=encoding) == total + REPLY_PRIMING_TOKENS
    assert count_tokens([]) == REPLY_PRIMING_TOKENS
    assert count_tokens(iter(COOKBOOK_MESSAGES), model="gpt-4") == 129
    assert count_tokens(tuple(COOKBOOK_MESSAGES), model="gpt-4") == 129


@pytest.mark.parametrize("bad", [None, 42, "hello", b"x", {"role": "user", "content": "x"}])
def test_messages_must_be_a_list(bad: object) -> None:
    for call in (count_tokens, estimate_tokens, upper_bound_tokens):
        with pytest.raises(InputError, match="list of message dicts"):
            call(bad)
    with pytest.raises(InputError):
        TokenCounter().messages(bad)


# ---------------------------------------------------------------------------------------
# The per-message cache
# ---------------------------------------------------------------------------------------


def fresh_count(message: Any, encoding: str = DEFAULT_ENCODING) -> int:
    return TokenCounter(encoding=encoding, maxsize=0).message(message)


def test_cache_follows_in_place_mutation() -> None:
    counter = TokenCounter(encoding="o200k_base")
    message: dict[str, Any] = {"role": "user", "content": "short"}
    first = counter.message(message)
    message["content"] = "a much longer message than before, with many more tokens in it"
    assert counter.message(message) == fresh_count(message) > first
    message["name"] = "alice"
    assert counter.message(message) == fresh_count(message)

    parts: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "one"}]}
    before = counter.message(parts)
    parts["content"][0]["text"] = "one two three four five six"
    parts["content"].append({"type": "image_url", "image_url": {"url": "u"}})
    remote_image = billing("openai").remote_image
    assert counter.message(parts) == fresh_count(parts) == before + 5 + remote_image

    call: dict[str, Any] = {
        "role": "assistant",
        "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{}"}}],
    }
    before = counter.message(call)
    call["tool_calls"][0]["function"]["arguments"] = '{"path": "/etc/hosts", "lines": 10}'
    assert counter.message(call) == fresh_count(call) > before


def test_recount_of_grown_session_only_counts_new_messages() -> None:
    counter = TokenCounter(encoding="cl100k_base")
    session = [dict(m) for m in COOKBOOK_MESSAGES]
    assert counter.messages(session) == 129
    assert counter.cache_info().misses == len(session)
    session.append({"role": "assistant", "content": "Understood."})
    grown = counter.messages(session)
    info = counter.cache_info()
    assert info.misses == len(COOKBOOK_MESSAGES) + 1
    assert info.hits == len(COOKBOOK_MESSAGES)
    assert grown == 129 + fresh_count(session[-1], "cl100k_base")
    # Equal copies (new dicts, same text) hit the cache too.
    assert counter.messages(copy.deepcopy(session)) == grown
    assert counter.cache_info().misses == info.misses


def test_cache_is_bounded_lru() -> None:
    counter = TokenCounter(maxsize=2)
    a, b, c = ({"role": "user", "content": text} for text in ("a", "b b", "c c c"))
    counter.message(a)
    counter.message(b)
    counter.message(a)  # a is now the most recently used
    counter.message(c)  # evicts b
    assert counter.cache_info().size == 2
    misses = counter.cache_info().misses
    counter.message(a)
    assert counter.cache_info().misses == misses
    counter.message(b)
    assert counter.cache_info().misses == misses + 1
    counter.clear()
    assert counter.cache_info() == dataclasses.replace(counter.cache_info(), hits=0, misses=0)
    assert counter.cache_info().size == 0


def test_cache_can_be_disabled() -> None:
    counter = TokenCounter(maxsize=0)
    assert counter.messages(COOKBOOK_MESSAGES) == 124
    assert counter.cache_info().size == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_cache_size_must_be_a_natural_number(bad: Any) -> None:
    with pytest.raises(InputError, match="maxsize"):
        TokenCounter(maxsize=bad)


def test_counter_is_thread_safe() -> None:
    messages = [{"role": "user", "content": f"message number {i} " * (i % 7)} for i in range(300)]
    expected = TokenCounter(maxsize=0).messages(messages)
    counter = TokenCounter(maxsize=50)
    results: list[int] = []
    gate = threading.Barrier(6)

    def worker() -> None:
        gate.wait()
        for _ in range(5):
            results.append(counter.messages(messages))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 30


# ---------------------------------------------------------------------------------------
# Untrusted message shapes
# ---------------------------------------------------------------------------------------


class FrozenMessage(Mapping[str, Any]):
    def __init__(self, **fields: Any) -> None:
        self._fields = fields

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


def odd_messages() -> list[Any]:
    circular: dict[str, Any] = {"role": "user"}
    circular["content"] = circular
    return [
        None,
        42,
        "just a string",
        ["a", "list"],
        {},
        {"content": None},
        {"role": None, "content": ""},
        {"role": 5, "content": {"unexpected": "dict"}},
        {"role": "user", "content": 3.5},
        {"role": "user", "content": b"bytes"},
        {"role": "user", "content": [None, 3, "raw string part", {"type": "text", "text": None}]},
        {"role": "user", "content": [{"type": "weird", "payload": [1, 2]}, {"type": "image"}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": "not a dict"}]},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
        {"role": "assistant", "tool_calls": "garbage"},
        {"role": "assistant", "tool_calls": [None, 1, {"function": None}, {"no": "function"}]},
        {"role": "assistant", "tool_calls": [{"function": {"name": 1, "arguments": {"a": [1]}}}]},
        {"role": "assistant", "function_call": "not a dict"},
        {"role": "tool", "tool_call_id": None, "content": "x"},
        {"role": "tool", "tool_call_id": 12, "content": "x", "name": ["n"]},
        {"role": "user", "content": "lone surrogate \ud800 and pair \ud83d\udc4d"},
        {"role": "user", "content": "<|endoftext|><|endofprompt|> special tokens as text"},
        {"role": "user", "content": Unprintable()},
        {("tuple", "key"): 1, "role": "user", "content": "x"},
        FrozenMessage(role="user", content="from a custom Mapping", name="m"),
        circular,
    ]


def snapshot(value: Any) -> str | None:
    try:
        return repr(value)
    except RuntimeError:  # Unprintable
        return None


def test_odd_shapes_never_raise_and_are_never_mutated() -> None:
    for message in odd_messages():
        before = snapshot(message)
        counts = [
            count_message(message),
            count_message(message, encoding="cl100k_base"),
            estimate_message(message),
            estimate_message(message, encoding="cl100k_base"),
        ]
        bound = upper_bound_message(message)
        assert all(isinstance(n, int) and n >= TOKENS_PER_MESSAGE for n in counts), message
        assert bound >= max(counts[:2]), message
        assert snapshot(message) == before
    total = count_tokens(odd_messages())
    assert total == sum(count_message(m) for m in odd_messages()) + REPLY_PRIMING_TOKENS


def test_custom_mapping_counts_like_a_dict() -> None:
    frozen = FrozenMessage(role="user", content="same text", name="n")
    assert count_message(frozen) == count_message(
        {"role": "user", "content": "same text", "name": "n"}
    )


# ---------------------------------------------------------------------------------------
# Properties: the upper bound holds, counting never mutates, totals add up
# ---------------------------------------------------------------------------------------

any_text = st.text(st.characters(exclude_categories=()), max_size=60)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=8,
)
parts = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": any_text}),
    st.fixed_dictionaries(
        {
            "type": st.just("image_url"),
            "image_url": st.fixed_dictionaries(
                {"url": any_text}, optional={"detail": st.sampled_from(["low", "high"])}
            ),
        }
    ),
    json_values,
)
tool_calls = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "id": any_text,
                "type": st.just("function"),
                "function": st.fixed_dictionaries(
                    {"name": any_text, "arguments": any_text | json_values}
                ),
            }
        ),
        json_values,
    ),
    max_size=3,
)
messages = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant", "tool"]) | json_values},
        optional={
            "content": any_text | st.none() | st.lists(parts, max_size=4) | json_values,
            "name": any_text | json_values,
            "tool_call_id": any_text | json_values,
            "refusal": any_text | st.none(),
            "tool_calls": tool_calls | json_values,
            "function_call": json_values,
            "extra": json_values,
        },
    ),
    json_values,
)


@given(message=messages)
@settings(max_examples=examples(300), deadline=None)
def test_upper_bound_is_never_below_the_exact_count(message: Any) -> None:
    snapshot = copy.deepcopy(message)
    bound = upper_bound_message(message)
    for encoding in ENCODINGS:
        assert bound >= count_message(message, encoding=encoding)
        assert bound >= fresh_count(message, encoding)
    assert message == snapshot


@given(text=st.text(st.characters(exclude_categories=()), max_size=400))
@settings(max_examples=examples(300), deadline=None)
def test_text_bound_and_estimate_are_sane(text: str) -> None:
    bound = upper_bound_text(text)
    for encoding in ENCODINGS:
        exact = count_text(text, encoding=encoding)
        assert exact <= bound
        guess = estimate_text(text, encoding=encoding)
        assert (guess == 0) == (text == "") == (exact == 0)


@given(session=st.lists(messages, max_size=8))
@settings(max_examples=examples(100), deadline=None)
def test_totals_add_up(session: list[Any]) -> None:
    for encoding in ENCODINGS:
        total = count_tokens(session, encoding=encoding)
        assert total == sum(count_message(m, encoding=encoding) for m in session) + 3
        assert upper_bound_tokens(session) >= total


# ---------------------------------------------------------------------------------------
# The estimate
# ---------------------------------------------------------------------------------------

SAMPLES = {
    "english": "The quick brown fox jumps over the lazy dog. " * 5
    + "Please review the attached report and let me know what you think about it.",
    "code": "def main(argv: list[str]) -> int:\n    parser = argparse.ArgumentParser()\n    "
    'parser.add_argument("--verbose", action="store_true")\n    return 0\n',
    "json": '{"reservation_id": "ZFA04Y", "user_id": "mia_li_3668", "flights": '
    '[{"origin": "JFK", "destination": "SEA", "date": "2024-05-20", "price": 1239}]}',
    "chinese": "你好，我们已经收到你的请求，并将尽快把完整的详细信息通过电子邮件发送给你。",
    "russian": "Пожалуйста, проверьте журнал ошибок и сообщите нам результаты проверки.",
}


@pytest.mark.parametrize("kind", SAMPLES)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_estimate_is_close_to_exact(kind: str, encoding: str) -> None:
    text = SAMPLES[kind]
    exact = count_text(text, encoding=encoding)
    assert abs(estimate_text(text, encoding=encoding) - exact) <= 0.3 * exact


def test_estimate_of_long_text_is_sampled_and_close() -> None:
    text = "\n".join(SAMPLES.values()) * 400  # ~250k characters, estimated from samples
    exact = count_text(text)
    assert abs(estimate_text(text) - exact) <= 0.15 * exact


def test_estimate_tokens_follows_the_model() -> None:
    gpt4 = estimate_tokens(COOKBOOK_MESSAGES, model="gpt-4")
    assert gpt4 == estimate_tokens(COOKBOOK_MESSAGES, encoding="cl100k_base")
    assert abs(gpt4 - 129) <= 13
    assert abs(estimate_tokens(COOKBOOK_MESSAGES) - 124) <= 13
    chinese = [{"role": "user", "content": SAMPLES["chinese"]}]
    assert estimate_tokens(chinese, model="gpt-4") > estimate_tokens(chinese, model="gpt-4o")


def test_empty_and_tiny_texts() -> None:
    assert estimate_text("") == count_text("") == upper_bound_text("") == 0
    assert estimate_text("a") == count_text("a") == upper_bound_text("a") == 1
    assert upper_bound_text("é") == 2


def test_a_loaded_file_is_counted_as_its_messages() -> None:
    """``count_tokens(condense.load(path))`` counts what ``compress`` would work on."""
    from condense import estimate_tokens, load

    root = Path(__file__).resolve().parents[1]
    conversation = load(root / "examples" / "session_anthropic.json")
    assert count_tokens(conversation) == count_tokens(conversation.messages) > 0
    assert estimate_tokens(conversation) == estimate_tokens(conversation.messages)
