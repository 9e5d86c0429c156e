"""Whole agent sessions driven through the real ``condense proxy`` with the official SDKs.

A session is a coding agent's history, deterministic per seed: a system prompt, then
turns of a new user ask followed by one to three tool exchanges (a call and its output:
file reads, greps, test runs, some with CJK text, a few outputs several thousand tokens
long) and an answer. The agent calls the model at every point where the next message is
the model's (after the ask, after each tool output): each call is one request, sent the
whole history so far, in the wire format of the API under test, with tool definitions
(and, on Responses, instructions) the provider counts too.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import openai

from condense.formats import to_anthropic, to_responses
from condense.testing import FakeProvider
from proxy_support import strings_in

TOOLS = [
    {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "a path in the workspace"},
                "pattern": {"type": "string", "description": "what to look for"},
                "limit": {"type": "integer", "description": "at most this many lines"},
            },
            "required": ["path"],
        },
    }
    for name, description in (
        ("read_file", "Read a file of the workspace and return its numbered lines."),
        ("grep", "Search the workspace for a regular expression; return matching lines."),
        ("run_tests", "Run the test suite (or one test file) and return its output."),
        ("edit_file", "Replace a span of a file with new text; return the diff."),
    )
]
INSTRUCTIONS = "You are a careful coding agent. Prefer small reviewed changes. " * 40

_WORDS = [
    "order",
    "user",
    "session",
    "token",
    "cache",
    "retry",
    "queue",
    "handler",
    "payload",
    "schema",
    "index",
]
_CJK = "订单用户会话缓存重试队列处理器负载模式索引迁移请求响应超时配置解析器指标"


def agent_session(turns: int, *, seed: int) -> list[dict[str, Any]]:
    """A session of ``turns`` user turns (about three model calls each)."""
    rng = random.Random(seed)
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You work in /workspace on an order service. " * 12}
    ]
    serial = 0
    for turn in range(turns):
        history.append({"role": "user", "content": f"Ask {turn} ({seed}): {_ask(rng)}"})
        for _ in range(rng.choice((1, 2, 2, 3))):
            serial += 1
            call_id = f"call_{seed}_{serial}"
            tool = rng.choice(TOOLS)["name"]
            arguments = {"path": f"src/app/{rng.choice(_WORDS)}_{serial}.py", "limit": 200}
            history.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": tool, "arguments": json.dumps(arguments)},
                        }
                    ],
                }
            )
            history.append({"role": "tool", "tool_call_id": call_id, "content": _output(rng)})
        history.append({"role": "assistant", "content": _answer(rng)})
    return history


def model_calls(history: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The history at every point where the model is called (the next message is its)."""
    for index, message in enumerate(history):
        if index and message["role"] == "assistant":
            yield history[:index]


def latest_ask(history: list[dict[str, Any]]) -> str:
    return next(m["content"] for m in reversed(history) if m["role"] == "user")


@dataclass
class Turn:
    """One client request: the status it got, and the upstream requests it caused."""

    status: int
    upstream: list[dict[str, Any]]


class Client:
    """Sends one history as a request of ``api`` through the proxy at ``url``."""

    def __init__(self, url: str, api: str, *, stream: bool, model: str) -> None:
        self.api, self.stream, self.model = api, stream, model
        self.openai = openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0)
        self.anthropic = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)

    def close(self) -> None:
        self.openai.close()
        self.anthropic.close()

    def send(self, history: list[dict[str, Any]], fake: FakeProvider) -> Turn:
        start = len(fake.log)
        try:
            self._send(history)
            status = 200
        except (openai.APIStatusError, anthropic.APIStatusError) as error:
            status = error.status_code
        upstream = [r.json for r in fake.log[start:] if isinstance(r.json, dict)]
        return Turn(status=status, upstream=upstream)

    def _send(self, history: list[dict[str, Any]]) -> None:
        if self.api == "chat":
            tools = [{"type": "function", "function": tool} for tool in TOOLS]
            chat = self.openai.chat.completions
            if self.stream:
                options = {"include_usage": True}
                for _ in chat.create(
                    model=self.model,
                    messages=history,  # type: ignore[arg-type]
                    tools=tools,  # type: ignore[arg-type]
                    max_tokens=400,
                    stream=True,
                    stream_options=options,  # type: ignore[arg-type]
                ):
                    pass
            else:
                chat.create(
                    model=self.model,
                    messages=history,  # type: ignore[arg-type]
                    tools=tools,  # type: ignore[arg-type]
                    max_tokens=400,
                )
        elif self.api == "anthropic":
            native = to_anthropic(history)
            tools_ = [
                {"name": t["name"], "description": t["description"], "input_schema": schema}
                for t in TOOLS
                for schema in [t["parameters"]]
            ]
            if self.stream:
                with self.anthropic.messages.stream(
                    model=self.model, max_tokens=400, tools=tools_, **native
                ) as events:
                    for _ in events:
                        pass
            else:
                self.anthropic.messages.create(
                    model=self.model, max_tokens=400, tools=tools_, **native
                )
        else:
            items = to_responses(history)
            tools = [{"type": "function", **tool} for tool in TOOLS]
            if self.stream:
                for _ in self.openai.responses.create(
                    model=self.model,
                    input=items,  # type: ignore[arg-type]
                    instructions=INSTRUCTIONS,
                    tools=tools,  # type: ignore[arg-type]
                    stream=True,
                ):
                    pass
            else:
                self.openai.responses.create(
                    model=self.model,
                    input=items,  # type: ignore[arg-type]
                    instructions=INSTRUCTIONS,
                    tools=tools,  # type: ignore[arg-type]
                )


def carries(body: dict[str, Any], text: str) -> bool:
    """Whether ``text`` arrives verbatim as one of the body's strings (or inside one)."""
    return any(text in value for value in strings_in(body))


def _ask(rng: random.Random) -> str:
    word = rng.choice(_WORDS)
    return (
        f"the {word} handler fails for tenant {rng.randint(100, 999)}; find why, fix it and "
        f"add a regression test for {word} #{rng.randint(1000, 99999)}."
    )


def _answer(rng: random.Random) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 80)))
    return f"I looked into it: {words}. The fix is in place and the tests pass."


def _output(rng: random.Random) -> str:
    lines = rng.choice((8, 20, 40, 40, 60, 150))
    text = "\n".join(
        f"{n:4d}  def {rng.choice(_WORDS)}_{n}(self, {rng.choice(_WORDS)}): "
        f"return self.{rng.choice(_WORDS)}.get({n})"
        for n in range(1, lines + 1)
    )
    if rng.random() < 0.2:
        text += "\n# " + "".join(rng.choice(_CJK) for _ in range(rng.randint(50, 300)))
    return text
