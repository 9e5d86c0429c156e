"""What every host adapter's test shares: the broken, over-window history, the strict
fake provider that judges it, and how a test that needs a host's package is skipped.

The judge is :class:`condense.testing.StrictProvider`: it refuses a request the way the
provider does (its status, body and wording) and counts the prompt with its own counter,
set here to the request's messages as the fake receives them.
"""

from __future__ import annotations

import importlib
import json
import os
from types import ModuleType
from typing import Any

import pytest

from condense.testing.sessions import synthetic_session
from condense.testing.strict_provider import count_request_tokens

WINDOW = 8_192
"""The fake's context window: ``gpt-4``'s, which condense knows, so ``budget=None``
means this window."""
MODEL = "gpt-4"
ASK = "Which file holds the orders route? Answer with its path and quote: ZX-41 «ünïcode»."
"""The latest user text: it must reach the provider verbatim."""


def broken_history(*, tokens: int = 30_000) -> list[dict[str, Any]]:
    """A real-looking agent session about ``tokens`` long, broken the ways compactors
    break them (``DESIGN.md``): a tool result whose call is gone, a call whose result is
    gone, arguments cut mid-JSON; it ends with :data:`ASK`. No system message (hosts
    pass their own)."""
    session = [
        m for m in synthetic_session(max(8, tokens // 380), seed=19) if m["role"] != "system"
    ]
    middle = len(session) // 2
    cut = json.dumps({"path": "src/app/routes/orders.py", "content": "x" * 300})[:120]
    broken = [
        {
            "role": "tool",
            "tool_call_id": "call_gone",
            "content": "output of a call summarized away",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_unanswered",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                },
            ],
        },
        {"role": "user", "content": "carry on"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_cut",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": cut},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_cut", "content": "written"},
    ]
    return [*session[:middle], *broken, *session[middle:], {"role": "user", "content": ASK}]


def _calls(call: str, name: str, arguments: str) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call, "type": "function", "function": function}],
    }


def prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt as the fake counts it."""
    return count_request_tokens(body)


def last_user_text(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                texts = [p.get("text") for p in content if isinstance(p, dict) and "text" in p]
                return "".join(t for t in texts if isinstance(t, str))
    return None


def need(module: str, extra: str) -> ModuleType:
    """``module``, or a skip that names the extra to install; in CI (``CI`` set) a missing
    extra fails instead, so no adapter test is skipped there unseen."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        message = f"{module} is not installed: pip install -e '.[test,{extra}]' ({error})"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
