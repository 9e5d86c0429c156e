"""The proxy's pure parts: routing, windows, config, codings, headers, memory, shapes."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from condense.cli import main
from condense.exceptions import InputError
from condense.formats import Conversation
from condense.server.apis import api_for_path, error_body
from condense.server.codec import BodyDecodingError, decode
from condense.server.config import ProxySettings, Upstream, load_config
from condense.server.memory import ConversationMemory, Entry, conversation_key
from condense.server.routing import choose_provider
from condense.server.upstream import request_headers, response_headers, target_url
from condense.server.windows import LearnedWindows


@pytest.mark.parametrize(
    ("path", "model", "upstream", "expected"),
    [
        ("/v1/messages", "anything", "http://x", "anthropic"),
        ("/gw/v1/messages/count_tokens", None, "http://x", "anthropic"),
        ("/v1/responses", "gpt-5", "http://x", "responses"),
        ("/v1/chat/completions", "claude-opus-4-1", "http://x", "anthropic"),
        ("/v1/chat/completions", "openrouter/anthropic/claude-3.7", "http://x", "anthropic"),
        ("/v1/chat/completions", "gemini-2.5-pro", "http://x", "gemini-openai"),
        ("/v1/chat/completions", "codestral-latest", "http://x", "mistral"),
        ("/v1/chat/completions", "x", "https://api.mistral.ai", "mistral"),
        (
            "/v1beta/openai/chat/completions",
            "x",
            "https://generativelanguage.googleapis.com",
            "gemini-openai",
        ),
        ("/v1/chat/completions", "deepseek-reasoner", "https://api.deepseek.com", "deepseek"),
        ("/v1/chat/completions", None, "http://127.0.0.1:8000", "local"),
        ("/v1/chat/completions", "some-model", "https://gateway.example", "openai"),
    ],
)
def test_choose_provider_follows_path_model_and_host(
    path: str, model: str | None, upstream: str, expected: str
) -> None:
    assert choose_provider(path, model, upstream, "auto") == expected


def test_configured_provider_wins() -> None:
    assert choose_provider("/v1/messages", "claude-x", "http://x", "Strict") == "strict"


def test_learned_windows_are_per_upstream_and_model_and_bounded() -> None:
    learned = LearnedWindows(maxsize=2)
    learned.learn("http://a", "m1", window=1000, ratio=0.5)
    learned.learn("http://b", "m1", window=2000, ratio=1.3)
    assert learned.get("http://a", "m1") is not None
    assert learned.get("http://a", "m1").ratio == 1.0  # never below one
    assert learned.get("http://b", "m1").window == 2000
    learned.learn("http://c", "m1", window=3000)
    assert learned.get("http://a", "m1") is None  # the oldest went first


def test_api_paths_and_error_shapes() -> None:
    assert api_for_path("/v1/chat/completions?x=1").name == "chat"
    assert api_for_path("/gw/v1/messages/").name == "anthropic"
    assert api_for_path("/v1/messages/count_tokens").name == "count_tokens"
    assert api_for_path("/v1/responses").name == "responses"
    assert api_for_path("/v1/models") is None
    anthropic = error_body(api_for_path("/v1/messages"), 400, "bad")
    assert anthropic["type"] == "error"
    assert anthropic["error"] == {"type": "invalid_request_error", "message": "bad"}
    openai = error_body(api_for_path("/v1/responses"), 502, "down")
    assert openai["error"]["message"] == "down"
    assert set(openai["error"]) == {"message", "type", "param", "code"}


@given(st.binary(max_size=4096))
def test_every_supported_coding_round_trips(data: bytes) -> None:
    assert decode(gzip.compress(data), "gzip") == data
    assert decode(zlib.compress(data), "deflate") == data
    assert decode(zstandard.ZstdCompressor().compress(data), "zstd") == data
    assert decode(gzip.compress(zlib.compress(data)), "deflate, gzip") == data
    assert decode(data, None) == data
    assert decode(data, "identity") == data


def test_bad_codings_are_reported() -> None:
    with pytest.raises(BodyDecodingError, match="unsupported"):
        decode(b"x", "snappy")
    with pytest.raises(BodyDecodingError, match="gzip"):
        decode(b"not gzip", "gzip")
    with pytest.raises(BodyDecodingError, match="cut off"):
        decode(gzip.compress(b"x" * 1000)[:-12], "gzip")


_HEADER = st.tuples(
    st.sampled_from(
        [
            "authorization",
            "x-api-key",
            "anthropic-version",
            "anthropic-beta",
            "openai-organization",
            "x-stainless-lang",
            "user-agent",
            "x-custom",
            "connection",
            "keep-alive",
            "transfer-encoding",
            "te",
            "upgrade",
            "host",
            "content-length",
            "content-encoding",
            "x-named-by-connection",
        ]
    ),
    st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=20),
)


@given(st.lists(_HEADER, max_size=12), st.booleans())
def test_end_to_end_headers_pass_hop_by_hop_do_not(
    headers: list[tuple[str, str]], changed: bool
) -> None:
    headers = [*headers, ("Connection", "x-named-by-connection")]
    sent = request_headers(headers, body_changed=changed)
    hop = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "host"}
    hop |= {"content-length", "x-named-by-connection"}
    expected = [
        (n, v)
        for n, v in headers
        if n.lower() not in hop and not (changed and n == "content-encoding")
    ]
    assert sent == expected
    back = response_headers(headers, {"x-condense-repaired": "1"})
    assert ("x-condense-repaired", "1") in back
    assert all(n.lower() not in {"connection", "keep-alive", "transfer-encoding"} for n, _ in back)
    assert all(pair in back for pair in headers if pair[0] in ("content-length", "x-custom"))


def test_target_url_keeps_prefix_and_query() -> None:
    upstream = Upstream(url="http://host:9/gw/")
    assert (
        target_url(upstream, "/v1/messages", b"beta=true")
        == "http://host:9/gw/v1/messages?beta=true"
    )
    assert target_url(upstream, "/v1/models", b"") == "http://host:9/gw/v1/models"


def test_routing_by_path_and_model(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(
        'port = 9000\nlog = "x.jsonl"\n'
        '[[upstream]]\nurl = "http://a"\npaths = ["/v1/messages*"]\n'
        '[[upstream]]\nurl = "http://b/prefix"\nmodels = ["qwen*"]\nprovider = "openai"\n'
        "context_window = 32768\n",
        encoding="utf-8",
    )
    loaded = load_config(str(path))
    settings = ProxySettings(**loaded, host="127.0.0.1")
    assert settings.port == 9000 and settings.log_path == "x.jsonl"
    assert settings.route("/v1/messages", "claude").url == "http://a"
    assert settings.route("/v1/chat/completions", "Qwen3-Coder").url == "http://b/prefix"
    assert settings.route("/v1/models", None).url == "http://b/prefix"  # its paths: any
    assert settings.upstreams[1].context_window == 32768


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{", "not valid JSON"),
        ('{"upstream": [{"url": "ftp://x"}]}', "upstream 1: upstream URL"),
        ('{"upstream": [{"url": "http://x", "provider": "nope"}]}', "unknown provider"),
        ('{"upstream": [{"url": "http://x", "colour": 1}]}', "unknown key"),
        ('{"upstream": [{}]}', "'url' is required"),
        ('{"port": "80"}', "'port' must be a int"),
        ('{"speed": 1}', "unknown setting"),
    ],
)
def test_bad_config_files_name_the_problem(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "proxy.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=error):
        load_config(str(path))


def test_no_upstream_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no upstream"):
        ProxySettings(upstreams=())


def _entry(source: list[dict[str, str]], size: int = 10) -> Entry:
    sent = Conversation(messages=source[:1], format="openai")
    return Entry(source=tuple(source), sent=sent, state=None, budget=9, size=size)


def test_memory_recalls_only_a_prefix_and_stays_bounded() -> None:
    memory = ConversationMemory(maxsize=2, maxbytes=25)
    history = [{"role": "user", "content": f"m{i}"} for i in range(4)]
    key = conversation_key("http://a", "openai", history)
    assert key == conversation_key("http://a", "openai", json.loads(json.dumps(history)))
    assert key != conversation_key("http://b", "openai", history)
    memory.remember(key, _entry(history[:3]))
    assert memory.recall(key, json.loads(json.dumps(history))) is not None  # equal by value
    assert memory.recall(key, history[:2]) is None  # shorter than what is remembered
    changed = [*history[:1], {"role": "user", "content": "edited"}, *history[2:]]
    assert memory.recall(key, changed) is None
    memory.remember("b", _entry(history))
    memory.remember("c", _entry(history))
    assert len(memory) == 2  # by count
    memory.remember("d", _entry(history, size=20))
    assert len(memory) == 1  # by bytes


def test_print_env_for_each_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["proxy", "--print-env", "claude", "--port", "9999"]) == 0
    assert capsys.readouterr().out.strip() == "export ANTHROPIC_BASE_URL=http://127.0.0.1:9999"
    assert main(["proxy", "--print-env", "codex"]) == 0
    codex = capsys.readouterr().out
    assert 'base_url = "http://127.0.0.1:8787/v1"' in codex
    assert "supports_websockets = false" in codex and 'wire_api = "responses"' in codex
    assert main(["proxy", "--print-env", "openai", "--host", "127.0.0.2"]) == 0
    assert capsys.readouterr().out.strip() == "export OPENAI_BASE_URL=http://127.0.0.2:8787/v1"
    assert main(["proxy", "--print-env", "hermes"]) == 0
    assert "OPENAI_BASE_URL=http://127.0.0.1:8787/v1" in capsys.readouterr().out


def test_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["proxy"]) == 2
    assert "no upstream" in capsys.readouterr().err
    assert main(["proxy", "--upstream", "localhost:8000"]) == 2
    assert "must be http(s)://" in capsys.readouterr().err
    assert main(["proxy", "--upstream", "http://x", "--provider", "nope"]) == 2
    assert "unknown provider 'nope'" in capsys.readouterr().err
    assert main(["proxy", "--upstream", "http://x", "--context-window", "0"]) == 2
    assert "--context-window" in capsys.readouterr().err
    missing = tmp_path / "absent.toml"
    assert main(["proxy", "--config", str(missing)]) == 2
    assert "cannot read the config file" in capsys.readouterr().err


_THINKING = {"type": "thinking", "thinking": "plan", "signature": "sig=="}


def test_replay_guard_tells_moves_from_edits() -> None:
    from condense.server.replay import compression_keeps_replay, repair_keeps_replay

    turn = {"role": "assistant", "content": "x", "thinking_blocks": [_THINKING]}
    old = {"role": "assistant", "content": "y", "reasoning_content": "because"}
    ask = {"role": "user", "content": "hi"}
    history = [ask, old, ask, turn]
    assert repair_keeps_replay(history, [ask, ask, old, turn])  # moved, not changed
    stripped = {k: v for k, v in turn.items() if k != "thinking_blocks"}
    assert not repair_keeps_replay(history, [ask, old, ask, stripped])
    edited = {**turn, "thinking_blocks": [{**_THINKING, "thinking": "other"}]}
    assert not repair_keeps_replay(history, [ask, old, ask, edited])
    assert compression_keeps_replay(history, [ask, turn])  # an earlier turn left out whole
    assert not compression_keeps_replay(history, [ask, old, ask, stripped])  # the latest turn
    assert not compression_keeps_replay(history, [ask, edited])
    signed = {"role": "assistant", "tool_calls": [{"id": "c", "extra_content": {"g": 1}}]}
    assert not repair_keeps_replay([signed], [{"role": "assistant", "tool_calls": [{"id": "c"}]}])
