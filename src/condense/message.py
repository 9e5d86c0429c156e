"""The canonical message: its keys, and the facts every layer asks of it.

condense reads every wire format into OpenAI Chat Completions messages, plain dicts
(``condense.types.RawMessage``), with a few keys of its own for what that shape cannot
hold. This module is the one home of those keys and of the questions every layer asks of
a message — formats, validate, repair, reduce, compress, datasets, the integrations and the
proxy read them here, never write them out again:

- **content text** (:func:`text_parts`, :func:`content_text`, :func:`is_text_part`): the
  plain text a content holds — a string, or its text parts in order (a part of a text
  type, :data:`TEXT_PARTS`, or of no type, whose ``text`` is a string). Images, files,
  refusals and other blocks are not text; a caller that needs a word for them (a
  summary's ``[image]``) adds it itself; whether it says anything at all is
  :func:`is_empty_content`; two contents become one by
  :func:`join_content` (repair's merge of a same-role run, compression's join);
- **call ids** (:func:`call_ids`, :func:`calls_made`) and **the result's id**
  (:func:`result_id`, :func:`answers`): how a tool result names the call it answers;
- **replay state** (:func:`carries_replay`, :func:`replay_state`, :func:`keeps_replay`):
  what a reasoning model's provider needs sent back unchanged;
- **prefix reuse** (:func:`extends`, :func:`resumed`): whether a history continues one
  handled before (message by message, the same object or an equal value), and the
  history to work on then.

Where a message's turn begins (the current turn, its opening ask) is ``condense.turns``.
Everything here reads; nothing mutates or raises on a malformed message (histories
arrive broken: a fact of a malformed message is its empty answer).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "CALL_ID_ALIAS",
    "EXTRA_CONTENT",
    "ITEM_ID",
    "REASONING_CONTENT",
    "REPLAY_CALL_KEYS",
    "REPLAY_KEYS",
    "REPLAY_MESSAGE_KEYS",
    "REPLAY_PART_KEYS",
    "RESPONSES_ITEMS",
    "TEXT_PARTS",
    "THINKING_BLOCKS",
    "ReplayLoss",
    "answers",
    "call_ids",
    "calls_made",
    "carries_reasoning",
    "carries_replay",
    "content_text",
    "extends",
    "is_empty_content",
    "is_text_part",
    "join_content",
    "keeps_replay",
    "replay_state",
    "replayed_item_ids",
    "result_id",
    "resumed",
    "text_parts",
    "thought_signature",
]

# -- keys ------------------------------------------------------------------------------

REASONING_CONTENT = "reasoning_content"
"""DeepSeek / Kimi / vLLM reasoning text on an assistant message."""
THINKING_BLOCKS = "thinking_blocks"
"""Anthropic ``thinking`` / ``redacted_thinking`` blocks of an assistant turn, verbatim."""
RESPONSES_ITEMS = "responses_items"
"""Responses items (``reasoning`` …) that came right before an assistant message."""
ITEM_ID = "item_id"
"""A Responses item's own ``id`` (``msg_…``, ``fc_…``), carried by the adapter."""
EXTRA_CONTENT = "extra_content"
"""Gemini's OpenAI-compatible endpoint: ``extra_content.google.thought_signature``."""
CALL_ID_ALIAS = "call_id"
"""The second id a tool call may carry: Responses-bridging SDKs write the item id
(``fc_…``) as ``id`` and the id results answer (``call_…``) as ``call_id``."""
REPLAY_KEYS = frozenset({REASONING_CONTENT, THINKING_BLOCKS, RESPONSES_ITEMS})
"""Assistant-message keys that hold replay state: never edited, split off or merged."""
REPLAY_MESSAGE_KEYS = REPLAY_KEYS | {ITEM_ID}
"""Keys of an assistant message that hold replay state: thinking blocks, Responses items,
``reasoning_content``, and a Responses item's own ``id``."""
REPLAY_CALL_KEYS = frozenset({EXTRA_CONTENT, ITEM_ID})
"""Keys of a tool call that hold replay state: a Gemini thought signature, an item id."""
REPLAY_PART_KEYS = frozenset({"thoughtSignature", "thought_signature"})
"""Keys of a content part (or of the native Gemini part it carries under ``part``, see
``condense.formats.gemini``) that hold replay state: a Gemini thought signature."""
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
"""The content part types that carry plain text (Chat, Anthropic and Responses)."""

# -- content text ----------------------------------------------------------------------


def is_text_part(part: object) -> bool:
    """Whether a content part is text: a bare string, or a part with a string ``text``
    whose type is a text type (:data:`TEXT_PARTS`) or that has no type (a Gemini-style
    ``{"text": …}``), as the token counter reads it (``condense.tokens.pieces``)."""
    if isinstance(part, str):
        return True
    if not isinstance(part, dict) or not isinstance(part.get("text"), str):
        return False
    kind = part.get("type")
    return kind is None or (isinstance(kind, str) and kind in TEXT_PARTS)


def text_parts(content: object) -> list[str]:
    """The texts of a message's ``content``, in order: the string itself (even empty), or
    the text of each text part (:func:`is_text_part`). Any other part (an image, a file,
    a refusal, a text whose value is not a string), or any other content, holds none."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        part if isinstance(part, str) else part["text"] for part in content if is_text_part(part)
    ]


def content_text(content: object) -> str:
    """The text of a message's ``content``: :func:`text_parts` joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(text_parts(content))


def is_empty_content(content: object) -> bool:
    """Whether a content says nothing: ``None``, a blank string, or a list whose parts are
    all blank ``text`` blocks (what providers refuse as empty; any other part, an image
    or a ``input_text``, says something)."""
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return all(
            isinstance(part, dict)
            and part.get("type") == "text"
            and not str(part.get("text") or "").strip()
            for part in content
        )
    return False


def join_content(first: object, second: object) -> object:
    """One content holding ``first`` then ``second`` (two messages of one role become one):
    an empty one (``None``, ``""``, ``[]``) gives way to the other, two strings are
    joined by a blank line, anything else becomes one list of parts (a string as a text
    part). Neither is copied deeply nor mutated."""
    if first is None or first == "" or first == []:
        return second
    if second is None or second == "" or second == []:
        return first
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _as_parts(first) + _as_parts(second)


def _as_parts(content: object) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}]


# -- call ids --------------------------------------------------------------------------


def call_ids(call: object) -> tuple[str, ...]:
    """The ids that identify one tool call: its ``id``, then its ``call_id`` alias.

    Only non-empty strings count, each once; a call that is not a dict has none.
    """
    if not isinstance(call, dict):
        return ()
    primary, alias = call.get("id"), call.get(CALL_ID_ALIAS)
    ids: tuple[str, ...] = (primary,) if isinstance(primary, str) and primary else ()
    if isinstance(alias, str) and alias and alias not in ids:
        ids += (alias,)
    return ids


def calls_made(message: object) -> tuple[str, ...]:
    """Every id by which an answer may name a call ``message`` makes: each tool call's
    ids (:func:`call_ids`), and the ``call_id`` of each Responses call item it carries
    (``local_shell_call``, ``shell_call``, ``apply_patch_call``, …: an item with a
    ``call_id`` whose type does not end in ``_output``; server-run items are answered by
    the server and left out)."""
    if type(message) is not dict or message.get("role") != "assistant":
        return ()
    found: list[str] = []
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            found.extend(call_ids(call))
    for item in _items(message):
        ident = item.get("call_id")
        kind = item.get("type")
        if (
            isinstance(ident, str)
            and ident
            and isinstance(kind, str)
            and not kind.endswith("_output")
            and item.get("execution") != "server"
        ):
            found.append(ident)
    return tuple(found)


def answers(message: object) -> tuple[str, ...]:
    """Every call id ``message`` answers (the result's id): a tool message's
    ``tool_call_id``, and the ``call_id`` of each Responses output item
    (``shell_call_output`` …) it carries."""
    if type(message) is not dict:
        return ()
    role = message.get("role")
    if role == "tool":
        ident = result_id(message)
        return (ident,) if ident is not None else ()
    if role != "assistant":
        return ()
    return tuple(
        item["call_id"]
        for item in _items(message)
        if isinstance(item.get("call_id"), str)
        and item["call_id"]
        and str(item.get("type")).endswith("_output")
        and item.get("execution") != "server"
    )


def result_id(message: object) -> str | None:
    """The id a tool result names its call by: its ``tool_call_id`` when that is a
    non-empty string, else ``None``."""
    value = message.get("tool_call_id") if isinstance(message, dict) else None
    return value if isinstance(value, str) and value else None


def _items(message: dict[str, Any]) -> list[dict[str, Any]]:
    items = message.get(RESPONSES_ITEMS)
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict)]


# -- histories -------------------------------------------------------------------------


def extends(history: Sequence[Any], prefix: Sequence[Any]) -> bool:
    """Whether ``history`` starts with ``prefix``, message by message: the same object or
    an equal value (an agent that rebuilds its list, or a client that re-sends JSON, sends
    equal messages, not the same ones)."""
    return len(history) >= len(prefix) and all(
        a is b or a == b for a, b in zip(history, prefix, strict=False)
    )


def resumed(history: Sequence[Any], known: Sequence[Any], sent: Sequence[Any]) -> list[Any] | None:
    """Prefix reuse, the one mechanism: when ``history`` extends ``known`` (a history
    handled before), what was ``sent`` for it followed by the messages appended since;
    else ``None``. What to remember and when to reuse it is the caller's policy
    (``compress(previous=…)``, ``guard``'s healed histories, the proxy's memory)."""
    if not extends(history, known):
        return None
    return [*sent, *history[len(known) :]]


# -- replay state ----------------------------------------------------------------------


def carries_replay(message: Any) -> bool:
    """True when ``message`` holds state its provider needs replayed unchanged: thinking
    blocks, Responses items (reasoning items, an item ``id``), ``reasoning_content``, a
    tool call carrying a thought signature or an item id, or a content part carrying a
    Gemini thought signature (read from a native Gemini part, which must go back as it
    came and where it came) — the keys of :data:`REPLAY_MESSAGE_KEYS`,
    :data:`REPLAY_CALL_KEYS` and :data:`REPLAY_PART_KEYS` on an assistant message.

    Such a message is kept as the same object or left out with its whole unit: condense
    never edits it, never merges text into it and never shrinks its calls (Anthropic
    checks thinking signatures against the turn, Gemini signatures against the step;
    Anthropic thinking of earlier turns may be removed whole, see
    ``condense.reduce.thinking``).
    """
    if type(message) is not dict or message.get("role") != "assistant":
        return False
    if not REPLAY_MESSAGE_KEYS.isdisjoint(message):
        return True
    calls = message.get("tool_calls")
    if isinstance(calls, list) and any(
        isinstance(call, dict) and not REPLAY_CALL_KEYS.isdisjoint(call) for call in calls
    ):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict)
        and (
            not REPLAY_PART_KEYS.isdisjoint(part)
            or (
                isinstance(part.get("part"), dict) and not REPLAY_PART_KEYS.isdisjoint(part["part"])
            )
        )
        for part in content
    )


def replay_state(messages: Sequence[Any]) -> Counter[str]:
    """Every piece of replay state in ``messages`` (as :func:`carries_replay` defines it),
    serialized, counted: one piece per thinking block, Responses item, reasoning text,
    item id and thought signature. Two histories with equal counters replay the same
    state; a piece left out is missing from the counter, a piece edited is another one."""
    return Counter(_piece(key, value) for m in messages for key, value in _replay_pieces(m))


ReplayLoss = Literal["none", "earlier", "any"]
"""What a rewrite may leave out of the replay state (:func:`keeps_replay`)."""


def keeps_replay(before: Sequence[Any], after: Sequence[Any], *, may_lose: ReplayLoss) -> bool:
    """Whether ``after``, a rewrite of ``before``, keeps its replay state as a provider
    needs it. No piece is ever edited or added (an edited piece — a thinking block, a
    signature, an item id — is one piece lost and another added). Pieces are left out
    only as ``may_lose`` allows:

    - ``"none"`` (a repair): state moves with its message and stays whole; only item
      ids may go (an output item replayed without its id is new input, which is how
      repair answers a reasoning item that is gone, ``condense.repair.chains``);
    - ``"earlier"`` (a compression): earlier turns' state may go whole, the latest
      assistant message's stays;
    - ``"any"``: any piece may go (after the provider refused that state as bound to
      another conversation).
    """
    kept, had = replay_state(after), replay_state(before)
    if not kept <= had:
        return False
    if may_lose == "any":
        return True
    if may_lose == "none":
        lost = had - kept
        return all(_key_of(piece) == ITEM_ID for piece in lost)
    latest = next(
        (m for m in reversed(before) if isinstance(m, dict) and m.get("role") == "assistant"), None
    )
    return replay_state([latest]) <= kept


def carries_reasoning(message: dict[str, Any]) -> bool:
    """The message carries a Responses ``reasoning`` item."""
    items = message.get(RESPONSES_ITEMS)
    return isinstance(items, list) and any(
        isinstance(item, dict) and item.get("type") == "reasoning" for item in items
    )


def replayed_item_ids(message: dict[str, Any]) -> list[str]:
    """The Responses item ids (``msg_…``, ``fc_…``) a message and its calls carry."""
    ids = [message[ITEM_ID]] if isinstance(message.get(ITEM_ID), str) else []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and isinstance(call.get(ITEM_ID), str):
            ids.append(call[ITEM_ID])
    return ids


def thought_signature(call: object) -> str | None:
    """The Gemini thought signature a tool call carries, if any."""
    extra = call.get(EXTRA_CONTENT) if isinstance(call, dict) else None
    google = extra.get("google") if isinstance(extra, Mapping) else None
    signature = google.get("thought_signature") if isinstance(google, Mapping) else None
    return signature if isinstance(signature, str) and signature else None


def _replay_pieces(message: Any) -> Iterator[tuple[str, Any]]:
    """``(key, value)`` of each piece of replay state an assistant message carries."""
    if type(message) is not dict or message.get("role") != "assistant":
        return
    for key in sorted(REPLAY_MESSAGE_KEYS & message.keys()):
        value = message[key]
        for item in value if isinstance(value, list) else [] if value is None else [value]:
            yield key, item
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict):
            for key in sorted(REPLAY_CALL_KEYS & call.keys()):
                yield key, call[key]
    content = message.get("content")
    for part in content if isinstance(content, list) else ():
        for holder in (part, part.get("part")) if isinstance(part, dict) else ():
            if isinstance(holder, dict):
                for key in sorted(REPLAY_PART_KEYS & holder.keys()):
                    yield key, holder[key]


def _piece(key: str, value: Any) -> str:
    return json.dumps([key, value], sort_keys=True, ensure_ascii=False, default=repr)


def _key_of(piece: str) -> str:
    key: str = json.loads(piece)[0]
    return key
