"""Model names: the one table that says, for a model name, which provider's rules apply,
the encoding condense counts it with, how far that count is from the provider's own, and
the model's context window. Read by the library (``choose_provider(model=…)``,
``encoding_for_model``, ``compress(model=…)``, ``--tokenizer``) and the proxy (routing,
windows, planning) alike: nothing else in condense reads a model name.

A model name is matched in its bare form (:func:`bare_model`: lower case, without the
routing prefixes of gateways and clouds — ``openrouter/anthropic/``, LiteLLM's
``bedrock/``, ``vertex_ai/``, ``azure/``; Bedrock's ``us.anthropic.`` and other
``[region.]vendor.`` prefixes; Vertex's ``publishers/…/models/`` — and without a
fine-tune's ``ft:``; OpenRouter's dotted Claude versions ``claude-opus-4.7`` read as
Anthropic's ``claude-opus-4-7``) against the ``prefix`` of every row of :data:`FAMILIES`;
the longest prefix that matches wins (:func:`family_for_model`). A prefix matches the
name itself, or the name followed by ``-``, ``.``, ``:``, ``@`` or ``_`` — so ``gpt-4``
matches ``gpt-4-0613`` but neither ``gpt-4o`` (a row of its own) nor ``gpt-40``.

Each row names its ``provider`` (a name of ``condense.providers.PROVIDERS``; ``None``
for model families no provider module describes, such as Qwen, GLM or Grok, whose
rules the upstream or the history decides) and a :class:`Tokenizer`: the provider's
tokenizer as condense sees it. ``ratio`` is how many of the provider's tokens one of
condense's tokens may be worth — the high end of what was measured, so a request planned
with it fits at the provider:

==============  ======  =================================================================
tokenizer       ratio   evidence
==============  ======  =================================================================
``openai``      1.00    the model's own encoding, shipped (``o200k_base``/``cl100k_base``);
                        message framing from OpenAI's cookbook (``tests/test_tokens.py``
                        checks it against the API's counts). Codex CLI keeps 5 % of the
                        window free itself (``model_context_window: 258400`` of 272,000 in
                        the Codex rollouts of ``corpus/agents/raw``).
``claude``      1.30    Claude before Opus 4.7. Measured on the Claude Code transcripts of
                        ``corpus/agents/raw`` (each response's ``usage``: input + cache
                        read + cache creation tokens, against condense's count of the
                        request that produced it, as ``condense.formats.claude_code``
                        rebuilds it; the growth between consecutive requests of at least
                        2,000 tokens, so the unrecorded system prompt and tools cancel
                        out): 1.11 (claude-sonnet-4-5, subagent a2898e3), 1.13
                        (claude-opus-4-6, 4d5611e5), 1.19 and 1.24 (fa812bfe) per context;
                        single steps 1.05–1.45 (code). Published: ×1.18 (sammcj/ingest
                        #65), "within ~10–20 %" (headroomlabs-ai/headroom #2543).
                        ``bench/token_ratios.py`` prints the measurement.
``claude-2026`` 1.70    Claude Opus 4.7 and later, Sonnet 5, Fable 5, Mythos: "a newer
                        tokenizer … approximately 30 percent more tokens than on earlier
                        models" (Anthropic, token-counting docs); ×1.53 of o200k measured
                        in sammcj/ingest #65. 1.30 × 1.30.
``gemini``      1.25    Not measured here (no Gemini ``usage`` in the corpus). Published:
                        5–10 % more than o200k on English; alehatsman/dex #183 corrects
                        o200k by ×1.08. Gemini's SentencePiece vocabulary splits every
                        digit, where o200k groups up to three: numeric output costs more.
``other``       1.00    Open-weight and unknown tokenizers (Llama, Qwen, DeepSeek, Mistral,
                        GLM, Kimi, MiniMax …): not measured, so not planned for — counted
                        as condense counts. For scale: a 100k-vocabulary BPE (cl100k)
                        counts 0–1 % more than o200k on the corpus's English agent traces
                        and 35 % more on Chinese (glaive zh). The proxy learns the real
                        ratio from the first answer's ``usage``.
==============  ======  =================================================================

A model no row matches belongs to ``other``; ``model=None`` to no family (ratio 1: the
budget is in condense's own tokens). Windows are prompt-token limits as the providers
document them (mid-2026); ``None`` where unknown.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "FAMILIES",
    "TOKENIZERS",
    "Family",
    "Tokenizer",
    "bare_model",
    "context_window",
    "family_for_model",
    "tokenizer_for_model",
]

DEFAULT_ENCODING = "o200k_base"  # also condense.tokens.encodings.DEFAULT_ENCODING


@dataclass(frozen=True, kw_only=True)
class Tokenizer:
    """A provider's tokenizer as condense sees it: how many of its tokens one of
    condense's may be worth (``ratio``, the high end of the measured error), and the
    fixed tokens it adds to a request that sends tools (its tool-use system prompt)."""

    name: str
    ratio: float
    exact: bool = False
    """Whether condense counts with the provider's own encoding."""
    tools_prompt: int = 0
    """Tokens the provider adds to a request that carries tool definitions."""


TOKENIZERS: dict[str, Tokenizer] = {
    tokenizer.name: tokenizer
    for tokenizer in (
        # OpenAI renders function definitions into a system message of their own (a
        # TypeScript namespace); its header and footer are about a dozen tokens.
        Tokenizer(name="openai", ratio=1.0, exact=True, tools_prompt=12),
        # "Tool use system prompt token count", Anthropic's tool-use pricing docs: 159–530
        # tokens by model and tool_choice; the largest is planned for.
        Tokenizer(name="claude", ratio=1.30, tools_prompt=530),
        Tokenizer(name="claude-2026", ratio=1.70, tools_prompt=530),
        Tokenizer(name="gemini", ratio=1.25, tools_prompt=0),
        Tokenizer(name="other", ratio=1.0, tools_prompt=0),
    )
}
NO_FAMILY = Tokenizer(name="none", ratio=1.0)
"""No model named: the budget is in condense's own tokens."""


@dataclass(frozen=True, kw_only=True)
class Family:
    """One row of :data:`FAMILIES`: models whose bare name starts with ``prefix``."""

    prefix: str
    provider: str | None
    """The provider whose rules the model's requests follow (a name of
    ``condense.providers.PROVIDERS``), ``None`` when no provider module describes it."""
    encoding: str
    tokenizer: Tokenizer
    window: int | None = None
    """The prompt-token limit; ``None`` when not known."""


def _rows(
    provider: str | None, tokenizer: str, encoding: str, rows: dict[str, int | None]
) -> list[Family]:
    return [
        Family(
            prefix=prefix,
            provider=provider,
            encoding=encoding,
            tokenizer=TOKENIZERS[tokenizer],
            window=window,
        )
        for prefix, window in rows.items()
    ]


FAMILIES: tuple[Family, ...] = (
    *_rows(
        "openai",
        "openai",
        "o200k_base",
        {
            "gpt-5": 272_000,
            "gpt-4.1": 1_047_576,
            "gpt-4.5": 128_000,
            "gpt-4o": 128_000,
            "chatgpt-4o": 128_000,
            "gpt-oss": 131_072,
            "o1": 200_000,
            "o3": 200_000,
            "o4": 200_000,
            "codex-mini": 200_000,
            "computer-use-preview": 8_192,
        },
    ),
    *_rows(
        "openai",
        "openai",
        "cl100k_base",
        {
            "gpt-4-turbo": 128_000,
            "gpt-4-32k": 32_768,
            "gpt-4": 8_192,
            "gpt-3.5-turbo": 16_385,
            "gpt-3.5": None,
            "gpt-35-turbo": 16_385,  # Azure's spelling
            "gpt-35": None,
            "text-embedding-3": None,
            "text-embedding-ada-002": None,
            "davinci-002": None,
            "babbage-002": None,
        },
    ),
    # A model of these names not listed above follows OpenAI's rules, but its encoding is
    # not known (nor is every ``gpt-`` OpenAI's: GPT-J, GPT-NeoX).
    *_rows("openai", "other", DEFAULT_ENCODING, {"gpt": None, "chatgpt": None, "codex": None}),
    *_rows(
        "anthropic",
        "claude",
        DEFAULT_ENCODING,
        {
            "claude-2": 100_000,
            "claude-instant": 100_000,
            "claude-3": 200_000,
            "claude-sonnet-4": 200_000,
            "claude-opus-4": 200_000,
            "claude-haiku-4": 200_000,
        },
    ),
    *_rows(
        "anthropic",
        "claude-2026",
        DEFAULT_ENCODING,
        {
            "claude": 200_000,  # a Claude not listed is taken for a newer one
            "claude-opus-4-7": 200_000,
            "claude-opus-4-8": 200_000,
            "claude-opus-4-9": 200_000,
            "claude-opus-5": 200_000,
            "claude-sonnet-5": 200_000,
            "claude-haiku-5": 200_000,
            "claude-fable": 200_000,
            "claude-mythos": 200_000,
        },
    ),
    *_rows(
        "gemini", "gemini", DEFAULT_ENCODING, {"gemini-1.5-pro": 2_097_152, "gemini": 1_048_576}
    ),
    *_rows("gemini", "other", DEFAULT_ENCODING, {"gemma": None}),
    *_rows(
        "mistral",
        "other",
        DEFAULT_ENCODING,
        {
            "mistral": None,
            "mistral-large": 131_072,
            "mistral-medium": 131_072,
            "mistral-small": 131_072,
            "open-mistral": None,
            "open-mixtral": None,
            "magistral": 131_072,
            "devstral": 131_072,
            "codestral": 262_144,
            "ministral": None,
            "pixtral": None,
            "voxtral": None,
        },
    ),
    *_rows("deepseek", "other", DEFAULT_ENCODING, {"deepseek": 131_072}),
    *_rows(
        "kimi",
        "other",
        DEFAULT_ENCODING,
        {
            "kimi": None,
            "kimi-k2": 262_144,
            "moonshot": None,
            "moonshot-v1-8k": 8_192,
            "moonshot-v1-32k": 32_768,
            "moonshot-v1-128k": 131_072,
        },
    ),
    *_rows(
        "minimax",
        "other",
        DEFAULT_ENCODING,
        {"minimax": None, "minimax-m1": 1_000_000, "minimax-m2": 204_800, "abab": None},
    ),
    *_rows(
        None,
        "other",
        DEFAULT_ENCODING,
        {
            "qwen3-coder": 262_144,
            "glm-4.6": 200_000,
            "glm-4.5": 131_072,
            "grok-4": 256_000,
            "grok-code": 256_000,
        },
    ),
)
_BY_PREFIX = {family.prefix: family for family in FAMILIES}
_LONGEST_FIRST = sorted(_BY_PREFIX, key=len, reverse=True)
_BOUNDARY = frozenset("-.:@_")
# Bedrock model ids are ``vendor.model`` and its inference profiles ``region.vendor.model``
# (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, ``global.…``, ``apac.…``; AWS, "Supported
# Regions and models for inference profiles"). DeepSeek's ids are ``deepseek.r1-v1:0`` and
# ``us.deepseek.r1-v1:0``: its vendor part is the family's name, so it stays.
_FAMILY_VENDORS = frozenset({"deepseek"})
_VENDORS = frozenset(
    {
        "ai21",
        "amazon",
        "anthropic",
        "cohere",
        "google",
        "meta",
        "minimax",
        "mistral",
        "moonshot",
        "moonshotai",
        "openai",
        "qwen",
        "writer",
    }
)
_REGION = re.compile(r"[a-z]+(?:-[a-z]+)?")
_CLAUDE_DOTS = re.compile(r"(?<=\d)\.(?=\d)")  # OpenRouter's ``claude-opus-4.7``
_ONE_MILLION_BETA = "context-1m"  # the anthropic-beta flag that opens Claude's 1M window


def bare_model(model: str | None) -> str:
    """``model`` lower-cased and without routing prefixes (see the module docstring):
    ``openrouter/anthropic/claude-sonnet-4.5`` → ``claude-sonnet-4-5``, Bedrock's
    ``us.anthropic.claude-x-v1:0`` → ``claude-x-v1:0``, ``ft:gpt-4o:org::id`` →
    ``gpt-4o:org::id``."""
    name = (model or "").strip().lower().rsplit("/", 1)[-1].removeprefix("ft:")
    parts = name.split(".")
    if len(parts) > 2 and _REGION.fullmatch(parts[0]) and parts[1] in _VENDORS | _FAMILY_VENDORS:
        parts = parts[1:]  # an inference profile's region
    if len(parts) > 1 and parts[0] in _VENDORS:
        parts = parts[1:]
    name = ".".join(parts)
    if name.startswith("claude"):
        name = _CLAUDE_DOTS.sub("-", name)
    return name


@functools.lru_cache(maxsize=1024)
def family_for_model(model: str | None) -> Family | None:
    """The row of :data:`FAMILIES` that ``model`` belongs to (``None``: no row matches):
    the one lookup every reader of a model name asks."""
    name = bare_model(model)
    if not name:
        return None
    for prefix in _LONGEST_FIRST:
        if name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in _BOUNDARY):
            return _BY_PREFIX[prefix]
    return None


def tokenizer_for_model(model: str | None) -> Tokenizer:
    """The tokenizer ``model`` is counted against: its family's, ``other`` for a model no
    row matches, and :data:`NO_FAMILY` (ratio 1) when no model is named."""
    if not bare_model(model):
        return NO_FAMILY
    family = family_for_model(model)
    return family.tokenizer if family is not None else TOKENIZERS["other"]


def context_window(model: str | None, *, anthropic_beta: str | None = None) -> int | None:
    """The prompt-token window of a well-known ``model`` (``None`` when unknown);
    ``anthropic_beta`` carrying ``context-1m`` opens Claude's 1M window."""
    family = family_for_model(model)
    if family is None:
        return None
    if family.provider == "anthropic" and _ONE_MILLION_BETA in (anthropic_beta or ""):
        return 1_000_000
    return family.window
