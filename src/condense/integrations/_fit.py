"""The one step every host adapter takes before a model call, and the one mapping home.

``fit`` repairs a canonical history for its provider and, when it is over the room the
request leaves for it, compresses it. The room is ``budget`` (default: the model's
context window, when condense knows the model) less the output the request asks for,
less what it sends besides the history (instructions, tool schemas). Unknown window and
no budget: the history is only repaired, never cut.

A host holds its own message objects; ``rebuild`` turns the fitted canonical messages
back into them, reusing every host object whose canonical messages came back unchanged
(the same dicts, contiguous, in order: condense returns what it did not change as the
same objects) and building fresh ones only for what changed. This is the mechanism of
:mod:`condense.formats` (``Group`` and ``plan``); an adapter passes its own conversion.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from condense.compress import CompressionResult, compress
from condense.formats._common import Group, plan
from condense.providers import AUTO
from condense.providers.detect import choose_provider
from condense.repair import Change, repair
from condense.tokens import context_window, count_text, encoding_for_model
from condense.tokens.families import bare_model
from condense.types import RawMessage

__all__ = ["Fitted", "Group", "LearnedWindows", "fit", "rebuild", "room", "sent_tokens"]

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Fitted:
    """A fitted history: ``messages`` (canonical), whether anything changed, the room it
    was fitted to (``None``: unknown, repaired only) and what was done."""

    messages: list[RawMessage]
    changed: bool
    room: int | None
    provider: str
    repairs: tuple[Change, ...] = ()
    compression: CompressionResult | None = None


def room(budget: int | None, *, model: str | None, output: int = 0, extra: int = 0) -> int | None:
    """The tokens the history may take: ``budget`` (or the model's window) less the
    ``output`` asked for and the ``extra`` sent besides the history; ``None`` when
    neither a budget nor the window is known."""
    window = budget if budget is not None else context_window(model)
    if window is None:
        return None
    if output >= window:  # a request asking for the whole window: do not count it
        output = 0
    return max(1, window - output - extra)


def sent_tokens(value: object, *, model: str | None) -> int:
    """The tokens of something sent besides the history (instructions, tool schemas),
    counted as its JSON text (a string as itself)."""
    if value is None or value == [] or value == "":
        return 0
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return count_text(text, encoding=encoding_for_model(model))


def fit(
    messages: Sequence[RawMessage],
    *,
    budget: int | None,
    provider: str = AUTO,
    model: str | None = None,
    output: int = 0,
    extra: int = 0,
    format: str | None = None,
) -> Fitted:
    """``messages`` repaired for ``provider`` (``auto``: the history, ``format`` and
    ``model`` choose; routing prefixes such as LiteLLM's ``anthropic/`` are ignored) and,
    when over :func:`room`, compressed to it. Never mutates the input; unchanged messages
    come back as the same objects."""
    model = bare_model(model) or None
    choice = choose_provider(provider, messages=messages, format=format, model=model)
    space = room(budget, model=model, output=output, extra=extra)
    if space is None:
        repaired = repair(list(messages), provider=choice)
        return Fitted(
            messages=repaired.messages,
            changed=_changed(messages, repaired.messages),
            room=None,
            provider=choice.name,
            repairs=repaired.changes,
        )
    result = compress(list(messages), budget=space, provider=choice, model=model)
    return Fitted(
        messages=result.messages,
        changed=_changed(messages, result.messages),
        room=space,
        provider=choice.name,
        repairs=result.report.repairs,
        compression=result,
    )


def rebuild(
    messages: Sequence[RawMessage],
    groups: Sequence[Group],
    fresh: Callable[[Sequence[RawMessage]], Sequence[T]],
) -> list[T]:
    """The host's objects for ``messages``: each group whose canonical messages are all
    here unchanged gives its ``native`` objects back as they were; every other run of
    messages goes through ``fresh``."""
    objects: list[T] = []
    for part in plan(messages, groups):
        if isinstance(part, Group):
            objects.extend(part.native)
        else:
            objects.extend(fresh(part.messages))
    return objects


class LearnedWindows:
    """Context windows stated by the provider's own overflow errors, per model.

    Each adapter keeps one, so ``budget=None`` works for a model condense does not know:
    the first overflow error (``"maximum context length is 8192 tokens"``, read by
    :func:`condense.classify`) teaches the window, and the adapter fits the call to it
    and tries once more where its host lets it. Plain values only (deep-copyable).
    """

    def __init__(self) -> None:
        self.known: dict[str, int] = {}

    def get(self, model: str | None) -> int | None:
        return self.known.get(bare_model(model))

    def learn(self, error: BaseException, model: str | None) -> bool:
        """True when ``error`` is an overflow that states a window smaller than any known
        for ``model`` (so a retry fitted to it can succeed)."""
        from condense.errors import Category, classify

        diagnosis = classify(error)
        window = diagnosis.allowed_tokens
        if diagnosis.category is not Category.CONTEXT_OVERFLOW or not window or window <= 0:
            return False
        key = bare_model(model)
        if key in self.known and self.known[key] <= window:
            return False
        self.known[key] = window
        return True

    def budget(self, budget: int | None, model: str | None) -> int | None:
        """``budget`` when given, else the window learned for ``model`` (if any)."""
        return budget if budget is not None else self.get(model)


def _changed(before: Sequence[RawMessage], after: Sequence[RawMessage]) -> bool:
    return len(before) != len(after) or any(a is not b for a, b in zip(before, after, strict=True))
