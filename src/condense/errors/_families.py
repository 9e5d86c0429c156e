"""Keyword families: the wordings providers use for each kind of refusal.

Each family is a list of regular expressions over the lower-cased error text. They are
written as families of phrasings rather than exact strings, because every provider and
every proxy in front of it rewords the same rule. :func:`text_category` tries them in a
fixed order: the most specific and most actionable first (a 400 about tool-call ids is
tool pairing, not a generic format error), and families whose wording overlaps another's
(``"Please reduce the prompt length"`` in a rate-limit message) are tried earlier.

Wordings only one provider uses live in its module under ``condense/providers/`` (its
``Provider.wordings`` and ``error_codes``) and are read from there; gateways that are not
providers of their own (OpenRouter, DashScope) keep their wordings here, named for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from condense.errors.diagnosis import Category
from condense.providers import PROVIDERS
from condense.providers.anthropic import STANDARD_WINDOW


def _family(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern) for pattern in patterns)


# --- Provider-specific wordings ------------------------------------------------------------
# Gathered from the provider modules, or named for the gateway whose own phrasing they are.
# The generic families further down include them.


def _provider_family(name: str) -> tuple[re.Pattern[str], ...]:
    """The wordings of family ``name`` that provider modules declare as their own."""
    return _family(*(p for provider in PROVIDERS.values() for p in provider.wordings.get(name, ())))


# Local servers (vLLM, llama.cpp, SGLang, Ollama, LM Studio): ``providers/local.py``.
LOCAL_CONTEXT_OVERFLOW = _provider_family("context_overflow")
# Alibaba Cloud Model Studio / DashScope (Qwen): "Request rate increased too quickly. To
# ensure system stability, please adjust your client logic to scale requests more smoothly
# over time." (QwenLM/Qwen#2069)
DASHSCOPE_RATE_LIMIT = _family(
    r"request rate increased too quickly",
    r"scale requests more smoothly",
)
# OpenRouter: per-key spending limits ("Key limit exceeded (total limit). Manage it using
# https://openrouter.ai/settings/keys", a 403; "Key limit exceeded for this key", a 403 in
# NousResearch/hermes-agent tests/agent/test_error_classifier.py) are billing, raised by
# the key's owner; "key limit exceeded, please wait before retrying" (the same file) is a
# periodic limit to wait out (see ``PERIODIC_LIMIT``). Routing that finds no provider ("No
# endpoints found matching your data policy", "No endpoints found that support tool use")
# is a setting that no retry and no repair can change.
OPENROUTER_BILLING = _family(r"key limit exceeded")
OPENROUTER_NO_ENDPOINTS = _family(
    r"no endpoints? (?:found|available)",
    r"no allowed providers are available",
)
# Anthropic's long-context tier: ``providers/anthropic.py``.
ANTHROPIC_LONG_CONTEXT_TIER = _provider_family("long_context_tier")
# Anthropic's own billing words: ``providers/anthropic.py``.
ANTHROPIC_BILLING = _provider_family("billing")
# GitHub Copilot's API (a gateway to several providers): '400 {"error":{"message":"Invalid
# JSON format in tool call arguments","code":"invalid_tool_call_format"}}' (microsoft/vscode
# #277466, #279018, Azure/azure-dev #5721).
COPILOT_TOOL_ARGUMENTS = _family(
    r"invalid json format in tool call arguments", r"invalid_tool_call_format"
)
# Replayed reasoning bound to another conversation or chain: ``providers/anthropic.py``
# (thinking blocks) and ``providers/responses.py`` (reasoning items).
REPLAY_IDENTITY = _provider_family("replay_identity")


TOOL_ARGUMENTS = COPILOT_TOOL_ARGUMENTS + _family(
    # Python's json.loads, as vLLM reports a historical call it cannot parse
    r"expecting (?:',' delimiter|':' delimiter|value|property name enclosed in double quotes)",
    r"unterminated string starting at",
    r"invalid \\escape",
    r"invalid control character at",
    r"extra data: line \d+ column",
    # llama.cpp, MiniMax, Bailian, strict gateways
    r"failed to parse (?:the )?(?:tool[ _]call )?arguments",
    r"(?:invalid|malformed|bad) (?:function |tool(?:[ _]call)? )?arguments",
    r"arguments\W{0,4} (?:parameter )?.{0,40}\b(?:must|should) be (?:a |in )?(?:valid )?json",
    r"arguments.{0,40}(?:is|are) not (?:a )?valid json",
    r"function name or parameters is empty",
    # Anthropic tool_use.input, Jinja chat templates that iterate the arguments
    r"tool_use\.input",
    r"input should be a valid (?:dictionary|string)",
    r"has no attribute 'items'",
    r"can only get item pairs from a mapping",
)

TOOL_PAIRING = _family(
    r"tool_call_id",
    r"tool_use_id",
    r"must be a response to a prec",
    r"tool_use`? ids? were found without",
    r"tool_use`? blocks? must have",
    r"tool_result`? blocks?",
    r"tool messages? responding to",
    r"did not have response messages",
    r"no tool (?:call|output) found for function call",
    r"function[ _]call[ _]output",
    r"function (?:call|response) (?:turn|parts?)\b",
    r"number of function (?:calls|call parts|response parts)",
    r"same number of function calls",
    r"tool result'?s? tool id",
    r"tool call result does not follow",
    r"tool call id is invalid",
    r"tool call and result not match",
    r"tool[ _](?:call|use|result)s?\b[^.\n]{0,40}\b"
    r"(?:not found|orphan|without|does not follow|not match|no matching|unmatched|preceded by)",
    r"unanswered tool",
    # Bedrock Converse: toolUse/toolResult blocks
    r"\btool ?(?:result|use)s? blocks?\b|toolresult|tooluse",
    r"\bids? must be unique",
)

# Format rules that mention tool blocks only as context ("... must start with a thinking
# block (preceding the lastmost set of `tool_use` and `tool_result` blocks)").
FORMAT_BEFORE_PAIRING = _family(
    r"thinking block|redacted_thinking|`?thinking`? is enabled|reasoning_content",
)

BILLING = (
    OPENROUTER_BILLING
    + ANTHROPIC_BILLING
    + _family(
        r"insufficient_quota",
        r"insufficient (?:balance|credits?|funds|quota)",
        r"(?:credit|account) balance (?:is )?too low",
        r"requires (?:more|available) credits",
        # "spending limit reached" (a 403, NousResearch/hermes-agent
        # tests/agent/test_error_classifier.py)
        r"spend(?:ing)? limit",
        # Nous Portal answers a paid model on a depleted account with a 404: "Model 'gpt-5' is
        # not available on the Free Tier. Upgrade at …" (the same file)
        r"not available on the free tier|model_not_supported_on_free_tier",
        r"not enough credits",
        r"out of credits",
        r"payment required",
        r"billing_not_active|billing hard limit|exceeded your billing",
        r"余额不足|欠费|账户余额",
        r"arrearage",
    )
)
BILLING_QUOTA = _family(r"exceeded your current quota", r"(?:plan and )?billing details")

LONG_CONTEXT_TIER = ANTHROPIC_LONG_CONTEXT_TIER + _family(
    # a limit that a shorter prompt avoids: the request needs a long-context tier or plan
    r"(?:extra usage|higher tier|usage tier|upgrade)\b[^.\n]{0,60}\blong[- ]context",
    r"long[- ]context\b[^.\n]{0,40}\b(?:requires?|required|tier)\b",
)

# A usage limit that resets by itself: "usage limit exceeded, try again later", "quota
# exceeded, please retry after the window resets" (a 402 both, NousResearch/hermes-agent
# tests/agent/test_error_classifier.py), "key limit exceeded, please wait before retrying"
# (the same file). Worded with a wait, a 402/403 or a billing text is a rate limit to wait
# out, not an account to top up.
PERIODIC_LIMIT = _family(
    r"(?:usage|quota|key|request|rate|token) limit|quota (?:exceeded|reached)|"
    r"limit (?:exceeded|reached)",
)
WAIT_SIGNAL = _family(
    r"\btry again\b|\bretry\b|\bresets?\b|\bwait\b|\bwindow\b|\blater\b",
)
NOT_PERIODIC = _family(
    r"insufficient|credit|balance|payment|billing|spend|top[ -]?up|free tier|\(\w+ limit\)",
)

RATE_LIMIT = (
    DASHSCOPE_RATE_LIMIT
    + LONG_CONTEXT_TIER
    + _family(
        r"too many (?:concurrent |parallel |simultaneous )?(?:requests|connections)",
        r"concurren(?:cy|t requests?) limit",
        r"requests? (?:rate )?limit (?:reached|exceeded)",
        r"request rate\b.{0,30}(?:too (?:high|quickly|fast)|exceeded)",
        r"\blimit (?:exceeded|reached)\W{1,3}(?:please )?(?:wait|slow down|try again later)",
        r"please slow down|slow down your requests",
        r"temporar(?:y|ily)\b[^.\n]{0,30}\blimit",
    )
)
RATE_LIMIT += _family(
    r"rate[ _-]?limit",
    r"too many requests",
    r"tokens per min",
    r"requests per min",
    r"\((?:tpm|rpm|tpd|rpd)\)",
    r"resource[ _]exhausted|resource has been exhausted",
    r"quota exceeded",
    r"throttl",
    r"usage limit exceeded",
    r"并发|请求过于频繁|请求频率|速率限制|限流",
)

CONTENT_FILTER = _family(
    r"content[ _-]?(?:policy|filter|management polic|safety)",
    r"safety system",
    r"responsible ?ai",
    r"unsafe[ _](?:content|generation)",
    r"new_sensitive|sensitive content",
    r"不安全|敏感",
    r"violat\w* (?:our |the )?(?:usage|content) (?:polic|guideline)",
    r"content violates",
    r"inappropriate content|data_?inspection_?failed",
    r"flagged (?:as|by|for)",
    r"blocked (?:due to|by) (?:the )?(?:safety|content)|prohibited_content|blocklist",
)

NEGATIVE_MAX_TOKENS = re.compile(r"max_tokens must be at least 1, got -\d+")

OUTPUT_LIMIT = _family(
    r"max_(?:completion_)?tokens'?(?: or 'max_completion_tokens')? is too large",
    r"maximum allowed number of output tokens",
    r"supports at most \d+ completion tokens",
    r"max_(?:completion_)?tokens\W{0,3} (?:should|must) be less",
    r"max_(?:new_|completion_)?tokens\W.{0,30}"
    r"(?:exceeds?|greater than|larger than|too large|too big)",
    r"(?:max_output_tokens|maxoutputtokens|max output tokens).{0,40}"
    r"(?:exceed|greater|larger|too large|at most)",
    r"prompt (?:\+|and) max_tokens",
    r"`?max_new_tokens`? must be <=",
    r"and .?max_tokens.? exceed",
)

CONTEXT_OVERFLOW = LOCAL_CONTEXT_OVERFLOW + _family(
    r"exceeds? (?:the )?max(?:imum)?[ _]model[ _]len(?:gth)?\b",
    r"prompt (?:is )?too (?:big|large)\b",
    r"\bcontext\b[^.\n]{0,80}\bnot enough (?:space|room)\b",
    r"\bbut the (?:configured |maximum )?context (?:size|length|window) is \d+",
    r"exceeded max context length by \d+",
    r"prompt[_ ]tokens?\b.{0,30}\bmust be (?:less|smaller|fewer) than",
    r"(?:超过|超出)了?(?:模型|最大|允许|上下文|输入|的){0,4}(?:长度|上下文|字数)",
    r"(?:长度|上下文)(?:超限|超过限制|超出限制)",
    r"context_length_exceeded|context[_ ]window[_ ]exceeded|exceed_context_size|context_exceeded",
    r"maximum context length",
    r"context (?:length|window|size|limit)\b.{0,40}(?:exceed|too long|too large|reached)",
    r"exceed\w*.{0,50}\bcontext (?:length|window|size|limit)",
    r"prompt (?:is )?too long|prompt tokens? (?:is |are )?too long|prompt too large",
    r"input (?:is )?too long|too long for (?:the )?(?:requested )?model",
    r"reduce the length of (?:the )?(?:messages|input|prompt)|reduce your prompt",
    r"input token count.{0,40}exceeds?",
    r"exceeds? the maximum number of tokens",
    r"tokens? > \d+ maximum",
    r"model token limit|tokens? limit (?:has been )?exceeded",
    r"range of input length should be",
    r"input length.{0,40}exceeds?",
    r"exceeds max(?:imum)? length|prompt exceeds",
    r"longer than the model'?s? (?:context|maximum)",
    r"too large for model with \d+ maximum",
    r"prompt token count of \d+ exceeds",
    r"exceed max message tokens",
    r"(?:上下文|输入|提示词?|prompt|token).{0,8}(?:超过|超出|过长|太长|超长)|长度超过",
    r"longer than the maximum model length|must have less than \d+ tokens",
    r"maximum prompt length|prompt \(\d+ tokens\) is too long|too long and exceeds",
    r"(?:greater|larger|more) than the (?:model'?s? )?(?:context|maximum) (?:length|window|size)",
    r"context\W{0,3}(?:the )?overflow",
    r"too many tokens",
    r"prompt_too_long|context_too_long|input_too_long|tokens_exceeded",
    # Z.AI GLM, code 1210: "tokens in request more than max tokens allowed"
    # (NousResearch/hermes-agent tests/agent/test_error_classifier.py, a port of
    # anomalyco/opencode #35671)
    r"tokens in (?:the )?request (?:is )?more than (?:the )?max(?:imum)? tokens",
)

PAYLOAD_TOO_LARGE = _family(
    r"request entity too large",
    r"request_too_large",
    r"payload too large",
    r"request exceeds the maximum (?:allowed )?size",
    r"(?:body|request) (?:is )?too large",
    r"maximum request size|payload size exceeds",
    r"content'?:? string too long",
)

MODEL_NOT_FOUND = OPENROUTER_NO_ENDPOINTS + _family(
    r"model_not_found",
    r"models?\b.{0,80}does not exist",
    r"(?:unknown|invalid|unavailable|unsupported) model\b",
    r"models?\b.{0,40}not found",
    r"no such model|model_not_supported|model is not supported",
    r"models?\b.{0,60}is not (?:available|accessible)",
    # "gpt-99 is not a valid model", "openrouter/nonexistent-model is not a valid model ID"
    # (NousResearch/hermes-agent tests/agent/test_error_classifier.py)
    r"is not a valid model",
    # Anthropic's 404: {"type": "not_found_error", "message": "model: claude-…"}; its bare
    # "Not Found" (a wrong path) names no model and is ``NOT_FOUND``
    r"(?m)^model: \S",
)

AUTH = _family(
    r"invalid[ _]api[ _-]?key|incorrect api key|invalid x-api-key",
    r"api[ _-]?key (?:is )?(?:required|missing|not valid|invalid|expired|not found)",
    r"api_key_(?:invalid|required)|api[ _-]?key\b.{0,40}must be set",
    r"(?:no|missing|didn't provide an?) api[ _-]?key|provide (?:an? |your )?api key",
    r"authenticat",
    r"unauthori[sz]ed|not authorized",
    r"permission[ _]denied|permission_error",
    r"access denied|\bforbidden",
    r"invalid (?:access |bearer )?token|token (?:is )?(?:invalid|expired)",
    r"unsupported_country|country, region,? or territory|location is not supported",
    r"accessdenied|has been disabled|account (?:is |has been )?(?:disabled|suspended)",
)

OVERLOADED = _family(
    r"overload",
    r"over capacity|at capacity|no capacity|insufficient capacity|capacity constraint",
    r"high demand|high traffic|capacity exceeded",
    r"server is busy|service is busy|系统繁忙|服务繁忙",
)

MESSAGE_FORMAT = _family(
    r"must alternate|alternating|alternate between|successive (?:user|assistant)|interleave",
    r"first (?:non-system )?message must|must (?:start|begin) with (?:a )?user",
    r"unexpected (?:message )?role|invalid (?:message )?role|expected last role|last message must",
    r"only messages with role|invalid message format|malformed message|empty array",
    r"invalid_request_message_order",
    r"extra inputs are not permitted|extra_forbidden",
    r"additional properties are not allowed",
    r"unknown (?:parameter|name|field)|cannot find field",
    r"unrecognized (?:request )?(?:argument|field|parameter)",
    r"unexpected (?:field|key|keyword|property)",
    r"tool call id was .{0,80}but must be|must be a-z, a-z, 0-9",
    r"of type 'reasoning' was provided without|required following item",
    r"string should (?:match|have)|does not match pattern|string too long",
    r"valid role|non-empty content|must not be empty|cannot be empty",
    r"参数非法|参数有误",
    r"invalid chat setting|invalid params",
    r"(?:content|text)(?: content)? (?:blocks? )?(?:must|cannot|should) (?:be )?"
    r"(?:non-?empty|empty)",
    r"must contain the word 'json'",
    r"invalid (?:value|type) for|is not of type|field required|missing (?:required )?parameter",
    r"input should be",
)

SERVER_ERROR = _family(
    r"internal server error|internal error|server error|server_error|api_error",
    r"server had an error|error while processing your request",
    r"bad gateway|gateway time-?out|service unavailable|upstream (?:connect )?error",
    r"something went wrong",
)

TIMEOUT = _family(r"timed? ?out\b", r"timeout", r"deadline[ _]exceeded")

# TLS broken mid-stream (a proxy, a flaky link, a renegotiation): worth another try, and
# read before the server-error words (OpenSSL's "tlsv1 alert internal error" is not the
# provider's). Certificate, unknown-CA and protocol-version alerts are settings, not luck,
# and are left out. OpenSSL 3 spells its alerts "SSL/TLS_ALERT_BAD_RECORD_MAC", older ones
# "sslv3 alert bad record mac" (NousResearch/hermes-agent tests/agent/test_error_classifier.py,
# which also sees "[SSL: TLSV1_ALERT_INTERNAL_ERROR] tlsv1 alert internal error" and "ssl
# handshake failure during mid-stream").
TLS_TRANSIENT = _family(
    r"bad[ _]record[ _]mac|decryption[ _]failed|record layer failure",
    r"(?:ssl|tls)v?[\d.]*(?:/tls)?[ _]alert[ _](?!(?:\w+[ _])?(?:certificate|unknown[ _]ca|"
    r"protocol[ _]version|decrypt[ _]error|access[ _]denied))",
    r"(?:ssl|tls)\w*\W[^\n]{0,80}\b(?:unexpected eof|eof occurred|"
    r"application data after close notify|use of closed connection|alert internal error)",
    r"ssl_error_syscall|unexpected_eof_while_reading",
    r"\b(?:ssl|tls) handshake failure",
)

CONNECTION = TLS_TRANSIENT + _family(
    r"connection (?:error|reset|refused|aborted|closed|failed)",
    r"server disconnected|peer closed connection|remote ?protocol|closed connection without",
    r"network (?:is )?unreachable|name or service not known|temporary failure in name resolution",
    # a connection never made, as Node and local shims word it: "connect ECONNREFUSED
    # 127.0.0.1:11434", "getaddrinfo ENOTFOUND api.example.com", "No route to host",
    # "fetch failed" (NousResearch/hermes-agent tests/agent/test_error_classifier.py, a port
    # of anomalyco/opencode #40707)
    r"\beconn(?:refused|reset|aborted)\b|\benotfound\b|\beai_again\b|getaddrinfo",
    r"no route to host|nodename nor servname|\bfetch failed\b|failed to fetch",
    r"broken pipe|eof occurred|incomplete chunked read",
)

_RETRY_HINT = re.compile(r"\b(?:try again|retry)\s+(?:in|after)\s+\d")


def long_context_tier(text: str) -> bool:
    """Whether a rate limit asks for a long-context tier: a shorter prompt avoids it."""
    return any_match(LONG_CONTEXT_TIER, text)


def standard_window(text: str) -> int | None:
    """The window that needs no long-context tier, where the wording names the provider."""
    return STANDARD_WINDOW if any_match(ANTHROPIC_LONG_CONTEXT_TIER, text) else None


def _status_codes() -> dict[int, Category]:
    """Numeric codes in providers' own error bodies (MiniMax's ``base_resp``)."""
    return {
        code: Category(value)
        for provider in PROVIDERS.values()
        for code, value in provider.error_codes.items()
    }


_STATUS_CODES = _status_codes()


def any_match(families: Sequence[re.Pattern[str]], text: str) -> bool:
    """Whether any pattern of the family occurs in ``text``."""
    return any(pattern.search(text) for pattern in families)


def length_category(text: str) -> Category | None:
    """Overflow or output limit from the wording alone; the token figures may overrule."""
    if NEGATIVE_MAX_TOKENS.search(text):
        return Category.CONTEXT_OVERFLOW  # vLLM computed max_tokens from a prompt too long
    if any_match(OUTPUT_LIMIT, text):
        return Category.OUTPUT_LIMIT
    if any_match(CONTEXT_OVERFLOW, text):
        return Category.CONTEXT_OVERFLOW
    return None


def periodic_limit(text: str) -> bool:
    """Whether the text speaks of a usage limit that resets by itself ("usage limit
    exceeded, try again later"), not of an account to top up."""
    return (
        any_match(PERIODIC_LIMIT, text)
        and any_match(WAIT_SIGNAL, text)
        and not any_match(NOT_PERIODIC, text)
    )


def text_category(text: str, *, minimax_code: int | None = None) -> Category | None:
    """The category the wording points to, most specific family first."""
    if any_match(REPLAY_IDENTITY, text):
        return Category.REPLAY_IDENTITY
    if any_match(TOOL_ARGUMENTS, text):
        return Category.TOOL_ARGUMENTS
    if any_match(FORMAT_BEFORE_PAIRING, text):
        return Category.MESSAGE_FORMAT
    if any_match(TOOL_PAIRING, text):
        return Category.TOOL_PAIRING
    if any_match(BILLING, text):
        return Category.BILLING
    if any_match(BILLING_QUOTA, text) and not _RETRY_HINT.search(text):
        return Category.BILLING  # Gemini's free tier says the same words with "retry in"
    if any_match(RATE_LIMIT, text) or any_match(BILLING_QUOTA, text):
        return Category.RATE_LIMIT
    if any_match(CONTENT_FILTER, text):
        return Category.CONTENT_FILTER
    length = length_category(text)
    if length is not None:
        return length
    for category, family in (
        (Category.PAYLOAD_TOO_LARGE, PAYLOAD_TOO_LARGE),
        (Category.MODEL_NOT_FOUND, MODEL_NOT_FOUND),
        (Category.AUTH, AUTH),
        (Category.OVERLOADED, OVERLOADED),
    ):
        if any_match(family, text):
            return category
    if minimax_code in _STATUS_CODES:
        return _STATUS_CODES[minimax_code]
    for category, family in (
        (Category.MESSAGE_FORMAT, MESSAGE_FORMAT),
        (Category.CONNECTION, TLS_TRANSIENT),
        (Category.SERVER_ERROR, SERVER_ERROR),
        (Category.TIMEOUT, TIMEOUT),
        (Category.CONNECTION, CONNECTION),
    ):
        if any_match(family, text):
            return category
    return None
