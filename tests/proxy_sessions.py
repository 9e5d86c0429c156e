"""Whole agent sessions driven through the real ``condense proxy`` with the official SDKs.

A session is ``condense.testing.sessions.turn_session``: turns of a new user ask, one to
three tool exchanges and an answer. The agent calls the model at every point where the
next message is the model's (``model_calls``): each call is one request, sent the whole
history so far, in the wire format of the API under test, with tool definitions (and,
on Responses, instructions) the provider counts too.
"""

from __future__ import annotations

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


def many_tools(count: int) -> list[dict[str, Any]]:
    """``count`` tool definitions with long descriptions, as MCP servers send them."""
    return [
        {
            **TOOLS[n % len(TOOLS)],
            "name": f"mcp_tool_{n}",
            "description": f"Tool {n} of an MCP server. " + "It does one careful thing. " * 20,
        }
        for n in range(count)
    ]


def latest_ask(history: list[dict[str, Any]]) -> str:
    return next(m["content"] for m in reversed(history) if m["role"] == "user")


@dataclass
class Turn:
    """One client request: the status it got, and the upstream requests it caused."""

    status: int
    upstream: list[dict[str, Any]]


class Client:
    """Sends one history as a request of ``api`` through the proxy at ``url``."""

    def __init__(
        self,
        url: str,
        api: str,
        *,
        stream: bool,
        model: str,
        tools: list[dict[str, Any]] = TOOLS,
        instructions: str = INSTRUCTIONS,
    ) -> None:
        self.api, self.stream, self.model = api, stream, model
        self.tools, self.instructions = tools, instructions
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
            tools = [{"type": "function", "function": tool} for tool in self.tools]
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
                for t in self.tools
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
            tools = [{"type": "function", **tool} for tool in self.tools]
            if self.stream:
                for _ in self.openai.responses.create(
                    model=self.model,
                    input=items,  # type: ignore[arg-type]
                    instructions=self.instructions,
                    tools=tools,  # type: ignore[arg-type]
                    stream=True,
                ):
                    pass
            else:
                self.openai.responses.create(
                    model=self.model,
                    input=items,  # type: ignore[arg-type]
                    instructions=self.instructions,
                    tools=tools,  # type: ignore[arg-type]
                )


def carries(body: dict[str, Any], text: str) -> bool:
    """Whether ``text`` arrives verbatim as one of the body's strings (or inside one)."""
    return any(text in value for value in strings_in(body))
