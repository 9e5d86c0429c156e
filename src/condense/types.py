"""The canonical message shape: OpenAI Chat Completions messages as plain dicts.

Every stage of condense reads and writes lists of these dicts. They are typed with
``TypedDict`` for the reader's benefit, but code that receives messages from a user must
not trust the types: histories arrive broken, and repair is where they are made whole.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Role = Literal["system", "developer", "user", "assistant", "tool"]


class FunctionCall(TypedDict):
    """The ``function`` member of a tool call: a name and a JSON-object string."""

    name: str
    arguments: str


class ToolCall(TypedDict):
    """One entry of an assistant message's ``tool_calls``."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class Message(TypedDict, total=False):
    """One chat message. ``content`` is a string, a list of content parts, or ``None``."""

    role: Role
    content: str | list[dict[str, Any]] | None
    name: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    refusal: str | None


class ContentPart(TypedDict):
    """A content part such as ``{"type": "text", "text": "..."}``."""

    type: str
    text: NotRequired[str]


# A message as it really arrives: any JSON object. Functions that accept user input take
# this, and functions that guarantee the canonical shape return ``Message``.
RawMessage = dict[str, Any]
