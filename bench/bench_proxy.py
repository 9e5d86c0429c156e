"""Benchmark: what ``condense proxy`` adds on 127.0.0.1, side by side with LiteLLM's proxy
in pass-through mode.

    python bench/bench_proxy.py                 # everything (LiteLLM installed on first use)
    python bench/bench_proxy.py --quick         # fewer requests, 5 s of concurrency
    python bench/bench_proxy.py --no-litellm

Measured against a fake upstream (``condense.testing.FakeProvider`` in its own process,
answering at once), each proxy in its own process, the client in this one:

- added latency, p50 and p99, of a ~100k-token Chat Completions request that fits its
  window (``gpt-4.1``) and of the same history as an Anthropic Messages request
  (``claude-sonnet-4-5``): through the proxy minus direct, requests interleaved;
- added time to the first streamed byte of a small streamed request;
- 64 clients streaming at once through the proxy for 20 s (each stream 7 events, 5 ms
  apart): streams completed, errors (want zero), p50/p99 stream time;
- a whole session (``condense.testing.sessions.turn_session``: 30 turns, each a new
  latest ask, its tool exchanges and an answer; 90+ model calls with the tools) through
  the proxy on each API, against a strict fake whose window (8,000) is far below the
  session (70k+) and which counts prompts its own way (``ProviderCount``): calls answered
  200 (want all), upstream requests per call (want at most two), calls the provider
  refused for size and the proxy retried smaller (want none), and the largest prompt the
  provider counted.

LiteLLM is installed into ``bench/.venv-litellm`` on first use (network: PyPI only) and
run with ``pass_through_endpoints`` for the same paths: it forwards the body without
reading the history, which is the fairest comparison for the plain-proxy cost.
Targets from the issue: p50 ≤ 5 ms, p99 ≤ 20 ms added; ≤ 2 ms added to the first byte;
issue 17: no worse than +3.3 / +15.0 ms p50/p99 on the 100k chat request.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import venv
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from condense.formats import to_anthropic
from condense.testing.sessions import synthetic_session
from condense.tokens import count_tokens

HERE = Path(__file__).resolve().parent
LITELLM_VENV = HERE / ".venv-litellm"
CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"
MASTER_KEY = "sk-bench-0123456789abcdef0123456789abcdef"  # LiteLLM refuses to start without
HEADERS = {
    "authorization": f"Bearer {MASTER_KEY}",
    "x-api-key": "k",
    "anthropic-version": "2023-06-01",
}
# The fake upstream keeps no log (a growing log makes its own GC pauses the p99).
_UPSTREAM = """
import sys
from condense.testing import FakeProvider, Reply
fake = FakeProvider(token_counter=lambda body: 0, responder=lambda body: Reply(
    " ".join(["token"] * 40), pause=0.005 if body.get("pace") else 0.0))
fake._record = lambda request: None
print(fake.base_url.removesuffix("/v1"), flush=True)
sys.stdin.read()
"""


@contextmanager
def _process(
    command: list[str], *, ready: Callable[[str], str], env: dict[str, str] | None = None
) -> Iterator[str]:
    """Start ``command``; ``ready(first stdout line)`` gives its base URL."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        yield ready(process.stdout.readline().strip())
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait(url: str, path: str = "/healthz", timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx2.get(url + path, timeout=1)
            return url
        except httpx2.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


@contextmanager
def upstream() -> Iterator[str]:
    with _process([sys.executable, "-c", _UPSTREAM], ready=lambda line: line) as url:
        yield url


@contextmanager
def condense_proxy(target: str, *, window: int | None = None) -> Iterator[str]:
    command = [sys.executable, "-m", "condense", "proxy", "--upstream", target, "--port", "0"]
    if window is not None:
        command += ["--context-window", str(window)]
    with tempfile.TemporaryDirectory() as tmp:
        command += ["--log", str(Path(tmp) / "log.jsonl")]
        with _process(command, ready=lambda line: _wait(line)) as url:
            yield url


def _litellm_python() -> Path | None:
    python = LITELLM_VENV / "bin" / "python"
    if python.exists():
        return python
    print("installing litellm[proxy] into bench/.venv-litellm …", file=sys.stderr)
    venv.create(LITELLM_VENV, with_pip=True)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "litellm[proxy]"], check=False
    )
    return python if done.returncode == 0 else None


@contextmanager
def litellm_proxy(target: str) -> Iterator[str | None]:
    python = _litellm_python()
    if python is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as tmp:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        config = Path(tmp) / "litellm.yaml"
        # LiteLLM's own routes own /v1/chat/completions and /v1/messages: pass through
        # under a prefix instead
        endpoints = "\n".join(
            f'    - path: "/pt{path}"\n      target: "{target}{path}"\n'
            "      auth: false\n      forward_headers: true"
            for path in (CHAT, MESSAGES)
        )
        config.write_text(
            "model_list: []\ngeneral_settings:\n  pass_through_endpoints:\n" + endpoints + "\n",
            encoding="utf-8",
        )
        litellm = python.parent / "litellm"
        command = [
            str(litellm),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        env = {
            "LITELLM_LOG": "ERROR",
            "LITELLM_TELEMETRY": "False",
            "NO_DOCS": "True",
            "LITELLM_MASTER_KEY": MASTER_KEY,
        }
        url = f"http://127.0.0.1:{port}"
        with _process(command, ready=lambda _: _wait(url, "/health/liveliness", 180), env=env):
            yield url + "/pt"


# -- measurements -------------------------------------------------------------------------


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _big_requests() -> dict[str, bytes]:
    history = synthetic_session(600, seed=7, output_chars=2200, parallel=False)
    while count_tokens(history) > 100_000:
        history = history[:-1]
    tokens = count_tokens(history)
    print(f"request history: {len(history)} messages, {tokens:,} tokens (o200k)")
    chat = json.dumps({"model": "gpt-4.1", "messages": history}).encode()
    anthropic = to_anthropic(history[1:] if history[0]["role"] == "system" else history)
    native = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": history[0]["content"],
        **anthropic,
    }
    return {CHAT: chat, MESSAGES: json.dumps(native).encode()}


def added_latency(
    direct: str, proxies: dict[str, str], body: bytes, path: str, n: int
) -> dict[str, dict[str, float]]:
    """Latency of ``n`` requests per target, interleaved; per proxy the added p50/p99."""
    clients = {name: httpx2.Client(timeout=60) for name in ("direct", *proxies)}
    urls = {"direct": direct, **proxies}
    times: dict[str, list[float]] = {name: [] for name in urls}
    headers = {
        "content-type": "application/json",
        "x-api-key": "k",
        "anthropic-version": "2023-06-01",
    }
    for round_ in range(n + 3):
        for name, url in urls.items():
            started = time.perf_counter()
            reply = clients[name].post(url + path, content=body, headers=headers)
            elapsed = time.perf_counter() - started
            if reply.status_code != 200:
                raise RuntimeError(f"{name}: HTTP {reply.status_code}: {reply.text[:200]}")
            if round_ >= 3:  # warm-up: connections, the tokenizer, caches
                times[name].append(elapsed * 1000)
    for client in clients.values():
        client.close()
    base50, base99 = _percentile(times["direct"], 0.5), _percentile(times["direct"], 0.99)
    out = {"direct": {"p50": base50, "p99": base99}}
    for name in proxies:
        p50, p99 = _percentile(times[name], 0.5), _percentile(times[name], 0.99)
        out[name] = {"p50": p50, "p99": p99, "added_p50": p50 - base50, "added_p99": p99 - base99}
    return out


def first_byte(direct: str, proxies: dict[str, str], n: int) -> dict[str, float]:
    """p50 time to the first streamed byte, per target (ms)."""
    body = {"model": "gpt-4.1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    urls = {"direct": direct, **proxies}
    clients = {name: httpx2.Client(timeout=60) for name in urls}
    times: dict[str, list[float]] = {name: [] for name in urls}
    for round_ in range(n + 3):
        for name, url in urls.items():
            started = time.perf_counter()
            with clients[name].stream("POST", url + CHAT, json=body, headers=HEADERS) as reply:
                chunks = reply.iter_raw()
                next(chunks)
                if round_ >= 3:
                    times[name].append((time.perf_counter() - started) * 1000)
                for _ in chunks:
                    pass
    for client in clients.values():
        client.close()
    return {name: statistics.median(values) for name, values in times.items()}


def concurrent_streams(
    url: str, *, clients: int, seconds: float
) -> tuple[int, list[str], float, float]:
    """``clients`` threads streaming paced replies through ``url`` for ``seconds``:
    (streams completed, errors, p50 and p99 stream time in seconds)."""
    body = {
        "model": "gpt-4.1",
        "stream": True,
        "pace": True,
        "messages": [{"role": "user", "content": "go"}],
    }
    done: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(clients)
    deadline = time.monotonic() + seconds + 1

    def run() -> None:
        with httpx2.Client(timeout=60) as client:
            start.wait()
            while time.monotonic() < deadline:
                began = time.monotonic()
                try:
                    with client.stream("POST", url + CHAT, json=body, headers=HEADERS) as reply:
                        data = b"".join(reply.iter_raw())
                    ok = reply.status_code == 200 and data.endswith(b"data: [DONE]\n\n")
                    problem = None if ok else f"HTTP {reply.status_code}, {len(data)} bytes"
                except httpx2.HTTPError as error:
                    problem = f"{type(error).__name__}: {error}"
                with lock:
                    if problem:
                        errors.append(problem)
                    else:
                        done.append(time.monotonic() - began)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not done:
        return 0, errors, 0.0, 0.0
    return len(done), errors, statistics.median(done), _percentile(done, 0.99)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument("--session-only", action="store_true", help="only the session part")
    args = parser.parse_args()
    sessions()
    if args.session_only:
        return
    n, seconds = (40, 5.0) if args.quick else (200, 20.0)
    bodies = _big_requests()
    with (
        upstream() as direct,
        condense_proxy(direct) as ours,
        litellm_proxy(direct) if not args.no_litellm else _none() as theirs,
    ):
        proxies = {"condense": ours, **({"litellm": theirs} if theirs else {})}
        report(direct, proxies, bodies, n, seconds)


def report(
    direct: str, proxies: dict[str, str], bodies: dict[str, bytes], n: int, seconds: float
) -> None:
    for path, body in bodies.items():
        print(f"\n{path}: {len(body) / 1e6:.2f} MB body, {n} requests each, interleaved")
        for name, row in added_latency(direct, proxies, body, path, n).items():
            extra = (
                f"  added p50 {row['added_p50']:+.2f} ms, p99 {row['added_p99']:+.2f} ms"
                if "added_p50" in row
                else ""
            )
            print(f"  {name:9s} p50 {row['p50']:7.2f} ms  p99 {row['p99']:7.2f} ms{extra}")
    ttfb = first_byte(direct, proxies, n)
    print("\ntime to first streamed byte (p50):")
    for name, value in ttfb.items():
        added = f"  added {value - ttfb['direct']:+.2f} ms" if name != "direct" else ""
        print(f"  {name:9s} {value:6.2f} ms{added}")
    print(f"\n64 concurrent streams for {seconds:g} s (7 events 5 ms apart each):")
    for name, url in {"direct": direct, **proxies}.items():
        streams, errors, p50, p99 = concurrent_streams(url, clients=64, seconds=seconds)
        print(
            f"  {name:9s} {streams:6d} streams, {len(errors)} errors, "
            f"stream p50 {p50 * 1000:.0f} ms p99 {p99 * 1000:.0f} ms"
            + (f"  first error: {errors[0]}" if errors else "")
        )


SESSION_WINDOW = 8_000
SESSION_TURNS = 30
SESSION_MODELS = {"chat": "gpt-4o", "responses": "gpt-5-codex", "anthropic": "claude-opus-4-6"}


def sessions() -> None:
    """One whole session per API through the proxy (see the module docstring)."""
    from condense.formats import to_anthropic, to_responses
    from condense.testing import ProviderCount, StrictProvider
    from condense.testing.sessions import model_calls, turn_session

    session = turn_session(SESSION_TURNS, seed=21)
    calls = model_calls(session)
    tools = [
        {
            "name": name,
            "description": f"{name}: a tool of the agent, with a schema the provider counts.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
        for name in ("read_file", "grep", "run_tests", "edit_file")
    ]
    print(
        f"\na {SESSION_TURNS}-turn session of {len(calls)} model calls "
        f"({count_tokens(session):,} tokens at its end) against a window of "
        f"{SESSION_WINDOW:,} tokens, counted the provider's own way:"
    )
    count = ProviderCount()  # the fake's own count: cl100k_base, 4 tokens a message
    for api in ("chat", "responses", "anthropic"):
        with (
            StrictProvider("openai", context_window=SESSION_WINDOW, token_counter=count) as fake,
            condense_proxy(fake.base_url.removesuffix("/v1"), window=SESSION_WINDOW) as proxy,
            httpx2.Client(timeout=120) as client,
        ):
            statuses: list[int] = []
            per_call: list[int] = []
            model = SESSION_MODELS[api]
            for history in calls:
                if api == "chat":
                    path = CHAT
                    tools_ = [{"type": "function", "function": tool} for tool in tools]
                    body: dict[str, object] = {"messages": history, "tools": tools_}
                    body["max_tokens"] = 400
                elif api == "anthropic":
                    path = MESSAGES
                    tools_ = [
                        {"name": t["name"], "description": t["description"], "input_schema": p}
                        for t in tools
                        for p in [t["parameters"]]
                    ]
                    body = {"max_tokens": 400, "tools": tools_, **to_anthropic(history)}
                else:
                    path = "/v1/responses"
                    tools_ = [{"type": "function", **tool} for tool in tools]
                    body = {"input": to_responses(history), "tools": tools_}
                    body["instructions"] = "You are a careful coding agent. " * 40
                before = len(fake.log)
                reply = client.post(proxy + path, json={"model": model, **body}, headers=HEADERS)
                statuses.append(reply.status_code)
                per_call.append(len(fake.log) - before)  # upstream requests, as the fake saw
            sent = [r.json for r in fake.log if isinstance(r.json, dict)]
            largest = max(count.count(api, body) for body in sent)
            refused = sum(1 for refusal in fake.refusals if refusal.code == "context_overflow")
            print(
                f"  {api:9s} {statuses.count(200):3d}/{len(calls)} answered 200, "
                f"{sum(per_call)} upstream requests (at most {max(per_call)} per call), "
                f"{refused} refused for size, {len(fake.refusals)} refused in all; largest "
                f"prompt {largest:,} of {SESSION_WINDOW:,} as the provider counts"
            )


@contextmanager
def _none() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    main()
