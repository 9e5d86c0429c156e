"""A ``Violation``: one broken rule, with the provider's own words where known.

Rules find violations on canonical messages. When the history was read from a file,
``localize`` restates each one in the terms of that file: ``location`` names the turn,
block or item (``messages[3].content[1]``, ``input[7]``), and when the file is in the
profile's own wire format the provider's text is filled with the file's paths, spelled
the provider's way (Anthropic ``messages.3.content.1``, Responses ``input[7]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from condense.formats import Conversation


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

_REPLAY_KEYS = frozenset({THINKING_KEY, ITEMS_KEY})
# The paths in the profiles' error texts, and what stands for them in a native file.
_MESSAGE_PATHS = {"anthropic": "messages.{index}", "responses": "input[{index}]"}
_BLOCK_PATHS = {"anthropic": "messages.{index}.content.{block}"}


def localize(
    found: Sequence[Violation], profile: Profile, conversation: Conversation
) -> list[Violation]:
    """``found`` (violations of ``profile`` in ``conversation.messages``) restated in the
    terms of the conversation's file; see the module docstring."""
    locator = conversation.locator
    own_format = conversation.format in ("openai", profile.name)
    return [
        _localize(v, profile, locator, conversation.messages, own_format=own_format) for v in found
    ]


def _localize(
    found: Violation,
    profile: Profile,
    locator: Locator,
    messages: Sequence[Any],
    *,
    own_format: bool,
) -> Violation:
    fields = dict(found.fields)
    message = messages[found.index] if 0 <= found.index < len(messages) else None
    call, part = _number(fields.get("call")), _number(fields.get("block"))
    key = _bare_key(fields.get("key"), call, part)
    error = found.provider_error
    if key in _REPLAY_KEYS:  # state the file holds as blocks or items, not as a key
        spot = locator.first_replay(found.index) or locator.spot(found.index)
        key, error = None, None
    else:
        spot = locator.spot(found.index, message, call=call, part=part, ident=fields.get("id"))
        key = "id" if key == ITEM_ID_KEY else key
    if spot is None:
        return found
    template = profile.errors.get(found.code)
    if own_format and template is not None and locator.format in _MESSAGE_PATHS:
        error = _native_text(template, fields, spot, key, locator)
    native = locator.format != "openai"
    return replace(
        found,
        location=human(spot) + (f".{key}" if key else ""),
        detail=native_words(found.detail) if native else found.detail,
        provider_error=native_words(error) if native and error else error,
    )


def _native_text(
    template: str, fields: dict[str, str], spot: Path, key: str | None, locator: Locator
) -> str:
    """The provider's text with the file's own paths, in the provider's spelling."""
    turn = top(spot)
    inside = spot[len(turn) :]
    if locator.format == "anthropic":
        message = dotted(turn)
        block = dotted(spot) if inside else f"{message}.content.{fields.get('block', '0')}"
        kind = locator.type_at(spot) if inside else None
        relative = ".".join(filter(None, (dotted(inside), kind, key)))
    else:
        message, block = human(turn), human(spot)
        relative = ".".join(filter(None, (human(inside).lstrip("."), key)))
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
