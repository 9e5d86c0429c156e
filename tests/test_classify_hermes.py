"""``classify`` reads hermes-agent's own error strings the way hermes-agent sees them.

hermes-agent (the agent condense grew out of) keeps the error texts its users met in
``tests/agent/test_error_classifier.py`` of NousResearch/hermes-agent, each with the HTTP
status it arrived with. Every row below is one of those texts, given to ``classify`` as
hermes receives it (the status and the text or body), and names what it must mean.

The first table holds the strings condense used to misread (the old reading is in each
comment); the second, texts it already read right that the fixes must not disturb.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any

import pytest

from condense.errors import Action, Category, classify

C = Category
HERMES = "NousResearch/hermes-agent tests/agent/test_error_classifier.py"


@dataclass(frozen=True)
class Seen:
    """An error as hermes-agent received it, and what it means."""

    error: object
    category: Category
    action: Action | None = None
    retry_after: float | None = None


def seen(error: object, category: Category, /, id: str, **expect: Any) -> Any:
    return pytest.param(Seen(error, category, **expect), id=id)


MISREAD = [
    # TLS alerts mid-stream (HERMES, TestSSLTransientPatterns): a transport hiccup to back
    # off from; "tlsv1 alert internal error" was read as the provider's server error
    seen(
        "[SSL: TLSV1_ALERT_INTERNAL_ERROR] tlsv1 alert internal error",
        C.CONNECTION,
        id="tls-alert-internal-error",
        action=Action.BACKOFF,
    ),
    # ... and "ssl handshake failure" as unrecognised, so recover gave up at once
    seen(
        "ssl handshake failure during mid-stream",
        C.CONNECTION,
        id="ssl-handshake-failure",
        action=Action.BACKOFF,
    ),
    # 402/403 that say "try again" (HERMES, TestClassify402, test_402_transient_usage_limit,
    # test_body_message_enrichment): a usage limit that resets, read as billing (fail)
    seen(
        (402, "usage limit exceeded, try again later"),
        C.RATE_LIMIT,
        id="402-usage-limit-try-again-later",
        action=Action.BACKOFF,
    ),
    seen(
        (402, "quota exceeded, please retry after the window resets"),
        C.RATE_LIMIT,
        id="402-quota-retry-after-the-window",
        action=Action.BACKOFF,
    ),
    seen(
        (402, "usage limit exceeded. try again in 5 minutes"),
        C.RATE_LIMIT,
        id="402-usage-limit-try-again-in-5-minutes",
        action=Action.BACKOFF,
        retry_after=300.0,
    ),
    seen(
        (402, {"error": {"message": "Usage limit reached, try again in 5 minutes"}}),
        C.RATE_LIMIT,
        id="402-body-usage-limit-reached",
        retry_after=300.0,
    ),
    # spending and key limits on a 403 (HERMES, test_403_key_limit_classified_as_billing,
    # test_403_spending_limit_classified_as_billing): the key's owner must raise them; read
    # as a rate limit to wait out, and as an auth failure
    seen(
        (403, "Key limit exceeded for this key"), C.BILLING, id="403-key-limit", action=Action.FAIL
    ),
    seen((403, "spending limit reached"), C.BILLING, id="403-spending-limit", action=Action.FAIL),
    # a bare 404 (HERMES, test_404_generic: "a wrong endpoint path, common with local
    # llama.cpp/Ollama/vLLM"): it names no model, but was read as "the model does not exist"
    seen((404, "Not Found"), C.NOT_FOUND, id="404-not-found", action=Action.FAIL),
    # 503 (HERMES, test_503_overloaded): the server is overloaded, read as a server error
    seen((503, "Service Unavailable"), C.OVERLOADED, id="503-service-unavailable"),
    # "not a valid model" (HERMES, test_message_model_not_found_pattern): read as unrecognised
    seen("gpt-99 is not a valid model", C.MODEL_NOT_FOUND, id="not-a-valid-model"),
    # GitHub Copilot's 400 for a history whose tool-call arguments are not JSON
    # (microsoft/vscode #277466, #279018): read as a generic format error; repair fixes the
    # arguments either way, but the diagnosis named the wrong rule
    seen(
        '400 {"error":{"message":"Invalid JSON format in tool call arguments","code":'
        '"invalid_tool_call_format"}}',
        C.TOOL_ARGUMENTS,
        id="copilot-invalid-json-tool-arguments",
        action=Action.REPAIR,
    ),
    # newer texts of the same file, misread the same ways
    # Nous Portal's 404 on a depleted account (test_404_free_tier_model_block_is_billing)
    seen(
        (
            404,
            {
                "status": 404,
                "message": "Model 'gpt-5' is not available on the Free Tier. Upgrade at "
                "https://portal.nousresearch.com or pick a free model.",
            },
        ),
        C.BILLING,
        id="404-nous-free-tier",
    ),
    seen(
        (
            404,
            {
                "status": 404,
                "message": "Model 'openai/gpt-5.5-pro' requires available credits. Your account "
                "balance is too low to use paid models — add credits at "
                "https://portal.nousresearch.com or pick a free model.",
            },
        ),
        C.BILLING,
        id="404-nous-requires-credits",
    ),
    # Anthropic's extra usage spent, a 400 (test_400_anthropic_extra_usage_exhausted)
    seen(
        (
            400,
            {
                "error": {
                    "type": "invalid_request_error",
                    "message": "You're out of extra usage. Add more at "
                    "claude.ai/settings/usage and keep going.",
                }
            },
        ),
        C.BILLING,
        id="anthropic-out-of-extra-usage",
    ),
    # Z.AI's 429 for a busy server (test_429_with_overloaded_body_is_overloaded_not_rate_limit)
    seen(
        (429, "The service may be temporarily overloaded, please try again later"),
        C.OVERLOADED,
        id="zai-429-overloaded",
    ),
    # Z.AI GLM code 1210 (test_zai_glm_token_limit_overflow)
    seen(
        (
            400,
            '{"error": {"code": "1210", "message": '
            '"tokens in request more than max tokens allowed"}}',
        ),
        C.CONTEXT_OVERFLOW,
        id="zai-1210-overflow",
    ),
    # connections never made, as local shims word them (TestConnectionMessagePatterns)
    seen("connect ECONNREFUSED 127.0.0.1:11434", C.CONNECTION, id="econnrefused"),
    seen("getaddrinfo ENOTFOUND api.example.com", C.CONNECTION, id="getaddrinfo-enotfound"),
    seen("getaddrinfo EAI_AGAIN openrouter.ai", C.CONNECTION, id="getaddrinfo-eai-again"),
    seen("No route to host", C.CONNECTION, id="no-route-to-host"),
    seen("fetch failed", C.CONNECTION, id="fetch-failed"),
    # thinking blocks whose signature fails (test_anthropic_thinking_signature): a
    # replay-identity refusal, healed by dropping the blocks, not by repairing the format
    seen(
        (400, "thinking block has invalid signature"),
        C.REPLAY_IDENTITY,
        id="thinking-block-invalid-signature",
        action=Action.DROP_REPLAY,
    ),
]

STILL_RIGHT = [
    seen((403, "Forbidden"), C.AUTH, id="403-forbidden"),
    seen((402, "Payment Required"), C.BILLING, id="402-payment-required"),
    seen((402, "quota exceeded"), C.BILLING, id="402-quota-without-a-wait"),
    seen((402, "insufficient credits to complete request"), C.BILLING, id="402-credits"),
    seen((402, {"error": {"message": "Your credit balance is too low"}}), C.BILLING, id="402-low"),
    seen("key limit exceeded, please wait before retrying", C.RATE_LIMIT, id="key-limit-wait"),
    seen("usage limit exceeded, try again in 5 minutes", C.RATE_LIMIT, id="usage-limit-wait"),
    seen("quota exceeded, resets at midnight UTC", C.RATE_LIMIT, id="quota-resets"),
    seen((404, "model not found"), C.MODEL_NOT_FOUND, id="404-model-not-found"),
    seen(
        (404, "openrouter/nonexistent-model is not a valid model ID"),
        C.MODEL_NOT_FOUND,
        id="404-not-a-valid-model-id",
    ),
    seen((529, "Overloaded"), C.OVERLOADED, id="529-overloaded"),
    seen((500, "Internal Server Error"), C.SERVER_ERROR, id="500"),
    seen((502, "Bad Gateway"), C.SERVER_ERROR, id="502"),
    seen(
        "[SSL: BAD_RECORD_MAC] sslv3 alert bad record mac (_ssl.c:2580)",
        C.CONNECTION,
        id="ssl-bad-record-mac",
    ),
    seen("ERR_SSL_SSL/TLS_ALERT_BAD_RECORD_MAC during streaming", C.CONNECTION, id="openssl-3"),
    seen(
        "[SSL: UNEXPECTED_EOF_WHILE_READING] EOF occurred in violation of protocol",
        C.CONNECTION,
        id="ssl-unexpected-eof",
    ),
    seen(ssl.SSLError("arbitrary ssl error"), C.CONNECTION, id="ssl-error-type"),
    seen((429, "Too Many Requests"), C.RATE_LIMIT, id="429"),
    seen((400, "No endpoints available matching your data policy"), C.MODEL_NOT_FOUND, id="or"),
    seen((400, "context length exceeded: 250000 > 200000"), C.CONTEXT_OVERFLOW, id="400-ctx"),
    seen(
        (400, "Param Incorrect: 'tool_call_id' is not set"),
        C.TOOL_PAIRING,
        id="400-tool-call-id-not-set",
    ),
]


@pytest.mark.parametrize("case", MISREAD + STILL_RIGHT)
def test_hermes_agent_error_strings(case: Seen) -> None:
    diagnosis = classify(case.error)
    assert diagnosis.category is case.category, diagnosis.summary()
    if case.action is not None:
        assert diagnosis.action is case.action, diagnosis.summary()
    if case.retry_after is not None:
        assert diagnosis.retry_after == pytest.approx(case.retry_after)


def test_a_certificate_failure_is_still_not_a_passing_hiccup() -> None:
    # HERMES, TestSSLCertVerificationFailFast: deterministic for the host, never retried
    text = (
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local "
        "issuer certificate (_ssl.c:1006)"
    )
    assert classify(text).action is Action.FAIL
    assert classify("tlsv1 alert unknown ca").category is not C.CONNECTION
    assert classify("sslv3 alert certificate unknown").category is not C.CONNECTION
