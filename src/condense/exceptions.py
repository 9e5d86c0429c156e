"""The exception tree: every error condense raises derives from ``CondenseError``.

::

    CondenseError
    ├── InputError (ValueError)
    │   ├── BadRequest
    │   ├── BodyDecodingError
    │   ├── FormatError
    │   └── UnknownNameError (KeyError)
    └── CondenseRuntimeError (RuntimeError)
        ├── BudgetError
        ├── InvalidOutputError
        ├── RecoveryError
        ├── RefusedResponse
        ├── SummaryFailed
        └── UpstreamRefusal

``InputError`` and its children are the caller's mistakes (unreadable input, an unknown
name, an impossible option); the message says what to fix. ``CondenseRuntimeError`` and
its children are failures while working on good input (a budget that cannot be met, a
model call that kept failing, a summary that could not be had). The root package exports
the tree but for the errors of one tool, exported where that tool lives: ``BadRequest``,
``BodyDecodingError`` and ``UpstreamRefusal`` from ``condense.server`` (the proxy);
``SummaryFailed`` (recorded in a dataset's output, not raised to the caller) only here.

Every class survives ``pickle`` with its message and its fields (worker pools and Ray
move exceptions between processes); a field that cannot be pickled itself, such as an
SDK response object, travels as its ``repr()``. This module imports nothing from the
rest of condense at run time, so every module can raise these.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from condense.compress import CompressionResult
    from condense.errors.diagnosis import Diagnosis
    from condense.errors.recover import Attempt


class CondenseError(Exception):
    """Base of every exception condense raises."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception pickles as ``cls(*args)``, which breaks every subclass whose
        # constructor takes other arguments than its message: rebuild from args + fields.
        return (_rebuild, (type(self), self.args, _picklable(self.__dict__)))


class InputError(CondenseError, ValueError):
    """The caller gave something condense cannot use; the message says what and where."""


class BadRequest(InputError):
    """A body sent to ``condense proxy`` is not a request of its API; the proxy answers it
    with ``status`` in that API's error shape."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class BodyDecodingError(InputError):
    """A request body is not valid in the coding its ``Content-Encoding`` names, or the
    coding is unknown."""


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


class BudgetError(CondenseRuntimeError):
    """``strict_budget=True`` and the protected part of the history alone exceeds the
    budget. ``result`` holds the best effort, so nothing is lost."""

    def __init__(self, result: CompressionResult) -> None:
        self.result = result
        report = result.report
        super().__init__(
            f"cannot fit the history in {report.budget} tokens: the best result has "
            f"{report.tokens_after} tokens, {report.protected_tokens} of them protected; "
            "raise the budget or lower tail_tokens"
        )


class InvalidOutputError(CondenseRuntimeError):
    """condense was about to return a history that fails its own target profile.

    This is a bug in condense. ``violations`` says what is wrong; ``messages`` is the
    history it would have returned, when the code that raised had it (``None`` else), so
    it can be attached to a bug report.
    """

    def __init__(
        self,
        provider: str,
        violations: Sequence[object],
        *,
        messages: Sequence[Any] | None = None,
    ) -> None:
        self.provider = provider
        self.violations = tuple(violations)
        self.messages = None if messages is None else list(messages)
        first = "; ".join(str(v) for v in self.violations[:3])
        super().__init__(
            f"refusing to return a history that fails the {provider!r} profile "
            f"({len(self.violations)} violation(s): {first}); please report this bug"
        )


class RecoveryError(CondenseRuntimeError):
    """recover gave up. ``diagnosis`` is the last failure, ``diagnoses`` all of them,
    ``messages`` the last history sent (already healed as far as recover got: persist it
    rather than the original), ``error`` the exception the last call raised."""

    def __init__(
        self,
        reason: str,
        *,
        attempts: Sequence[Attempt],
        messages: list[Any],
        error: BaseException,
    ) -> None:
        self.attempts = tuple(attempts)
        self.diagnoses: tuple[Diagnosis, ...] = tuple(
            a.diagnosis for a in self.attempts if a.diagnosis is not None
        )
        self.diagnosis = self.diagnoses[-1]
        self.messages = messages
        self.error = error
        last = self.diagnosis
        status = f", HTTP {last.status_code}" if last.status_code is not None else ""
        said = " ".join(last.message.split())
        said = said if len(said) <= 300 else said[:297] + "..."
        super().__init__(
            f"model call failed after {len(self.attempts)} attempt(s) ({reason}); last error: "
            f"{last.category.value}{status}: {said or '(no message)'}. The last history sent "
            "is in .messages: persist it rather than the original"
        )


class RefusedResponse(CondenseRuntimeError):
    """A 200 answer that is really a refusal: MiniMax puts its errors in ``base_resp``.

    ``status_code`` and ``body`` let :func:`~condense.errors.classify` read it like any
    other provider error; ``response`` is the SDK object."""

    def __init__(self, response: object, base_resp: dict[str, Any]) -> None:
        self.response = response
        self.status_code = 200
        self.body = {"base_resp": base_resp}
        code, text = base_resp.get("status_code"), base_resp.get("status_msg")
        super().__init__(f"the provider answered 200 with error {code} in base_resp: {text}")


class SummaryFailed(CondenseRuntimeError):
    """No usable summary for a dataset record; ``reason`` says why (kept in the record's
    stats) and ``attempts`` how many tries were made."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


def _fmt(label: str, value: int | None) -> str | None:
    return None if value is None else f"{label} {value}"


def _rebuild(
    cls: type[CondenseError], args: tuple[Any, ...], state: dict[str, Any]
) -> CondenseError:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


def _picklable(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with every value that cannot be pickled replaced by its ``repr()``."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        try:
            pickle.dumps(value)
        except Exception:  # anything a foreign object's __reduce__ may raise
            value = repr(value)
        out[key] = value
    return out


class UpstreamRefusal(CondenseRuntimeError):
    """An upstream's error answer to ``condense proxy``, in the shape ``classify`` reads
    (``status_code``, ``body``, ``headers``)."""

    def __init__(self, status: int, body: Any, headers: Any) -> None:
        super().__init__(f"upstream answered HTTP {status}")
        self.status_code = status
        self.body = body
        self.headers = dict(headers)
