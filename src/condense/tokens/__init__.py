"""Token counts for chat messages: exact (offline BPE), estimated, or bounded.

- ``count_tokens(messages, model=...)`` — the exact prompt tokens of a message list, with
  tiktoken's ``o200k_base`` or ``cl100k_base`` vocabulary shipped inside condense (no
  download, ever). Counts are cached per message, so re-counting a grown session is cheap.
- ``estimate_tokens(messages)`` — a fast estimate from character classes, for planning.
- ``upper_bound_message(message)`` — a bound the exact count never exceeds.

OpenAI models use their own encoding (``encoding_for_model``); every other model is
counted with ``DEFAULT_ENCODING`` (``o200k_base``). How a message is counted — framing,
names, tool calls, image parts — is described in ``condense.tokens.pieces``.

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
    upper_bound_message,
    upper_bound_text,
    upper_bound_tokens,
)

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "CacheInfo",
    "TokenCounter",
    "count_message",
    "count_text",
    "count_tokens",
    "encoding_for_model",
    "estimate_message",
    "estimate_text",
    "estimate_tokens",
    "get_encoding",
    "upper_bound_message",
    "upper_bound_text",
    "upper_bound_tokens",
]
