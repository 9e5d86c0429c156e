"""What a tool result is worth, for the call that has more than one.

A call is answered twice when an agent recorded a stand-in and then the real result, or
the other way round: a crash or restart notice ("A restart occurred while this tool was
in progress."), a cancelled or denied run, an error stub, an empty message. ``pairing``
keeps the result worth most and, between equals, the later one; the other one travels
in the change record.

Worth, lowest first:

* ``EMPTY``: no text and no other content;
* ``PLACEHOLDER``: says that no output was produced (interrupted, aborted, cancelled,
  denied, lost in a restart) or is a stub condense or another tool inserted;
* ``ERROR``: the tool ran and failed (``is_error`` set, or text that opens with an error);
* ``OUTPUT``: anything else, the real output.

The wordings come from agents that write such stand-ins: OpenHands' restart notice
(OpenHands/agent-sdk #2298), opencode's "[Tool execution was interrupted]" and "Tool
execution aborted", Claude Code's "[Request interrupted by user for tool use]", Gemini
CLI's "[Operation Cancelled] Reason: User denied execution.".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import IntEnum
from typing import Any

from condense.message import TEXT_PARTS, content_text, is_text_part

_MAX_NOTICE_CHARS = 600  # a stand-in is a sentence or two; longer text is real output

_PLACEHOLDER = re.compile(
    r"""
      ^\W*\[?condense:                                   # condense's own stubs and masks
    | restart\ occurred\ while\ this\ tool
    | \b(?:tool|execution|operation|command|call|request|run|process)\b[^.\n]{0,40}?
      \b(?:interrupted|aborted|cancell?ed|killed|terminated|timed\ out)\b
    | ^\W*(?:interrupted|aborted|cancell?ed|killed|no\ output)\b
    | \binterrupted\ by\ (?:the\ )?user\b
    | \b(?:user|you)\ (?:denied|rejected|declined)\b | \bdenied\ execution\b
    | doesn't\ want\ to\ proceed\ with\ this\ tool\ use | tool\ use\ was\ rejected
    | \bno\ (?:result|output|response)\ (?:was\ )?(?:recorded|saved|produced|returned|provided)
    | \bdid\ not\ complete\b | \boutcome\ is\ unknown\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_ERROR = re.compile(
    r"""^\W*(?:(?:error|exception|fatal|failed|failure)\b|traceback\ \(most\ recent\ call\ last\))
      | ^\s*\{\s*"(?:error|is_error)"\s*:""",
    re.IGNORECASE | re.VERBOSE,
)


class Worth(IntEnum):
    """How much a tool result is worth, lowest first."""

    EMPTY = 0
    PLACEHOLDER = 1
    ERROR = 2
    OUTPUT = 3

    def describe(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    Worth.EMPTY: "empty",
    Worth.PLACEHOLDER: "a stand-in saying no output was produced",
    Worth.ERROR: "an error",
    Worth.OUTPUT: "a real output",
}


def result_worth(message: Mapping[str, Any]) -> Worth:
    """The worth of one tool result message (see the module docstring)."""
    content = message.get("content")
    text, other_parts = _text_and_parts(content)
    stripped = text.strip()
    if not stripped and not other_parts:
        return Worth.EMPTY
    if other_parts:
        return Worth.OUTPUT  # an image or a file is output, whatever the text says
    if len(stripped) <= _MAX_NOTICE_CHARS and _PLACEHOLDER.search(stripped):
        return Worth.PLACEHOLDER
    if message.get("is_error") is True or _ERROR.search(stripped):
        return Worth.ERROR
    return Worth.OUTPUT


def _text_and_parts(content: object) -> tuple[str, bool]:
    """The text of ``content`` and whether it has parts other than text (a text block
    with no text is empty text, not another part)."""
    if not isinstance(content, list):
        return content_text(content), content is not None and not isinstance(content, str)
    other = any(
        not is_text_part(part)
        and not (
            isinstance(part, dict)
            and isinstance(part.get("type"), str)
            and part["type"] in TEXT_PARTS
        )
        for part in content
    )
    return content_text(content), other
