"""A ``Violation``: one broken rule, with the provider's own words where known.

Rules find violations on canonical messages. ``localize`` restates them in the user's
terms: the provider's text gets the paths of the request that provider receives, spelled
its way (Anthropic ``messages.3.content.1``, Responses ``input[7]``, OpenAI chat
``messages.3.tool_calls.0``); when the history was read from a file, ``location`` names
the turn, block or item in it (``messages[3].content[1]``, ``input[7]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from condense.formats.conversation import Conversation, layout_locator
from condense.formats.locate import (
    ITEM_ID_KEY,
    ITEMS_KEY,
    THINKING_KEY,
    Locator,
    Path,
    dotted,
    human,
    native_words,
    top,
)
from condense.providers import Profile


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One broken rule. ``index`` is the 0-based message index in the validated list;
    ``location`` names the place in the user's own file (``messages[3].content[1]``)
    when the history was validated as a ``Conversation``."""

    index: int
    code: str
    detail: str
    provider: str
    provider_error: str | None = None
    """The error text the provider would answer with, where known."""
    tool_call_id: str | None = None
    location: str | None = None
    fields: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """What the provider's text was filled in with (``id``, ``call``, ``key`` …)."""

    def __str__(self) -> str:
        where = self.location or f"message {self.index}"
        return f"{where}: {self.detail} [{self.code}]"


class _Defaulting(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "0" if key in ("call", "block") else "…"


def violation(profile: Profile, index: int, code: str, detail: str, **fields: str) -> Violation:
    """A Violation of ``profile`` with the provider's text filled in from ``fields``
    (``id``, ``key``, ``role``, ``call``, ``block``, ``name``, ``found``)."""
    template = profile.errors.get(code)
    error = None
    if template is not None:
        error = template.format_map(_Defaulting(index=str(index), **fields))
    return Violation(
        index=index,
        code=code,
        detail=detail,
        provider=profile.name,
        provider_error=error,
        tool_call_id=fields.get("id"),
        fields=fields,
    )


# --- in the user's own terms ------------------------------------------------------------

_EXTENSION_KEYS = frozenset({THINKING_KEY, ITEMS_KEY, ITEM_ID_KEY})
# The paths in the profiles' error texts, and what stands for them in a native request.
_MESSAGE_PATHS = {"anthropic": "messages.{index}", "responses": "input[{index}]"}
_BLOCK_PATHS = {"anthropic": "messages.{index}.content.{block}"}


def wire_format(profile: Profile) -> str:
    """The wire format requests to ``profile``'s provider are written in."""
    return profile.name if profile.name in _MESSAGE_PATHS else "openai"


def localize(
    found: Sequence[Violation],
    profile: Profile,
    messages: Sequence[Any],
    *,
    conversation: Conversation | None = None,
) -> list[Violation]:
    """``found`` (violations of ``profile`` in ``messages``) in the user's own terms.

    The provider's text gets the paths of the request that provider receives: the file's
    own when it is in the provider's wire format, else those of the request condense
    would write. With a ``conversation`` (``messages`` are its messages), ``location``
    names the place in its file and no text names condense's internal keys.
    """
    if not found:
        return []
    wire = wire_format(profile)
    source = conversation.locator if conversation is not None else None
    paths: list[Locator] = []  # empty: the canonical paths are the request's own
    if wire in _MESSAGE_PATHS:
        if source is not None and source.format == wire:
            paths.append(source)  # the file is the request: its own paths
        paths.append(layout_locator(wire, messages))  # where condense would write them
    return [_localize(v, profile, messages, source, paths) for v in found]


def _localize(
    found: Violation,
    profile: Profile,
    messages: Sequence[Any],
    source: Locator | None,
    paths: Sequence[Locator],
) -> Violation:
    fields = dict(found.fields)
    message = messages[found.index] if 0 <= found.index < len(messages) else None
    call, part = _number(fields.get("call")), _number(fields.get("block"))
    key = _bare_key(fields.get("key"), call, part)
    ident = fields.get("id")
    error = found.provider_error
    template = profile.errors.get(found.code)
    native = source is not None and source.format != "openai"
    if key in _EXTENSION_KEYS and native:
        error = None  # condense's own key for the file's state: no provider sees that name
    elif template is not None:
        for locator in paths:
            spot = locator.spot(found.index, message, call=call, part=part, ident=ident)
            if spot is not None:
                error = _native_text(template, fields, spot, key, locator)
                break
    if source is None:
        return replace(found, provider_error=error)
    if key in (THINKING_KEY, ITEMS_KEY):  # the file holds these as blocks or items
        where = source.first_replay(found.index) or source.spot(found.index)
        key = None
    else:
        where = source.spot(found.index, message, call=call, part=part, ident=ident)
        key = "id" if key == ITEM_ID_KEY else key
    return replace(
        found,
        location=None if where is None else human(where) + (f".{key}" if key else ""),
        detail=native_words(found.detail) if native else found.detail,
        provider_error=native_words(error) if native and error else error,
    )


def _native_text(
    template: str, fields: dict[str, str], spot: Path, key: str | None, locator: Locator
) -> str:
    """The provider's text with the request's own paths, in the provider's spelling."""
    turn = top(spot)
    inside = spot[len(turn) :]
    if locator.format == "anthropic":
        message = dotted(turn)
        block = dotted(spot) if inside else f"{message}.content.{fields.get('block', '0')}"
        kind = locator.type_at(spot) if inside else None
        relative = ".".join(filter(None, (dotted(inside), kind, key)))
    else:
        message, block = human(turn), human(spot)
        relative = ".".join(filter(None, (human(inside), key)))
    if isinstance(turn[-1], int):
        fields["index"] = str(turn[-1])
    fields["key"] = relative or fields.get("key", "…")
    text = template.replace(_BLOCK_PATHS.get(locator.format, "\0"), "{_block}")
    text = text.replace(_MESSAGE_PATHS[locator.format], "{_message}")
    return text.format_map(_Defaulting(fields, _block=block, _message=message))


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _bare_key(key: str | None, call: int | None, part: int | None) -> str | None:
    """The key's own name: the rules spell a tool call's key ``tool_calls.0.name`` and a
    text block's ``content.1.text.name``."""
    if key is None:
        return None
    if call is not None and key.startswith(f"tool_calls.{call}."):
        return key.removeprefix(f"tool_calls.{call}.")
    if part is not None and key.startswith(f"content.{part}."):
        return key.removeprefix(f"content.{part}.").split(".", 1)[-1]
    return key
