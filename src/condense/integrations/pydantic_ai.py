"""condense as a pydantic-ai capability: one line in ``Agent(...)``.

    from pydantic_ai import Agent
    from condense.integrations.pydantic_ai import CondenseCapability

    agent = Agent("openai:gpt-4.1", capabilities=[CondenseCapability()])

Before every attempt at a model request (``prepare_model_request``, once the serving
model is known), the messages of the request are repaired for the model's provider and,
when over the budget, compressed. ``budget=None`` is the model's context window when
condense knows the model, less ``max_tokens``, the instructions and the tool schemas;
otherwise the history is repaired until the provider's first overflow error states the
window, and the request is then attempted again fitted to it (``on_model_request_error``
raises ``RetryModelRequest``). Only the request changes: the run's message history keeps
every message as it was.

The mapping between pydantic-ai's messages and condense's canonical messages lives here:

- a ``ModelRequest`` gives one canonical message per part: ``SystemPromptPart`` a system
  message, ``UserPromptPart`` a user message (non-text content as its own parts),
  ``ToolReturnPart`` and a ``RetryPromptPart`` that answers a call a tool message, any
  other retry prompt a user message;
- a ``ModelResponse`` gives one assistant message: its ``TextPart`` texts, its
  ``ToolCallPart`` calls and its ``ThinkingPart`` blocks (text and signature, as replay
  state condense never edits).
- Every message condense did not change comes back as the very ``ModelMessage`` it was.
  A changed one is rebuilt from its original: a changed tool output replaces the
  ``content`` of its own ``ToolReturnPart`` (name, metadata, timestamp kept); changed
  call arguments replace those of their ``ToolCallPart``; a response's thinking,
  built-in tool (``NativeToolCallPart``, ``NativeToolReturnPart``), compaction
  (``CompactionPart``) and file parts are carried over from the original as they were.
  Only messages condense writes (a summary, a stub for an unanswered call) are new.

Built-in tool, compaction and file parts are not shown to condense: they travel with
their response (kept with it, or left out with its whole unit) and are not counted.

Needs ``pip install 'condense[pydantic-ai]'``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from condense.exceptions import InputError
from condense.integrations._fit import Group, LearnedWindows, fit, rebuild, sent_tokens
from condense.message import content_text
from condense.providers import AUTO
from condense.types import RawMessage

try:
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import RetryModelRequest
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "condense.integrations.pydantic_ai needs pydantic-ai: pip install 'condense[pydantic-ai]'"
    ) from error

__all__ = ["CondenseCapability", "from_canonical", "to_canonical"]


@dataclasses.dataclass
class CondenseCapability(AbstractCapability[Any]):  # type: ignore[misc]
    """Repair and fit every model request of a pydantic-ai agent (see the module doc).

    ``budget`` is the most tokens a request may take, output included (default: the
    model's context window); ``provider`` the rules to follow (default ``"auto"``).
    """

    budget: int | None = None
    provider: str = AUTO
    windows: LearnedWindows = dataclasses.field(default_factory=LearnedWindows, repr=False)

    def __post_init__(self) -> None:
        if self.budget is not None and (isinstance(self.budget, bool) or self.budget <= 0):
            raise InputError(f"budget must be a positive number of tokens, not {self.budget!r}")

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return "condense"

    async def prepare_model_request(self, ctx: Any, request_context: Any) -> Any:
        model = getattr(request_context.model, "model_name", None)
        parameters = request_context.model_request_parameters
        extra = sent_tokens(
            [
                str(getattr(p, "content", p))
                for p in getattr(parameters, "instruction_parts", None) or ()
            ],
            model=model,
        ) + sent_tokens(
            [
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters_json_schema,
                }
                for t in getattr(parameters, "function_tools", None) or ()
            ],
            model=model,
        )
        settings = request_context.model_settings or {}
        output = settings.get("max_tokens") or 0
        messages, groups, parts = to_canonical(request_context.messages)
        fitted = fit(
            messages,
            budget=self.windows.budget(self.budget, model),
            provider=self.provider,
            model=model,
            output=output if isinstance(output, int) else 0,
            extra=extra,
        )
        if fitted.changed:
            request_context.messages = rebuild(
                fitted.messages, groups, lambda run: from_canonical(run, parts)
            )
        return request_context

    async def on_model_request_error(
        self, ctx: Any, *, request_context: Any, error: Exception
    ) -> Any:
        """An overflow that states the window: learn it and attempt the request again
        (``prepare_model_request`` then fits it); any other error propagates."""
        model = getattr(request_context.model, "model_name", None)
        if self.windows.learn(error, model):
            raise RetryModelRequest() from error
        raise error


@dataclasses.dataclass
class Origins:
    """Where the canonical messages came from: each message (by ``id``) its request part
    or response; each call id its response and ``ToolCallPart``; each result its part."""

    messages: dict[int, Any] = dataclasses.field(default_factory=dict)
    calls: dict[str, tuple[ModelResponse, ToolCallPart]] = dataclasses.field(default_factory=dict)
    returns: dict[str, ToolReturnPart] = dataclasses.field(default_factory=dict)


def to_canonical(
    messages: Sequence[ModelMessage],
) -> tuple[list[RawMessage], tuple[Group, ...], Origins]:
    """pydantic-ai messages as canonical messages, each message its own group, and the
    origin of each canonical message (for :func:`from_canonical`)."""
    canonical: list[RawMessage] = []
    groups: list[Group] = []
    origins = Origins()
    for message in messages:
        dicts: list[RawMessage] = []
        if isinstance(message, ModelResponse):
            converted = _response(message)
            origins.messages[id(converted)] = message
            for response_part in message.parts:
                if isinstance(response_part, ToolCallPart):
                    origins.calls[response_part.tool_call_id] = (message, response_part)
            dicts.append(converted)
        elif isinstance(message, ModelRequest):
            for part in message.parts:
                converted_part = _request_part(part)
                if converted_part is not None:
                    origins.messages[id(converted_part)] = part
                    dicts.append(converted_part)
                if isinstance(part, ToolReturnPart):
                    origins.returns[part.tool_call_id] = part
        canonical.extend(dicts)
        groups.append(Group(messages=tuple(dicts), native=(message,)))
    return canonical, tuple(groups), origins


def from_canonical(messages: Sequence[RawMessage], origins: Origins) -> list[ModelMessage]:
    """pydantic-ai messages for a run of canonical messages that changed (see the module
    doc): request-side messages in a row become one ``ModelRequest``."""
    built: list[ModelMessage] = []
    pending: list[Any] = []
    for message in messages:
        if message.get("role") == "assistant":
            if pending:
                built.append(ModelRequest(parts=pending))
                pending = []
            built.append(_response_from(message, origins))
        else:
            pending.append(_request_part_from(message, origins))
    if pending:
        built.append(ModelRequest(parts=pending))
    return built


# -- pydantic-ai → canonical --------------------------------------------------------------


def _response(response: ModelResponse) -> RawMessage:
    texts = [p.content for p in response.parts if isinstance(p, TextPart)]
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": _arguments(p.args)},
        }
        for p in response.parts
        if isinstance(p, ToolCallPart)
    ]
    thinking = [
        {"type": "thinking", "thinking": p.content, "signature": p.signature or ""}
        for p in response.parts
        if isinstance(p, ThinkingPart)
    ]
    message: RawMessage = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["thinking_blocks"] = thinking
    return message


def _request_part(part: Any) -> RawMessage | None:
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return {"role": "user", "content": part.content}
        return {"role": "user", "content": [_user_content(item) for item in part.content]}
    if isinstance(part, ToolReturnPart):
        return {
            "role": "tool",
            "tool_call_id": part.tool_call_id,
            "content": part.model_response_str(),
        }
    if isinstance(part, RetryPromptPart):
        if part.tool_name is not None:
            return {
                "role": "tool",
                "tool_call_id": part.tool_call_id,
                "content": part.model_response(),
            }
        return {"role": "user", "content": part.model_response()}
    return None  # instructions and other request state: not messages


def _user_content(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    url = getattr(item, "url", None)
    if isinstance(url, str):
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "text", "text": f"[{type(item).__name__}]"}


def _arguments(args: Any) -> str:
    if args is None:
        return "{}"
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


# -- canonical → pydantic-ai --------------------------------------------------------------


def _response_from(message: RawMessage, origins: Origins) -> ModelResponse:
    original = origins.messages.get(id(message))
    if isinstance(original, ModelResponse):
        return original
    calls = {c.get("id"): c for c in message.get("tool_calls") or [] if isinstance(c, dict)}
    template = next((origins.calls[i][0] for i in calls if i in origins.calls), None)
    text = message.get("content")
    text = text if isinstance(text, str) else _text_of(text)
    if template is None:
        fresh: list[Any] = [TextPart(content=text)] if text else []
        fresh += [_call_part(call) for call in calls.values()]
        return ModelResponse(parts=fresh)
    kept: list[Any] = []
    placed_text = False
    for part in template.parts:  # thinking, built-in tool, compaction parts: as they were
        if isinstance(part, TextPart):
            if not placed_text and text:
                kept.append(
                    part if part.content == text else dataclasses.replace(part, content=text)
                )
                placed_text = True
        elif isinstance(part, ToolCallPart):
            call = calls.pop(part.tool_call_id, None)
            if call is not None:
                arguments = call["function"].get("arguments")
                same = _arguments(part.args) == arguments
                kept.append(part if same else dataclasses.replace(part, args=arguments))
        else:
            kept.append(part)
    if text and not placed_text:
        kept.insert(0, TextPart(content=text))
    kept += [_call_part(call) for call in calls.values()]
    rebuilt: ModelResponse = dataclasses.replace(template, parts=kept)
    return rebuilt


def _request_part_from(message: RawMessage, origins: Origins) -> Any:
    original = origins.messages.get(id(message))
    if original is not None:
        return original
    role, content = message.get("role"), message.get("content")
    if role == "system":
        return SystemPromptPart(content=_text_of(content))
    if role == "tool":
        call = str(message.get("tool_call_id") or "")
        same = origins.returns.get(call)
        if same is not None:  # the same result with a new content: keep its other fields
            return dataclasses.replace(same, content=_text_of(content))
        found = origins.calls.get(call)
        name = found[1].tool_name if found is not None else "tool"
        return ToolReturnPart(tool_name=name, content=_text_of(content), tool_call_id=call)
    return UserPromptPart(content=content if isinstance(content, str) else _text_of(content))


def _call_part(call: dict[str, Any]) -> ToolCallPart:
    function = call.get("function") or {}
    return ToolCallPart(
        tool_name=function.get("name") or "tool",
        args=function.get("arguments") or "{}",
        tool_call_id=call.get("id") or "",
    )


def _text_of(content: Any) -> str:
    if content is None or isinstance(content, str | list):
        return content_text(content)
    return str(content)
