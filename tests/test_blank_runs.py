"""A run of about a million blanks is counted exactly, where tiktoken itself panics.

tiktoken's ``encode_ordinary`` raises ``pyo3_runtime.PanicException`` (a
``BaseException``, so nothing that catches ``Exception`` stops it) on a run of about
1,000,000 spaces, tabs or ideographic spaces followed by a word or by the end of the
text: its regex's backtracking stack overflows on ``\\s+(?!\\S)`` (measured here: 900,000
spaces count, 1,000,000 panic, in both encodings; a run ending at a line break does not).
A tool output padded with blanks, or a hostile request through the proxy, took
``compress`` down with it.

``ordinary_encoder`` encodes such a run as the one piece tiktoken's split pattern makes of
it and the text around it alone. The judge of "exact" is tiktoken itself: on runs short
enough for it, splitting at every run of four blanks or more gives its tokens, token for
token, in both encodings; past its limit, the count is what tiktoken's own counts below
the limit extrapolate to.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense import compress
from condense.tokens import ENCODINGS, count_text, count_tokens, get_encoding
from condense.tokens.encodings import (
    _BLANK_CHARS,
    _encode_around_runs,
    _long_runs,
    ordinary_encoder,
)
from profiles import examples

# Every kind of character the split patterns tell apart: blanks of each sort, line
# breaks, letters of each case, marks, digits, punctuation, contractions, CJK, emoji,
# and the separators Python calls space but Unicode does not.
_PIECES = [
    " ", "  ", "\t", "\u3000", "\xa0", "\x0b", "\x0c", "\x85", "\u2028", "\u2003",
    "\n", "\r\n", "\r", "\n\n", "\x1c", "\x1f",
    "a", "Zed", "ß", "ǅ", "é", "\u0301", "x1", "7", "1234", "٣",
    ".", "!!", "/", "-", "{", "'s", "'LL", "’", "中文", "😀", "\ufeff",
]  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


def _plain_long_runs(text: str, longest: int) -> list[tuple[int, int]]:
    """The definition: every maximal run of blanks at least ``longest`` long, but those a
    line break ends."""
    blanks = re.compile(f"[{re.escape(_BLANK_CHARS)}]+")
    return [
        (m.start(), m.end())
        for m in blanks.finditer(text)
        if m.end() - m.start() >= longest and text[m.end() : m.end() + 1] not in ("\r", "\n")
    ]


@settings(max_examples=examples(600))
@given(texts, st.sampled_from(ENCODINGS), st.integers(2, 6))
def test_encoding_around_runs_is_tiktokens_own_encoding(text: str, name: str, longest: int) -> None:
    encoding = get_encoding(name)
    runs = _long_runs(text, longest)
    assert runs == _plain_long_runs(text, longest)
    assert _encode_around_runs(encoding, text, runs) == encoding.encode_ordinary(text)


@settings(max_examples=examples(200))
@given(
    st.lists(st.tuples(st.sampled_from(_PIECES), st.integers(0, 300)), max_size=12),
    st.integers(4, 64),
)
def test_every_long_run_is_found_however_it_falls(
    parts: list[tuple[str, int]], longest: int
) -> None:
    # pieces repeated up to 300 times: runs that start and end anywhere against the
    # positions the search samples
    text = "".join(piece * times for piece, times in parts)
    assert _long_runs(text, longest) == _plain_long_runs(text, longest)


def test_the_blanks_are_unicode_white_space_but_line_breaks() -> None:
    # Unicode's White_Space (tiktoken's \s) is Python's isspace() without \x1c-\x1f
    python_space = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(_BLANK_CHARS) == python_space - set("\r\n\x1c\x1d\x1e\x1f")


@pytest.mark.parametrize(
    ("name", "blank", "after"),
    [
        ("o200k_base", " ", "b"),
        ("o200k_base", "\t", ""),
        ("cl100k_base", "\u3000", "b"),
        ("cl100k_base", " ", ""),
    ],
)
def test_a_million_blanks_count_as_tiktoken_counts_fewer(name: str, blank: str, after: str) -> None:
    encoding = get_encoding(name)

    def tiktoken_count(n: int) -> int:
        return len(encoding.encode_ordinary("a" + blank * n + after))

    # below its limit, tiktoken's count grows by one token every `period` blanks (the
    # token it makes most of a run)…
    below = 300_000
    tokens = encoding.encode_ordinary("a" + blank * below + after)
    most = max(set(tokens), key=tokens.count)
    period = len(encoding.decode_single_token_bytes(most)) // len(blank.encode())
    for steps in (1, 2, 3):
        assert tiktoken_count(below + steps * period) == tiktoken_count(below) + steps
    # …and so it would past it, where it panics
    steps = -(-(1_100_000 - below) // period)  # over a million blanks: tiktoken panics
    text = "a" + blank * (below + steps * period) + after
    assert len(ordinary_encoder(name)(text)) == tiktoken_count(below) + steps
    assert count_text(text, encoding=name) == tiktoken_count(below) + steps


def test_a_session_holding_a_million_spaces_is_compressed() -> None:
    padded = "report:" + " " * 1_100_000 + "done"
    messages = [
        {"role": "user", "content": "Print the report."},
        {"role": "assistant", "content": padded},
        {"role": "user", "content": "Thanks. What did it say?"},
    ]
    before = count_tokens(messages)
    assert before > 8_000
    result = compress(messages, budget=4_000)
    assert result.report.fits
    assert count_tokens(result.messages) <= 4_000
    assert result.messages[-1] == messages[-1]
    assert messages[1]["content"] is padded  # the input is not touched
