"""``validate``: list every way a history breaks a provider profile's rules.

The validator never raises on odd input: a message that is not even a dict is itself a
violation. Each violation names the message index, a stable code, a human sentence and,
where a provider's real error text is known, the error it would return.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from condense.arguments import arguments_problem
from condense.profiles import (
    DEFAULT_PROFILE,
    FUNCTION_KEYS,
    Profile,
    get_profile,
)
from condense.units import call_ids

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One broken rule. ``index`` is the 0-based message index in the validated list."""

    index: int
    code: str
    detail: str
    provider: str
    provider_error: str | None = None
    """The error text the provider would answer with, where known."""
    tool_call_id: str | None = None

    def __str__(self) -> str:
        return f"message {self.index}: {self.detail} [{self.code}]"


def validate(messages: Sequence[Any], provider: str | Profile = DEFAULT_PROFILE) -> list[Violation]:
    """Return every rule of ``provider``'s profile that ``messages`` breaks, in order.

    An empty list means the provider will accept the history's structure. The input is
    only read.
    """
    profile = get_profile(provider)
    if _plainly_valid(messages, profile):
        return []
    return _all_violations(messages, profile)


def _all_violations(messages: Sequence[Any], profile: Profile) -> list[Violation]:
    found = [*_message_violations(messages, profile), *pairing_violations(messages, profile)]
    found.extend(_order_violations(messages, profile))
    found.sort(key=lambda v: v.index)
    return found


def _violation(profile: Profile, index: int, code: str, detail: str, **fields: str) -> Violation:
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
    )


class _Defaulting(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "…"


def _message_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    for index, message in enumerate(messages):
        yield from message_violations(index, message, profile)


def message_violations(index: int, message: Any, profile: Profile) -> Iterator[Violation]:
    """The rules one message breaks on its own (``index`` is only used for reporting)."""
    if not isinstance(message, dict):
        yield _violation(profile, index, "invalid_message", "is not a JSON object")
        return
    role = message.get("role")
    if role not in ROLES:
        yield _violation(profile, index, "unknown_role", f"has unknown role {role!r}")
        return
    if role == "developer" and not profile.developer_role:
        yield _violation(
            profile, index, "unknown_role", f"role 'developer' is not understood by {profile.name}"
        )
    if not profile.allowed_keys.get(role, frozenset()).issuperset(message):
        yield from _key_violations(index, message, profile)
    yield from _content_violations(index, message, profile)
    if role == "assistant" and message.get("tool_calls") is not None:
        yield from _tool_call_violations(index, message, profile)


def _key_violations(index: int, message: dict[str, Any], profile: Profile) -> Iterator[Violation]:
    allowed = profile.allowed_keys.get(message["role"], frozenset())
    for key in message:
        if key in allowed:
            continue
        if isinstance(key, str) and key.startswith("_"):
            yield _violation(
                profile, index, "private_key", f"has private key {key!r}", key=str(key)
            )
        else:
            yield _violation(
                profile,
                index,
                "unknown_key",
                f"has key {key!r} that {profile.name} does not accept",
                key=str(key),
            )


def is_empty_content(content: object) -> bool:
    """True for ``None``, blank strings and lists whose text parts are all blank."""
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


def content_is_well_formed(content: object) -> bool:
    """Content is ``None``, a string, or a list of parts that each carry a string type."""
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("type"), str) for part in content
    )


def _content_violations(
    index: int, message: dict[str, Any], profile: Profile
) -> Iterator[Violation]:
    role = message["role"]
    content = message.get("content")
    if not content_is_well_formed(content):
        yield _violation(
            profile, index, "invalid_content", "content is not a string or a list of parts"
        )
        return
    if role == "assistant":
        if message.get("tool_calls") or message.get("refusal"):
            return
        if content is None:
            yield _violation(profile, index, "empty_message", "assistant message has no content")
        elif profile.no_empty_text and is_empty_content(content):
            yield _violation(profile, index, "empty_message", "assistant message is empty")
    elif content is None:
        yield _violation(profile, index, "invalid_content", f"{role} message has no content")
    elif role == "user" and profile.no_empty_text and is_empty_content(content):
        yield _violation(profile, index, "empty_message", "user message is empty")


def _tool_call_violations(
    index: int, message: dict[str, Any], profile: Profile
) -> Iterator[Violation]:
    if "tool_calls" not in message or message["tool_calls"] is None:
        return
    calls = message["tool_calls"]
    if not isinstance(calls, list):
        yield _violation(profile, index, "tool_call_malformed", "tool_calls is not a list")
        return
    if not calls:
        yield _violation(profile, index, "empty_tool_calls", "tool_calls is an empty list")
    for position, call in enumerate(calls):
        yield from _one_call_violations(index, position, call, profile)


def _one_call_violations(
    index: int, position: int, call: object, profile: Profile
) -> Iterator[Violation]:
    where = f"tool call {position}"
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        yield _violation(profile, index, "tool_call_malformed", f"{where} has no function")
        return
    function = call["function"]
    if call.get("type") != "function":
        yield _violation(profile, index, "tool_call_malformed", f"{where} type is not 'function'")
    if not isinstance(function.get("name"), str) or not function["name"]:
        yield _violation(profile, index, "tool_call_malformed", f"{where} has no name")
    if not (profile.tool_call_keys.issuperset(call) and FUNCTION_KEYS.issuperset(function)):
        for key in [*(set(call) - profile.tool_call_keys), *(set(function) - FUNCTION_KEYS)]:
            yield _violation(
                profile, index, "unknown_key", f"{where} has key {key!r}", key=f"tool_calls.{key}"
            )
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        yield _violation(profile, index, "tool_call_missing_id", f"{where} has no id")
    elif (profile.id_pattern is not None and not profile.id_pattern.match(call_id)) or (
        profile.id_max_length is not None and len(call_id) > profile.id_max_length
    ):
        yield _violation(
            profile,
            index,
            "invalid_tool_call_id",
            f"{where} id {call_id!r} is not a valid {profile.name} id",
            id=call_id,
        )
    yield from _argument_violations(index, where, function.get("arguments"), profile)


_ARGUMENT_PROBLEMS = {
    "arguments_invalid_json": "arguments are not valid JSON",
    "arguments_not_object": "arguments are not a JSON object",
}
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


def _argument_violations(
    index: int, where: str, arguments: object, profile: Profile
) -> Iterator[Violation]:
    if not isinstance(arguments, str):
        yield _violation(
            profile, index, "arguments_not_string", f"{where} arguments are not a JSON string"
        )
        return
    problem = argument_problem(arguments)
    if problem is not None:
        yield _violation(profile, index, problem, f"{where} {_ARGUMENT_PROBLEMS[problem]}")


def _call_ids(message: object) -> list[str | None]:
    """The ids of an assistant message's tool calls (``None`` for a missing id)."""
    return [ids[0] if ids else None for ids in _call_id_sets(message)]


def _call_aliases(message: object) -> dict[str, str]:
    """The second id of each call that has two (``call_id``), mapped to its first."""
    return {ids[1]: ids[0] for ids in _call_id_sets(message) if len(ids) > 1}


def _call_id_sets(message: object) -> list[tuple[str, ...]]:
    """Every id of each tool call of an assistant message (see ``units.call_ids``)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls")
    return [call_ids(call) for call in calls] if isinstance(calls, list) else []


def _result_id(message: dict[str, Any]) -> str | None:
    value = message.get("tool_call_id")
    return value if isinstance(value, str) and value else None


def pairing_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Results directly after their call, one per call; call ids unique."""
    all_call_ids: set[str] = set()
    for message in messages:
        all_call_ids.update(i for ids in _call_id_sets(message) for i in ids)
    seen_ids: set[str] = set()
    open_calls: dict[str, bool] = {}  # id -> answered, for the current tool block
    aliases: dict[str, str] = {}  # a call's call_id -> its id, for the current tool block
    block_owner: int | None = None
    for index, message in enumerate(messages):
        is_tool = isinstance(message, dict) and message.get("role") == "tool"
        if not is_tool and block_owner is not None:
            yield from _unanswered(block_owner, open_calls, profile)
            block_owner, open_calls, aliases = None, {}, {}
        ids = _call_ids(message)
        if ids:
            if not profile.unique_ids:
                seen_ids = set()  # ids need only be unique within one message
            for call_id in ids:
                if call_id is None:
                    continue
                if call_id in seen_ids:
                    yield _violation(
                        profile,
                        index,
                        "duplicate_tool_call_id",
                        f"tool call id {call_id!r} is used more than once",
                        id=call_id,
                    )
                seen_ids.add(call_id)
            block_owner = index
            open_calls = {i: False for i in ids if i is not None}
            aliases = _call_aliases(message)
            continue
        if not is_tool:
            continue
        result_id = _result_id(message)
        if result_id not in open_calls and result_id in aliases:
            result_id = aliases[result_id]  # the result names its call by the call_id alias
        if result_id is None:
            yield _violation(
                profile, index, "missing_tool_call_id", "tool message has no tool_call_id"
            )
        elif result_id in open_calls and not open_calls[result_id]:
            open_calls[result_id] = True
        elif result_id in open_calls:
            yield _violation(
                profile,
                index,
                "duplicate_tool_result",
                f"second result for tool call {result_id!r}",
                id=result_id,
            )
        elif result_id in all_call_ids:
            yield _violation(
                profile,
                index,
                "tool_result_misplaced",
                f"result for tool call {result_id!r} is not directly after its call",
                id=result_id,
            )
        else:
            yield _violation(
                profile,
                index,
                "orphan_tool_result",
                f"result for tool call {result_id!r}, which no assistant message made",
                id=result_id,
            )
    if block_owner is not None:
        yield from _unanswered(block_owner, open_calls, profile)


def _unanswered(owner: int, open_calls: dict[str, bool], profile: Profile) -> Iterator[Violation]:
    for call_id, answered in open_calls.items():
        if not answered:
            yield _violation(
                profile,
                owner,
                "unanswered_tool_call",
                f"tool call {call_id!r} has no result directly after it",
                id=call_id,
            )


def _order_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Role order: system only at the start, user first, no same role twice in a row."""
    previous_role: str | None = None
    seen_conversation = False
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            continue
        role = message["role"]
        if role in ("system", "developer"):
            if seen_conversation and profile.system_only_at_start:
                yield _violation(
                    profile,
                    index,
                    "system_not_at_start",
                    f"{role} message after the conversation started",
                )
            continue
        if not seen_conversation and profile.first_user and role != "user":
            yield _violation(
                profile,
                index,
                "first_not_user",
                f"the first message after the system prompt is {role!r}, not 'user'",
            )
        seen_conversation = True
        if profile.alternate and role == previous_role and role in ("user", "assistant"):
            yield _violation(
                profile, index, "consecutive_same_role", f"two {role} messages in a row", role=role
            )
        previous_role = role


def _plainly_valid(messages: Sequence[Any], profile: Profile) -> bool:
    """One tight pass that proves the common case valid; ``False`` means "look closer".

    It is stricter than the rules (content parts, refusals and other rare shapes always
    take the detailed path), so it can never accept a history that breaks one.
    """
    allowed = profile.allowed_keys
    pattern, max_length = profile.id_pattern, profile.id_max_length
    system_only_at_start, first_user = profile.system_only_at_start, profile.first_user
    alternate, no_empty_text = profile.alternate, profile.no_empty_text
    unique_ids, tool_call_keys = profile.unique_ids, profile.tool_call_keys
    seen: set[str] = set()
    pending: set[str] | None = None  # ids of the open tool block awaiting results
    previous_role: str | None = None
    started = False
    for message in messages:
        if type(message) is not dict:
            return False
        role = message.get("role")
        keys = allowed.get(role)  # type: ignore[arg-type]
        content = message.get("content")
        if keys is None or not keys.issuperset(message):
            return False
        if role == "tool":
            call_id = message.get("tool_call_id")
            if pending is None or call_id not in pending or type(content) is not str:
                return False
            pending.discard(call_id)
            previous_role = "tool"
            continue
        if pending:
            return False
        pending = None
        if role in ("system", "developer"):
            if (started and system_only_at_start) or type(content) is not str:
                return False
            if role == "developer" and not profile.developer_role:
                return False
            continue
        if not started and first_user and role != "user":
            return False
        if alternate and role == previous_role:
            return False
        started, previous_role = True, role
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls is None:
            if type(content) is not str or (no_empty_text and (not content or content.isspace())):
                return False
            continue
        if type(calls) is not list or not calls or not (content is None or type(content) is str):
            return False
        if not unique_ids:
            seen = set()
        pending = set()
        for call in calls:
            if type(call) is not dict or call.get("type") != "function":
                return False
            function = call.get("function")
            if type(function) is not dict:
                return False
            if not (tool_call_keys.issuperset(call) and FUNCTION_KEYS.issuperset(function)):
                return False
            name, arguments, call_id = (
                function.get("name"),
                function.get("arguments"),
                call.get("id"),
            )
            if type(name) is not str or not name or type(arguments) is not str:
                return False
            if type(call_id) is not str or not call_id or call_id in seen:
                return False
            if (pattern is not None and not pattern.match(call_id)) or (
                max_length is not None and len(call_id) > max_length
            ):
                return False
            if argument_problem(arguments) is not None:
                return False
            seen.add(call_id)
            pending.add(call_id)
    return not pending
