"""The two BPE vocabularies condense ships, loaded offline, and a model's encoding (read in
the one table of model names, :mod:`condense.tokens.families`).

The vocabularies are OpenAI's ``o200k_base`` and ``cl100k_base`` rank files, stored gzipped
under ``condense/tokens/data/`` (see the ``NOTICE`` file there for their origin). They are
read with :mod:`importlib.resources`, checked against the SHA-256 that tiktoken itself
pins, parsed here, and handed to :class:`tiktoken.Encoding` together with the split
pattern and special tokens from tiktoken's ``tiktoken_ext/openai_public.py``. Nothing is
fetched from a URL or written to a cache directory: :func:`tiktoken.get_encoding` is never
called, because it downloads.

Text is encoded with :func:`ordinary_encoder`, tiktoken's ``encode_ordinary`` made safe
for a run of about a million blanks, which tiktoken's own pre-tokenizer cannot split
(see :func:`_encode_around_runs`). It is counted with :func:`text_counter`: the same
count, taken about twice as fast by GitHub's Rust BPE (the ``bpe-openai`` package, the
``fast`` extra, which ships its own copy of both vocabularies) when that is installed.

Loading takes a few hundred milliseconds, so it happens on first use, once per encoding
per process, under a lock. Most of it went into parsing the rank file, so the parsed
ranks ship too, pickled (``<name>.ranks.pickle.gz``, written by :func:`pickled_ranks`
from the rank file and tagged with its SHA-256): reading them costs a third. A cache
that is missing, damaged or made from another rank file is ignored, and the rank file
is parsed as before.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
import importlib.machinery
import importlib.util
import os
import pickle
import re
import sys
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tiktoken

from condense.exceptions import CondenseRuntimeError, UnknownNameError
from condense.tokens.families import DEFAULT_ENCODING, family_for_model

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "counter_backend",
    "encoding_for_model",
    "get_encoding",
    "load_encoding",
    "ordinary_encoder",
    "text_counter",
]


_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True, kw_only=True)
class _Spec:
    """Everything needed to build one encoding; copied from tiktoken's openai_public.py."""

    name: str
    resource: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]

    @property
    def cache(self) -> str:
        return f"{self.name}.ranks.pickle.gz"


_SPECS: dict[str, _Spec] = {
    spec.name: spec
    for spec in (
        _Spec(
            name="o200k_base",
            resource="o200k_base.tiktoken.gz",
            sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            pat_str="|".join(
                [
                    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                    r"""\p{N}{1,3}""",
                    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                    r"""\s*[\r\n]+""",
                    r"""\s+(?!\S)""",
                    r"""\s+""",
                ]
            ),
            special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
        ),
        _Spec(
            name="cl100k_base",
            resource="cl100k_base.tiktoken.gz",
            sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            pat_str="|".join(
                [
                    r"""'(?i:[sdmt]|ll|ve|re)""",
                    r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
                    r"""\p{N}{1,3}+""",
                    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
                    r"""\s++$""",
                    r"""\s*[\r\n]""",
                    r"""\s+(?!\S)""",
                    r"""\s""",
                ]
            ),
            special_tokens={
                _ENDOFTEXT: 100257,
                _FIM_PREFIX: 100258,
                _FIM_MIDDLE: 100259,
                _FIM_SUFFIX: 100260,
                _ENDOFPROMPT: 100276,
            },
        ),
    )
}

ENCODINGS: tuple[str, ...] = tuple(_SPECS)

_lock = threading.Lock()
_loaded: dict[str, tiktoken.Encoding] = {}


def encoding_for_model(model: str | None) -> str:
    """Return the encoding name to count tokens for ``model``.

    ``None`` or an empty name gives ``DEFAULT_ENCODING``. Provider prefixes are ignored
    (``openai/gpt-4o``, ``azure/gpt-35-turbo``, ``openrouter/openai/gpt-4.1``), and so is
    case. OpenAI models map to their real encoding; every other model is counted with
    ``DEFAULT_ENCODING`` (``o200k_base``): not its real tokenizer, but a real BPE count
    whose distance from the provider's is measured per family (``condense.tokens.families``).
    """
    family = family_for_model(model)
    return family.encoding if family is not None else DEFAULT_ENCODING


def get_encoding(name: str) -> tiktoken.Encoding:
    """Return the shared :class:`tiktoken.Encoding` called ``name``, loading it on first use.

    Raises ``UnknownNameError`` for a name not in ``ENCODINGS`` and
    ``CondenseRuntimeError`` if the shipped vocabulary is missing or damaged.
    """
    _spec(name)  # fail on an unknown name before taking the lock
    encoding = _loaded.get(name)
    if encoding is not None:
        return encoding
    with _lock:
        encoding = _loaded.get(name)
        if encoding is None:
            encoding = _loaded[name] = load_encoding(name)
        return encoding


@functools.cache
def ordinary_encoder(name: str) -> Callable[[str], list[int]]:
    """The tokens of a text by the encoding ``name``, exactly as its ``encode_ordinary``
    gives them (special tokens are text), for any text: also one holding a run of blanks
    long enough to make tiktoken panic (``RuntimeError(StackOverflow)`` in its regex, a
    ``BaseException``; seen from about 1,000,000 spaces, tabs or ideographic spaces
    followed by a word, in both encodings)."""
    encoding = get_encoding(name)
    encode = encoding.encode_ordinary

    def ordinary(text: str) -> list[int]:
        if len(text) < LONG_RUN:
            return encode(text)
        return _encode_around_runs(encoding, text, _long_runs(text, LONG_RUN))

    return ordinary


@functools.cache
def text_counter(name: str) -> Callable[[str], int]:
    """How many tokens of the encoding ``name`` a text holds: the length of what
    :func:`ordinary_encoder` gives, counted by the ``fast`` extra's BPE (``bpe-openai``)
    when it is installed, else by tiktoken. The two agree token for token on every text
    (``tests/test_fast_count.py`` checks it on the corpus and on generated text); a text
    with a lone surrogate, which the fast one refuses, is counted by tiktoken, which
    counts each as U+FFFD."""
    return _counter(name, _fast_count(name))


def counter_backend(name: str = DEFAULT_ENCODING) -> str:
    """What :func:`text_counter` counts ``name`` with: ``"bpe-openai"`` (the ``fast``
    extra) or ``"tiktoken"``."""
    return "tiktoken" if _fast_count(name) is None else "bpe-openai"


def _counter(name: str, fast: Callable[[str], int] | None) -> Callable[[str], int]:
    if fast is None:
        encode = ordinary_encoder(name)
        return lambda text: len(encode(text))

    def count(text: str) -> int:
        try:
            return fast(text)
        except UnicodeEncodeError:  # a lone surrogate: tiktoken's vocabulary, loaded now
            return len(ordinary_encoder(name)(text))

    return count


def _fast_count(name: str) -> Callable[[str], int] | None:
    """The ``fast`` extra's counter for ``name``, or None when it is not installed (or
    does not know ``name``)."""
    bindings = _fast_bindings()
    if bindings is None or name not in bindings.supported_encodings():
        return None
    count: Callable[[str], int] = bindings.tokenizer_for_encoding(name).count
    return count


def _fast_bindings() -> Any:
    """:func:`_load_fast_bindings`, once per process (two threads asking first would both
    load it: PyO3 refuses the second)."""
    with _lock:
        return _load_fast_bindings()


@functools.cache
def _load_fast_bindings() -> Any:
    """``bpe_openai._bindings``, the Rust extension, loaded by itself: the package's own
    ``__init__`` parses a vocabulary in Python on import (0.4 s, measured with
    ``-X importtime``), which condense never needs. It is registered under its name, as
    an import would: an extension made with PyO3 loads once per process, so a later
    ``import bpe_openai`` takes this one. None when it is not installed or will not load."""
    name = "bpe_openai._bindings"
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.find_spec("bpe_openai")  # finds, does not import
    if found is None or not found.submodule_search_locations:
        return None
    for folder in found.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_bindings" + suffix)
            if os.path.exists(path):
                loader = importlib.machinery.ExtensionFileLoader(name, path)
                spec = importlib.util.spec_from_loader(name, loader, origin=path)
                if spec is None:
                    return None
                try:
                    module = importlib.util.module_from_spec(spec)
                    loader.exec_module(module)
                except ImportError:
                    return None
                sys.modules[name] = module
                return module
    return None


LONG_RUN = 65_536
"""A run of this many blanks is encoded by itself (:func:`_encode_around_runs`): far
below tiktoken's limit, far above any run written by hand or by a formatter."""
# Unicode White_Space but the line breaks \r and \n (a run of those ends at a line break,
# where tiktoken's regex needs no backtracking); not Python's \x1c-\x1f, not White_Space.
_BLANK_CHARS = (
    "\t\x0b\x0c \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_BLANK_RUN = re.compile(f"[{re.escape(_BLANK_CHARS)}]+")


def _long_runs(text: str, longest: int) -> list[tuple[int, int]]:
    """Where ``text`` holds a run of at least ``longest`` blanks (:data:`_BLANK_CHARS`)
    that no line break ends, as ``(start, end)``, in order. Only every ``longest // 2``-th
    character is looked at first, as such a run holds two of them."""
    step = max(1, longest // 2)
    runs: list[tuple[int, int]] = []
    at = step - 1
    while at < len(text):
        found = _BLANK_RUN.match(text, at)
        if found is None:
            at += step
            continue
        before = text[max(0, at - step) : at]
        start, end = at - (len(before) - len(before.rstrip(_BLANK_CHARS))), found.end()
        if end - start >= longest and (end == len(text) or text[end] not in "\r\n"):
            runs.append((start, end))
        at = max(at + step, end + step - 1)
    return runs


def _encode_around_runs(
    encoding: tiktoken.Encoding, text: str, runs: list[tuple[int, int]]
) -> list[int]:
    r"""``encoding.encode_ordinary(text)``, with each long run of blanks of ``runs``
    encoded as the one piece the regex makes of it, and the text around it by itself.

    Why that is exact, in both encodings' split patterns: a piece never ends inside a
    run of blanks before it starts one (a word, a number or punctuation takes no blank
    after it; a line break's piece ends at its last line break), so the text before the
    run splits alone as it does whole. From the run's start, no pattern but the blanks'
    ``\s+(?!\S)`` (or cl100k's ``\s++$`` at the very end) matches, and it takes every
    blank but the last, which a word after it takes (or every one, at the end); the text
    from that last blank on splits alone as it does whole (no pattern looks back)."""
    tokens: list[int] = []
    at = 0
    for start, end in runs:
        stop = end if end == len(text) else end - 1
        tokens += encoding.encode_ordinary(text[at:start])
        # tiktoken's BPE of one piece, no regex (a private method: tests/test_blank_runs.py
        # checks its tokens against encode_ordinary's)
        tokens += encoding._encode_single_piece(text[start:stop].encode())
        at = stop
    tokens += encoding.encode_ordinary(text[at:])
    return tokens


def load_encoding(name: str, *, data: bytes | None = None) -> tiktoken.Encoding:
    """Build a fresh, uncached ``tiktoken.Encoding`` for ``name``; prefer ``get_encoding``.

    ``data`` replaces the shipped gzipped rank file (tests use it to check that a damaged
    vocabulary is refused). The decompressed bytes must match the pinned SHA-256.
    """
    spec = _spec(name)
    ranks = _pickled(spec) if data is None else None
    if ranks is None:
        ranks = _parse_ranks(spec, _checked(spec, _read_resource(spec) if data is None else data))
    import tiktoken  # here, not with condense: ~20 ms, and the fast extra never needs it

    return tiktoken.Encoding(
        spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )


def pickled_ranks(name: str) -> bytes:
    """The ranks cache of ``name`` (see the module docstring), made from its rank file."""
    spec = _spec(name)
    ranks = _parse_ranks(spec, _checked(spec, _read_resource(spec)))
    return gzip.compress(pickle.dumps((spec.sha256, ranks), protocol=5), mtime=0)


def _pickled(spec: _Spec) -> dict[bytes, int] | None:
    """The shipped ranks cache when it is there, whole and made from this rank file."""
    try:
        blob = (resources.files("condense.tokens") / "data" / spec.cache).read_bytes()
        source, ranks = pickle.loads(gzip.decompress(blob))  # condense's own file
    except Exception:  # any damage: parse the rank file instead
        return None
    if source != spec.sha256 or not isinstance(ranks, dict):
        return None
    return ranks


def _checked(spec: _Spec, data: bytes) -> bytes:
    """The decompressed rank file, refused unless it has the pinned SHA-256."""
    raw = _decompress(spec, data)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        raise CondenseRuntimeError(
            f"the {spec.name} vocabulary shipped with condense is damaged "
            f"(sha256 {digest}, expected {spec.sha256}); reinstall condense"
        )
    return raw


def _spec(name: str) -> _Spec:
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("encoding", str(name), ENCODINGS) from None


def _read_resource(spec: _Spec) -> bytes:
    try:
        return (resources.files("condense.tokens") / "data" / spec.resource).read_bytes()
    except OSError as exc:
        raise CondenseRuntimeError(
            f"the {spec.name} vocabulary data/{spec.resource} is missing from the condense "
            f"package ({exc}); reinstall condense"
        ) from exc


def _decompress(spec: _Spec, data: bytes) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise CondenseRuntimeError(
            f"the {spec.name} vocabulary data/{spec.resource} is not valid gzip ({exc}); "
            "reinstall condense"
        ) from exc


def _parse_ranks(spec: _Spec, raw: bytes) -> dict[bytes, int]:
    """Parse tiktoken's format: one ``<base64 token bytes> <rank>`` pair per line."""
    decode = functools.partial(binascii.a2b_base64, strict_mode=True)
    try:
        parts = raw.split()  # token, rank, token, rank, …: C-speed calls over 200k lines
        if len(parts) % 2:
            raise ValueError("a token without its rank")
        ranks = dict(zip(map(decode, parts[0::2]), map(int, parts[1::2]), strict=True))
    except (ValueError, binascii.Error) as exc:
        raise CondenseRuntimeError(
            f"the {spec.name} vocabulary could not be parsed ({exc}); reinstall condense"
        ) from exc
    return ranks
