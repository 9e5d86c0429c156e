"""``key_lines``' fast paths find what the plain definitions find, byte for byte.

The hash trigger is defined by its regex (:data:`salient.HASH_TRIGGER`: a run of 7 to 40
lower case hex digits with no word character on either side, ``\\w`` as Python's ``re``
reads it over ``str``); :func:`salient._hash_places` finds it by ``bytes.find`` over the
UTF-8. The rows a long output's triggers rate best are compared with the straightforward
loop they replace, written out here: every trigger a regex, every row walked.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import operator
from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from condense.summarizers import salient
from condense.summarizers.salient import (
    HASH_TRIGGER,
    _hash_places,
    _hinted_lines,
    _kins,
    _window,
    key_lines,
)
from condense.summarizers.scan import column_outliers
from profiles import examples

# what a hash's neighbourhood is made of: hex digits (lower and upper case), other ASCII
# word characters, separators, non-ASCII letters and digits (``\w`` to ``re``), non-ASCII
# symbols and lone surrogates (not), newlines
_PIECES = st.sampled_from(
    [
        *"0123456789abcdef",
        "deadbeef",
        "defaced",
        "cafe",
        "0123456",
        "ABCDEF",
        "g",
        "z",
        "_",
        "G7",
        " ",
        ":",
        "-",
        ".",
        "/",
        "\t",
        "\n",
        "\r\n",
        "é",
        "ß",
        "日本",
        "\u0661",  # ARABIC-INDIC DIGIT ONE: \d and \w
        "\u00b2",  # SUPERSCRIPT TWO: \w, not \d
        "①",
        "ª",  # a letter whose Latin-1 byte is a UTF-8 continuation byte
        "🎉",
        "…",
        "\ud800",
        "\udfff",
        "ms",
        " 12ms",
        "ERROR",
        "failed",
        "test_x",
        "http://h",
        "x = 1",
        "status=ok",
        "status=failed",
    ]
)
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=400).map("".join)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _regex_places(text: str, most: int) -> list[int]:
    """The plain definition: the regex's first ``most`` matches, as UTF-8 offsets."""
    found = itertools.islice(HASH_TRIGGER.finditer(text), most)
    return [len(_utf8(text[: match.start()])) for match in found]


@given(_TEXTS, st.integers(1, 30))
@example("a" * 7, 24)
@example("a" * 40 + " " + "b" * 41 + " " + "c" * 6, 24)
@example("é" + "a" * 7 + "ß", 24)
@example("🎉" + "a" * 7 + "\ud800", 24)
@example("ª" + "abcdef0" + "_" + " 1234567", 24)
def test_hash_places_are_the_regex_matches(text: str, most: int) -> None:
    assert _hash_places(_utf8(text), most) == _regex_places(text, most)


def _plain_hinted_lines(
    text: str,
    rows: list[str],
    kins: list[tuple[bytes, bool]],
    alike: Counter[tuple[bytes, bool]],
    outliers: frozenset[int],
    keep: int,
) -> list[int]:
    """``_hinted_lines`` as first written: every trigger a regex, every row walked."""
    if len(rows) <= salient._ALL_LINES:
        return list(range(len(rows)))
    triggers = [*salient._TRIGGERS, (salient._HASH_WEIGHT, HASH_TRIGGER)]
    starts = list(itertools.accumulate((len(row) + 1 for row in rows), initial=0))
    rating: dict[int, float] = {}
    for weight, trigger in triggers:
        for match in itertools.islice(trigger.finditer(text), salient._MATCHES_PER_TRIGGER):
            index = bisect.bisect_right(starts, match.start()) - 1
            rating[index] = rating.get(index, 0.0) + weight
    for index, kin in enumerate(kins):
        others = alike[kin]
        if (others == 1 and kin[1]) or index in outliers:
            rating[index] = rating.get(index, 0.0) + salient._OWN_SHAPE
        elif index in rating and kin[0]:
            rating[index] /= 1 + math.log2(others)
    return sorted(sorted(rating, key=lambda index: (-rating[index], index))[:keep])


# rows of a long output: made of what the triggers look for and of filler, from few
# pieces (so that rows are built alike, some with digits and some without), a few of a
# dump with a cell that stands out of its column
_ROW_PIECES = st.sampled_from(
    [
        "ERROR",
        "failed",
        "error:",
        "12ms",
        "3 ms",
        "test_x",
        "a::b",
        "http://h",
        "x.py",
        "/usr/lib.so",
        "pkg.Mod:12",
        "v1.2.3",
        "#12",
        "50%",
        "3 MB",
        "ABC-12",
        "a_b=1",
        "deadbeef0",
        "deadbeef0deadbeef",
        "ok",
        "word",
        "7",
        "-",
        ",",
        "|",
        "é",
        "\u0661",
    ]
)
_ROW = st.one_of(
    st.lists(_ROW_PIECES, max_size=5).map(" ".join),
    st.builds(
        "{} status={} took {}ms".format,
        st.sampled_from(["api", "db", "web"]),
        st.sampled_from(["ok", "ok", "ok", "ok", "failed"]),
        st.integers(0, 3),
    ),
    _TEXTS.map(lambda text: text[:60].replace("\n", " ")),
)
_LONG = st.lists(_ROW, min_size=salient._ALL_LINES + 1, max_size=90).map("\n".join)


@settings(max_examples=examples(300))
@given(st.one_of(_LONG, _TEXTS), st.integers(1, 4))
@example("\n".join(f"row {i} a{'b' * (i % 3)} deadbeef0 ok" for i in range(40)), 2)
def test_hinted_lines_are_the_plain_walks(text: str, count: int) -> None:
    rows = text.split("\n")
    data = _utf8(text)
    kins = _kins(text, rows, data)
    shapes = [kin[0] for kin in kins]
    outliers = frozenset(column_outliers(data.split(b"\n"), shapes))
    alike = Counter(kins)
    keep = max(4, 2 * count)
    hinted = _hinted_lines(text, rows, kins, alike, outliers, keep, data)
    assert hinted == _plain_hinted_lines(text, rows, kins, alike, outliers, keep)


def test_the_digits_of_rows_are_unicode_digits() -> None:
    # ``\\d`` over ``str``: an Arabic-Indic digit is one, a superscript two is not
    rows = ["x \u0661", "x \u00b2", "x 7", "x é", "plain"]
    kins = _kins("\n".join(rows), rows)
    assert list(map(operator.itemgetter(1), kins)) == [True, False, True, False, False]


def test_a_long_line_s_window_is_around_its_first_specific_word_near_its_start() -> None:
    """A line longer than a window is cut around its first specific word, looked for in
    its first few thousand characters only: a line of megabytes is not read word by word
    (``[[0],[1],…]`` of 4 MB took 3 s)."""
    line = "plain words only " * 30 + "then ledger-7f3a9c2 failed " + "and more words " * 30
    window = _window(line)
    assert "ledger-7f3a9c2" in window and len(window) <= 240 and window.startswith("…")
    late = "[0]," * 2_000 + "ledger-7f3a9c2 " + "[1]," * 500_000
    assert _window(late) == late[:238].rstrip() + "…"


def test_a_long_line_s_window_is_around_its_id_least_like_the_others() -> None:
    """In a line of minified JSON whose keys are ids built alike (``session_0``,
    ``refund_1``…), the window is cut around the id unlike them, at the end of the line
    (a rollout's id), and what a masked output keeps holds it; where every id is built
    alike, around the first. (Before, the window was the line's start: its keys.)"""
    words = ("session", "refund", "ledger", "payout", "quota")
    fields = {f"{words[i % 5]}_{i}": words[(i * 3) % 5] * 3 for i in range(60)}
    line = json.dumps({**fields, "rollout_id": "ro-48b81e7f"}, separators=(",", ":"))
    assert len(line) > 1_500
    assert "ro-48b81e7f" in _window(line)
    assert any("ro-48b81e7f" in kept for kept in key_lines(line, count=2, max_chars=220))
    alike = json.dumps(fields, separators=(",", ":"))
    assert _window(alike).startswith('{"session_0"')
