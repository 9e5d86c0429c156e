"""The proxy fits the provider's window as the provider counts it (issue 17, point 4).

Each test runs the real ``condense proxy`` process in front of a strict fake provider
that counts prompts its own way (:class:`~condense.testing.ProviderCount`: ``cl100k_base``
and 4 tokens per message, as OpenAI's older models do, where condense counts
``o200k_base`` and 3), and judges every request by the fake's count, not condense's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from condense.testing import ProviderCount, StrictProvider
from condense.testing.sessions import turn_session
from condense.tokens import count_tokens
from proxy_sessions import Client, carries, latest_ask, many_tools
from proxy_support import RunningProxy, running_proxy

APIS = ["chat", "responses", "anthropic"]
STREAMS = [False, True]


def short_messages(pairs: int, *, last: str = "Final: how many did we check?") -> list[Any]:
    """Many short messages: where a provider's per-message framing weighs most."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for n in range(pairs):
        history.append({"role": "user", "content": f"question {n}: is item {n} in stock?"})
        history.append({"role": "assistant", "content": f"yes, item {n} is in stock."})
    history.append({"role": "user", "content": last})
    return history


@contextmanager
def scene(
    tmp_path: Path, window: int, count: ProviderCount, *, configured: bool = True
) -> Iterator[tuple[StrictProvider, RunningProxy]]:
    with StrictProvider("openai", context_window=window, token_counter=count) as fake:
        root = fake.base_url.removesuffix("/v1")
        args = ["--upstream", root] + (["--context-window", str(window)] if configured else [])
        with running_proxy(args, tmp_path) as proxy:
            yield fake, proxy


def _fake_count(fake: StrictProvider, api: str, body: dict[str, Any]) -> int:
    return fake._count(api, body)


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("api", APIS)
def test_a_provider_counting_4_per_message_gets_requests_that_fit_at_8000(
    tmp_path: Path, api: str, stream: bool
) -> None:
    """Issue 17: "every request arrives at 8,253–8,334 tokens and is refused". Each
    history is the first request of a fresh proxy: nothing learned yet."""
    histories = [
        short_messages(300),  # condense counts it at ~8.8k
        short_messages(255),  # ~7.5k by condense: under the old limit, over at the provider
        turn_session(14, seed=3)[:-1],
    ]
    with scene(tmp_path, 8000, ProviderCount(per_message=4)) as (fake, proxy):
        for number, history in enumerate(histories):
            # a model name of its own: the proxy has learned nothing about it yet
            client = Client(proxy.url, api, stream=stream, model=f"gpt-4o-{number}")
            turn = client.send(history, fake)
            client.close()
            assert turn.status == 200
            assert len(turn.upstream) == 1, "the request was refused and retried"
            assert _fake_count(fake, api, turn.upstream[0]) <= 8000
            assert carries(turn.upstream[0], latest_ask(history))
        assert fake.refusals == []


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("api", APIS)
def test_a_reactive_overflow_retry_fits(tmp_path: Path, api: str, stream: bool) -> None:
    """A provider that counts far more than anyone plans for (12 tokens per message)
    refuses the first request; the retry, planned from the figures in its refusal (or,
    where the refusal states none, well below), fits — and so does the next turn."""
    history = short_messages(300)
    window = 12_500
    with scene(tmp_path, window, ProviderCount(per_message=12)) as (fake, proxy):
        client = Client(proxy.url, api, stream=stream, model="gpt-4o")
        first = client.send(history, fake)
        grown = [
            *history,
            {"role": "assistant", "content": "300."},
            {"role": "user", "content": "And now?"},
        ]
        second = client.send(grown, fake)
        client.close()
        assert first.status == 200
        assert len(first.upstream) == 2
        assert [r.code for r in fake.refusals] == ["context_overflow"]
        assert _fake_count(fake, api, first.upstream[1]) <= window
        assert carries(first.upstream[1], latest_ask(history))
        assert second.status == 200 and len(second.upstream) == 1
        assert _fake_count(fake, api, second.upstream[0]) <= window
        log = proxy.wait_for_log(2)
        assert log[0]["retried"] and log[0]["compressed"]
        assert log[0]["provider_tokens"] == _fake_count(fake, api, first.upstream[1])


def test_what_the_provider_said_plans_the_next_request(tmp_path: Path) -> None:
    """The ``usage`` of one answer teaches the provider's count: a later, longer
    request of the same kind is compressed up front instead of being refused."""
    with scene(tmp_path, 12_500, ProviderCount(per_message=12)) as (fake, proxy):
        client = Client(proxy.url, "chat", stream=True, model="gpt-4o")
        small = client.send(short_messages(60), fake)
        big = client.send(short_messages(300), fake)
        client.close()
        assert small.status == big.status == 200
        assert len(big.upstream) == 1 and fake.refusals == []
        log = proxy.wait_for_log(2)
        assert log[0]["provider_tokens"] == _fake_count(fake, "chat", small.upstream[0])
        assert log[1]["compressed"]


def test_count_tokens_teaches_the_count_too(tmp_path: Path) -> None:
    """Claude Code asks ``/v1/messages/count_tokens``; its answer is the provider's count."""
    from condense.formats import to_anthropic

    with scene(tmp_path, 12_500, ProviderCount(per_message=12)) as (fake, proxy):
        native = {"model": "gpt-4o", **to_anthropic(short_messages(60))}
        answer = httpx2.post(
            f"{proxy.url}/v1/messages/count_tokens",
            json=native,
            headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
            timeout=30,
        )
        assert answer.status_code == 200
        client = Client(proxy.url, "anthropic", stream=False, model="gpt-4o")
        big = client.send(short_messages(300), fake)
        client.close()
        assert big.status == 200 and len(big.upstream) == 1 and fake.refusals == []


@pytest.mark.parametrize("api", ["responses", "chat", "anthropic"])
def test_instructions_and_tools_are_counted(tmp_path: Path, api: str) -> None:
    """What a request sends besides its history counts at the provider: a request whose
    messages alone fit the window, but not with its tools (and, on Responses, its
    instructions), is compressed before it is sent."""
    history = turn_session(3, seed=8)[:-1]
    assert 4_000 < count_tokens(history) < 6_000
    tools = many_tools(12)
    instructions = "You are Codex, a coding agent; follow the repository's rules. " * 60
    with scene(tmp_path, 8000, ProviderCount()) as (fake, proxy):
        client = Client(
            proxy.url, api, stream=False, model="gpt-4o", tools=tools, instructions=instructions
        )
        turn = client.send(history, fake)
        client.close()
        assert turn.status == 200 and len(turn.upstream) == 1 and fake.refusals == []
        assert _fake_count(fake, api, turn.upstream[0]) <= 8000
        record = proxy.wait_for_log(1)[0]
        assert record["compressed"]
        assert record["tokens_before"] > count_tokens(history) + 1_500


def test_claude_is_planned_with_its_measured_margin(tmp_path: Path) -> None:
    """Before a Claude upstream has said anything, a request is planned with the Claude
    family's measured ratio (``condense.tokens.families``), not as if o200k were exact."""
    history = turn_session(14, seed=5)[:-1]
    with scene(tmp_path, 20_000, ProviderCount()) as (fake, proxy):
        client = Client(proxy.url, "anthropic", stream=False, model="claude-opus-4-6")
        turn = client.send(history, fake)
        client.close()
        assert turn.status == 200
        record = proxy.wait_for_log(1)[0]
        assert record["compressed"]
        assert record["tokens_after"] * 1.30 <= (20_000 - 400) * 0.95


def test_log_and_page_say_compressed_for_a_reused_head_and_a_retry(tmp_path: Path) -> None:
    """Issue 17: the log and the live page said ``"compressed": false`` for requests cut
    from 481k to 19k tokens (a reused compressed head)."""
    session = turn_session(14, seed=9)
    with scene(tmp_path, 6000, ProviderCount()) as (fake, proxy):
        client = Client(proxy.url, "chat", stream=False, model="gpt-4o")
        points = [i for i, m in enumerate(session) if i and m["role"] == "assistant"]
        for index in points[-6:]:
            assert client.send(session[:index], fake).status == 200
        client.close()
        log = proxy.wait_for_log(6)
        reused = [r for r in log if r["reused"]]
        assert reused, "no turn reused the compressed head"
        assert all(r["compressed"] for r in reused)
        assert all(r["tokens_after"] < r["tokens_before"] for r in reused)
        feed = httpx2.get(f"{proxy.url}/condense/api/requests", timeout=10).json()["requests"]
        by_id = {r["id"]: r for r in feed}
        assert all(by_id[r["id"]]["compressed"] for r in reused)
