"""Tokenizers for training budgets: offline tiktoken encodings or a HuggingFace tokenizer.

A training budget is in the trained model's tokens, so ``--tokenizer`` takes any of:

- ``o200k_base`` / ``cl100k_base`` — the BPE vocabularies condense ships (no download);
- an OpenAI model name (``gpt-4o``, ``gpt-4``, ``azure/gpt-35-turbo``…) — its encoding, as
  condense's one table of model names (``condense.tokens.families``) gives it;
- a path to a HuggingFace ``tokenizer.json`` — read with the ``tokenizers`` package
  (``pip install 'condense[hf]'``);
- a local model directory holding a ``tokenizer.json``.

Nothing is ever fetched from a hub: a name that is neither an encoding, an OpenAI model
nor an existing path is refused with a message saying what to pass instead.

A :class:`TokenizerSpec` is a small picklable value; worker processes rebuild the
tokenizer from it once (:func:`load_tokenizer`).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from condense.exceptions import InputError
from condense.tokens import DEFAULT_ENCODING, ENCODINGS, get_encoding
from condense.tokens.encodings import ordinary_encoder, text_counter
from condense.tokens.families import family_for_model

INSTALL_HINT = "pip install 'condense[hf]'"


class Tokenizer(Protocol):
    """Counts and cuts text in one model's tokens."""

    name: str

    def count(self, text: str) -> int:
        """The number of tokens of ``text`` (no special tokens added)."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` (cut at a token boundary) within ``max_tokens``."""
        ...


@dataclass(frozen=True, kw_only=True)
class TokenizerSpec:
    """Which tokenizer to use: ``kind`` is ``"tiktoken"`` (``name`` an encoding) or
    ``"hf"`` (``name`` the path of a ``tokenizer.json``)."""

    kind: str
    name: str

    def describe(self) -> str:
        return self.name if self.kind == "tiktoken" else f"tokenizer.json at {self.name}"


def resolve_tokenizer(value: str | None) -> TokenizerSpec:
    """The spec for a ``--tokenizer`` value (``None``: the default encoding)."""
    if value is None or not value.strip():
        return TokenizerSpec(kind="tiktoken", name=DEFAULT_ENCODING)
    text = value.strip()
    if text in ENCODINGS:
        return TokenizerSpec(kind="tiktoken", name=text)
    path = Path(os.path.expanduser(text))
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if not candidate.is_file():
            raise InputError(
                f"--tokenizer {text}: the directory holds no tokenizer.json; pass the model "
                "directory that has one, or the file itself"
            )
        return TokenizerSpec(kind="hf", name=str(candidate.resolve()))
    if path.is_file():
        return TokenizerSpec(kind="hf", name=str(path.resolve()))
    family = family_for_model(text)
    if family is not None and family.tokenizer.exact:  # an OpenAI model: its own encoding
        return TokenizerSpec(kind="tiktoken", name=family.encoding)
    raise InputError(
        f"--tokenizer {text}: not an encoding ({', '.join(ENCODINGS)}), an OpenAI model name, "
        "nor an existing tokenizer.json or model directory; condense never downloads a "
        "tokenizer, so pass a local path"
    )


def load_tokenizer(spec: TokenizerSpec) -> Tokenizer:
    """The tokenizer ``spec`` names, built once per process."""
    return _load(spec.kind, spec.name)


@functools.cache
def _load(kind: str, name: str) -> Tokenizer:
    if kind == "tiktoken":
        return TiktokenTokenizer(name)
    if kind == "hf":
        return HFTokenizer(name)
    raise InputError(f"unknown tokenizer kind {kind!r}; expected tiktoken or hf")


class TiktokenTokenizer:
    """One of the shipped BPE encodings (``encode_ordinary``: special tokens are text)."""

    def __init__(self, encoding: str) -> None:
        self.name = encoding
        self._count = text_counter(encoding)

    def count(self, text: str) -> int:
        return self._count(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        tokens = ordinary_encoder(self.name)(text)
        decode = get_encoding(self.name).decode_bytes
        keep = max(0, max_tokens)
        while True:
            cut = bytes(decode(tokens[:keep])).decode("utf-8", "ignore")
            if keep == 0 or self.count(cut) <= max_tokens:
                return cut
            keep -= 1


class HFTokenizer:
    """A HuggingFace ``tokenizer.json`` read with the ``tokenizers`` package."""

    def __init__(self, path: str) -> None:
        try:
            from tokenizers import Tokenizer as _Tokenizer
        except ImportError as error:
            raise InputError(
                f"reading a tokenizer.json needs the tokenizers package: {INSTALL_HINT}"
            ) from error
        try:
            self._tokenizer: Any = _Tokenizer.from_file(path)
        except Exception as error:  # the Rust side raises plain Exceptions
            raise InputError(f"cannot read the tokenizer at {path}: {error}") from error
        self.name = path

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            cut = text[: offsets[keep - 1][1]]
            if self.count(cut) <= max_tokens:
                return cut
            keep -= 1
        return ""
