"""One tight pass that proves the common case valid; ``False`` means "look closer".

It is stricter than the rules (content parts, refusals, replay state and other rare shapes
always take the detailed path), so it can never accept a history that breaks one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.message import REPLAY_KEYS
from condense.providers import Profile
from condense.providers.base import FUNCTION_KEYS
from condense.turns import current_turn
from condense.validate.messages import argument_problem


def plainly_valid(messages: Sequence[Any], profile: Profile) -> bool:
    """True only when ``messages`` breaks no rule of ``profile`` (see module docstring)."""
    if not messages:
        return False
    enabled = profile.thinking_start and profile.thinking_mode == "enabled"
    if enabled and current_turn(messages).first_assistant is not None:
        return False  # the turn-start thinking rule: the detailed path
    allowed = profile.allowed_keys
    pattern, max_length = profile.id_pattern, profile.id_max_length
    system_only_at_start, first_user = profile.system_only_at_start, profile.first_user
    alternate, no_empty_text = profile.alternate, profile.no_empty_text
    unique_ids, tool_call_keys = profile.unique_ids, profile.tool_call_keys
    in_order, user_after_tool = profile.results_in_call_order, profile.user_after_tool
    seen: set[str] = set()
    pending: list[str] | None = None  # ids of the open tool block awaiting results
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
            if in_order and pending[0] != call_id:
                return False
            pending.remove(call_id)
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
        if (alternate and role == previous_role) or (
            not user_after_tool and role == "user" and previous_role == "tool"
        ):
            return False
        started, previous_role = True, role
        if role == "assistant" and not REPLAY_KEYS.isdisjoint(message):
            return False  # replay rules read the whole history: the detailed path
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls is None:
            if type(content) is not str or (no_empty_text and (not content or content.isspace())):
                return False
            continue
        if type(calls) is not list or not calls or not (content is None or type(content) is str):
            return False
        if not unique_ids:
            seen = set()
        pending = []
        for call in calls:
            if type(call) is not dict or call.get("type") != "function":
                return False
            function = call.get("function")
            if type(function) is not dict or len(call) != 3:
                return False  # extra keys (signatures, cache_control): the detailed path
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
            pending.append(call_id)
    if not profile.ends_with_assistant and previous_role == "assistant":
        return False
    return started and not pending
