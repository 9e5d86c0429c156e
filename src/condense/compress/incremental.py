"""Stage 0, incremental reuse: a session that grew since the last call is compressed for
its growth only (before anything is repaired or planned).

``compress(previous=state)`` works on the previous output plus what was appended since,
when the new history extends the previous call's input (or output) message by message
(the same objects or equal values, ``condense.message.extends``) and the budget,
profile and encoding are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from condense.message import resumed
from condense.providers import Profile

if TYPE_CHECKING:
    from condense.compress.result import CompressionState


def resume_from(
    previous: CompressionState | None,
    messages: Sequence[Any],
    budget: int,
    profile: Profile,
    encoding: str,
) -> tuple[Sequence[Any], bool]:
    """The history to work on: the previous output plus what was appended since, when
    ``messages`` extends the previous call's input; else ``messages`` itself."""
    if previous is None or (previous.budget, previous.provider, previous.encoding) != (
        budget,
        profile.name,
        encoding,
    ):
        return messages, False
    for known in (previous.source, previous.output):
        history = resumed(messages, known, previous.output)
        if history is not None:
            return history, True
    return messages, False
