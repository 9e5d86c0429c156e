"""condense as a LangChain v1 agent middleware: one line in ``create_agent``.

    from langchain.agents import create_agent
    from condense.integrations.langchain import CondenseMiddleware

    agent = create_agent(model, tools, middleware=[CondenseMiddleware()])

Before every model call of the agent loop (``wrap_model_call`` / ``awrap_model_call``),
the request's messages are repaired for the model's provider and, when they are over
the budget, compressed; the model then gets a history it accepts. ``budget=None`` is the
model's context window when condense knows the model (``gpt-4o``, ``claude-…``, …), less
the output it asks for (``max_tokens``), the system message and the tool schemas; for an
unknown model the history is repaired until the provider's first overflow error states
the window; the call is then fitted to it and tried once more (and every later call
fitted up front). The agent's own state is left as it was:
only the request changes, so the full history stays in the graph's checkpoint.

Messages condense did not change reach the model as the very ``BaseMessage`` objects
the agent holds (ids, ``response_metadata`` and reasoning content kept); changed and
new ones (a summary, a masked tool output, a stub for an unanswered call) are built
with ``langchain_core.messages.convert_to_messages``.

Needs ``pip install 'condense[langchain]'`` (langchain 1.x).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from condense.exceptions import InputError
from condense.integrations._fit import Group, LearnedWindows, fit, rebuild, sent_tokens
from condense.types import RawMessage

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langchain_core.messages import BaseMessage, convert_to_messages, convert_to_openai_messages
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "condense.integrations.langchain needs LangChain v1: pip install 'condense[langchain]'"
    ) from error

__all__ = ["CondenseMiddleware"]

_OUTPUT_SETTINGS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


class CondenseMiddleware(AgentMiddleware):  # type: ignore[misc,type-arg]
    """Repair and fit every model request of a LangChain v1 agent (see the module doc).

    ``budget`` is the most tokens a request may take, output included (default: the
    model's context window); ``provider`` the rules to follow (default ``"auto"``: the
    model's name chooses, and the structural ``strict`` rules when it does not tell).
    """

    def __init__(self, budget: int | None = None, *, provider: str = "auto") -> None:
        super().__init__()
        if budget is not None and (isinstance(budget, bool) or budget <= 0):
            raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
        self.budget = budget
        self.provider = provider
        self.windows = LearnedWindows()

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        try:
            return handler(self.condense(request))
        except Exception as error:  # an overflow that states the window: fit to it, once
            if not self.windows.learn(error, model_name(request.model)):
                raise
        return handler(self.condense(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        try:
            return await handler(self.condense(request))
        except Exception as error:  # as in wrap_model_call
            if not self.windows.learn(error, model_name(request.model)):
                raise
        return await handler(self.condense(request))

    def condense(self, request: ModelRequest) -> ModelRequest:
        """The request with its messages repaired and fitted; the same request when
        nothing had to change."""
        model = model_name(request.model)
        messages, groups = to_canonical(request.messages)
        extra = sent_tokens(request.system_prompt, model=model) + sent_tokens(
            [_tool_schema(tool) for tool in request.tools], model=model
        )
        fitted = fit(
            messages,
            budget=self.windows.budget(self.budget, model),
            provider=self.provider,
            model=model,
            output=_output(request),
            extra=extra,
        )
        if not fitted.changed:
            return request
        messages_out: list[Any] = rebuild(fitted.messages, groups, from_canonical)
        return request.override(messages=messages_out)


def to_canonical(messages: Sequence[BaseMessage]) -> tuple[list[RawMessage], tuple[Group, ...]]:
    """LangChain messages as canonical (OpenAI chat) dicts, each message its own group."""
    canonical: list[RawMessage] = []
    groups: list[Group] = []
    for message in messages:
        dicts: list[RawMessage] = [convert_to_openai_messages(message)]
        invalid = getattr(message, "invalid_tool_calls", None)
        if invalid and dicts:  # sent as calls (langchain-openai does), dropped by the converter
            dicts[-1] = {
                **dicts[-1],
                "tool_calls": [*dicts[-1].get("tool_calls", []), *map(_call, invalid)],
            }
        canonical.extend(dicts)
        groups.append(Group(messages=tuple(dicts), native=(message,)))
    return canonical, tuple(groups)


def from_canonical(messages: Sequence[RawMessage]) -> list[BaseMessage]:
    """Fresh LangChain messages for canonical dicts (what condense changed or wrote)."""
    return list(convert_to_messages([_plain(message) for message in messages]))


def _call(invalid: Any) -> dict[str, Any]:
    """An ``invalid_tool_call`` as the chat call it is sent as."""
    arguments = invalid.get("args")
    return {
        "id": invalid.get("id"),
        "type": "function",
        "function": {
            "name": invalid.get("name"),
            "arguments": arguments if isinstance(arguments, str) else "",
        },
    }


def model_name(model: object) -> str | None:
    """The model name a LangChain chat model is configured with."""
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def _output(request: ModelRequest) -> int:
    for source in (request.model_settings, vars(request.model)):
        for key in _OUTPUT_SETTINGS:
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return 0


def _tool_schema(tool: object) -> object:
    try:
        return convert_to_openai_tool(tool)  # type: ignore[arg-type]
    except Exception:  # a schema LangChain cannot render: count its name
        return str(getattr(tool, "name", tool))


def _plain(message: RawMessage) -> dict[str, Any]:
    """A canonical message without condense's extension keys (LangChain has no slot)."""
    return {k: v for k, v in message.items() if k not in ("thinking_blocks", "responses_items")}
