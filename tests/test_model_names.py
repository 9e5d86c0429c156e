"""One table of model names: the library and the proxy choose the same provider, encoding,
tokenizer and window for the same model name, whatever gateway or cloud spells it.

The expected values are written out here, one row per real model id, each id in a shape
its platform documents:

- Bedrock model ids ``vendor.model-version`` and cross-region inference profiles
  ``region.vendor.model`` (``us.``, ``eu.``, ``apac.``, ``global.``, ``us-gov.``): AWS,
  "Supported foundation models in Amazon Bedrock" and "Supported Regions and models for
  inference profiles" (docs.aws.amazon.com/bedrock/latest/userguide/models-supported.html,
  …/inference-profiles-support.html); DeepSeek's is ``us.deepseek.r1-v1:0``; an ARN ends in
  the profile id (``…:inference-profile/us.anthropic.…``, BerriAI/litellm #8911).
- Vertex AI Claude ids ``claude-sonnet-4-5@20250929`` ("Anthropic Claude model versions
  must be used with a suffix that starts with an @ symbol", cloud.google.com/vertex-ai/
  generative-ai/docs/partner-models/claude/use-claude); LiteLLM routes them as
  ``vertex_ai/claude-…`` and Gemini as ``vertex_ai/gemini-…``
  (docs.litellm.ai/docs/providers/vertex_partner).
- OpenRouter ids ``vendor/model`` with dotted versions (``anthropic/claude-sonnet-4.5``,
  ``anthropic/claude-3.5-sonnet``: openrouter.ai/models), and LiteLLM's
  ``openrouter/anthropic/claude-3.5-sonnet`` (docs.litellm.ai/docs/providers/openrouter).
- LiteLLM's ``provider/model`` ids: ``azure/<deployment>`` (docs.litellm.ai/docs/providers/
  azure; a deployment is usually named after its model, ``gpt-35-turbo`` in Azure's
  spelling), ``bedrock/…`` and ``bedrock/converse/…`` (…/providers/bedrock),
  ``anthropic/…``, ``gemini/…``, ``deepseek/…``, ``mistral/…``.

The library is asked through ``compress(model=…)`` (its report names the provider and
encoding it used) and ``condense.tokens``; the proxy through a real ``Preparer`` handling
a Chat Completions request for a gateway whose host names no provider, so the model name
alone decides.
"""

from __future__ import annotations

import json

import pytest

from condense import compress
from condense.datasets.tokenizer import TokenizerSpec, resolve_tokenizer
from condense.exceptions import InputError
from condense.providers import choose_provider
from condense.server.apis import api_for_path
from condense.server.config import ProxySettings, Upstream
from condense.server.memory import ConversationMemory
from condense.server.prepare import Preparer
from condense.server.windows import LearnedWindows
from condense.tokens import context_window, encoding_for_model, tokenizer_for_model

O200K, CL100K = "o200k_base", "cl100k_base"

# (model id, provider for a chat history, encoding, tokenizer, window)
MODELS = [
    # Bedrock
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic", O200K, "claude", 200_000),
    ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic", O200K, "claude", 200_000),
    ("apac.anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic", O200K, "claude", 200_000),
    ("us-gov.anthropic.claude-3-haiku-20240307-v1:0", "anthropic", O200K, "claude", 200_000),
    ("anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic", O200K, "claude", 200_000),
    ("us.anthropic.claude-opus-4-7-v1:0", "anthropic", O200K, "claude-2026", 200_000),
    (
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
        "us.anthropic.claude-opus-4-1-20250805-v1:0",
        "anthropic",
        O200K,
        "claude",
        200_000,
    ),
    ("us.deepseek.r1-v1:0", "deepseek", O200K, "other", 131_072),
    ("mistral.mistral-large-2407-v1:0", "mistral", O200K, "other", 131_072),
    ("openai.gpt-oss-120b-1:0", "openai", O200K, "openai", 131_072),
    ("bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic", O200K, "claude", 200_000),
    (
        "bedrock/converse/us.anthropic.claude-sonnet-4-20250514-v1:0",
        "anthropic",
        O200K,
        "claude",
        200_000,
    ),
    # Vertex AI
    ("claude-opus-4-6@20260201", "anthropic", O200K, "claude", 200_000),
    ("claude-sonnet-4-5@20250929", "anthropic", O200K, "claude", 200_000),
    ("claude-3-5-sonnet-v2@20241022", "anthropic", O200K, "claude", 200_000),
    ("vertex_ai/claude-3-7-sonnet@20250219", "anthropic", O200K, "claude", 200_000),
    ("vertex_ai/gemini-2.5-pro", "gemini-openai", O200K, "gemini", 1_048_576),
    (
        "projects/p/locations/us-central1/publishers/google/models/gemini-1.5-pro-002",
        "gemini-openai",
        O200K,
        "gemini",
        2_097_152,
    ),
    # Azure
    ("azure/gpt-4o", "openai", O200K, "openai", 128_000),
    ("azure/gpt-35-turbo", "openai", CL100K, "openai", 16_385),
    # OpenRouter
    ("anthropic/claude-sonnet-4.5", "anthropic", O200K, "claude", 200_000),
    ("anthropic/claude-opus-4.7", "anthropic", O200K, "claude-2026", 200_000),
    ("openrouter/anthropic/claude-3.5-sonnet", "anthropic", O200K, "claude", 200_000),
    ("anthropic/claude-3.7-sonnet:thinking", "anthropic", O200K, "claude", 200_000),
    ("openrouter/openai/gpt-4.1", "openai", O200K, "openai", 1_047_576),
    ("google/gemini-2.5-pro", "gemini-openai", O200K, "gemini", 1_048_576),
    ("deepseek/deepseek-chat-v3.1", "deepseek", O200K, "other", 131_072),
    ("moonshotai/kimi-k2", "kimi", O200K, "other", 262_144),
    ("mistralai/codestral-2508", "mistral", O200K, "other", 262_144),
    # LiteLLM provider/model
    ("anthropic/claude-sonnet-4-5-20250929", "anthropic", O200K, "claude", 200_000),
    ("gemini/gemini-2.5-flash", "gemini-openai", O200K, "gemini", 1_048_576),
    ("deepseek/deepseek-reasoner", "deepseek", O200K, "other", 131_072),
    ("mistral/mistral-large-latest", "mistral", O200K, "other", 131_072),
    # the providers' own ids
    ("gpt-4.1-mini", "openai", O200K, "openai", 1_047_576),
    ("gpt-4-0613", "openai", CL100K, "openai", 8_192),
    ("o3-mini", "openai", O200K, "openai", 200_000),
    ("ft:gpt-4o-mini-2024-07-18:org::abc123", "openai", O200K, "openai", 128_000),
    ("claude-sonnet-4-5-20250929", "anthropic", O200K, "claude", 200_000),
    ("kimi-k2-0905-preview", "kimi", O200K, "other", 262_144),
    ("MiniMax-M2", "minimax", O200K, "other", 204_800),
    ("devstral-small-2507", "mistral", O200K, "other", 131_072),
]

HISTORY = [{"role": "user", "content": "What changed in the build?"}]
CHAT = "/v1/chat/completions"


def _proxy() -> Preparer:
    settings = ProxySettings(upstreams=(Upstream(url="https://gateway.example/v1"),))
    return Preparer(settings, ConversationMemory(), LearnedWindows())


@pytest.mark.parametrize(("model", "provider", "encoding", "tokenizer", "window"), MODELS)
def test_library_and_proxy_read_a_model_name_alike(
    model: str, provider: str, encoding: str, tokenizer: str, window: int
) -> None:
    report = compress(HISTORY, budget=10_000, model=model).report
    assert (report.provider, report.encoding) == (provider, encoding)
    assert choose_provider(model=model).name == provider
    assert encoding_for_model(model) == encoding
    assert tokenizer_for_model(model).name == tokenizer
    assert context_window(model) == window

    api = api_for_path(CHAT)
    assert api is not None
    body = json.dumps({"model": model, "messages": HISTORY}).encode()
    prepared = _proxy().prepare(api, CHAT, body, coding=None, beta=None)
    assert prepared.provider == provider
    assert prepared.budget is not None
    assert (prepared.budget.encoding, prepared.budget.tokenizer.name) == (encoding, tokenizer)
    assert prepared.window == window


def test_a_model_no_row_names_has_no_window_anywhere() -> None:
    """An unknown model: no window to compress to up front in either; the library's rules
    are the structural ones, the proxy's an OpenAI-compatible server's (its upstream
    speaks Chat Completions)."""
    model = "llama-3.1-8b-instruct"
    assert context_window(model) is None
    assert choose_provider(model=model).name == "strict"
    api = api_for_path(CHAT)
    assert api is not None
    body = json.dumps({"model": model, "messages": HISTORY}).encode()
    prepared = _proxy().prepare(api, CHAT, body, coding=None, beta=None)
    assert prepared.provider == "openai"
    assert prepared.window is None


def test_the_one_million_window_is_claudes_in_both() -> None:
    beta = "context-1m-2025-08-07"
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert context_window(model, anthropic_beta=beta) == 1_000_000
    api = api_for_path(CHAT)
    assert api is not None
    body = json.dumps({"model": model, "messages": HISTORY}).encode()
    prepared = _proxy().prepare(api, CHAT, body, coding=None, beta=beta)
    assert prepared.window == 1_000_000
    assert context_window("azure/gpt-4o", anthropic_beta=beta) == 128_000


@pytest.mark.parametrize(
    ("name", "encoding"),
    [
        ("gpt-4o", O200K),
        ("azure/gpt-35-turbo", CL100K),
        ("openrouter/openai/gpt-4.1", O200K),
        ("ft:gpt-4-0613:org::x", CL100K),
    ],
)
def test_a_training_budget_reads_openai_model_names_in_the_same_table(
    name: str, encoding: str
) -> None:
    assert resolve_tokenizer(name) == TokenizerSpec(kind="tiktoken", name=encoding)


@pytest.mark.parametrize("name", ["gpt-j-6b", "claude-sonnet-4-5", "llama-3.1-8b"])
def test_a_model_condense_has_no_tokenizer_for_is_refused(name: str) -> None:
    """Only OpenAI's models are counted with their own encoding; any other name needs a
    local tokenizer.json (condense never downloads one)."""
    with pytest.raises(InputError, match="never downloads"):
        resolve_tokenizer(name)
