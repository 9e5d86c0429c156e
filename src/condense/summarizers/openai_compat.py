"""Summaries from any OpenAI-compatible endpoint, falling back to the extractive digest.

Works with OpenAI, OpenRouter, vLLM, Ollama, llama.cpp and anything else that speaks
``POST /v1/chat/completions``, through the official ``openai`` SDK (an optional
dependency: ``pip install 'condense[openai]'``).

Configuration, first found wins: constructor argument, ``CONDENSE_BASE_URL`` /
``CONDENSE_API_KEY`` / ``CONDENSE_MODEL``, ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` /
``OPENAI_MODEL``. A custom ``base_url`` needs no key (local servers ignore it).

What leaves the process is the prompt of :mod:`condense.summarizers.prompt`: bounded in
size, with secrets redacted. The SDK's own retries are switched off (``max_retries=0``)
and done here by :func:`condense.retry.retry`: up to ``max_attempts`` requests in all
while :func:`~condense.errors.classify` says the failure is passing (a timeout, a
connection error, a cut-off body, a rate limit, overload or a 5xx), waiting for
exponential backoff with jitter or for exactly what ``retry-after-ms`` / ``Retry-After``
asks. Any other failure — or the last passing one — falls back to the ``fallback``
summarizer (extractive by default), and an empty answer or one cut off by
``finish_reason == "length"`` with nothing in it counts as a failure.

The model's answer is checked against the span: identifiers it lost are put back from the
extractive ranking while room remains (:mod:`condense.summarizers.restore`).

``summarize`` returns text only. The compress engine calls ``summarize_with_report``
(or the async ``asummarize_with_report``), which returns a
:class:`~condense.summarizers.outcome.SummaryOutcome` telling whether it fell back,
why, and how many requests were made.
"""

from __future__ import annotations

import functools
import json
import os
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from condense._compat import renamed
from condense.exceptions import InputError
from condense.retry import Failure, Retried, RetryPolicy, aretry, judge, retry
from condense.summarizers._text import clip, estimate_tokens, fit_tokens, one_line
from condense.summarizers.base import Summarizer
from condense.summarizers.extractive import ExtractiveSummarizer
from condense.summarizers.outcome import SummaryOutcome
from condense.summarizers.prompt import build_messages
from condense.summarizers.restore import restore_identifiers
from condense.types import RawMessage

if TYPE_CHECKING:
    import ssl

    import openai

INSTALL_HINT = "pip install 'condense[openai]'"
# Placeholder key for endpoints that need none (the SDK refuses an empty one).
_NO_KEY = "not-needed"


class OpenAISummarizer:
    """Summarize with a model behind an OpenAI-compatible endpoint; see the module docs."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_attempts: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        max_retry_wait: float = 60.0,
        max_prompt_tokens: int = 12_000,
        max_message_chars: int = 4_000,
        temperature: float | None = None,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        extra_body: Mapping[str, Any] | None = None,
        fallback: Summarizer | None = None,
        seed: int | None = None,
        max_retries: int | None = None,
        restore: bool = True,
    ) -> None:
        """Resolve the endpoint and check that ``openai`` is installed.

        ``timeout`` is per request, in seconds; ``max_retry_wait`` caps how long a
        ``Retry-After`` is waited out (longer: fall back at once). ``max_prompt_tokens``
        bounds the whole prompt, ``max_message_chars`` each message in it.
        ``max_tokens_param`` names the output cap as the endpoint expects it (OpenAI's
        reasoning models want ``max_completion_tokens``). ``extra_body`` is merged into
        every request; ``seed`` makes the retry jitter reproducible. ``max_retries=N`` is
        the old spelling of ``max_attempts=N + 1``. ``restore=False`` returns the model's
        answer without putting back the identifiers it lost (see the module docs).
        """
        if max_retries is not None:
            renamed("max_retries", "max_attempts")
            max_attempts = max_retries + 1
        _import_openai()
        self.base_url = _setting(base_url, "BASE_URL")
        resolved_model = _setting(model, "MODEL")
        if not resolved_model:
            raise InputError(
                "the openai summarizer needs a model: pass model=... or set CONDENSE_MODEL "
                "(or OPENAI_MODEL)"
            )
        self.model = resolved_model
        key = _setting(api_key, "API_KEY")
        if not key and not self.base_url:
            raise InputError(
                "the openai summarizer needs an API key for api.openai.com: pass api_key=... "
                "or set CONDENSE_API_KEY (or OPENAI_API_KEY), or point base_url at an "
                "endpoint that needs none"
            )
        self._api_key = key or _NO_KEY
        if timeout <= 0 or max_attempts < 1 or max_prompt_tokens < 500 or max_message_chars < 100:
            raise InputError(
                "openai summarizer: timeout must be > 0, max_attempts >= 1, "
                "max_prompt_tokens >= 500 and max_message_chars >= 100"
            )
        self.timeout = timeout
        self.retry = RetryPolicy(
            max_attempts=max_attempts,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            max_retry_wait=max_retry_wait,
        )
        self.max_prompt_tokens = max_prompt_tokens
        self.restore = restore
        self.max_message_chars = max_message_chars
        self.temperature = temperature
        self.max_tokens_param = max_tokens_param
        self.extra_body = dict(extra_body or {})
        self.fallback: Summarizer = fallback if fallback is not None else ExtractiveSummarizer()
        self._rng = random.Random(seed)

    def __repr__(self) -> str:
        return f"OpenAISummarizer(model={self.model!r}, base_url={self.base_url!r})"

    # -- the protocol --------------------------------------------------------------------

    def summarize(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> str:
        """The model's summary, or the fallback's when the model failed."""
        return self.summarize_with_report(
            messages, previous=previous, target_tokens=target_tokens
        ).text

    def summarize_with_report(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> SummaryOutcome:
        """Like :meth:`summarize`, and say whether it fell back, why, after how many tries."""
        request = self.request(messages, previous=previous, target_tokens=target_tokens)
        try:
            client = self._client()
        except Exception as error:  # a bad base_url and the like: fall back, say why
            return self._unusable_client(error, messages, previous, target_tokens)
        with client:
            done = retry(
                lambda: _answer(client.chat.completions.create(**request)),
                policy=self.retry,
                judge=self._judge,
                rng=self._rng,
            )
        return self._outcome(done, messages, previous, target_tokens)

    async def asummarize(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> str:
        """:meth:`summarize` for asyncio callers (uses ``AsyncOpenAI``)."""
        outcome = await self.asummarize_with_report(
            messages, previous=previous, target_tokens=target_tokens
        )
        return outcome.text

    async def asummarize_with_report(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> SummaryOutcome:
        """:meth:`summarize_with_report` for asyncio callers (uses ``AsyncOpenAI``)."""
        request = self.request(messages, previous=previous, target_tokens=target_tokens)
        try:
            client = self._async_client()
        except Exception as error:
            return self._unusable_client(error, messages, previous, target_tokens)

        async def attempt() -> str:
            return _answer(await client.chat.completions.create(**request))

        async with client:
            done = await aretry(attempt, policy=self.retry, judge=self._judge, rng=self._rng)
        return self._outcome(done, messages, previous, target_tokens)

    # -- steps ---------------------------------------------------------------------------

    def request(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for this span."""
        if target_tokens < 1:
            raise InputError(f"target_tokens must be at least 1, got {target_tokens}")
        prompt = build_messages(
            messages,
            previous=previous,
            target_tokens=target_tokens,
            max_prompt_tokens=self.max_prompt_tokens,
            max_message_chars=self.max_message_chars,
            secrets=[self._api_key],
        )
        request: dict[str, Any] = {
            "model": self.model,
            "messages": prompt,
            # Room to finish the last section; an answer over target is trimmed.
            self.max_tokens_param: target_tokens + target_tokens // 2 + 64,
        }
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        return request

    def _client(self) -> openai.OpenAI:
        import openai

        return openai.OpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # retries are ours, see _judge
            http_client=openai.DefaultHttpxClient(verify=_ssl_context()),
        )

    def _async_client(self) -> openai.AsyncOpenAI:
        import openai

        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=_ssl_context()),
        )

    def _judge(self, error: BaseException) -> Failure:
        """A failed request: this summarizer's words for it; retryable as classify says."""
        if isinstance(error, _Unusable):
            return Failure(reason=str(error), retryable=False)
        verdict = judge(error)
        return Failure(
            reason=_describe(error, self.timeout),
            retryable=verdict.retryable,
            retry_after=verdict.retry_after,
        )

    def _outcome(
        self,
        done: Retried[str],
        messages: Sequence[RawMessage],
        previous: str | None,
        target_tokens: int,
    ) -> SummaryOutcome:
        failures = tuple(failure.reason for failure in done.failures)
        if done.ok and done.value is not None:
            text = _fit(done.value, target_tokens)
            if self.restore:
                text = restore_identifiers(
                    text, messages, previous=previous, target_tokens=target_tokens
                )
            return SummaryOutcome(
                text=text,
                summarizer=self.name,
                attempts=done.attempts,
                failures=failures,
            )
        last = done.failures[-1]
        waited_out = last.retry_after is not None and last.retry_after > self.retry.max_retry_wait
        reason = f"{last.reason}; {done.reason}" if waited_out else last.reason
        return self._fall_back(messages, previous, target_tokens, reason, failures, done.attempts)

    def _unusable_client(
        self,
        error: Exception,
        messages: Sequence[RawMessage],
        previous: str | None,
        target_tokens: int,
    ) -> SummaryOutcome:
        reason = f"could not create the client: {error}"
        return self._fall_back(messages, previous, target_tokens, reason, (reason,), 0)

    def _fall_back(
        self,
        messages: Sequence[RawMessage],
        previous: str | None,
        target_tokens: int,
        reason: str,
        failures: tuple[str, ...],
        attempts: int,
    ) -> SummaryOutcome:
        text = self.fallback.summarize(messages, previous=previous, target_tokens=target_tokens)
        return SummaryOutcome(
            text=text,
            summarizer=self.fallback.name,
            fell_back=True,
            reason=reason,
            attempts=attempts,
            failures=failures,
        )


def _setting(value: str | None, name: str) -> str | None:
    """``value``, else ``CONDENSE_<name>``, else ``OPENAI_<name>``; blank counts as unset."""
    for candidate in (value, os.environ.get(f"CONDENSE_{name}"), os.environ.get(f"OPENAI_{name}")):
        if candidate and candidate.strip():
            return candidate.strip()
    return None


def _import_openai() -> None:
    try:
        import openai  # noqa: F401
    except ImportError as error:
        raise InputError(
            f"the openai summarizer needs the openai package: {INSTALL_HINT}"
        ) from error


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The SDK's default TLS context, built once (building it costs ~30 ms per client)."""
    import httpx2

    return httpx2.create_ssl_context()


class _Unusable(Exception):
    """An answer that came back but cannot be used (empty, only headings): not retried."""


def _describe(error: BaseException, timeout: float) -> str:
    """What went wrong with a request, in this summarizer's words."""
    import openai

    if isinstance(error, openai.APIStatusError):
        detail = _error_message(error.body) or error.message
        return f"HTTP {error.status_code}: {clip(one_line(detail), 300)}"
    if isinstance(error, openai.APITimeoutError):
        return f"timed out after {timeout:g}s"
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error
        return f"connection failed: {clip(one_line(str(cause)), 200)}"
    if isinstance(error, openai.APIResponseValidationError | ValueError):
        return f"unreadable response: {clip(one_line(str(error)), 200)}"
    return f"{type(error).__name__}: {clip(one_line(str(error)), 200)}"


def _error_message(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        return json.dumps(body)[:300]
    return str(body) if body else ""


def _answer(completion: Any) -> str:
    """The text of a completion; raises :class:`_Unusable` saying why it is not usable."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise _Unusable("the answer has no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    text = content.strip() if isinstance(content, str) else ""
    finish = getattr(choice, "finish_reason", None)
    if any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        return text  # usable, even if cut off by the length limit
    what = "only headings" if text else "no text"
    if finish == "length":
        raise _Unusable(f"the answer was cut off (finish_reason=length) with {what}")
    if text:
        raise _Unusable(f"the answer had only headings (finish_reason={finish})")
    raise _Unusable(f"the answer was empty (finish_reason={finish})")


def _fit(text: str, target_tokens: int) -> str:
    """``text`` within ``target_tokens`` (estimated), cut at a line end where possible."""
    if estimate_tokens(text) <= target_tokens:
        return text
    return fit_tokens(lambda limit: _cut(text, limit), target_tokens)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[:cut].rstrip() if cut > limit // 2 else clip(text, limit)
