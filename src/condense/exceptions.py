"""The exception tree: every error condense raises derives from ``CondenseError``.

``InputError`` and its children are the caller's mistakes (unreadable input, an unknown
name, an impossible option); the message says what to fix. ``CondenseRuntimeError`` and
its children are failures while working on good input (a summarizer that failed, an
output that would break the target profile).
"""

from __future__ import annotations

from collections.abc import Sequence


class CondenseError(Exception):
    """Base of every exception condense raises."""


class InputError(CondenseError, ValueError):
    """The caller gave something condense cannot use; the message says what and where."""


class FormatError(InputError):
    """A file, record or message could not be read in the expected format.

    ``source`` names the file (or ``"<stdin>"``, ``"<object>"``), ``line`` the 1-based
    line of a JSONL file and ``index`` the 0-based message index, when known.
    """

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        line: int | None = None,
        index: int | None = None,
    ) -> None:
        self.reason = reason
        self.source = source
        self.line = line
        self.index = index
        where = [part for part in (source, _fmt("line", line), _fmt("message", index)) if part]
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)


class UnknownNameError(InputError, KeyError):
    """A registry lookup (provider profile, encoding, summarizer, format) found nothing."""

    def __init__(self, kind: str, name: str, known: Sequence[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known)}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class CondenseRuntimeError(CondenseError, RuntimeError):
    """Something failed while working on valid input."""


class InvalidOutputError(CondenseRuntimeError):
    """condense was about to return a history that fails its own target profile.

    This is a bug in condense; the history is attached so it can be reported.
    """

    def __init__(self, provider: str, violations: Sequence[object]) -> None:
        self.provider = provider
        self.violations = tuple(violations)
        first = "; ".join(str(v) for v in self.violations[:3])
        super().__init__(
            f"refusing to return a history that fails the {provider!r} profile "
            f"({len(self.violations)} violation(s): {first}); please report this bug"
        )


def _fmt(label: str, value: int | None) -> str | None:
    return None if value is None else f"{label} {value}"
