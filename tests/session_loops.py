"""Agent loops as agents run them, for the session tests of issue 17.

:func:`agent_loop` plays a coding agent's session: a system prompt and a first ask, then
steps — parallel tool calls with their outputs (now and then an oversized one, or a call
carrying a whole file in its arguments), or a reply followed by a new ask. It yields the
history at every point where the agent calls the model (after the outputs of a step, or
after a new ask), with what was appended since the last point.

:class:`Agent` calls ``compress`` at each point the three ways a loop can:

- ``fresh``: the full history, no ``previous``;
- ``resend``: the full history with ``previous=`` the last state (the agent keeps its
  own history and re-sends it every turn);
- ``continue``: the agent continues from ``result.messages``, appends what is new, and
  passes ``previous=`` the last state.

The histories are valid for every profile as sent (ids of nine letters and digits, a
user message only after a reply, roles alternating), so ``compress`` has nothing to
repair and every object it returns unchanged is the agent's own.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from condense.compress import CompressionResult, CompressionState, compress

Message = dict[str, Any]

WORDS = [
    "parser",
    "cache",
    "retry",
    "schema",
    "tenant",
    "worker",
    "queue",
    "invoice",
    "order",
    "token",
    "request",
    "migration",
    "session",
    "handler",
    "index",
    "timeout",
    "config",
    "payload",
    "metric",
    "scheduler",
    "response",
    "build",
    "test",
]
TOOLS = ("bash", "read_file", "grep", "write_file", "list_dir")


@dataclass(frozen=True, kw_only=True)
class LoopShape:
    """What a generated session looks like."""

    seed: int
    steps: int = 40
    ask_rate: float = 0.2
    """The chance that a step ends the turn: a reply, then a new ask."""
    parallel: int = 3
    big_rate: float = 0.08
    """The chance that an output is oversized (8k–30k characters)."""
    write_rate: float = 0.1
    """The chance that a call writes a whole file through its arguments."""


@dataclass(frozen=True, kw_only=True)
class Point:
    """A point where the agent calls the model: the history, and what was appended since
    the previous point."""

    history: list[Message]
    appended: list[Message]

    @property
    def running(self) -> bool:
        return self.history[-1].get("role") == "tool"


def _words(rng: random.Random, count: int) -> str:
    return " ".join(f"{rng.choice(WORDS)}{rng.randint(0, 99)}" for _ in range(count))


def _output(rng: random.Random, chars: int) -> str:
    lines = []
    size = 0
    number = 1
    while size < chars:
        line = f"{number:5d}  {_words(rng, 8)}"
        lines.append(line)
        size += len(line) + 1
        number += 1
    if rng.random() < 0.5:
        lines.append(f"exit code {rng.choice([0, 0, 1, 2])}")
    return "\n".join(lines)


def _call_id(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(9))


def _tool_step(rng: random.Random, shape: LoopShape, step: int) -> list[Message]:
    calls = []
    outputs = []
    for _ in range(rng.randint(1, shape.parallel)):
        call_id = _call_id(rng)
        tool = rng.choice(TOOLS)
        path = f"src/module_{rng.randint(0, 40)}.py"
        arguments: dict[str, Any] = {"path": path}
        if tool == "bash":
            arguments = {"command": f"pytest -q tests/test_{rng.randint(0, 40)}.py"}
        if rng.random() < shape.write_rate:
            tool = "write_file"
            arguments = {"path": path, "content": _output(rng, rng.randint(3_000, 20_000))}
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
        )
        big = rng.random() < shape.big_rate
        size = rng.randint(8_000, 30_000) if big else rng.randint(40, 1_500)
        outputs.append({"role": "tool", "tool_call_id": call_id, "content": _output(rng, size)})
    thought = f"Step {step}: {_words(rng, rng.randint(3, 25))}"
    return [{"role": "assistant", "content": thought, "tool_calls": calls}, *outputs]


def agent_loop(shape: LoopShape) -> Iterator[Point]:
    """The points of one generated session (see the module docstring)."""
    rng = random.Random(shape.seed)
    history: list[Message] = [
        {"role": "system", "content": "You are a coding agent. " + _words(rng, 60)},
        {"role": "user", "content": "Fix the failing build: " + _words(rng, 20)},
    ]
    appended: list[Message] = list(history)
    for step in range(shape.steps):
        if step and rng.random() < shape.ask_rate:
            new = [
                {"role": "assistant", "content": f"Done with part {step}: " + _words(rng, 30)},
                {"role": "user", "content": f"New ask {step}: " + _words(rng, 12)},
            ]
        else:
            new = _tool_step(rng, shape, step)
        history = [*history, *new]
        appended += new
        yield Point(history=history, appended=appended)
        appended = []


@dataclass
class Agent:
    """One way of calling ``compress`` through a session (see the module docstring)."""

    way: str
    budget: int
    provider: str
    state: CompressionState | None = None
    view: list[Message] = field(default_factory=list)

    def call(self, point: Point) -> tuple[list[Message], CompressionResult]:
        """What the agent sends to ``compress`` at ``point``, and what it got back."""
        if self.way == "fresh":
            sent = point.history
            result = compress(sent, budget=self.budget, provider=self.provider)
        elif self.way == "resend":
            sent = point.history
            result = compress(sent, budget=self.budget, provider=self.provider, previous=self.state)
        else:
            sent = [*self.view, *point.appended]
            result = compress(sent, budget=self.budget, provider=self.provider, previous=self.state)
            self.view = list(result.messages)
        self.state = result.state
        return sent, result
