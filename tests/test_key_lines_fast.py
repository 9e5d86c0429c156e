"""``key_lines``' fast paths find what the plain definitions find, byte for byte.

The hash trigger is defined by its regex (:data:`salient.HASH_TRIGGER`: a run of 7 to 40
lower case hex digits with no word character on either side, ``\\w`` as Python's ``re``
reads it over ``str``); :func:`salient._hash_places` finds it by ``bytes.find`` over the
UTF-8. The rows a long output's triggers rate best, and the rows of a dump that stand out
of their column, are compared with the straightforward loops they replace, written out
here: a per-row walk, a regex search, a dictionary of groups.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections import Counter

from hypothesis import example, given
from hypothesis import strategies as st

from condense.summarizers import salient, scan
from condense.summarizers.salient import HASH_TRIGGER, _hash_places, _hinted_lines, _kins
from condense.summarizers.scan import column_outliers

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


def _plain_column_outliers(rows: list[bytes], built: list[bytes]) -> list[int]:
    """``column_outliers`` as first written: each row normalized alone, grouped in a dict."""
    tally = Counter(built)
    if max(tally.values(), default=0) < scan._COLUMN_ROWS:
        return []
    by_shape: dict[bytes, list[int]] = {}
    for index, row_shape in enumerate(built):
        by_shape.setdefault(row_shape, []).append(index)
    found: list[int] = []
    for members in by_shape.values():
        if len(members) < scan._COLUMN_ROWS:
            continue
        cells = [rows[index].translate(scan._NORMAL).split() for index in members]
        found.extend(_plain_outliers_of(members, cells))
        keys = Counter(row_cells[0] for row_cells in cells if row_cells)
        for key, times in keys.items():
            if scan._COLUMN_ROWS <= times < len(members):
                group = [k for k, row_cells in enumerate(cells) if row_cells[:1] == [key]]
                found.extend(
                    _plain_outliers_of([members[k] for k in group], [cells[k] for k in group])
                )
    return sorted(set(found))


def _plain_outliers_of(members: list[int], cells: list[list[bytes]]) -> list[int]:
    widths = [len(row_cells) for row_cells in cells]
    width = max(set(widths), key=widths.count)
    kept = [k for k, size in enumerate(widths) if size == width]
    if len(kept) < scan._COLUMN_ROWS or width < 2:
        return []
    found: list[int] = []
    for column in zip(*(cells[k] for k in kept), strict=True):
        rows = len(column)
        most = max(
            column.count(column[0]), column.count(column[rows // 2]), column.count(column[-1])
        )
        if column.count(column[0]) == rows or most < rows * scan._COLUMN_COMMON:
            continue
        alone = {value for value, times in Counter(column).items() if times == 1}
        if alone and len(alone) <= max(1, rows // scan._ALONE_PER):
            found.extend(members[kept[k]] for k, value in enumerate(column) if value in alone)
    return found


# rows of a dump: look-alikes, a few with another value, some built otherwise
_ROW = st.one_of(
    st.builds(
        "{} {} status={} took {}ms".format,
        st.sampled_from(["api", "db", "web"]),
        st.sampled_from(["0a1b2c3d", "ffee0011", "1234abcd", "x"]),
        st.sampled_from(["ok", "ok", "ok", "ok", "failed"]),
        st.integers(0, 3),
    ),
    st.builds(
        '  "{}": "{}",'.format,
        st.sampled_from(["status", "name", "id"]),
        st.sampled_from(["active", "active", "active", "suspended", "a|b", ""]),
    ),
    _TEXTS.map(lambda text: text[:60].replace("\n", " ")),
)
_DUMPS = st.lists(_ROW, min_size=1, max_size=80).map("\n".join)


@given(st.one_of(_DUMPS, _TEXTS), st.integers(1, 4))
@example("\n".join(f"row {i} a{'b' * (i % 3)} deadbeef0 ok" for i in range(40)), 2)
def test_hinted_lines_are_the_plain_walks(text: str, count: int) -> None:
    rows = text.split("\n")
    data = _utf8(text)
    kins = _kins(text, rows, data)
    shapes = [kin[0] for kin in kins]
    outliers = frozenset(column_outliers(data.split(b"\n"), shapes))
    assert sorted(outliers) == _plain_column_outliers(data.split(b"\n"), shapes)
    alike = Counter(kins)
    keep = max(4, 2 * count)
    hinted = _hinted_lines(text, rows, kins, alike, outliers, keep, data)
    assert hinted == _plain_hinted_lines(text, rows, kins, alike, outliers, keep)


def test_many_shapes_are_grouped_like_few() -> None:
    # more shapes than are picked out one at a time: sorted and cut, the same rows found
    rows = [
        f"svc{'-' * shape} {value}".encode()
        for shape in range(scan._PICKED_SHAPES + 3)
        for value in ["ok"] * 11 + ["down"]
    ]
    built = list(map(scan.shape, rows))
    found = column_outliers(rows, built)
    assert found == _plain_column_outliers(rows, built)
    assert [rows[index].split()[-1] for index in found] == [b"down"] * (scan._PICKED_SHAPES + 3)


def test_the_digits_of_rows_are_unicode_digits() -> None:
    # ``\\d`` over ``str``: an Arabic-Indic digit is one, a superscript two is not
    rows = ["x \u0661", "x \u00b2", "x 7", "x é", "plain"]
    kins = _kins("\n".join(rows), rows)
    assert list(map(operator.itemgetter(1), kins)) == [True, False, True, False, False]
