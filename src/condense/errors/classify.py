"""``classify``: turn whatever a model call raised or returned into a :class:`Diagnosis`.

Three sources are weighed, in this order:

1. The exception's type, for failures that never reached a provider: a timeout, a
   refused connection, or a 200 whose JSON body was cut off (the openai SDK surfaces it
   as a bare ``json.JSONDecodeError``).
2. The wording of the provider's message (see ``_families``). Wording about tool pairs,
   tool arguments or token limits wins over the HTTP status, because servers disagree on
   the status (llama.cpp reports a context overflow as 500, some gateways relay 400s as
   502) but never on what the words mean.
3. The HTTP status, which settles everything else: 402 is billing even when worded as a
   quota (unless the text says the limit resets: "usage limit exceeded, try again later"
   is a rate limit), a 429 with ``insufficient_quota`` is billing too, other 429s are rate
   limits, 503 is an overloaded server, and a 404 that names no model is a wrong path.

Replay-identity refusals (reasoning state bound to another conversation or chain) are
read first, whatever the status: their words say what the only fix is.

The action follows the category, with three exceptions read from the text: a rate limit
that one request alone exceeds, or that asks for a long-context tier, is met by
compressing; a billing or permission refusal that says when to try again is waited out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from condense.errors._evidence import Evidence, gather
from condense.errors._families import (
    long_context_tier,
    periodic_limit,
    standard_window,
    text_category,
)
from condense.errors._figures import (
    TokenFigures,
    message_index,
    retry_after,
    stated_wait,
    token_figures,
)
from condense.errors.diagnosis import DEFAULT_ACTIONS, Action, Category, Diagnosis

_CONTENT_WINS = frozenset(
    {
        Category.REPLAY_IDENTITY,
        Category.TOOL_PAIRING,
        Category.TOOL_ARGUMENTS,
        Category.CONTEXT_OVERFLOW,
        Category.OUTPUT_LIMIT,
    }
)
_CLIENT_WORDING = frozenset(
    {
        Category.MESSAGE_FORMAT,
        Category.CONTENT_FILTER,
        Category.MODEL_NOT_FOUND,
        Category.AUTH,
        Category.RATE_LIMIT,
        Category.PAYLOAD_TOO_LARGE,
        Category.OVERLOADED,
    }
)
_LIMITED = frozenset({Category.RATE_LIMIT, Category.OVERLOADED})
# Refusals that are final unless they say when to try again ("try again in 5 minutes").
_WAIT_IT_OUT = frozenset({Category.BILLING, Category.AUTH})
_SIZED = frozenset({Category.CONTEXT_OVERFLOW, Category.OUTPUT_LIMIT, Category.PAYLOAD_TOO_LARGE})
_NUMERIC_CODE = re.compile(r"\((\d{4,5})\)")  # MiniMax: "invalid params, ... (2013)"
# What clients prepend to a provider's message: "Error code: 400 - ", "429 ",
# "openai.error.InvalidRequestError: ", "litellm.BadRequestError: OpenAIException - ".
_CLIENT_PREFIX = re.compile(
    r"^[^\w(]*(?:"
    r"[\w.]*(?:error|exception)\b\s*[:-]\s*(?=\S)"
    r"|(?:(?:api )?error(?: code)?:?\s*)?(?:http\s*)?[1-5]\d\d\b\s*[-:]?\s*(?=\S)"
    r")",
    re.IGNORECASE,
)


def classify(
    error: object,
    *,
    messages: Sequence[object] | None = None,
    context_window: int | None = None,
) -> Diagnosis:
    """Say what ``error`` means and what condense should do about it.

    ``error`` may be an openai or anthropic SDK exception, an httpx/httpx2 response or
    error, a ``(status_code, body)`` tuple (body as str, bytes or parsed JSON), a bare
    string, or any other exception. ``messages`` is the history that was sent: when it is
    given and the error names a message index, the diagnosis carries it. ``context_window``
    fills ``allowed_tokens`` for size errors whose text does not state the limit.
    """
    ev = gather(error)
    text = ev.haystack()
    status = ev.effective_status
    figures = token_figures(text, ev.numbers)
    if "json_decode" in ev.kinds:
        category = Category.SERVER_ERROR  # the body of a 200 was cut off
    else:
        category = _decide(ev, text, status, figures, context_window)
    action = DEFAULT_ACTIONS[category]
    requested, allowed, output = _token_fields(category, figures, context_window)

    wait = retry_after(ev.headers, text, ev.retry_delay, limited=category in _LIMITED)
    if category is Category.RATE_LIMIT and "request too large" in text:
        action = Action.COMPRESS  # one request alone exceeds the per-minute budget
        requested, allowed = figures.rate_requested, figures.rate_limit
    elif category is Category.RATE_LIMIT and long_context_tier(text):
        action = Action.COMPRESS  # the limit is on long prompts: a shorter one passes
        allowed = figures.window or standard_window(text) or context_window
    elif category in _WAIT_IT_OUT and stated_wait(text) is not None:
        action = Action.BACKOFF  # a 402/403 whose text says when to come back
    elif category is Category.PAYLOAD_TOO_LARGE and figures.rate_limit is not None:
        requested, allowed = figures.rate_requested, figures.rate_limit
    elif category is Category.BILLING and figures.output_cap and "max_tokens" in text:
        action = Action.REDUCE_OUTPUT  # OpenRouter: "requires more credits, or fewer max_tokens"
        requested, allowed, output = None, figures.output_cap, figures.output

    message = ev.message() or next(iter(ev.texts), "")
    if ev.texts and message == ev.texts[0]:  # a bare string, as a client printed it
        message = _strip_client_prefixes(message)
    if isinstance(error, BaseException) and not message:
        message = type(error).__name__
    return Diagnosis(
        category=category,
        retryable=action is not Action.FAIL,
        action=action,
        message=message,
        status_code=ev.status if ev.status is not None else ev.body_status,
        provider_code=ev.provider_code() or _trailing_code(message),
        retry_after=wait,
        requested_tokens=requested,
        allowed_tokens=allowed,
        output_tokens=output,
        message_index=message_index(text) if messages is not None else None,
    )


def _decide(
    ev: Evidence,
    text: str,
    status: int | None,
    figures: TokenFigures,
    context_window: int | None,
) -> Category:
    if status is None and ev.kinds & {"timeout", "connection"}:
        return Category.TIMEOUT if "timeout" in ev.kinds else Category.CONNECTION
    worded = text_category(text, minimax_code=ev.minimax_code)
    if worded is None and figures.output is not None and figures.prompt() is not None:
        worded = Category.CONTEXT_OVERFLOW  # the figures alone say a size limit was hit
    if worded in (Category.CONTEXT_OVERFLOW, Category.OUTPUT_LIMIT):
        worded = _overflow_or_output(worded, figures, context_window)
    if (status in (402, 403) or worded is Category.BILLING) and periodic_limit(text):
        return Category.RATE_LIMIT  # "usage limit exceeded, try again later"
    if status == 402 or worded is Category.BILLING:
        return Category.BILLING
    if worded in _CONTENT_WINS:
        return worded
    if status is None:
        return worded or Category.UNKNOWN
    return _by_status(status, worded, ev)


def _by_status(status: int, worded: Category | None, ev: Evidence) -> Category:
    if status in (401, 403):
        if worded in (Category.CONTENT_FILTER, Category.MODEL_NOT_FOUND):
            return worded
        if status == 403 and worded in _LIMITED:
            return worded  # OpenRouter's per-key limits, gateways' rate limits
        return Category.AUTH
    if status == 404:  # a model the provider names, else a path the server does not have
        return worded if worded is Category.MODEL_NOT_FOUND else Category.NOT_FOUND
    if status == 429 and worded is Category.OVERLOADED:
        return worded  # Z.AI answers a busy server with a 429
    fixed = {
        408: Category.TIMEOUT,
        409: Category.SERVER_ERROR,
        413: Category.PAYLOAD_TOO_LARGE,
        429: Category.RATE_LIMIT,
        503: Category.OVERLOADED,
        529: Category.OVERLOADED,
    }
    if status in fixed:
        return fixed[status]
    if status >= 500:
        if worded in (Category.OVERLOADED, Category.RATE_LIMIT):
            return worded
        return Category.SERVER_ERROR
    if 400 <= status < 500:
        return worded if worded in _CLIENT_WORDING else Category.MESSAGE_FORMAT
    if worded is not None:
        return worded
    return Category.SERVER_ERROR if ev.unreadable_body else Category.UNKNOWN


def _overflow_or_output(
    worded: Category, figures: TokenFigures, context_window: int | None
) -> Category:
    """vLLM/OpenAI/Anthropic state prompt and completion apart: which one is too big?"""
    window = figures.window if figures.window is not None else context_window
    prompt = figures.prompt()
    if figures.output is None or window is None or prompt is None:
        return worded
    if figures.output == 0 or prompt >= window:
        return Category.CONTEXT_OVERFLOW
    return Category.OUTPUT_LIMIT


def _token_fields(
    category: Category, figures: TokenFigures, context_window: int | None
) -> tuple[int | None, int | None, int | None]:
    requested = figures.total()
    allowed = figures.window
    if category is Category.OUTPUT_LIMIT and allowed is None:
        allowed = figures.output_cap
        if figures.output_cap is not None and figures.window is None:
            requested = figures.requested
    if allowed is None and category in _SIZED:
        allowed = context_window
    if requested is None and figures.over is not None and allowed is not None:
        requested = allowed + figures.over  # Ollama: "exceeded max context length by N"
    if category is Category.RATE_LIMIT and allowed is None:
        requested, allowed = figures.rate_requested, figures.rate_limit
    return requested, allowed, figures.output


def _strip_client_prefixes(message: str) -> str:
    for _ in range(4):
        stripped = _CLIENT_PREFIX.sub("", message, count=1)
        if stripped == message or not stripped:
            break
        message = stripped
    return message


def _trailing_code(message: str) -> str | None:
    match = _NUMERIC_CODE.search(message)
    return match.group(1) if match else None
