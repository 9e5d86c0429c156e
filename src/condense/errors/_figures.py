"""Numbers inside error texts and headers: token counts, retry delays, message indices."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_N = r"(\d{1,3}(?:,\d{3})+(?!\d)|\d+(?!\d))"  # whole numbers only, "30,000" included


def _patterns(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern.replace("NUM", _N)) for pattern in patterns)


_WINDOW = _patterns(
    r"maximum context length(?: is| of|:)? NUM",
    r"must be <= NUM",
    r"must have less than NUM tokens",
    r"maximum model length of NUM",
    r"maximum prompt length is NUM",
    r"configured limit of NUM",
    r"cannot exceed NUM",
    r"exceeds limit of NUM",
    r"NUM maximum context length",
    r"maximum number of tokens allowed \(NUM\)",
    r"tokens? > NUM maximum",
    r"exceed\w* context limit: \d+ \+ \d+ > NUM",
    r"model token limit:? NUM",
    r"range of input length should be \[\d+, ?NUM\]",
    r"context window of NUM",
    r"context (?:length|size) \(NUM(?: tokens)?\)",
    r"exceeds the maximum length NUM",
    r"while limit is NUM",
    r"max(?:imum)? token count of NUM",
    r"\(\d+ > NUM - \d+\)",
    # local servers: vLLM, candle-vllm, LM Studio, llama.cpp slots
    r"max_model_len:? NUM",
    r"maximum model length:? NUM",
    r"\(context length NUM\)",
    r"context length of only NUM",
    r"maximum context length \(NUM\)",
    r"n_ctx(?:_slot)?\s*[=:]\s*NUM",
    r"context (?:size|length|window) is NUM",
    r"max_seq_len:? \(?NUM",
    r"maximum allowed input length of NUM",
)
_REQUESTED = _patterns(
    r"you requested (?:about )?NUM tokens",
    r"your messages resulted in NUM tokens",
    r"for a total of (?:at least )?NUM tokens",
    r"\brequested:? NUM\b",
    r"prompt is too long: NUM",
    r"input token count \(NUM\)",
    r"prompt contains NUM tokens",
    r"current length is NUM",
    r"requested tokens \(NUM\)",
    r"the input \(NUM tokens\)",
    r"input length NUM exceeds",
    r"prompt token count of NUM",
    r"request NUM input tokens",
    r"prompt tokens \(NUM\)",
    r"given: NUM(?! `?inputs)",
    r"prompt \(length NUM\)",
    r"prompt length of NUM",
    r"request contains NUM tokens",
    r"received NUM",
    r"prompt \(NUM tokens\)",
    # local servers: vLLM, candle-vllm, llama.cpp, LM Studio, SGLang
    r"engine prompt length NUM",
    r"prompt length NUM exceeds",
    r"\(total length NUM\)",
    r"\brequest \(NUM tokens\)",
    r"keep the first NUM tokens",
    r"requested a total of NUM tokens",
    r"input length \(NUM\)",
    r"n_prompt_tokens\s*[=:]\s*NUM",
    r"prompt has NUM tokens",
    r"prompt_tokens \(NUM\)",
)
_INPUT = _patterns(
    r"\(NUM (?:in the messages|in your prompt|of text input|in the prompt)",
    r"prompt contains at least NUM input tokens",
    r"your request has NUM input tokens",
    r"context limit: NUM \+",
    r"\(\d+ > \d+ - NUM\)",
    r"given: NUM `?inputs`? tokens",
    r"NUM tokens from the input messages",
)
_OUTPUT = _patterns(
    r"NUM (?:tokens )?(?:in|for) the completion",
    r"NUM in the output",
    r"you requested NUM output tokens",
    r"context limit: \d+ \+ NUM",
    r"\(NUM > \d+ - \d+\)",
    r"max_(?:completion_)?tokens'?(?: or 'max_completion_tokens')? is too large: NUM",
    r"max_tokens: NUM >",
    r"whereas you provided NUM",
    r"you requested up to NUM tokens",
    r"and NUM `?max_new_tokens",
)
_OUTPUT_CAP = _patterns(
    r"supports at most NUM completion tokens",
    r"NUM, which is the maximum allowed number of output tokens",
    r"max_(?:completion_)?tokens\W{0,3} should be less (?:than )?or equal to NUM",
    r"can only afford NUM",
    r"max(?:imum)? (?:number of )?output tokens (?:is|of|allowed is) NUM",
)
_OVER = _patterns(  # by how much the prompt is over the window (Ollama)
    r"exceeded max context length by NUM",
    r"exceeds? the (?:context|maximum context|context window)\w* by NUM",
)
_RATE = _patterns(r"\blimit:? NUM, (?:used NUM, )?requested:? NUM")


@dataclass(frozen=True)
class TokenFigures:
    """Token counts an error text states; any of them may be missing."""

    window: int | None = None
    requested: int | None = None
    input: int | None = None
    output: int | None = None
    output_cap: int | None = None
    rate_limit: int | None = None
    rate_requested: int | None = None
    over: int | None = None
    """By how many tokens the prompt exceeds a window the text does not state."""

    def prompt(self) -> int | None:
        """The prompt's size: stated, or the total minus the completion budget."""
        if self.input is not None:
            return self.input
        if self.requested is not None and self.output is not None:
            return self.requested - self.output
        return None

    def total(self) -> int | None:
        """Prompt plus completion budget, as far as known."""
        if self.requested is not None:
            return self.requested
        if self.input is not None and self.output is not None:
            return self.input + self.output
        return self.input


def token_figures(text: str, numbers: Mapping[str, int]) -> TokenFigures:
    """Read the token counts out of ``text`` (lower-cased) and JSON ``numbers``."""
    rate = _first_groups(_RATE, text)
    return TokenFigures(
        window=_first(_WINDOW, text) or numbers.get("n_ctx"),
        requested=_first(_REQUESTED, text) or numbers.get("n_prompt_tokens"),
        input=_first(_INPUT, text),
        output=_first(_OUTPUT, text),
        output_cap=_first(_OUTPUT_CAP, text),
        rate_limit=rate[0] if rate else None,
        rate_requested=rate[-1] if rate else None,
        over=_first(_OVER, text),
    )


def _first(patterns: Sequence[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return _int(match.group(1))
    return None


def _first_groups(patterns: Sequence[re.Pattern[str]], text: str) -> list[int]:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return [_int(group) for group in match.groups() if group is not None]
    return []


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# --- retry delays ------------------------------------------------------------------

_UNIT_SECONDS = {
    "ms": 0.001,
    "millisecond": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hour": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
}
_DURATION_PART = re.compile(
    r"\s*(\d+(?:\.\d+)?)\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)"
    r"(?![a-z])",
    re.IGNORECASE,
)
_RETRY_TEXT = re.compile(
    r"\b(?:(?:try again|retry)\s+(?:in|after)|wait(?:\s+for)?|resets?\s+in)\s+(?=\d)",
    re.IGNORECASE,
)


def parse_duration(text: str) -> float | None:
    """Seconds in ``"1.5"``, ``"20ms"``, ``"6m0s"``, ``"20 seconds"``; ``None`` if not one."""
    text = text.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    total = 0.0
    position = 0
    while True:
        match = _DURATION_PART.match(text, position)
        if not match:
            break
        unit = match.group(2).lower().rstrip("s") or "s"
        if match.group(2).lower() == "ms":
            unit = "ms"
        total += float(match.group(1)) * _UNIT_SECONDS.get(unit, 1.0)
        position = match.end()
    return total if position else None


def retry_after(
    headers: Mapping[str, str], text: str, retry_delay: str | None, *, limited: bool
) -> float | None:
    """The provider's requested wait: headers first, then Gemini's RetryInfo, then text.

    The ``x-ratelimit-reset-*`` headers ride on every OpenAI (and Anthropic) response, so
    they count only when the request was ``limited`` (rate limited or overloaded).
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        seconds = parse_duration(millis)
        if seconds is not None:
            return seconds / 1000.0
    header = headers.get("retry-after")
    if header is not None:
        seconds = parse_duration(header)
        if seconds is None:
            seconds = _seconds_until_http_date(header)
        if seconds is not None:
            return seconds
    reset = _ratelimit_reset(headers) if limited else None
    if reset is not None:
        return reset
    if retry_delay is not None:
        seconds = parse_duration(retry_delay)
        if seconds is not None:
            return seconds
    return stated_wait(text)


def stated_wait(text: str) -> float | None:
    """The wait the error text asks for ("try again in 5 minutes", "please wait 46
    seconds"), in seconds; ``None`` when it names none."""
    match = _RETRY_TEXT.search(text)
    if match:
        return parse_duration(_leading_duration(text[match.end() :]))
    return None


def _leading_duration(text: str) -> str:
    position = 0
    while True:
        match = _DURATION_PART.match(text, position)
        if not match:
            break
        position = match.end()
    return text[:position] if position else text.split(maxsplit=1)[0].rstrip(".,;)")


def _ratelimit_reset(headers: Mapping[str, str]) -> float | None:
    """OpenAI's ``x-ratelimit-reset-*`` durations, Anthropic's ``*-reset`` timestamps."""
    resets: dict[str, float] = {}
    for kind in ("requests", "tokens"):
        value = headers.get(f"x-ratelimit-reset-{kind}")
        seconds = parse_duration(value) if value is not None else None
        if seconds is not None:
            resets[kind] = seconds
    if resets:
        exhausted = [kind for kind in resets if headers.get(f"x-ratelimit-remaining-{kind}") == "0"]
        return max(resets[kind] for kind in (exhausted or resets))
    stamps = [
        _seconds_until_iso(value)
        for key, value in headers.items()
        if key.startswith("anthropic-ratelimit-") and key.endswith("-reset")
    ]
    known = [seconds for seconds in stamps if seconds is not None]
    return max(known) if known else None


def _seconds_until_http_date(value: str) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _seconds_until_iso(value: str) -> float | None:
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


# --- message indices ---------------------------------------------------------------

_INDEX = (
    re.compile(r"\bmessages\.\[?(\d+)\]?"),
    re.compile(r"\bmessages\[(\d+)\]"),
    re.compile(r"'messages', (\d+)"),
    re.compile(r"\bat index (\d+)"),
    re.compile(r"\bmessage (?:at )?index (\d+)"),
    re.compile(r"\binput\[(\d+)\]"),
    re.compile(r"\bmessage at position (\d+)"),
)


def message_index(text: str) -> int | None:
    """The index of the offending message, if the text names one."""
    for pattern in _INDEX:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None
