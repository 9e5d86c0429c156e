"""Whole sessions through the real ``condense proxy`` (issue 17): 40+ model calls of one
agent session, on every API, streaming and not, against a provider whose window is far
below the session and which counts prompts its own way (``ProviderCount``: another
vocabulary, 4 tokens per message, the tools and instructions). Judged by the provider:
every call answered 200, none refused for size, at most two upstream requests per call,
and the call's latest ask arrives verbatim. The window is four times smaller than the
session but holds its largest current turn, which condense never reduces.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from condense.testing import ProviderCount, StrictProvider
from condense.testing.sessions import model_calls, turn_session
from condense.tokens import count_tokens
from condense.turns import turn_start
from proxy_sessions import Client, carries, latest_ask
from proxy_support import running_proxy

WINDOW = 8_000
MODELS = {"chat": "gpt-4o", "responses": "gpt-5-codex", "anthropic": "claude-opus-4-6"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_a_whole_session_fits_the_providers_window_on_every_call(
    tmp_path: Path, api: str, stream: bool
) -> None:
    session = turn_session(14, seed=21)
    calls = list(model_calls(session))
    assert len(calls) >= 30
    assert count_tokens(calls[-1]) > 3.5 * WINDOW
    assert max(count_tokens(h[turn_start(h) - 1 :]) for h in calls) < 0.75 * WINDOW
    count = ProviderCount()
    with StrictProvider("openai", context_window=WINDOW, token_counter=count) as fake:
        root = fake.base_url.removesuffix("/v1")
        with running_proxy(["--upstream", root, "--context-window", str(WINDOW)], tmp_path) as p:
            client = Client(p.url, api, stream=stream, model=MODELS[api])
            turns = [(history, client.send(history, fake)) for history in calls]
            client.close()
            log = p.wait_for_log(len(calls))
    for number, (history, turn) in enumerate(turns):
        where = f"call {number} ({len(history)} messages)"
        assert turn.status == 200, where
        assert 1 <= len(turn.upstream) <= 2, where
        accepted = turn.upstream[-1]
        assert count.count(api, accepted) <= WINDOW, where
        assert carries(accepted, latest_ask(history)), f"{where}: the latest ask was lost"
    assert [r for r in fake.refusals if r.code in ("context_overflow", "output_limit")] == []
    assert sum(len(turn.upstream) for _, turn in turns) <= len(calls) + 2
    compressed = [record for record in log if record["compressed"]]
    assert len(compressed) >= len(calls) // 2
    assert all(record["tokens_after"] < record["tokens_before"] for record in compressed)
    assert all(record["provider_tokens"] is not None for record in log)


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_a_session_teaches_the_proxy_a_window_it_was_not_told(tmp_path: Path, api: str) -> None:
    """A model the proxy knows no window for, and no ``--context-window``: the first
    refusal for size teaches it (its figures, or — Responses states none — that the window
    is below the refused request); that call's retry and every later call fit."""
    session = turn_session(14, seed=22)
    calls = list(model_calls(session))
    count = ProviderCount()
    with StrictProvider("openai", context_window=WINDOW, token_counter=count) as fake:
        root = fake.base_url.removesuffix("/v1")
        with running_proxy(["--upstream", root], tmp_path) as p:
            client = Client(p.url, api, stream=False, model="house-model-7b")
            turns = [(history, client.send(history, fake)) for history in calls]
            client.close()
    for number, (history, turn) in enumerate(turns):
        assert turn.status == 200, f"call {number}"
        assert 1 <= len(turn.upstream) <= 2, f"call {number}"
        assert count.count(api, turn.upstream[-1]) <= WINDOW
        assert carries(turn.upstream[-1], latest_ask(history))
    retried = [number for number, (_, turn) in enumerate(turns) if len(turn.upstream) == 2]
    assert 1 <= len(retried) <= 2, retried
    assert len(fake.refusals) == len(retried)
