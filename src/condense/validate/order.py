"""Role order: a non-empty history, the system prompt first, a user message first (and at
all), no same role twice in a row, no user message right after a tool result, and no
final assistant message where the profile refuses them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense.providers import Profile
from condense.validate.messages import ROLES
from condense.validate.report import Violation, violation


def order_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Every role-order rule of ``profile`` that ``messages`` breaks."""
    if not messages:
        yield violation(profile, 0, "empty_history", "the history has no message")
        return
    previous_role: str | None = None
    seen_conversation = False
    seen_user = False
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            continue
        role = message["role"]
        if role in ("system", "developer"):
            if seen_conversation and profile.system_only_at_start:
                yield violation(
                    profile,
                    index,
                    "system_not_at_start",
                    f"{role} message after the conversation started",
                    role=role,
                )
            continue
        if not seen_conversation and profile.first_user and role != "user":
            yield violation(
                profile,
                index,
                "first_not_user",
                f"the first message after the system prompt is {role!r}, not 'user'",
                role=role,
                previous="system",
            )
        seen_conversation = True
        seen_user = seen_user or role == "user"
        if profile.alternate and role == previous_role and role in ("user", "assistant"):
            yield violation(
                profile,
                index,
                "consecutive_same_role",
                f"two {role} messages in a row",
                role=role,
                previous=role,
            )
        if not profile.user_after_tool and role == "user" and previous_role == "tool":
            yield violation(
                profile,
                index,
                "user_after_tool",
                "user message directly after a tool result",
                role=role,
                previous="tool",
            )
        previous_role = role
    if not profile.ends_with_assistant and previous_role == "assistant":
        yield violation(
            profile,
            len(messages) - 1,
            "ends_with_assistant",
            "the history ends with an assistant message",
            role="assistant",
        )
    if profile.first_user and not seen_user and not seen_conversation:
        yield violation(
            profile, len(messages) - 1, "no_user_message", "the history has no user message"
        )
