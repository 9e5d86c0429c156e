"""condense as a LiteLLM callback: the check that every history LiteLLM sends is one
the provider accepts, and fits.

In code (``litellm.acompletion``, and a ``Router``)::

    import litellm
    from condense.integrations.litellm import handler

    litellm.callbacks = [handler]

In the LiteLLM proxy's ``config.yaml``::

    litellm_settings:
      callbacks: condense.integrations.litellm.handler

Before each request goes to its deployment (``async_pre_call_deployment_hook``, which
LiteLLM runs for every async call, and the proxy's ``async_pre_call_hook``), the
``messages`` are repaired for the model's provider (LiteLLM's model names, such as
``anthropic/claude-…``, choose it) and, when over the budget, compressed. ``budget=None``
is the model's context window when condense knows the model, less ``max_tokens`` and the
tool schemas; otherwise the history is repaired only. LiteLLM's own compression
(``litellm.compress``, proxy-side compression) may run before: this callback is the check
after it. A Responses call (``litellm.aresponses``) has its ``input`` items looked after
the same way. The synchronous ``litellm.completion`` runs no hook that may change a
request; wrap its client with ``condense.guard`` or use ``acompletion``.

``handler`` is a ready instance; ``CondenseHandler(budget, provider=...)`` makes another.
Needs ``pip install 'condense[litellm]'``.
"""

from __future__ import annotations

from typing import Any

from condense.exceptions import InputError
from condense.formats import Conversation
from condense.integrations._fit import LearnedWindows, fit, sent_tokens
from condense.providers import AUTO

try:
    from litellm.integrations.custom_logger import CustomLogger
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "condense.integrations.litellm needs LiteLLM: pip install 'condense[litellm]'"
    ) from error

__all__ = ["CondenseHandler", "handler"]

_OUTPUT_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


class CondenseHandler(CustomLogger):  # type: ignore[misc]
    """A LiteLLM ``CustomLogger`` that repairs and fits each request (see the module doc)."""

    def __init__(self, budget: int | None = None, *, provider: str = AUTO) -> None:
        super().__init__()
        if budget is not None and (isinstance(budget, bool) or budget <= 0):
            raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
        self.budget = budget
        self.provider = provider
        self.windows = LearnedWindows()

    async def async_log_failure_event(
        self, kwargs: dict[str, Any], response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        """A failed call: an overflow error that states the window teaches it, so the
        next call to that model (a retry of LiteLLM's or the caller's) is fitted."""
        error = kwargs.get("exception")
        if isinstance(error, BaseException):
            self.windows.learn(error, kwargs.get("model"))

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        """LiteLLM's hook before a request goes to its deployment (SDK and router)."""
        return self.condense(kwargs)

    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        """The LiteLLM proxy's hook before it routes a request."""
        return self.condense(data) or data

    def condense(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """``request`` with its history repaired and fitted, or ``None`` when nothing had
        to change (or it holds no history condense reads)."""
        model = request.get("model") if isinstance(request.get("model"), str) else None
        output = next(
            (v for k in _OUTPUT_KEYS if isinstance(v := request.get(k), int) and v > 0), 0
        )
        extra = sent_tokens(request.get("tools"), model=model)
        messages = request.get("messages")
        if isinstance(messages, list) and messages:
            fitted = fit(
                messages,
                budget=self.windows.budget(self.budget, model),
                provider=self.provider,
                model=model,
                output=output,
                extra=extra,
            )
            return {**request, "messages": fitted.messages} if fitted.changed else None
        items = request.get("input")
        if isinstance(items, list) and items:
            conversation = Conversation.read({"input": items}, format="responses")
            extra += sent_tokens(request.get("instructions"), model=model)
            fitted = fit(
                conversation.messages,
                budget=self.windows.budget(self.budget, model),
                provider=self.provider,
                model=model,
                output=output,
                extra=extra,
                format="responses",
            )
            if fitted.changed:
                return {**request, "input": conversation.dump(fitted.messages)["input"]}
        return None


handler = CondenseHandler()
"""The handler to list in ``litellm.callbacks`` or the proxy's ``callbacks:``."""
