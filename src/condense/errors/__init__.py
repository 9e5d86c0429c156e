"""Provider errors: what a refusal means and how condense recovers from it.

``classify(error)`` reads an SDK exception, an HTTP response or plain text and returns a
:class:`Diagnosis`: a :class:`Category`, whether a retry can succeed, and the
:class:`Action` to take first (repair the history, compress it, lower ``max_tokens``,
drop replay state bound to another conversation, back off, or fail). ``recover(call,
messages)`` (and ``arecover``) applies it around any model call; ``guard(client)`` applies
it to every call of an ``openai`` or ``anthropic`` client that sends a history (Chat
Completions, Responses, Messages; raw, streamed and helper forms); ``next_attempt(error,
messages)`` is one step of the same ladder, for callers that send requests themselves.
:class:`RetryPolicy` (from :mod:`condense.retry`) sets their back-off waits.
"""

from condense.errors.classify import classify
from condense.errors.diagnosis import Action, Category, Diagnosis
from condense.errors.guard import GuardedClient, guard
from condense.errors.recover import (
    Attempt,
    NextAttempt,
    RecoveryResult,
    arecover,
    fingerprint,
    next_attempt,
    recover,
)
from condense.exceptions import RecoveryError, RefusedResponse
from condense.retry import RetryPolicy

__all__ = [
    "Action",
    "Attempt",
    "Category",
    "Diagnosis",
    "GuardedClient",
    "NextAttempt",
    "RecoveryError",
    "RecoveryResult",
    "RefusedResponse",
    "RetryPolicy",
    "arecover",
    "classify",
    "fingerprint",
    "guard",
    "next_attempt",
    "recover",
]
