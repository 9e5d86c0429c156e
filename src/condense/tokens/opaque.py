"""Tokens of opaque base64: signatures and encrypted reasoning that are sent but not read.

Replay state carries base64 that no tokenizer of ours can see into: Anthropic thinking
``signature`` and ``redacted_thinking`` ``data``, Responses ``encrypted_content``, Gemini
``thought_signature``. The provider bills it by the reasoning it stands for, which the
client cannot know; condense counts it at what it would cost as text, measured once:

    o200k_base   1.465 characters per token   (counted with 1.46)
    cl100k_base  1.394 characters per token   (counted with 1.39)

Method: ``len(text) / len(encode_ordinary(text))`` over ``base64.b64encode`` of random
bytes, 20 samples each of 64 B to 64 KiB and 3 of 400 KB (real tiktoken, both
vocabularies). The rate is stable from 1 KiB up (±1 % between samples); strings under
100 characters vary by ±10 %. Random base64 is worse for BPE than prose — about 1.5
characters per token, not 4 — because it has no words to merge. The counted rates are
rounded down, so the count errs high, and it costs ``O(1)``: a megabyte of ciphertext
is never run through BPE. ``tests/test_tokens_replay.py`` checks the rates against the
real tokenizer.
"""

from __future__ import annotations

from condense.exceptions import UnknownNameError

__all__ = ["OPAQUE_CHARS_PER_TOKEN", "opaque_tokens"]

OPAQUE_CHARS_PER_TOKEN: dict[str, float] = {"o200k_base": 1.46, "cl100k_base": 1.39}


def opaque_tokens(chars: int, encoding: str) -> int:
    """Tokens of ``chars`` characters of opaque base64 in ``encoding``: never more than
    ``chars`` (so a byte count stays an upper bound) and at least 1 for a non-empty text."""
    try:
        rate = OPAQUE_CHARS_PER_TOKEN[encoding]
    except KeyError:
        raise UnknownNameError("encoding", encoding, tuple(OPAQUE_CHARS_PER_TOKEN)) from None
    return -int(-chars // rate)
