"""The proxy's conversation memory never sends a history without the latest ask (issue 17,
point 1: "an upstream received a request that fit but did not contain the current task").

The memory reuses the compressed head of the previous turn and compresses it further
with ``compress(previous=state)``. Whatever that incremental path returns, the proxy
checks that the latest ask is in it verbatim, and otherwise compresses the client's whole
history afresh. The library's incremental path is stood in for here by one that loses
the ask (the defect the issue reports), so the check is what is tested.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

import condense.server.prepare as prepare
from condense.compress import CompressionResult, compress
from condense.server.apis import api_for_path
from condense.server.config import ProxySettings, Upstream
from condense.server.memory import ConversationMemory
from condense.server.prepare import Preparer, keeps_ask, latest_ask
from condense.server.windows import LearnedWindows
from condense.testing.sessions import model_calls, turn_session
from proxy_support import strings_in

CHAT = "/v1/chat/completions"


def _preparer() -> Preparer:
    settings = ProxySettings(upstreams=(Upstream(url="http://127.0.0.1:9", context_window=6000),))
    return Preparer(settings, ConversationMemory(), LearnedWindows())


def _body(history: list[dict[str, Any]]) -> bytes:
    return json.dumps({"model": "gpt-4o", "messages": history}).encode()


def test_a_compressed_head_that_lost_the_ask_is_not_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    def losing(messages: Any, **options: Any) -> CompressionResult:
        result = compress(messages, **options)
        if options.get("previous") is None:
            return result
        ask = latest_ask(messages)
        kept = [m for m in result.messages if m is not ask and m != ask]
        return dataclasses.replace(result, messages=kept)

    monkeypatch.setattr(prepare, "compress", losing)
    preparer = _preparer()
    api = api_for_path(CHAT)
    assert api is not None
    calls = model_calls(turn_session(14, seed=41))
    reused = afresh = 0
    for history in calls:
        prepared = preparer.prepare(api, CHAT, _body(history), coding=None, beta=None)
        sent = json.loads(prepared.body)
        ask = latest_ask(history)["content"]
        assert any(ask in text for text in strings_in(sent)), "the latest ask was lost"
        reused += prepared.reused
        if any("compressed afresh" in note for note in prepared.notes):
            assert prepared.compressed
            afresh += 1
    assert reused and afresh, "the incremental path never ran: the test tests nothing"


def test_keeps_ask_reads_text_parts_and_shared_messages() -> None:
    ask = {"role": "user", "content": [{"type": "text", "text": "Fix the bug in orders."}]}
    summary = {"role": "user", "content": "[summary of earlier turns]\n\nFix the bug in orders."}
    assert keeps_ask(ask, [summary])
    assert not keeps_ask(ask, [{"role": "assistant", "content": "Fix the bug in orders."}])
    assert keeps_ask(None, [])
    history = [ask, {"role": "assistant", "content": "ok"}, {"role": "tool", "content": "x"}]
    assert latest_ask(history) is ask
