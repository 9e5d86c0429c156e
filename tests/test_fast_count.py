"""The ``fast`` extra counts exactly what tiktoken counts.

``text_counter`` counts with GitHub's Rust BPE (``bpe-openai``) when it is installed (the
test extra installs it), else with tiktoken. A count that is one token short can make a
request the provider refuses, so the judge here is tiktoken itself: the same count on
every message text of the corpus the tests carry, on generated text made of every kind of
character the split patterns tell apart, and on the texts tiktoken cannot split alone (a
million blanks, via :func:`ordinary_encoder`). Without the package, the counter is
tiktoken's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense.tokens import ENCODINGS, TokenCounter, get_encoding
from condense.tokens.encodings import _counter, _fast_count, ordinary_encoder, text_counter
from profiles import examples
from proxy_support import strings_in

_DATA = Path(__file__).parent / "data"
_PIECES = [
    " ", "   ", "\t", "\u3000", "\xa0", "\x0b", "\x85", "\u2028", "\n", "\r\n", "\r",
    "\n\n", "\x1c", "a", "Zed", "ǅ", "ß", "İ", "é", "\u0301", "x1", "7", "1234", "٣", "²",
    "Ⅻ", ".", "!!", "/", "-", "{", "'s", "'LL", "’", "中文", "日本語", "한국어", "😀",
    "👍🏽", "\U0001f1fa\U0001f1f8", "\ufeff", "\u200b", "𝔘", "ꙮ", "\u0903", "<|endoftext|>",
]  # fmt: skip
_AT_ONCE = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)


def _fast(name: str) -> Callable[[str], int]:
    fast = _fast_count(name)
    if fast is None:
        pytest.fail("the test extra installs bpe-openai: pip install -e '.[test]'")
    return fast


def _corpus_texts() -> Iterator[str]:
    """Every string of the JSON files the tests carry (real requests, transcripts,
    sessions), split at line breaks and whole."""
    for path in sorted(_DATA.rglob("*.json*")):
        raw = path.read_text(encoding="utf-8", errors="replace")
        lines = raw.splitlines() if path.suffix == ".jsonl" else [raw]
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            yield from strings_in(value)


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_fast_count_is_tiktokens_on_the_corpus(name: str) -> None:
    fast, encoding = _fast(name), get_encoding(name)
    texts = list(dict.fromkeys(_corpus_texts()))
    assert len(texts) > 1_000
    assert sum(map(len, texts)) > 1_000_000
    wrong = [text[:80] for text in texts if fast(text) != len(encoding.encode_ordinary(text))]
    assert wrong == []


@settings(max_examples=examples(500))
@given(_AT_ONCE, st.sampled_from(ENCODINGS))
def test_the_fast_count_is_tiktokens_on_any_text(text: str, name: str) -> None:
    assert _fast(name)(text) == len(get_encoding(name).encode_ordinary(text))


@pytest.mark.parametrize("name", ENCODINGS)
def test_texts_tiktoken_cannot_split_alone_count_the_same(name: str) -> None:
    fast, encode = _fast(name), ordinary_encoder(name)
    for text in ("a" + " " * 1_100_000 + "b", "x" + "\t" * 1_100_000, "\u3000" * 1_100_000):
        assert fast(text) == len(encode(text))


@pytest.mark.parametrize("name", ENCODINGS)
def test_a_lone_surrogate_counts_as_tiktoken_counts_it(name: str) -> None:
    text = "ok \ud800 then \udfff."
    with pytest.raises(UnicodeEncodeError):
        _fast(name)(text)
    assert text_counter(name)(text) == len(get_encoding(name).encode_ordinary(text))
    assert TokenCounter(encoding=name).text(text) == len(get_encoding(name).encode_ordinary(text))


@pytest.mark.parametrize("name", ENCODINGS)
def test_without_the_extra_the_count_is_tiktokens(name: str) -> None:
    plain = _counter(name, None)
    for text in ("hello world", "a" + " " * 1_100_000 + "b", "bad \ud800 text"):
        assert plain(text) == len(ordinary_encoder(name)(text))
    assert text_counter(name) is not plain  # the extra is installed: the fast one counts


def test_the_package_imports_after_condense_loaded_its_extension() -> None:
    # PyO3 extensions load once per process: condense registers the one it loaded, so a
    # user's own `import bpe_openai` afterwards takes it (and the other way round)
    script = (
        "from condense.tokens import count_text\n"
        "assert count_text('hello world') == 2\n"
        "import bpe_openai\n"
        "assert len(bpe_openai.get_encoding('o200k_base').encode('hello world')) == 2\n"
        "from condense.tokens.encodings import _fast_bindings\n"
        "assert _fast_bindings() is __import__('sys').modules['bpe_openai._bindings']\n"
    )
    for code in (script, "import bpe_openai\n" + script):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
