"""condense in the OpenAI Agents SDK: an input filter and a session wrapper.

    from agents import Agent, RunConfig, Runner, SQLiteSession
    from condense.integrations.openai_agents import CondenseSession, condense_input_filter

    config = RunConfig(call_model_input_filter=condense_input_filter())
    session = CondenseSession(SQLiteSession("chat"), model="gpt-4.1")
    Runner.run_sync(agent, "next question", session=session, run_config=config)

- ``condense_input_filter(budget=None, *, provider="auto")`` runs before every model call
  of the run loop (``RunConfig.call_model_input_filter``): the input items are repaired
  (an orphan ``function_call_output``, a call without its output, arguments that are not
  JSON) and, when over the budget, compressed. ``budget=None`` is the agent's model's
  context window when condense knows it, less ``model_settings.max_tokens``, the
  instructions and the tool schemas; otherwise the items are repaired only.
- ``CondenseSession(inner_session, budget=None)`` wraps any session: ``get_items``
  returns a history the provider accepts (a ``limit`` that cuts a call from its output
  included), and its ``run_compaction`` hook, which the runner calls after each turn,
  rewrites the stored history to fit ``budget`` (or the window of ``model``) when it has
  grown over it, so what is stored stops growing without bound.

Items are Responses items (dicts); they go through condense's Responses adapter
(:mod:`condense.formats.responses`), so every item condense did not change is returned
as the very object the SDK gave: reasoning items with their ``encrypted_content``, ids
and ``status`` stay byte-identical.

Needs ``pip install 'condense[openai-agents]'``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from condense.exceptions import InputError
from condense.formats import Conversation
from condense.integrations._fit import Fitted, fit, sent_tokens
from condense.providers import AUTO

try:
    from agents.run_config import CallModelData, ModelInputData
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "condense.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'condense[openai-agents]'"
    ) from error

__all__ = ["CondenseSession", "condense_input_filter", "fit_items"]

InputFilter = Callable[[CallModelData[Any]], ModelInputData]


def condense_input_filter(budget: int | None = None, *, provider: str = AUTO) -> InputFilter:
    """A ``RunConfig.call_model_input_filter`` that repairs and fits every model call."""
    _check_budget(budget)

    def condense_input(data: CallModelData[Any]) -> ModelInputData:
        agent = data.agent
        model = model_name(agent.model)
        instructions = data.model_data.instructions
        extra = sent_tokens(instructions, model=model) + sent_tokens(
            [_tool_schema(tool) for tool in getattr(agent, "tools", ())], model=model
        )
        settings = getattr(agent, "model_settings", None)
        output = getattr(settings, "max_tokens", None) or 0
        items, _ = fit_items(
            data.model_data.input,
            budget=budget,
            provider=provider,
            model=model,
            output=output,
            extra=extra,
        )
        if items is data.model_data.input:
            return data.model_data
        return ModelInputData(input=items, instructions=instructions)

    return condense_input


class CondenseSession:
    """Any Agents SDK session, made to return a history the provider accepts and, with
    its compaction hook, kept within ``budget`` (see the module doc)."""

    def __init__(
        self,
        inner_session: Any,
        budget: int | None = None,
        *,
        model: str | None = None,
        provider: str = AUTO,
    ) -> None:
        _check_budget(budget)
        self.inner = inner_session
        self.budget = budget
        self.model = model
        self.provider = provider
        self.last_fit: Fitted | None = None
        """What the last compaction did (``None`` before the first)."""

    @property
    def session_id(self) -> Any:
        return self.inner.session_id

    @property
    def session_settings(self) -> Any:
        return getattr(self.inner, "session_settings", None)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The stored items (the newest ``limit``), repaired for the provider."""
        items = await self.inner.get_items(limit)
        repaired, _ = fit_items(items, budget=None, provider=self.provider, model=None)
        return repaired

    async def add_items(self, items: list[Any]) -> None:
        await self.inner.add_items(items)

    async def pop_item(self) -> Any:
        return await self.inner.pop_item()

    async def clear_session(self) -> None:
        await self.inner.clear_session()

    async def run_compaction(self, args: Any = None) -> None:
        """The SDK's compaction hook: when the stored history is broken or over the
        budget, replace it with its repaired and compressed form. A wrapped session's
        own compaction runs first."""
        own = getattr(self.inner, "run_compaction", None)
        if callable(own):
            await own(args)
        items = await self.inner.get_items()
        fitted_items, fitted = fit_items(
            items, budget=self.budget, provider=self.provider, model=self.model
        )
        self.last_fit = fitted
        if fitted_items is not items:
            await self.inner.clear_session()
            await self.inner.add_items(fitted_items)


def fit_items(
    items: Sequence[Any],
    *,
    budget: int | None,
    provider: str,
    model: str | None,
    output: int = 0,
    extra: int = 0,
) -> tuple[list[Any], Fitted | None]:
    """Responses items repaired and fitted, and what was done; the very list given when
    nothing changed (and ``None`` for a history with no items)."""
    if not items:
        return list(items) if not isinstance(items, list) else items, None
    conversation = Conversation.read({"input": list(items)}, format="responses")
    fitted = fit(
        conversation.messages,
        budget=budget,
        provider=provider,
        model=model,
        output=output,
        extra=extra,
        format="responses",
    )
    if not fitted.changed:
        return list(items) if not isinstance(items, list) else items, fitted
    return list(conversation.dump(fitted.messages)["input"]), fitted


def model_name(model: object) -> str | None:
    """The model name of an agent's ``model`` (a name, or a ``Model`` object)."""
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _tool_schema(tool: object) -> object:
    return {
        "name": getattr(tool, "name", None),
        "description": getattr(tool, "description", None),
        "parameters": getattr(tool, "params_json_schema", None),
    }


def _check_budget(budget: int | None) -> None:
    if budget is not None and (isinstance(budget, bool) or budget <= 0):
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
