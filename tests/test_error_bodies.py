"""One error body per provider, written in its provider module: the fakes and the proxy's
own answers use it, and it says what the provider says for each status.

The expected ``type``/``code`` per status are the providers' own, written out here from
real answers and the providers' error references, not from condense's code:

- OpenAI: a 401 is ``invalid_request_error`` with code ``invalid_api_key``
  (continuedev/continue #10294); a 429 is typed by what ran out, ``requests`` or
  ``tokens`` with code ``rate_limit_exceeded`` (Pythagora-io/gpt-pilot #53,
  TheR1D/shell_gpt #653), ``insufficient_quota`` for a spent quota
  (OpenHands/OpenHands #998); a 500 is ``server_error`` (the 500 quoted in
  ``tests/test_classify.py``); an overflow is a 400 ``invalid_request_error`` with code
  ``context_length_exceeded``.
- Anthropic (platform.claude.com/docs/en/api/errors): 400 ``invalid_request_error`` ("may
  also be used for other 4XX status codes not listed"), 401 ``authentication_error``, 402
  ``billing_error``, 403 ``permission_error``, 404 ``not_found_error``, 413
  ``request_too_large``, 429 ``rate_limit_error``, 500 ``api_error``, 504
  ``timeout_error``, 529 ``overloaded_error``; the body is ``{"type": "error", "error":
  {"type", "message"}}``.
- Gemini (ai.google.dev/gemini-api/docs/troubleshooting): 400 ``INVALID_ARGUMENT``, 403
  ``PERMISSION_DENIED``, 404 ``NOT_FOUND``, 429 ``RESOURCE_EXHAUSTED``, 500 ``INTERNAL``,
  503 ``UNAVAILABLE``, 504 ``DEADLINE_EXCEEDED``, in ``{"error": {"code", "message",
  "status"}}``.
"""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from condense.providers import PROVIDERS
from condense.providers import anthropic as anthropic_provider
from condense.providers import gemini as gemini_provider
from condense.providers import openai as openai_provider
from condense.server.apis import APIS, error_body
from condense.testing import Fail, FakeProvider

SRC = Path(__file__).resolve().parents[1] / "src" / "condense"

OPENAI = [
    (400, None, "invalid_request_error", None),
    (400, "context_length_exceeded", "invalid_request_error", "context_length_exceeded"),
    (401, "invalid_api_key", "invalid_request_error", "invalid_api_key"),
    (404, "model_not_found", "invalid_request_error", "model_not_found"),
    (429, None, "requests", "rate_limit_exceeded"),
    (429, "insufficient_quota", "insufficient_quota", "insufficient_quota"),
    (500, None, "server_error", None),
    (502, None, "server_error", None),
    (503, None, "server_error", None),
]
ANTHROPIC = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    422: "invalid_request_error",
    426: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
GEMINI = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@pytest.mark.parametrize(("status", "code", "kind", "sent_code"), OPENAI)
def test_openais_body_per_status(status: int, code: str | None, kind: str, sent_code: str) -> None:
    body = openai_provider.error_body(status, "words", code, None)
    assert body == {"error": {"message": "words", "type": kind, "param": None, "code": sent_code}}


@pytest.mark.parametrize(("status", "kind"), sorted(ANTHROPIC.items()))
def test_anthropics_body_per_status(status: int, kind: str) -> None:
    body = anthropic_provider.error_body(status, "words", None, None)
    assert body["type"] == "error"
    assert body["error"] == {"type": kind, "message": "words"}


@pytest.mark.parametrize(("status", "kind"), sorted(GEMINI.items()))
def test_geminis_body_per_status(status: int, kind: str) -> None:
    body = gemini_provider.error_body(status, "words", None, None)
    assert body == {"error": {"code": status, "message": "words", "status": kind}}


@pytest.mark.parametrize("api", sorted(APIS))
@pytest.mark.parametrize("status", [400, 413, 426, 502, 504])
def test_the_proxys_own_answers_are_its_apis_providers_bodies(api: str, status: int) -> None:
    body = error_body(APIS[api], status, "condense proxy: words")
    if APIS[api].format == "anthropic":
        assert body["error"] == {"type": ANTHROPIC[status], "message": "condense proxy: words"}
    else:
        expected = "server_error" if status >= 500 else "invalid_request_error"
        assert body["error"]["type"] == expected
        assert set(body["error"]) == {"message", "type", "param", "code"}


def test_the_fakes_answer_as_the_providers_do_through_the_official_sdks() -> None:
    """A 401, a scripted 429 and 529, read by the ``openai`` and ``anthropic`` SDKs from a
    real socket: the status and the body's type and code are the providers'."""
    with FakeProvider(require_api_key="right-key") as fake, contextlib.ExitStack() as clients:
        root = fake.base_url.removesuffix("/v1")
        wrong = clients.enter_context(
            openai.OpenAI(base_url=fake.base_url, api_key="wrong", max_retries=0)
        )
        with pytest.raises(openai.AuthenticationError) as denied:
            wrong.chat.completions.create(model="gpt-4o", messages=[_ASK])
        assert _error(denied.value.body) == {
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
        claude = clients.enter_context(
            anthropic.Anthropic(base_url=root, api_key="wrong", max_retries=0)
        )
        with pytest.raises(anthropic.AuthenticationError) as refused:
            claude.messages.create(model="claude-x", max_tokens=5, messages=[_ASK])
        assert _error(refused.value.body)["type"] == "authentication_error"

        client = clients.enter_context(
            openai.OpenAI(base_url=fake.base_url, api_key="right-key", max_retries=0)
        )
        fake.push(Fail(429))
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(model="gpt-4o", messages=[_ASK])
        assert _error(limited.value.body) == {"type": "requests", "code": "rate_limit_exceeded"}
        claude = clients.enter_context(
            anthropic.Anthropic(base_url=root, api_key="right-key", max_retries=0)
        )
        fake.push(Fail(529))
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            claude.messages.create(model="claude-x", max_tokens=5, messages=[_ASK])
        assert overloaded.value.status_code == 529
        assert _error(overloaded.value.body)["type"] == "overloaded_error"


def test_every_provider_refuses_with_its_modules_own_builder() -> None:
    """Each provider's ``Refusals.body`` is a builder defined in a provider module."""
    for provider in PROVIDERS.values():
        assert provider.refusals.body.__module__.startswith("condense.providers.")


def test_no_error_body_is_built_outside_the_provider_modules() -> None:
    """An error body's shape — a dict with an ``"error"`` key holding a ``"type"`` or a
    ``"status"`` — is written only in ``condense/providers``."""
    found = []
    for path in SRC.rglob("*.py"):
        if path.parent.name == "providers":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and _builds_error(node):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


_ASK = {"role": "user", "content": "What changed?"}


def _error(body: object) -> dict[str, Any]:
    assert isinstance(body, dict)
    error = body.get("error", body)
    assert isinstance(error, dict)
    return {key: error[key] for key in ("type", "code") if key in error}


def _builds_error(node: ast.Dict) -> bool:
    keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
    if "error" not in keys:
        return False
    inner = node.values[
        [k.value if isinstance(k, ast.Constant) else None for k in node.keys].index("error")
    ]
    if not isinstance(inner, ast.Dict):
        return False
    inner_keys = {key.value for key in inner.keys if isinstance(key, ast.Constant)}
    return bool(inner_keys & {"type", "status", "code"})
