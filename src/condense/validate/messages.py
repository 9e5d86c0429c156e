"""The rules one message breaks on its own: role, keys, content shape, tool-call shape,
JSON-object arguments."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from condense.arguments import arguments_problem
from condense.arguments.calls import CUSTOM, CUSTOM_KEYS, call_name, custom_input, is_custom
from condense.message import RESPONSES_ITEMS, is_empty_content
from condense.providers import Profile
from condense.providers.base import FUNCTION_KEYS
from condense.turns import carries_compaction
from condense.validate.report import Violation, violation

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})

_argument_verdicts: dict[str, str | None] = {}
_VERDICT_CACHE_SIZE = 65_536


def argument_problem(arguments: str) -> str | None:
    """The violation code of an arguments string, or ``None`` if it is valid arguments
    (``condense.arguments.arguments_problem``: a JSON object strict parsers accept).

    Verdicts are cached by string, so validating a grown history again is cheap."""
    verdict = _argument_verdicts.get(arguments, "")
    if verdict != "":
        return verdict
    verdict = arguments_problem(arguments)  # the one definition, shared with the normaliser
    if len(_argument_verdicts) >= _VERDICT_CACHE_SIZE:
        _argument_verdicts.clear()
    _argument_verdicts[arguments] = verdict
    return verdict


def message_violations(index: int, message: Any, profile: Profile) -> Iterator[Violation]:
    """The rules one message breaks on its own (``index`` is only used for reporting)."""
    if not isinstance(message, dict):
        yield violation(profile, index, "invalid_message", "is not a JSON object")
        return
    role = message.get("role")
    if role not in ROLES:
        yield violation(
            profile, index, "unknown_role", f"has unknown role {role!r}", role=str(role)
        )
        return
    if role == "developer" and not profile.developer_role:
        yield violation(
            profile,
            index,
            "unknown_role",
            f"role 'developer' is not understood by {profile.name}",
            role="developer",
        )
    if not accepted_keys(message, profile).issuperset(message):
        yield from _key_violations(index, message, profile)
    yield from _content_violations(index, message, profile)
    if role == "assistant" and message.get("tool_calls") is not None:
        yield from _tool_call_violations(index, message, profile)


_COMPACTION_KEYS = frozenset({RESPONSES_ITEMS})


def accepted_keys(message: dict[str, Any], profile: Profile) -> frozenset[str]:
    """The keys ``profile`` accepts on ``message``: those of its role, and, on a message
    that carries a compaction (``condense.turns.carries_compaction``), the key that holds
    it under every profile: compaction state stands for all earlier context and no
    validator reports it, nor does repair remove it."""
    allowed = profile.allowed_keys.get(message.get("role"), frozenset())  # type: ignore[arg-type]
    if RESPONSES_ITEMS in message and carries_compaction(message):
        return allowed | _COMPACTION_KEYS
    return allowed


def _key_violations(index: int, message: dict[str, Any], profile: Profile) -> Iterator[Violation]:
    allowed = accepted_keys(message, profile)
    for key in message:
        if key in allowed:
            continue
        if isinstance(key, str) and key.startswith("_"):
            yield violation(profile, index, "private_key", f"has private key {key!r}", key=str(key))
        else:
            yield violation(
                profile,
                index,
                "unknown_key",
                f"has key {key!r} that {profile.name} does not accept",
                key=str(key),
            )


def content_is_well_formed(content: object) -> bool:
    """Content is ``None``, a string, or a list of parts that each carry a string type."""
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("type"), str) for part in content
    )


def has_replay_only(message: dict[str, Any]) -> bool:
    """An assistant message that carries replay state but no content or calls of its own
    (reasoning items whose following item is gone)."""
    return bool(message.get("responses_items")) and not message.get("tool_calls")


def _content_violations(
    index: int, message: dict[str, Any], profile: Profile
) -> Iterator[Violation]:
    role = message["role"]
    content = message.get("content")
    if not content_is_well_formed(content):
        yield violation(
            profile, index, "invalid_content", "content is not a string or a list of parts"
        )
        return
    if role == "assistant":
        if message.get("tool_calls") or message.get("refusal"):
            return
        if content is None and not has_replay_only(message):
            yield violation(profile, index, "empty_message", "assistant message has no content")
        elif content is not None and profile.no_empty_text and is_empty_content(content):
            yield violation(profile, index, "empty_message", "assistant message is empty")
    elif content is None:
        yield violation(profile, index, "invalid_content", f"{role} message has no content")
    elif role == "user" and profile.no_empty_text and is_empty_content(content):
        yield violation(profile, index, "empty_message", "user message is empty")


def _tool_call_violations(
    index: int, message: dict[str, Any], profile: Profile
) -> Iterator[Violation]:
    calls = message["tool_calls"]
    if not isinstance(calls, list):
        yield violation(profile, index, "tool_call_malformed", "tool_calls is not a list")
        return
    if not calls:
        yield violation(profile, index, "empty_tool_calls", "tool_calls is an empty list")
    for position, call in enumerate(calls):
        yield from _one_call_violations(index, position, call, profile)


def _one_call_violations(
    index: int, position: int, call: object, profile: Profile
) -> Iterator[Violation]:
    where = f"tool call {position}"
    at = str(position)
    if isinstance(call, dict) and is_custom(call):
        yield from custom_call_violations(index, position, call, profile)
        return
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        yield violation(profile, index, "tool_call_malformed", f"{where} has no function", call=at)
        return
    function = call["function"]
    if call.get("type") != "function":
        yield violation(
            profile, index, "tool_call_malformed", f"{where} type is not 'function'", call=at
        )
    if not isinstance(function.get("name"), str) or not function["name"]:
        yield violation(profile, index, "tool_call_malformed", f"{where} has no name", call=at)
    if not (profile.tool_call_keys.issuperset(call) and FUNCTION_KEYS.issuperset(function)):
        for key in [*(set(call) - profile.tool_call_keys), *(set(function) - FUNCTION_KEYS)]:
            yield violation(
                profile,
                index,
                "unknown_key",
                f"{where} has key {key!r}",
                key=f"tool_calls.{position}.{key}",
                call=at,
            )
    yield from _id_violations(index, position, call, profile)
    call_id = call.get("id")
    arguments = function.get("arguments")
    ident = call_id if isinstance(call_id, str) else ""
    if not isinstance(arguments, str):
        yield violation(
            profile,
            index,
            "arguments_not_string",
            f"{where} arguments are not a JSON string",
            call=at,
            id=ident,
        )
        return
    problem = argument_problem(arguments)
    if problem is not None:
        what = "not valid JSON" if problem == "arguments_invalid_json" else "not a JSON object"
        yield violation(
            profile,
            index,
            problem,
            f"{where} arguments are {what}",
            call=at,
            id=ident,
            json_error=json_error(arguments),
        )


def custom_call_violations(
    index: int, position: int, call: dict[str, Any], profile: Profile
) -> Iterator[Violation]:
    """The rules a custom (free-form) tool call breaks: the profile must take custom
    calls, and the call needs a ``custom`` object with a name and a text ``input`` (any
    text: it is not JSON arguments)."""
    where, at = f"tool call {position}", str(position)
    if not profile.custom_tool_calls:
        yield violation(
            profile,
            index,
            "tool_call_malformed",
            f"{where} is a custom (free-form) tool call, which {profile.name} does not accept",
            call=at,
        )
    body = call.get(CUSTOM)
    if not isinstance(body, dict):
        yield violation(profile, index, "tool_call_malformed", f"{where} has no custom", call=at)
        return
    if call_name(call) is None:
        yield violation(profile, index, "tool_call_malformed", f"{where} has no name", call=at)
    if custom_input(call) is None:
        yield violation(
            profile, index, "tool_call_malformed", f"{where} input is not text", call=at
        )
    allowed = (profile.tool_call_keys - {"function"}) | {CUSTOM}
    for key in [*(set(call) - allowed), *(set(body) - CUSTOM_KEYS)]:
        yield violation(
            profile,
            index,
            "unknown_key",
            f"{where} has key {key!r}",
            key=f"tool_calls.{position}.{key}",
            call=at,
        )
    yield from _id_violations(index, position, call, profile)


def _id_violations(
    index: int, position: int, call: dict[str, Any], profile: Profile
) -> Iterator[Violation]:
    call_id = call.get("id")
    where, at = f"tool call {position}", str(position)
    if not isinstance(call_id, str) or not call_id:
        yield violation(profile, index, "tool_call_missing_id", f"{where} has no id", call=at)
    elif (profile.id_pattern is not None and not profile.id_pattern.match(call_id)) or (
        profile.id_max_length is not None and len(call_id) > profile.id_max_length
    ):
        yield violation(
            profile,
            index,
            "invalid_tool_call_id",
            f"{where} id {call_id!r} is not a valid {profile.name} id",
            id=call_id,
            call=at,
        )


def json_error(text: str) -> str:
    """What Python's ``json.loads`` says about ``text`` (as vLLM reports it), or ``""``."""
    try:
        json.loads(text)
    except ValueError as error:
        return str(error)
    return ""
