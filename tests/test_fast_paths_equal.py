"""The fast paths of the summarizers and the counter say what the plain ones say.

Each fast path here replaced a slower way of computing the same thing (issue 18, Speed);
the plain way is written out in the test, so a fast path that drifts from it fails:

- ``scan.any_of``: a tree of the words' letters finds a word exactly where the plain
  alternation of them (or ``word in text``) does;
- ``salient._kins``: an output's rows grouped by shape and digits read as bytes, at once,
  group as their ``str`` shapes and ``\\d`` (any script's digits) group them;
- the hash trigger of an output's lines finds the places ``\\b[0-9a-f]{7,40}\\b`` finds;
- ``words_of_each``, ``Measure.words`` and ``combine`` give what their plain loops give;
- ``Scan`` classes its rare words all at once as ``word_class`` classes each;
- ``TokenCounter``: a long text's remembered count is its BPE count, in a message too,
  and ``clear()`` forgets it.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from condense.summarizers import salient
from condense.summarizers.scan import (
    DECISION_WORDS,
    EDGES,
    FINDING_WORDS,
    OUTPUT,
    RARE_UPTO,
    SHAPE_DELETE,
    Scan,
    SpanText,
    any_of,
    word_class,
    words_of_each,
)
from condense.summarizers.scan import words as span_words
from condense.summarizers.worth import Measure, combine
from condense.tokens.counting import TokenCounter
from condense.tokens.encodings import get_encoding

# letters the words are made of, and others: the tree must neither miss nor invent a word
ALPHABET = "abcdeinorstu '.-\n因为決定때문é٣"
literal = st.text(alphabet=ALPHABET, min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(literal, max_size=12), st.text(alphabet=ALPHABET, max_size=60))
def test_any_of_finds_a_word_where_the_plain_search_does(words: list[str], text: str) -> None:
    assert (any_of(words).search(text) is not None) == any(word in text for word in words)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_of_the_decision_and_finding_words_as_their_alternation(data: st.DataObject) -> None:
    for words in (DECISION_WORDS, FINDING_WORDS):
        plain = re.compile("|".join(map(re.escape, words)))
        pieces = data.draw(st.lists(st.sampled_from([*words, *ALPHABET, " "]), max_size=8))
        # a word cut short is not the word
        cut = data.draw(st.sampled_from(words))[: data.draw(st.integers(1, 4))]
        for text in ("".join(pieces), "".join(pieces) + cut):
            assert bool(any_of(words).search(text)) == bool(plain.search(text))


def test_any_of_nothing_finds_nothing() -> None:
    assert any_of([]).search("anything at all") is None


ROW = st.text(alphabet="ab_=:. 09٣7x-é中\t/", max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=10))
def test_rows_group_by_shape_and_digits_as_their_text_does(rows: list[str]) -> None:
    text = "\n".join(rows)
    kins = salient._kins(text, rows)
    table = dict.fromkeys(SHAPE_DELETE)
    plain = [(row.translate(table), re.search(r"\d", row) is not None) for row in rows]
    assert len(kins) == len(plain)
    for (a, b), (c, d) in itertools.combinations(zip(kins, plain, strict=True), 2):
        assert (a == b) == (c == d)  # two rows are alike in both or in neither
    assert [bool(shape) for shape, _ in kins] == [bool(shape) for shape, _ in plain]
    assert [digit for _, digit in kins] == [digit for _, digit in plain]


HEXISH = st.text(alphabet="0123456789abcdefg_-. \nxé٣", max_size=80)


@settings(max_examples=500, deadline=None)
@given(HEXISH)
def test_the_hash_trigger_finds_what_the_plain_pattern_finds(text: str) -> None:
    plain = re.compile(r"\b[0-9a-f]{7,40}\b")
    trigger = salient.HASH_TRIGGER
    assert [m.span() for m in trigger.finditer(text)] == [m.span() for m in plain.finditer(text)]
    # and key_lines' scanner of the UTF-8 finds where they start
    starts = [len(text[: m.start()].encode()) for m in plain.finditer(text)]
    assert salient._hash_places(text.encode(), len(text)) == starts


def test_a_long_texts_remembered_count_is_its_bpe_count() -> None:
    counter = TokenCounter(encoding="o200k_base")
    encode = get_encoding("o200k_base").encode_ordinary
    text = "the summary of a long session, " * 200  # long enough to be remembered
    assert counter.text(text) == len(encode(text))
    assert counter.text(text) == len(encode(text))  # remembered: the same
    assert counter.text(text + "!") == len(encode(text + "!"))  # another text: counted
    alone = counter.message({"role": "assistant", "content": ""})
    message = {"role": "assistant", "content": text}
    assert counter.message(message) == alone + len(encode(text))
    counter.clear()
    assert not counter._texts
    assert counter.text(text) == len(encode(text))


def test_a_counter_that_caches_nothing_remembers_no_text() -> None:
    counter = TokenCounter(encoding="o200k_base", maxsize=0)
    text = "x = 1\n" * 400
    assert counter.text(text) == len(get_encoding("o200k_base").encode_ordinary(text))
    assert not counter._texts


WORD = st.text(alphabet="0123456789abcdefMiGBs._-=:/%é", min_size=1, max_size=14)


@settings(max_examples=200, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=60))
def test_the_scan_classes_its_rare_words_as_word_class_does(tokens: list[str]) -> None:
    """``Scan`` classes all its rare words at once (hashes and quantities told apart by
    whole-list filters); each class counts the distinct rare words ``word_class`` gives it."""
    span = SpanText([(0, OUTPUT, " ".join(tokens))])
    scan = Scan(span)
    rare = [token for token, count in scan.counts.items() if count <= RARE_UPTO]
    expected = Counter(word_class(token) for token in rare)
    expected.pop(b"", None)
    assert scan.family == expected


def test_a_quantity_keeps_its_unit_and_a_hash_is_one_of_its_length() -> None:
    assert word_class(b"640Mi") == b"999Mi"
    assert word_class(b"4.2GB") == b"9.9GB"
    assert word_class(b"30s") == b"99s"
    assert word_class(b"5ce97d78c4") == b"#10"
    assert word_class(b"req=3f9a2c1b") == b"=9999"
    assert word_class(b"OPS-4127") == b"-9999"


TEXT = st.text(alphabet="ab1 .:|,\"'…\t\n\u3000é=-_/x", max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, max_size=8))
def test_the_words_of_each_text_at_once_are_the_words_of_each(texts: list[str]) -> None:
    assert list(words_of_each(texts)) == [span_words(text) for text in texts]


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_a_lines_words_are_valued_as_one_by_one(text: str) -> None:
    """``Measure.words`` values a text's words at once where each core is said once; one
    by one, a core said several ways keeps its most valued form."""
    measure = Measure()
    plain: dict[bytes, float] = {}
    for word in span_words(text):
        key = word.strip(EDGES)
        if key and (worth := measure.word(word)) >= plain.get(key, -1.0):
            plain[key] = worth
    assert Measure().words(text) == plain
    assert list(Measure().words(text)) == list(plain)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 2), max_size=10))
def test_a_lines_worth_combines_its_best_words_with_their_decay(worths: list[float]) -> None:
    best = sorted(worths, reverse=True)[:6]
    assert combine(worths) == sum(worth * 0.6**rank for rank, worth in enumerate(best))
