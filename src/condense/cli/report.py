"""What the CLI tells the user: change records, progress on long inputs, the total line.

Change records (``--json``) carry the messages they are about: ``before`` is the
message as it was in the input (a dropped message travels here), ``after`` the message
it became in the output, where the command has the output at hand. ``--show-changes``
prints the same in a human form. Progress is a bar on stderr while a long input is read
(only on a terminal; it disappears when done); every command ends with one total line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from condense.cli.inputs import Input
from condense.cli.outputs import say
from condense.formats import Conversation
from condense.repair import Change
from condense.repair.ledger import change_text

_SHOWN_CHARS = 2_000  # of one message in --show-changes (--json has all of it)


def change_record(
    conversation: Conversation,
    change: Change,
    before: Sequence[Any],
    after: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """One change as a JSON-ready dict, with the message(s) it concerns."""
    old = change.message
    if old is None and change.index is not None and change.index < len(before):
        old = before[change.index]
    new = None
    if after is not None and change.output_index is not None and change.action != "drop":
        new = after[change.output_index]
    return {
        "source": conversation.source,
        "line": conversation.line,
        "action": change.action,
        "location": change.location,
        "index": change.index,
        "output_index": change.output_index,
        "code": change.code,
        "reason": change.reason,
        "before": old,
        "after": new,
    }


def show_change(record: dict[str, Any]) -> list[str]:
    """``--show-changes``: the change on one line, then the message before (``-``) and
    after (``+``), one JSON line each."""
    lines = [f"{_place(record)}: {_change_line(record)}"]
    if record["before"] is not None:
        lines.append("    - " + _shown(record["before"]))
    if record["after"] is not None and record["after"] != record["before"]:
        lines.append("    + " + _shown(record["after"]))
    return lines


def _change_line(record: dict[str, Any]) -> str:
    return change_text(
        record["action"],
        record["location"],
        record["index"],
        record["output_index"],
        record["reason"],
        record["code"],
    )


def _place(record: dict[str, Any]) -> str:
    source = record["source"] or "<input>"
    return source if record["line"] is None else f"{source}:{record['line']}"


def _shown(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False)
    if len(text) <= _SHOWN_CHARS:
        return text
    rest = len(text) - _SHOWN_CHARS
    return f"{text[:_SHOWN_CHARS]}… ({rest:,} more characters; --json has all)"


def emit(record: dict[str, Any]) -> None:
    """One JSON line on stderr (a report for machines)."""
    say(json.dumps(record, ensure_ascii=False, default=str))


class Progress:
    """A transient progress bar for one input, on stderr when it is a terminal."""

    def __init__(self, source: Input, *, label: str, quiet: bool = False) -> None:
        self.source = source
        self._bar: Any = None
        self._task: Any = None
        self.records = 0
        if quiet or sys.stderr is None or not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn(f"[bold]condense {label}"),
            BarColumn(),
            TextColumn("{task.fields[records]:,} record(s)"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task(label, total=source.size or None, records=0)

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def advance(self) -> None:
        """One more record read."""
        self.records += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.source.position, records=self.records)

    def say(self, text: str) -> None:
        """A line on stderr, above the bar while it shows."""
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            say(text)
