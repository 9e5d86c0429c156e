"""Token counts for chat messages: exact (offline BPE), estimated, or bounded.

- ``count_tokens(messages, model=...)`` — the exact prompt tokens of a message list, with
  tiktoken's ``o200k_base`` or ``cl100k_base`` vocabulary shipped inside condense (no
  download, ever). Counts are cached per message, so re-counting a grown session is cheap.
- ``estimate_tokens(messages)`` — a fast estimate from character classes;
  ``quick_estimate(message)`` a cruder, cheaper one for planning.
- ``upper_bound_tokens(messages)`` — a bound the exact count never exceeds.

OpenAI models use their own encoding (``encoding_for_model``); every other model is
counted with ``DEFAULT_ENCODING`` (``o200k_base``), an estimate of its provider's count
whose measured error is planned for: ``condense.tokens.families`` holds one table of
model families (encoding, tokenizer error, context window: ``context_window``,
``tokenizer_for_model``). A provider counts the whole request, so does condense:
``condense.tokens.request`` counts what is sent besides the messages (``request_parts``,
``parts_tokens``: tools, instructions, schemas) and shares a budget out (``plan_room``).

Counts include everything that is sent, so a history that fits fits at the provider
(``condense.tokens.pieces`` has the rules):

- text — content, names, tool calls, and replayed reasoning: ``reasoning_content``,
  thinking text, Responses reasoning summaries, and string values of any other key
  (ids, types and ``cache_control`` aside) — is counted with BPE;
- opaque base64 — thinking ``signature``, ``redacted_thinking`` ``data``,
  ``encrypted_content``, Gemini ``thought_signature`` — by length, at the rate random
  base64 measures with the real tokenizer: 1.46 characters per token for
  ``o200k_base``, 1.39 for ``cl100k_base`` (``condense.tokens.opaque``);
- images and documents as the provider bills them, chosen with ``media=`` (one of
  ``MEDIA_POLICIES``, default ``"openai"``; ``condense.tokens.media``), with the size
  read from the image header (PNG, JPEG, GIF, WebP) and pages counted in the PDF:

  ========== ================================= ============ ==========
  ``media``  image                             remote image PDF page
  ========== ================================= ============ ==========
  openai     85 + 170 per 512 px tile (after   1,445        2,265
             fit 2048², short side 768); low 85
  anthropic  w × h / 750 (long edge ≤ 1568),   1,600        3,100
             at most 1,600
  gemini     258 if ≤ 384 px, else 258 per     1,120        560
             768² tile
  ========== ================================= ============ ==========

  A remote document (URL, file id) counts as 10 pages; a plain-text document as text;
  audio and video parts a fixed 765. Counters with different policies never share
  cached counts.

Nothing is loaded at import time; a vocabulary is read the first time it is needed.
"""

from condense.tokens.counting import (
    CacheInfo,
    TokenCounter,
    count_message,
    count_text,
    count_tokens,
)
from condense.tokens.encodings import (
    DEFAULT_ENCODING,
    ENCODINGS,
    encoding_for_model,
    get_encoding,
)
from condense.tokens.estimate import (
    estimate_message,
    estimate_text,
    estimate_tokens,
    quick_estimate,
    upper_bound_message,
    upper_bound_text,
    upper_bound_tokens,
)
from condense.tokens.families import context_window, tokenizer_for_model
from condense.tokens.media import DEFAULT_MEDIA, MEDIA_POLICIES, Media
from condense.tokens.request import Room, parts_tokens, plan_room, request_parts

__all__ = [
    "DEFAULT_ENCODING",
    "DEFAULT_MEDIA",
    "ENCODINGS",
    "MEDIA_POLICIES",
    "CacheInfo",
    "Media",
    "Room",
    "TokenCounter",
    "context_window",
    "count_message",
    "count_text",
    "count_tokens",
    "encoding_for_model",
    "estimate_message",
    "estimate_text",
    "estimate_tokens",
    "get_encoding",
    "parts_tokens",
    "plan_room",
    "quick_estimate",
    "request_parts",
    "tokenizer_for_model",
    "upper_bound_message",
    "upper_bound_text",
    "upper_bound_tokens",
]
