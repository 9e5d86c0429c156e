"""condense as hermes-agent's context engine.

hermes-agent swaps compressors through its context-engine slot. With condense installed
(``pip install 'condense[hermes]'``, in hermes-agent's own environment), its
``config.yaml`` selects it::

    plugins:
      enabled: [condense]
    context:
      engine: condense

hermes finds the plugin through the ``hermes_agent.plugins`` entry point ``condense``
(this module; its :func:`register` hands hermes a :class:`CondenseEngine`), deep-copies
the engine for each agent, tells it the model's window (``update_model``) and calls
``compress`` when a turn goes over its threshold. The engine honours hermes' own
``compression`` settings, read from the same ``config.yaml``:

- ``threshold`` (default 0.50): compress once a prompt reaches this share of the window;
- ``protect_first_n`` (default 3) and ``protect_last_n`` (default 20): the messages kept
  as they are at the head (after the system prompt) and at the tail. The head is kept up
  to the first user, assistant and tool message (0: only the system prompt; 1: up to the
  first user message; 2: and the first reply), the tail as the last ``protect_last_n``
  messages, whole tool exchanges included; when they alone do not fit, the tail shrinks
  to the last message before anything in it is cut;
- the focus topic of a manual ``/compress <topic>``: when a span is summarized, the
  summary opens with it and with what the span said about it (a history that fits once
  its old outputs are masked gets no summary, so the topic has nothing to lead). (The
  text of hermes' memory providers, ``memory_context``, is not used: the summaries are
  condense's own.)

A compressed history is fitted to half the threshold, so the next turns fit before it
is compressed again; every output is valid for the model's provider (repaired first:
orphan results, unanswered calls, arguments that are not JSON), keeps the latest user
message verbatim and never splits a call from its results. The engine holds only plain
values, so ``copy.deepcopy`` (which hermes applies to every plugin engine) copies it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from condense.compress import HeadTailProtection, compress
from condense.providers import AUTO
from condense.repair import repair
from condense.summarizers import get_summarizer
from condense.tokens import count_tokens
from condense.types import RawMessage

try:
    from agent.context_engine import ContextEngine
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "condense.integrations.hermes runs inside hermes-agent: pip install 'condense[hermes]' "
        "into hermes-agent's environment"
    ) from error

__all__ = ["CondenseEngine", "register"]

log = logging.getLogger(__name__)

DEFAULTS = {"threshold": 0.50, "protect_first_n": 3, "protect_last_n": 20}
"""hermes-agent's own defaults for its ``compression`` settings (``agent/agent_init.py``)."""
FIT_SHARE = 0.5
"""The share of the threshold a compressed history is fitted to."""
_HEADS: tuple[tuple[str, ...], ...] = (
    ("system",),
    ("system", "user"),
    ("system", "user", "assistant"),
    ("system", "user", "assistant", "tool"),
)


class CondenseEngine(ContextEngine):  # type: ignore[misc]
    """hermes-agent's ``ContextEngine`` backed by condense (see the module doc).

    Settings given here win over ``config.yaml``'s ``compression`` section; ``provider``
    is the rules to follow (default ``"auto"``: the model's name chooses).
    """

    def __init__(
        self,
        *,
        threshold_percent: float | None = None,
        protect_first_n: int | None = None,
        protect_last_n: int | None = None,
        provider: str = AUTO,
        summarizer: str = "extractive",
    ) -> None:
        settings = {**DEFAULTS, **_hermes_settings()}
        self.threshold_percent = float(
            settings["threshold"] if threshold_percent is None else threshold_percent
        )
        self.protect_first_n = max(
            0, int(settings["protect_first_n"] if protect_first_n is None else protect_first_n)
        )
        self.protect_last_n = max(
            0, int(settings["protect_last_n"] if protect_last_n is None else protect_last_n)
        )
        self.provider = provider
        self.summarizer = summarizer
        self.model: str | None = None
        self.context_length = 0
        self.threshold_tokens = 0
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0
        self.last_report: str | None = None
        """What the last compression did, in words (``None`` before the first)."""

    @property
    def name(self) -> str:
        return "condense"

    # -- what hermes asks ---------------------------------------------------------------

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: str = "",
        provider: str = "",
        api_mode: str = "",
    ) -> None:
        self.model = model or None
        self.context_length = int(context_length or 0)
        self.threshold_tokens = int(self.context_length * self.threshold_percent)

    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.last_prompt_tokens = int(usage.get("prompt_tokens") or 0)
        self.last_completion_tokens = int(usage.get("completion_tokens") or 0)
        self.last_total_tokens = int(usage.get("total_tokens") or 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return bool(self.threshold_tokens) and tokens >= self.threshold_tokens

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        return self.should_compress(_count(messages, self.model))

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        return len(messages) > 1 + self.protect_first_n + self.protect_last_n

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> list[dict[str, Any]]:
        """``messages`` repaired and fitted to half the threshold (the window's, when no
        threshold is known yet); never larger than they came."""
        window = self.threshold_tokens or self.context_length
        if not window:  # hermes has not told the window: repair only
            return repair(messages, provider=self.provider, model=self.model).messages
        budget = max(1, int(window * FIT_SHARE))
        summarizer: Any = get_summarizer(self.summarizer)
        if focus_topic:
            summarizer = FocusedSummarizer(summarizer, focus_topic)
        head = _HEADS[min(self.protect_first_n, len(_HEADS) - 1)]
        result = compress(
            messages,
            budget=budget,
            provider=self.provider,
            model=self.model,
            summarizer=summarizer,
            protection=HeadTailProtection(tail_messages=self.protect_last_n, head_roles=head),
        )
        self.compression_count += 1
        self.last_report = result.report.describe()
        log.info("condense: %s", self.last_report)
        return result.messages


class FocusedSummarizer:
    """A summarizer whose summaries open with a focus topic and what the summarized
    messages said about it (the lines that name it), then the inner summary."""

    def __init__(self, inner: Any, topic: str) -> None:
        self.inner = inner
        self.topic = topic
        self.name = f"{getattr(inner, 'name', 'summarizer')}+focus"

    def summarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        words = [w.lower() for w in self.topic.split() if len(w) > 2] or [self.topic.lower()]
        mentions: list[str] = []
        room = max(0, target_tokens // 3) * 4  # about a third of the summary, in characters
        for message in messages:
            content = message.get("content")
            for line in content.splitlines() if isinstance(content, str) else ():
                if room > 0 and any(word in line.lower() for word in words):
                    mentions.append(line.strip()[:room])
                    room -= len(mentions[-1])
        header = f"Focus (as asked): {self.topic}"
        if mentions:
            header += "\nWhat it said about it:\n" + "\n".join(f"- {m}" for m in mentions)
        rest = max(1, target_tokens - len(header) // 3)
        summary: str = self.inner.summarize(messages, previous=previous, target_tokens=rest)
        return header + "\n\n" + summary


def register(ctx: Any) -> None:
    """hermes-agent's plugin hook: hand it the condense context engine."""
    ctx.register_context_engine(CondenseEngine())


def _hermes_settings() -> dict[str, Any]:
    """The ``compression`` section of hermes' ``config.yaml`` (empty when unreadable)."""
    try:
        from hermes_cli.config import load_config

        section = (load_config() or {}).get("compression") or {}
    except Exception:  # hermes' own reader failed: its defaults then
        return {}
    return {key: section[key] for key in DEFAULTS if key in section}


def _count(messages: Sequence[Any], model: str | None) -> int:
    try:
        return count_tokens(list(messages), model=model)
    except Exception:  # an odd message hermes holds: nothing to decide on
        return 0
