"""``recover``: call a model; when the provider refuses, change the request and try again.

``recover(call, messages)`` calls ``call(messages)``. When it raises, :func:`classify`
says why, and the diagnosis's action decides what changes before the next attempt:

- ``repair`` (tool pairing, tool arguments, message format): repair the history for the
  profile; if that changes nothing new, repair it for ``strict``; then compress it;
- ``drop_replay`` (reasoning state bound to another conversation or chain): drop the
  bound thinking blocks or foreign reasoning items (:mod:`condense.errors.replay`), or,
  where the running turn must keep its thinking, send Anthropic's own ``drop_block``
  setting instead — when ``call`` declares a ``prefix_mismatch_behavior`` keyword, recover
  passes it, and ``RecoveryResult.prefix_mismatch_behavior`` says to keep sending it;
- ``compress`` (context overflow, 413): compress to the room the provider states (the
  window minus the output reservation, scaled by how the provider counts against us,
  less a safety margin); without figures, to 70% of the budget or of the current size;
  each further overflow goes 30% tighter than the last target;
- ``reduce_output`` (``max_tokens`` too large): call again with ``max_tokens=`` set to
  what fits, when ``call`` takes a ``max_tokens`` keyword and that still leaves a useful
  answer; else compress the history to make room for the output asked;
- ``backoff`` (rate limit, overload, server error, timeout, connection): wait as long as
  ``Retry-After`` asks (plus jitter), or an exponential backoff with jitter, then send the
  same request again — a transient failure does not condemn the payload;
- ``fail`` (auth, billing, content filter, unknown model, a path the server does not
  have, unrecognised): stop at once.

A payload the provider refused for its content is never sent again: every attempt's
messages, ``max_tokens`` and ``drop_block`` setting are fingerprinted, and a change that
leads back to a refused fingerprint counts as no change, so the next step of the ladder is
tried instead. When a ``budget`` is given, any history recover rewrites is also made to
fit it. Attempts are bounded by ``max_attempts``; the last failure raises
:class:`RecoveryError`, which carries every diagnosis and the last history sent.

One step of that ladder is public: :func:`next_attempt` says, for a refusal and the
history it refused, what to send next (or ``None``) — for callers that send requests
themselves, such as ``condense proxy``, which retries once with it.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import time
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from condense.compress import CompressionReport, compress
from condense.errors.classify import classify
from condense.errors.diagnosis import Action, Diagnosis
from condense.errors.replay import replay_heals
from condense.exceptions import CondenseError, InputError, InvalidOutputError
from condense.exceptions import RecoveryError as RecoveryError  # its home before exceptions.py
from condense.providers import (
    DEFAULT_PROVIDER,
    Profile,
    choose_provider,
    get_profile,
    media_billing,
)
from condense.repair import Change, repair
from condense.retry import Backoff, Failure, RetryPolicy
from condense.summarizers import Summarizer
from condense.tokens import count_tokens

T = TypeVar("T")

TIGHTER = 0.7
"""Each compress step without the provider's figures keeps this share of the tokens."""
_USEFUL_OUTPUT = 1024  # a lowered max_tokens this large is always worth a try


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One call: how it ended and what recover did next.

    ``diagnosis`` is ``None`` for the attempt that succeeded. ``action`` is what recover
    did after this failure (``FAIL`` when it gave up), ``detail`` says how in words,
    ``wait`` is the pause before the next attempt. ``fingerprint`` is the digest of the
    messages and ``max_tokens`` sent; it is computed only once something has failed.
    """

    number: int
    diagnosis: Diagnosis | None
    action: Action | None
    detail: str
    wait: float = 0.0
    max_tokens: int | None = None
    fingerprint: str | None = None
    prefix_mismatch_behavior: str | None = None


@dataclass(frozen=True, kw_only=True)
class RecoveryResult(Generic[T]):
    """What ``call`` returned and how recover got there.

    ``messages`` is the history of the attempt that succeeded: persist it, so the next
    turn starts from the healed session (it is the caller's list, copied, when nothing
    had to change). ``max_tokens`` is the override recover passed, or ``None``;
    ``prefix_mismatch_behavior`` is the Anthropic setting recover turned on (``"drop_block"``),
    to be sent with every later request of this conversation, or ``None``. ``repairs``
    lists every change recover made to the history, replay state it dropped included.
    """

    value: T
    messages: list[Any]
    attempts: tuple[Attempt, ...]
    changed: bool
    max_tokens: int | None = None
    prefix_mismatch_behavior: str | None = None
    repairs: tuple[Change, ...] = ()
    compressions: tuple[CompressionReport, ...] = ()

    @property
    def recovered(self) -> bool:
        """True when the first attempt failed and a later one succeeded."""
        return len(self.attempts) > 1

    @property
    def diagnoses(self) -> tuple[Diagnosis, ...]:
        return tuple(a.diagnosis for a in self.attempts if a.diagnosis is not None)

    def describe(self) -> str:
        """One line per attempt, for a log."""
        return "\n".join(_describe(attempt) for attempt in self.attempts)


@dataclass(frozen=True, kw_only=True)
class NextAttempt:
    """The request to send after a refusal (:func:`next_attempt`).

    ``messages`` is the history to send (unchanged messages are the same objects),
    ``action`` the rung of the ladder that made it and ``detail`` how, in words;
    ``max_tokens`` and ``prefix_mismatch_behavior`` are settings to send with it
    (``None``: as before). ``repairs`` lists every change to the history, replay state
    left out included; ``compression`` is the report of a compression.
    ``fingerprint`` identifies the payload (:func:`fingerprint`): pass it back in
    ``refused`` if the provider refuses this one too.
    """

    messages: list[Any]
    diagnosis: Diagnosis
    action: Action
    detail: str
    fingerprint: str
    max_tokens: int | None = None
    prefix_mismatch_behavior: str | None = None
    repairs: tuple[Change, ...] = ()
    compression: CompressionReport | None = None


def next_attempt(
    refusal: object,
    messages: Sequence[Any],
    *,
    provider: str | Profile = DEFAULT_PROVIDER,
    model: str | None = None,
    encoding: str | None = None,
    summarizer: str | Summarizer = "extractive",
    budget: int | None = None,
    max_tokens: int | None = None,
    context_window: int | None = None,
    margin: float = 0.1,
    thinking: Mapping[str, Any] | None = None,
    lower_max_tokens: bool = False,
    drop_block: bool = False,
    refused: Collection[str] = (),
) -> NextAttempt | None:
    """What to send after ``refusal`` refused ``messages``: one step of :func:`recover`'s
    ladder (see the module doc), without calling anything.

    ``refusal`` is what the call raised or answered (anything :func:`classify` reads) or
    its :class:`Diagnosis`. The options are :func:`recover`'s; ``lower_max_tokens`` says
    whether the caller can send a lower ``max_tokens`` and ``drop_block`` whether it can
    send Anthropic's ``prefix_mismatch_behavior`` setting. The result is the first change
    whose payload is neither the refused one nor one of ``refused`` (fingerprints of
    earlier refused payloads). ``None`` when no change condense can make heals the
    refusal: the diagnosis says to back off (send the same again, later) or to fail, or
    every change leads back to a refused payload.
    """
    run = _Run(
        messages,
        _Settings.make(
            messages,
            budget=budget,
            provider=provider,
            max_attempts=2,
            model=model,
            encoding=encoding,
            summarizer=summarizer,
            max_tokens=max_tokens,
            context_window=context_window,
            margin=margin,
            thinking=thinking,
            backoff=None,
            rng=None,
        ),
        takes_max_tokens=lower_max_tokens,
        takes_drop_block=drop_block,
    )
    if isinstance(refusal, Diagnosis):
        diagnosis = refusal
    else:
        diagnosis = classify(refusal, messages=run.messages, context_window=context_window)
    if diagnosis.action in (Action.FAIL, Action.BACKOFF):
        return None
    run.refused.update(refused)
    run.refused.add(run.fingerprint())
    candidate, _ = run.next_change(diagnosis)
    if candidate is None:
        return None
    return NextAttempt(
        messages=candidate.messages,
        diagnosis=diagnosis,
        action=candidate.action,
        detail=candidate.detail,
        fingerprint=candidate.fingerprint,
        max_tokens=candidate.max_tokens,
        prefix_mismatch_behavior=candidate.prefix_mismatch_behavior,
        repairs=candidate.repairs,
        compression=candidate.compression,
    )


def recover(
    call: Callable[..., T],
    messages: Sequence[Any],
    *,
    budget: int | None = None,
    provider: str | Profile = DEFAULT_PROVIDER,
    max_attempts: int = 3,
    model: str | None = None,
    encoding: str | None = None,
    summarizer: str | Summarizer = "extractive",
    max_tokens: int | None = None,
    context_window: int | None = None,
    margin: float = 0.1,
    thinking: Mapping[str, Any] | None = None,
    backoff: RetryPolicy | None = None,
    sleep: Callable[[float], object] = time.sleep,
    rng: random.Random | None = None,
) -> RecoveryResult[T]:
    """Call ``call(messages)`` and recover from provider refusals (see the module doc).

    ``provider`` is the profile to repair for; ``model``/``encoding`` pick the tokenizer
    and ``summarizer`` the summaries for compression; ``budget`` caps any history recover
    rewrites. ``call`` may take a ``max_tokens`` keyword: recover passes it only to
    lower the output budget (``max_tokens`` here is the caller's own value, used when the
    error does not state it). ``context_window`` fills in a limit the error omits.
    ``margin`` is the share of the stated room left unused. ``thinking`` is the request's
    Anthropic ``thinking`` setting, as sent: under budgeted thinking (``"enabled"``) the
    running turn keeps the thinking it must open with. ``backoff`` sets the waits
    (``max_retry_wait``: a longer ``Retry-After`` fails at once); ``sleep`` and ``rng``
    are injectable for tests. Raises :class:`RecoveryError` when it gives up.
    """
    run = _Run(
        messages,
        _Settings.make(
            messages,
            budget=budget,
            provider=provider,
            max_attempts=max_attempts,
            model=model,
            encoding=encoding,
            summarizer=summarizer,
            max_tokens=max_tokens,
            context_window=context_window,
            margin=margin,
            thinking=thinking,
            backoff=backoff,
            rng=rng,
        ),
        takes_max_tokens=_takes_keyword(call, "max_tokens"),
        takes_drop_block=_takes_keyword(call, "prefix_mismatch_behavior", declared=True),
    )
    while True:
        try:
            value = call(run.messages, **run.overrides())
        except Exception as error:  # every failure is classified
            wait = run.failed(error)
            if wait > 0:
                sleep(wait)
        else:
            return run.succeeded(value)


async def arecover(
    call: Callable[..., Awaitable[T]],
    messages: Sequence[Any],
    *,
    budget: int | None = None,
    provider: str | Profile = DEFAULT_PROVIDER,
    max_attempts: int = 3,
    model: str | None = None,
    encoding: str | None = None,
    summarizer: str | Summarizer = "extractive",
    max_tokens: int | None = None,
    context_window: int | None = None,
    margin: float = 0.1,
    thinking: Mapping[str, Any] | None = None,
    backoff: RetryPolicy | None = None,
    sleep: Callable[[float], Awaitable[object]] | None = None,
    rng: random.Random | None = None,
) -> RecoveryResult[T]:
    """:func:`recover` for a coroutine function ``call``; ``sleep`` defaults to
    ``asyncio.sleep``. Repair and compression run inline (they are CPU work, no I/O)."""
    if sleep is None:
        import asyncio

        sleep = asyncio.sleep
    run = _Run(
        messages,
        _Settings.make(
            messages,
            budget=budget,
            provider=provider,
            max_attempts=max_attempts,
            model=model,
            encoding=encoding,
            summarizer=summarizer,
            max_tokens=max_tokens,
            context_window=context_window,
            margin=margin,
            thinking=thinking,
            backoff=backoff,
            rng=rng,
        ),
        takes_max_tokens=_takes_keyword(call, "max_tokens"),
        takes_drop_block=_takes_keyword(call, "prefix_mismatch_behavior", declared=True),
    )
    while True:
        try:
            value = await call(run.messages, **run.overrides())
        except Exception as error:  # every failure is classified
            wait = run.failed(error)
            if wait > 0:
                await sleep(wait)
        else:
            return run.succeeded(value)


# -- the state of one recovery -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Settings:
    budget: int | None
    profile: Profile
    max_attempts: int
    model: str | None
    encoding: str | None
    summarizer: str | Summarizer
    max_tokens: int | None
    context_window: int | None
    margin: float
    thinking: Mapping[str, Any] | None
    backoff: RetryPolicy
    rng: random.Random | None

    @classmethod
    def make(
        cls,
        messages: object,
        *,
        budget: int | None,
        provider: str | Profile,
        max_attempts: int,
        model: str | None,
        encoding: str | None,
        summarizer: str | Summarizer,
        max_tokens: int | None,
        context_window: int | None,
        margin: float,
        thinking: Mapping[str, Any] | None,
        backoff: RetryPolicy | None,
        rng: random.Random | None,
    ) -> _Settings:
        if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
            raise InputError("recover expects a list of messages")
        if max_attempts < 1:
            raise InputError(f"max_attempts must be at least 1, not {max_attempts!r}")
        if budget is not None and budget <= 0:
            raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
        if not 0 <= margin < 1:
            raise InputError(f"margin must be a share in [0, 1), not {margin!r}")
        return cls(
            budget=budget,
            profile=choose_provider(provider, messages=messages, model=model).profile,
            max_attempts=max_attempts,
            model=model,
            encoding=encoding,
            summarizer=summarizer,
            max_tokens=max_tokens,
            context_window=context_window,
            margin=margin,
            thinking=thinking,
            backoff=backoff or RetryPolicy(max_attempts=max_attempts),
            rng=rng,
        )


@dataclass(frozen=True)
class _Candidate:
    """A changed request to try next."""

    messages: list[Any]
    max_tokens: int | None
    action: Action
    detail: str
    repairs: tuple[Change, ...] = ()
    compression: CompressionReport | None = None
    prefix_mismatch_behavior: str | None = None
    fingerprint: str = ""
    """Of the payload it makes, once :meth:`_Run.next_change` chose it."""

    @property
    def alters_history(self) -> bool:
        """Whether the history changes (not only a setting sent with it)."""
        return self.action is not Action.REDUCE_OUTPUT and self.prefix_mismatch_behavior is None


class _Run:
    def __init__(
        self,
        messages: Sequence[Any],
        s: _Settings,
        *,
        takes_max_tokens: bool,
        takes_drop_block: bool,
    ) -> None:
        self.s = s
        self.takes_max_tokens = takes_max_tokens
        self.takes_drop_block = takes_drop_block
        self.messages: Sequence[Any] = messages
        self.max_tokens: int | None = None
        self.prefix_mismatch: str | None = None
        self.changed = False
        self.attempts: list[Attempt] = []
        self.refused: set[str] = set()
        self.repairs: list[Change] = []
        self.compressions: list[CompressionReport] = []
        self.target: int | None = None  # the last compression budget
        self.backoff = Backoff(s.backoff, rng=s.rng)  # the waits of consecutive back-offs
        self._fingerprint: str | None = None

    def overrides(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.max_tokens is not None:
            extra["max_tokens"] = self.max_tokens
        if self.prefix_mismatch is not None:
            extra["prefix_mismatch_behavior"] = self.prefix_mismatch
        return extra

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = fingerprint(
                self.messages, self.max_tokens, prefix_mismatch_behavior=self.prefix_mismatch
            )
        return self._fingerprint

    def succeeded(self, value: T) -> RecoveryResult[T]:
        self.attempts.append(
            Attempt(
                number=len(self.attempts) + 1,
                diagnosis=None,
                action=None,
                detail="succeeded",
                max_tokens=self.max_tokens,
                fingerprint=self.fingerprint() if self.attempts else None,
                prefix_mismatch_behavior=self.prefix_mismatch,
            )
        )
        return RecoveryResult(
            value=value,
            messages=list(self.messages),
            attempts=tuple(self.attempts),
            changed=self.changed,
            max_tokens=self.max_tokens,
            prefix_mismatch_behavior=self.prefix_mismatch,
            repairs=tuple(self.repairs),
            compressions=tuple(self.compressions),
        )

    def failed(self, error: Exception) -> float:
        """Decide the next attempt after ``error``; return the seconds to wait first."""
        diagnosis = classify(error, messages=self.messages, context_window=self.s.context_window)
        number = len(self.attempts) + 1
        if diagnosis.action is Action.FAIL:
            raise self._give_up(error, diagnosis, "the error is not one a retry can fix")
        if number >= self.s.max_attempts:
            raise self._give_up(error, diagnosis, f"max_attempts={self.s.max_attempts} reached")
        if diagnosis.action is Action.BACKOFF:
            return self._back_off(error, diagnosis)
        self.refused.add(self.fingerprint())
        candidate, offered = self.next_change(diagnosis)
        if candidate is None:
            if not offered:
                raise self._give_up(error, diagnosis, "no change condense can make heals this")
            reason = "every change condense can make was already refused"
            raise self._give_up(error, diagnosis, reason)
        self._record(diagnosis, candidate.action, candidate.detail)
        self.messages, self.max_tokens = candidate.messages, candidate.max_tokens
        self.prefix_mismatch = candidate.prefix_mismatch_behavior
        self._fingerprint = candidate.fingerprint
        self.changed = self.changed or candidate.alters_history
        self.repairs.extend(candidate.repairs)
        if candidate.compression is not None:
            self.compressions.append(candidate.compression)
        return 0.0

    def next_change(self, diagnosis: Diagnosis) -> tuple[_Candidate | None, bool]:
        """The first change of the ladder whose payload was not refused (with its
        settings and fingerprint filled in), and whether the ladder offered any."""
        offered = False
        for candidate in self._candidates(diagnosis):
            offered = True
            setting = candidate.prefix_mismatch_behavior or self.prefix_mismatch
            digest = fingerprint(
                candidate.messages, candidate.max_tokens, prefix_mismatch_behavior=setting
            )
            if digest not in self.refused:
                return replace(
                    candidate, prefix_mismatch_behavior=setting, fingerprint=digest
                ), True
        return None, offered

    # -- steps -------------------------------------------------------------------------

    def _record(
        self, diagnosis: Diagnosis, action: Action, detail: str, *, wait: float = 0.0
    ) -> None:
        self.attempts.append(
            Attempt(
                number=len(self.attempts) + 1,
                diagnosis=diagnosis,
                action=action,
                detail=detail,
                wait=wait,
                max_tokens=self.max_tokens,
                fingerprint=self.fingerprint(),
                prefix_mismatch_behavior=self.prefix_mismatch,
            )
        )

    def _give_up(self, error: Exception, diagnosis: Diagnosis, reason: str) -> RecoveryError:
        """Record the last attempt and build the error to raise (``from error``)."""
        self._record(diagnosis, Action.FAIL, f"gave up: {reason}")
        failure = RecoveryError(
            reason, attempts=self.attempts, messages=list(self.messages), error=error
        )
        failure.__cause__ = error
        return failure

    def _back_off(self, error: Exception, diagnosis: Diagnosis) -> float:
        failure = Failure(
            reason=diagnosis.message, retryable=True, retry_after=diagnosis.retry_after
        )
        verdict = self.backoff.after(failure)
        if verdict.wait is None:
            raise self._give_up(error, diagnosis, f"backoff: {verdict.reason}")
        wait = verdict.wait
        asked = f" (Retry-After {diagnosis.retry_after:g}s)" if diagnosis.retry_after else ""
        self._record(diagnosis, Action.BACKOFF, f"waited {wait:.2f}s{asked}", wait=wait)
        return wait

    def _candidates(self, diagnosis: Diagnosis) -> Iterator[_Candidate]:
        """The changes to try, in order, computed lazily; refused ones are skipped."""
        if diagnosis.action is Action.REPAIR:
            yield from self._repaired(self.s.profile, escalated=False)
            if self.s.profile.name != "strict":
                yield from self._repaired(get_profile("strict"), escalated=True)
            yield from self._compressed(diagnosis, self._size_target(diagnosis))
        elif diagnosis.action is Action.DROP_REPLAY:
            yield from self._unbound(diagnosis)
        elif diagnosis.action is Action.COMPRESS:
            yield from self._compressed(diagnosis, self._size_target(diagnosis))
        elif diagnosis.action is Action.REDUCE_OUTPUT:
            lowered, useful = self._lowered(diagnosis)
            if lowered is not None and useful:
                yield lowered
            if diagnosis.requested_tokens is not None:  # the window, not an output cap
                yield from self._compressed(diagnosis, self._size_target(diagnosis))
            if lowered is not None and not useful:
                yield lowered  # a short answer beats none

    def _repaired(self, profile: Profile, *, escalated: bool) -> Iterator[_Candidate]:
        try:
            result = repair(plain(self.messages), provider=profile)
        except InvalidOutputError:
            raise  # a bug in condense, not a dead end of this recovery
        except CondenseError:
            return
        how = f"repaired for {profile.name!r}" + (" (escalated)" if escalated else "")
        detail = f"{how}: {len(result.changes)} change(s)"
        budget, size = self.s.budget, self._count(result.messages)
        if budget is not None and size is not None and size > budget:
            fitted = self._compress(result.messages, budget, profile)
            if fitted is not None:
                messages, report = fitted
                yield _Candidate(
                    messages,
                    self.max_tokens,
                    Action.REPAIR,
                    f"{detail}; fitted to the budget ({report.tokens_after} tokens)",
                    result.changes,
                    report,
                )
                return
        yield _Candidate(result.messages, self.max_tokens, Action.REPAIR, detail, result.changes)

    def _unbound(self, diagnosis: Diagnosis) -> Iterator[_Candidate]:
        """The history without the replay state the provider says is bound elsewhere."""
        for heal in replay_heals(
            plain(self.messages),
            diagnosis.message,
            thinking=self.s.thinking,
            drop_block=self.takes_drop_block,
        ):
            yield _Candidate(
                heal.messages,
                self.max_tokens,
                Action.DROP_REPLAY,
                heal.detail,
                heal.changes,
                prefix_mismatch_behavior=heal.prefix_mismatch_behavior,
            )

    def _compressed(self, diagnosis: Diagnosis, target: int | None) -> Iterator[_Candidate]:
        """Compress to ``target``, then tighter, until the result is new."""
        for _ in range(3):
            if target is None or target < 1:
                return
            fitted = self._compress(plain(self.messages), target, self.s.profile)
            if fitted is not None:
                messages, report = fitted
                self.target = target
                detail = f"compressed to {report.tokens_after} tokens (budget {target})"
                yield _Candidate(messages, self.max_tokens, Action.COMPRESS, detail, (), report)
            target = int(target * TIGHTER)

    def _lowered(self, diagnosis: Diagnosis) -> tuple[_Candidate | None, bool]:
        """A lower ``max_tokens``, and whether it leaves room for a useful answer (else
        compressing the input to make room is tried first)."""
        if not self.takes_max_tokens:
            return None, False
        asked = diagnosis.output_tokens or self.max_tokens or self.s.max_tokens
        fit = diagnosis.suggested_max_tokens
        if fit is None and asked is not None:
            fit = asked // 2
        if fit is None or fit < 1:
            return None, False
        useful = asked is None or fit >= _USEFUL_OUTPUT or 4 * fit >= asked
        detail = f"max_tokens lowered to {fit}"
        return _Candidate(list(self.messages), fit, Action.REDUCE_OUTPUT, detail), useful

    # -- sizes -------------------------------------------------------------------------

    def _size_target(self, diagnosis: Diagnosis) -> int | None:
        """Our tokens the history may have so the provider accepts it."""
        current = self._count(self.messages)
        if current is None:
            return None
        allowed = diagnosis.allowed_tokens
        target: int
        if allowed is not None:
            reserve = diagnosis.output_tokens
            if reserve is None:
                reserve = self.max_tokens or self.s.max_tokens or 0
            theirs = diagnosis.input_tokens
            ratio = max(1.0, theirs / current) if theirs and current else 1.0
            target = int((allowed - reserve) * (1 - self.s.margin) / ratio)
            target = min(target, int(current * (1 - self.s.margin)))
        else:
            base = min(self.s.budget, current) if self.s.budget else current
            target = int(base * TIGHTER)
        if self.target is not None:
            target = min(target, int(self.target * TIGHTER))
        return target

    def _count(self, messages: Sequence[Any]) -> int | None:
        try:
            return count_tokens(
                plain(messages),
                model=self.s.model,
                encoding=self.s.encoding,
                media=media_billing(self.s.profile),
            )
        except (CondenseError, TypeError, ValueError, AttributeError):
            return None

    def _compress(
        self, messages: list[Any], budget: int, profile: Profile
    ) -> tuple[list[Any], CompressionReport] | None:
        try:
            result = compress(
                messages,
                budget=budget,
                model=self.s.model,
                encoding=self.s.encoding,
                provider=profile,
                summarizer=self.s.summarizer,
                tokenizer_margin=False,  # the target is in condense's tokens already
            )
        except InvalidOutputError:
            raise  # a bug in condense, not a dead end of this recovery
        except CondenseError:
            return None
        return result.messages, result.report


# -- helpers -------------------------------------------------------------------------------


def fingerprint(
    messages: Sequence[Any],
    max_tokens: int | None = None,
    *,
    prefix_mismatch_behavior: str | None = None,
) -> str:
    """A digest of what a request sends: its messages (as JSON), ``max_tokens`` and the
    Anthropic ``prefix_mismatch_behavior`` setting (when one is sent)."""
    sent: list[Any] = [plain(messages), max_tokens]
    if prefix_mismatch_behavior is not None:
        sent.append(prefix_mismatch_behavior)
    text = json.dumps(
        sent,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=repr,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def plain(messages: Sequence[Any]) -> list[Any]:
    """``messages`` as a list of dicts: SDK message objects (pydantic models, such as the
    ``ChatCompletionMessage`` an agent appends from a response) are dumped the way the
    ``openai`` SDK sends them; dicts and anything else pass through as the same objects."""
    out: list[Any] = []
    for message in messages:
        dump = getattr(message, "model_dump", None)
        if not isinstance(message, dict) and callable(dump):
            exclude = getattr(message, "__api_exclude__", None)
            message = dump(exclude_unset=True, mode="json", exclude=exclude)
        out.append(message)
    return out


def _takes_keyword(call: Callable[..., object], name: str, *, declared: bool = False) -> bool:
    """Whether ``call`` accepts keyword ``name``; with ``declared``, only when it names it
    (a ``**kwargs`` that forwards to an SDK would pass on a keyword the SDK refuses)."""
    try:
        parameters = inspect.signature(call).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        (p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        or (p.kind is p.VAR_KEYWORD and not declared)
        for p in parameters
    )


def _describe(attempt: Attempt) -> str:
    if attempt.diagnosis is None:
        return f"attempt {attempt.number}: succeeded"
    return f"attempt {attempt.number}: {attempt.diagnosis.category.value} → {attempt.detail}"
