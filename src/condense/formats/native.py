"""Native input to the public functions: read it as ``condense.load`` does, answer in its
shape.

``compress``, ``repair``, ``validate`` and the token counters take a history in any wire
format condense reads, passed as it is:

- the canonical form, an OpenAI chat message list: worked on as it is, exactly as
  before (nothing is read, copied or converted);
- a native message list (Anthropic ``messages``, Responses ``input`` items, Gemini
  ``contents``, Bedrock Converse ``messages``, ShareGPT turns), or a request body in any
  format (``{"system", "messages", …}``, ``{"instructions", "input", …}``,
  ``{"contents", "systemInstruction", …}``, an OpenAI chat ``{"messages", "model"}``):
  read into a :class:`~condense.formats.Conversation` (:func:`read_native`), so its
  format chooses the profile under ``provider="auto"`` and reports name places in it
  (``messages[3].content[1]``, ``input[7]``, ``contents[2].parts[0]``);
- a loaded ``Conversation``: as it is.

A list is native when :func:`~condense.formats.detect_format` says so; a list it calls
``openai``, or cannot tell (a history of junk, left to ``repair``), is canonical. A list
of transcript events (Claude Code, Codex rollout) is refused with a FormatError: read it
with ``condense.load``, which rebuilds its requests.

The answer comes back in the input's shape (:func:`answer`): for native input the
result's ``messages`` is the native message list (the list under the body's key for a
body) and its ``native`` the whole native form, as ``Conversation.dump`` writes it — the
body with its other fields carried for a body, the list for a list. Unchanged turns are
the caller's own objects. For canonical input and a ``Conversation``, ``messages`` is the
canonical list and ``native`` is ``None``, as before (``conversation.dump`` writes a
loaded one back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.exceptions import FormatError
from condense.formats import transcripts
from condense.formats.conversation import ROOTS, Conversation
from condense.formats.detect import detect_format
from condense.formats.openai import list_key
from condense.types import RawMessage

BODY_KEYS = ("messages", "input", "contents", "conversations")
"""The keys a request body holds its history under, in the formats condense reads."""


def read_native(history: object) -> Conversation | None:
    """``history`` read as a Conversation when it is native input (see the module
    docstring); ``None`` for canonical input and for anything that is not a list or a
    dict, and for a dict without a history key (``BODY_KEYS``: one message passed alone,
    say), left to the caller's own checks. A body that cannot be read is a FormatError
    naming what is wrong."""
    if isinstance(history, Conversation):
        return None
    if isinstance(history, dict):
        if not any(key in history for key in BODY_KEYS):
            return None  # one message, or not a history: the caller's checks say which
        return Conversation.read(history, source="<object>")
    if not isinstance(history, list):
        return None
    try:
        name = detect_format(history)
    except FormatError:
        if transcripts.first_kind(history[:1]) is not None:
            raise  # a session's events: condense.load() rebuilds its requests
        return None  # not one format's list: the canonical path reports what is wrong
    if name == "openai":
        return None
    return Conversation.read(history, format=name, source="<object>")


def canonical_messages(history: Any) -> Any:
    """The canonical messages of native input (its Conversation's), else ``history``
    itself: what the token counters count. A body's fields that are not messages
    (``instructions``, ``tools``) are not among them."""
    native = read_native(history)
    return native.messages if native is not None else history


def answer(conversation: Conversation, messages: Sequence[RawMessage]) -> tuple[list[Any], Any]:
    """``(native messages, native form)`` of ``messages`` for input read by
    :func:`read_native`: the whole form as ``conversation.dump`` writes it, and the
    message list in it."""
    native = conversation.dump(messages)
    return answer_messages(conversation, native, messages), native


def answer_messages(
    conversation: Conversation, native: Any, messages: Sequence[RawMessage]
) -> list[Any]:
    """The message list of ``native``, a form written for ``conversation`` from the
    canonical ``messages``."""
    if not isinstance(native, dict):
        return list(native)
    key = list_key(native) if conversation.format == "openai" else ROOTS[conversation.format]
    found = native.get(key)
    if isinstance(found, list):
        return found
    # a Responses body whose ``input`` is one string: its items, as a fresh write makes them
    return list(Conversation(messages=list(messages), format=conversation.format).dump())
