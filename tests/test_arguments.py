"""Tool-call arguments: shrinking keeps valid JSON of the same shape; normalizing repairs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from condense.arguments import (
    CUT_MARKER,
    KEEP_CHARS,
    arguments_problem,
    is_json_object_string,
    normalize_arguments,
    shrink_arguments,
    shrink_arguments_report,
)
from condense.exceptions import InputError
from condense.repair import repair
from condense.validate import validate
from profiles import examples

MARKER = re.compile(re.escape(CUT_MARKER).replace(r"\{removed\}", r"([0-9]+)"))
TRICKY = [
    "👩‍👩‍👧‍👦",  # ZWJ sequence
    "🇫🇷🇩🇪",  # regional indicator pairs
    "e\u0301\u0302",  # combining marks
    "你好，世界",
    "한국어",
    "\ud800",  # unpaired surrogates: json.dumps writes them as \ud800 escapes
    "x\udfff",  # (never right after a high one: JSON would read the two as one char)
    "\r\n",
    '"\\/',
    "\t\x00\x1f",
    "👍🏽",
]
texts = st.lists(st.one_of(st.text(), st.sampled_from(TRICKY)), max_size=12).map("".join)
long_texts = st.lists(st.one_of(st.text(min_size=5), st.sampled_from(TRICKY)), max_size=60).map(
    "".join
)
leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
    | long_texts
)
json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(texts, children, max_size=5),
    max_leaves=20,
)
styles = st.fixed_dictionaries(
    {"ensure_ascii": st.booleans(), "indent": st.sampled_from([None, 2]), "separators": st.none()}
) | st.just({"ensure_ascii": False, "separators": (",", ":")})


def graphemes_boundaries(text: str) -> set[int]:
    ends = [m.end() for m in regex.finditer(r"\X", text)]
    return {0, *ends}


def check_string(original: str, shrunk: str) -> bool:
    """``shrunk`` is ``original`` or a head/tail of it around a correct marker; True if cut."""
    if shrunk == original:
        return False
    bounds = graphemes_boundaries(original)
    for match in MARKER.finditer(shrunk):
        head, tail = shrunk[: match.start()], shrunk[match.end() :]
        removed = len(original) - len(head) - len(tail)
        if (
            original.startswith(head)
            and original.endswith(tail)
            and removed == int(match.group(1)) > 0
            and len(head) in bounds
            and len(original) - len(tail) in bounds
        ):
            return True
    raise AssertionError(f"{shrunk!r} is not a cut of {original!r}")


def check_same_shape(original: Any, shrunk: Any, cut: list[str]) -> None:
    """Same keys in order, same lengths, same non-strings; strings whole or properly cut."""
    assert type(shrunk) is type(original)
    if isinstance(original, dict):
        assert list(shrunk) == list(original)
        for key in original:
            check_same_shape(original[key], shrunk[key], cut)
    elif isinstance(original, list):
        assert len(shrunk) == len(original)
        for old, new in zip(original, shrunk, strict=True):
            check_same_shape(old, new, cut)
    elif isinstance(original, str):
        if check_string(original, shrunk):
            cut.append(shrunk)
    else:
        assert shrunk == original


def is_minimal_string(original: str, shrunk: str) -> bool:
    """The shortest form: a short string whole, a longer one cut to its bare marker
    (uncut only if it is no longer than that marker)."""
    if shrunk == original:
        return len(original) <= KEEP_CHARS or len(
            json.dumps(original, ensure_ascii=False)
        ) <= 2 + len(CUT_MARKER.format(removed=len(original)))
    return len(original) > KEEP_CHARS and MARKER.fullmatch(shrunk) is not None


# -- shrink_arguments: properties --------------------------------------------------------


@given(value=json_values, style=styles, max_chars=st.integers(0, 400), pad=st.booleans())
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@example(value={"content": "👩‍👩‍👧‍👦" * 40}, style={"ensure_ascii": False}, max_chars=60, pad=False)
@example(
    value=["\ud800\udc00" * 30, "x" * 50], style={"ensure_ascii": True}, max_chars=50, pad=False
)
def test_shrink_keeps_valid_json_of_the_same_shape(
    value: Any, style: dict[str, Any], max_chars: int, pad: bool
) -> None:
    if pad:  # a long string among few others takes the other tokenizer
        value = [value, "p\n" * 2000]
        max_chars *= 20
    text = json.dumps(value, **style)
    out = shrink_arguments(text, max_chars)
    if len(text) <= max_chars:
        assert out is text
        return
    assert len(out) <= len(text)
    cut: list[str] = []
    check_same_shape(json.loads(text), json.loads(out), cut)
    if cut:  # something was cut, so the lossless savings were not enough
        smallest = shrink_arguments(text, 0)
        assert len(out) <= max(max_chars, len(smallest))
    if style["ensure_ascii"] or not any("\ud800" <= c <= "\udfff" for c in text):
        out.encode("utf-8")  # no unpaired surrogate was written raw
    if len(out) <= max_chars:
        assert shrink_arguments(out, max_chars) is out


@given(value=json_values, style=styles)
@settings(max_examples=examples(200))
def test_shrink_to_zero_gives_the_shortest_form(value: Any, style: dict[str, Any]) -> None:
    text = json.dumps(value, **style)
    out = shrink_arguments(text, 0)

    def walk(old: Any, new: Any) -> None:
        if isinstance(old, dict):
            for key in old:
                walk(old[key], new[key])
        elif isinstance(old, list):
            for a, b in zip(old, new, strict=True):
                walk(a, b)
        elif isinstance(old, str):
            assert is_minimal_string(old, new), (old, new)

    walk(json.loads(text), json.loads(out))


@given(value=json_values, max_chars=st.integers(0, 300))
@settings(max_examples=examples(200))
def test_shrink_fits_whenever_the_shortest_form_fits(value: Any, max_chars: int) -> None:
    text = json.dumps(value, ensure_ascii=False)
    if len(shrink_arguments(text, 0)) <= max_chars:
        assert len(shrink_arguments(text, max_chars)) <= max_chars


@given(text=st.text(), max_chars=st.integers(0, 20))
def test_shrink_returns_non_json_unchanged(text: str, max_chars: int) -> None:
    try:
        json.loads(text)
    except ValueError:
        assert shrink_arguments(text, max_chars) is text


# -- shrink_arguments: the real failure shapes -------------------------------------------


def file_content(lines: int) -> str:
    return "".join(
        f'    value_{i} = compute("row {i}", flag=True)  # 中文 ✓\n' for i in range(lines)
    )


def test_shrink_edit_tool_file_content_hits_the_target_exactly() -> None:
    content = file_content(400)
    assert len(content) > 20_000
    arguments = json.dumps({"path": "src/app.py", "old_str": "x = 1\n", "new_str": content})
    out = shrink_arguments(arguments, 4000)
    assert len(out) == 4000  # ASCII escapes and a few CJK: no grapheme slack here
    parsed = json.loads(out)
    assert parsed["path"] == "src/app.py"
    assert parsed["old_str"] == "x = 1\n"
    assert check_string(content, parsed["new_str"])
    head, tail = MARKER.split(parsed["new_str"])[::2]
    assert len(head) > len(tail) > 500  # head about two thirds, tail the rest


def test_shrink_long_command_keeps_head_and_tail() -> None:
    command = "cd /repo && " + " && ".join(f"pytest tests/test_{i}.py -x" for i in range(300))
    arguments = json.dumps({"command": command, "timeout": 120})
    out = shrink_arguments(arguments, 500)
    parsed = json.loads(out)
    assert len(out) <= 500
    assert parsed["timeout"] == 120
    assert parsed["command"].startswith("cd /repo && pytest tests/test_0.py")
    assert parsed["command"].endswith("pytest tests/test_299.py -x")


def test_shrink_cuts_the_longest_strings_first_and_evenly() -> None:
    patches = [
        {"path": f"f{i}.py", "diff": "-old\n+new\n" * (n // 10)}
        for i, n in enumerate([300, 3000, 3000, 6000])
    ]
    arguments = json.dumps({"patches": patches, "message": "m" * 200})
    out = shrink_arguments(arguments, 5000)
    parsed = json.loads(out)
    assert len(out) <= 5000
    assert parsed["message"] == "m" * 200
    assert [p["path"] for p in parsed["patches"]] == ["f0.py", "f1.py", "f2.py", "f3.py"]
    assert parsed["patches"][0]["diff"] == patches[0]["diff"]  # short: untouched
    sizes = [len(json.dumps(p["diff"], ensure_ascii=False)) for p in parsed["patches"][1:]]
    assert max(sizes) - min(sizes) <= 4  # capped at one common length
    assert len(out) >= 5000 - 6


def test_shrink_within_budget_returns_the_same_object() -> None:
    arguments = json.dumps({"a": "x" * 100}, indent=2)
    assert shrink_arguments(arguments, len(arguments)) is arguments


def test_shrink_takes_lossless_savings_before_cutting() -> None:
    arguments = json.dumps({"text": "你好" * 50, "list": [1, 2, 3]}, indent=4)  # \u escapes
    compact = json.dumps(json.loads(arguments), ensure_ascii=False, separators=(",", ":"))
    assert shrink_arguments(arguments, len(compact)) == compact


def test_shrink_returns_input_when_nothing_can_be_cut() -> None:
    arguments = json.dumps([1, 2, 3, "short", {"k": None}], separators=(",", ":"))
    assert shrink_arguments(arguments, 5) is arguments


def test_shrink_cuts_a_string_just_over_the_limit_to_its_marker_when_it_must() -> None:
    arguments = json.dumps({"a": "x" * KEEP_CHARS, "b": "y" * (KEEP_CHARS + 1)})
    report = shrink_arguments_report(arguments, 10)
    out = json.loads(report.text)
    assert out["a"] == "x" * KEEP_CHARS  # short: never cut
    assert MARKER.fullmatch(out["b"])
    assert (report.fits, report.strings_cut) == (False, 1)


def test_shrink_top_level_array_and_string() -> None:
    array = json.dumps(["a" * 1000, 7, "b" * 1000])
    out = json.loads(shrink_arguments(array, 200))
    assert out[1] == 7
    assert all(MARKER.search(s) for s in (out[0], out[2]))
    string = json.dumps("z" * 1000)
    assert len(shrink_arguments(string, 100)) == 100


def test_shrink_keeps_escaped_surrogates_escaped() -> None:
    arguments = json.dumps({"a": "\ud800x" * 300})
    out = shrink_arguments(arguments, 200)
    assert not re.search("[\ud800-\udfff]", out)  # escaped, so the text is valid UTF-8
    assert len(out) <= 200
    check_string("\ud800x" * 300, json.loads(out)["a"])


def test_shrink_keeps_surrogate_pairs_together() -> None:
    arguments = '"' + "\ud83d\ude00" * 100 + '"'  # raw code points, as some decoders leave
    for max_chars in range(40, 60):
        out = shrink_arguments(arguments, max_chars)
        assert len(out) <= max_chars
        head, tail = MARKER.split(out)[::2]
        assert head == '"' + "\\ud83d\\ude00" * ((len(head) - 1) // 12)
        assert tail == "\\ud83d\\ude00" * ((len(tail) - 1) // 12) + '"'


def test_shrink_does_not_split_graphemes() -> None:
    family = "👩‍👩‍👧‍👦"
    for max_chars in range(30, 80):
        out = json.loads(shrink_arguments(json.dumps(family * 30, ensure_ascii=False), max_chars))
        head, tail = MARKER.split(out)[::2]
        assert head == family * (len(head) // len(family))
        assert tail == family * (len(tail) // len(family))


def test_shrink_rejects_a_negative_budget() -> None:
    with pytest.raises(InputError, match="max_chars"):
        shrink_arguments("{}", -1)


PATH = "src/condense/reduce/tool_arguments_01.py"  # 40 characters
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"  # 32 characters


def test_shrink_arguments_keeps_identifiers_and_cuts_free_text() -> None:
    """Defect 5: with a small ``max_chars``, shrink_arguments replaced a 40-character file
    path and a 32-character trace id with a cut marker to get closer to the target."""
    assert (len(PATH), len(TRACE_ID)) == (40, 32)
    notes = "Investigated the flaky test; the retry loop hides the first failure. " * 20
    arguments = json.dumps({"path": PATH, "trace_id": TRACE_ID, "notes": notes})
    for max_chars in (0, 50, 120, 200, 400):
        report = shrink_arguments_report(arguments, max_chars)
        parsed = json.loads(report.text)
        assert (parsed["path"], parsed["trace_id"]) == (PATH, TRACE_ID)
        assert check_string(notes, parsed["notes"])  # the free text is what gets cut
        assert report.text == shrink_arguments(arguments, max_chars)
        assert report.fits is (len(report.text) <= max_chars)
        assert report.strings_cut == 1
    smallest = shrink_arguments_report(arguments, 0)
    assert not smallest.fits  # the ids alone are over 0: best effort, and it says so
    assert MARKER.fullmatch(json.loads(smallest.text)["notes"])
    assert shrink_arguments_report(arguments, 400).fits


def test_shrink_arguments_report_when_nothing_needs_cutting() -> None:
    arguments = json.dumps({"path": PATH}, separators=(",", ":"))
    assert shrink_arguments_report(arguments, 1000) == shrink_arguments_report(arguments, 60)
    report = shrink_arguments_report(arguments, 10)
    assert report.text is arguments and not report.fits and report.strings_cut == 0
    assert not shrink_arguments_report("{not json", 3).fits


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


@given(value=json_values, style=styles, max_chars=st.integers(0, 600))
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@example(value={"path": PATH, "id": TRACE_ID, "log": "x" * 500}, style={}, max_chars=60)
def test_shrink_properties_short_strings_longest_first_never_grows(
    value: Any, style: dict[str, Any], max_chars: int
) -> None:
    text = json.dumps(value, **style)
    report = shrink_arguments_report(text, max_chars)
    out = report.text
    assert len(out) <= len(text)  # never grows
    assert report.fits is (len(out) <= max_chars)
    olds, news = _strings(json.loads(text)), _strings(json.loads(out))  # JSON stays valid
    assert len(olds) == len(news)
    cut = [old for old, new in zip(olds, news, strict=True) if check_string(old, new)]
    assert len(cut) == report.strings_cut
    assert all(len(old) > KEEP_CHARS for old in cut)  # short strings untouched
    if cut:  # longest first: every string longer than a cut one is cut as well
        shortest_cut = min(len(json.dumps(old, ensure_ascii=False)) for old in cut)
        for old, new in zip(olds, news, strict=True):
            if len(old) > KEEP_CHARS and len(json.dumps(old, ensure_ascii=False)) > shortest_cut:
                assert new != old, (old, cut)
    if not report.fits:  # the best effort: nothing more could go without a short string
        assert out == shrink_arguments(text, 0)


# -- normalize_arguments -----------------------------------------------------------------


@given(value=json_values | st.text() | st.binary() | st.sets(st.integers()))
@settings(max_examples=examples(300))
def test_normalize_always_gives_an_object_string_and_is_idempotent(value: Any) -> None:
    text, _ = normalize_arguments(value)
    assert is_json_object_string(text)
    assert isinstance(json.loads(text), dict)
    again, reason = normalize_arguments(text)
    assert again is text
    assert reason is None
    assert normalize_arguments(value) == (text, _)


@given(value=json_values)
def test_normalize_keeps_parsed_json_values(value: Any) -> None:
    value = json.loads(json.dumps(value))  # how JSON reads it: "\ud800\udc00" is one char
    text, reason = normalize_arguments(json.dumps(value))
    if isinstance(value, dict):
        assert reason is None
    elif not (isinstance(value, str) and is_json_object_string(value)):
        assert json.loads(text) == {"value": value}
        assert reason is not None


@given(value=st.dictionaries(texts, json_values, max_size=5))
def test_normalize_reads_python_reprs(value: dict[str, Any]) -> None:
    text, _ = normalize_arguments(repr(value))
    assert json.loads(text) == json.loads(json.dumps(value))


@given(text=st.text())
def test_normalize_loses_no_text(text: str) -> None:
    out, reason = normalize_arguments(text)
    parsed = json.loads(out)
    if reason is not None and "raw_arguments" in reason:
        assert parsed == {"raw_arguments": text}


SAMPLE = {
    "path": "src/é.py",
    "edits": [{"old": 'a\\b"c\n', "new": "👩‍👩‍👧‍👦 你好", "line": -15, "ratio": 0.25}],
    "flags": [True, False, None],
    "empty": {},
    "nothing": [],
    "surrogates": "😀\ud800",
}


def is_prefix(recovered: Any, original: Any) -> bool:
    """``recovered`` could be what is left of ``original`` after cutting its JSON text."""
    if isinstance(original, dict):
        keys = list(recovered)
        if not isinstance(recovered, dict) or keys != list(original)[: len(keys)]:
            return False
        *whole, last = keys or [None]
        return all(recovered[k] == original[k] for k in whole) and (
            last is None or is_prefix(recovered[last], original[last])
        )
    if isinstance(original, list):
        if not isinstance(recovered, list) or len(recovered) > len(original):
            return False
        if not recovered:
            return True
        return recovered[:-1] == original[: len(recovered) - 1] and (
            not recovered or is_prefix(recovered[-1], original[len(recovered) - 1])
        )
    if isinstance(original, str):
        return isinstance(recovered, str) and original.startswith(recovered)
    return bool(recovered == original)


@given(
    value=st.dictionaries(texts, json_values, max_size=5) | st.lists(json_values, max_size=5),
    style=styles,
    data=st.data(),
)
def test_normalize_recovers_what_is_left_of_cut_json(
    value: Any, style: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(value, **style)
    value = json.loads(json.dumps(value))  # escaped, a surrogate pair reads as one char
    end = data.draw(st.integers(0, len(text) - 1))
    out, reason = normalize_arguments(text[:end])
    recovered = json.loads(out)
    assert reason is not None
    assert is_prefix(recovered if isinstance(value, dict) else recovered.get("value", []), value)


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("indent", [None, 1])
def test_normalize_recovers_json_cut_at_every_position(
    ensure_ascii: bool, indent: int | None
) -> None:
    text = json.dumps(SAMPLE, ensure_ascii=ensure_ascii, indent=indent)
    for end in range(len(text)):
        out, reason = normalize_arguments(text[:end])
        recovered = json.loads(out)
        assert is_prefix(recovered, SAMPLE), (text[:end], recovered)
        assert reason is not None
        assert "raw_arguments" not in out
    assert normalize_arguments(text) == (text, None) or "\ud800" in text


@pytest.mark.parametrize(
    ("value", "expected", "reason_part"),
    [
        (None, {}, "missing"),
        ("", {}, "empty"),
        ("  \n", {}, "empty"),
        ({"a": "é"}, {"a": "é"}, "an object, not a string"),
        ("[1, 2]", {"value": [1, 2]}, "JSON array"),
        ('"text"', {"value": "text"}, "JSON string"),
        ("3.5", {"value": 3.5}, "JSON number"),
        ("true", {"value": True}, "JSON boolean"),
        ("null", {"value": None}, "JSON null"),
        ([1, "x"], {"value": [1, "x"]}, "list"),
        (7, {"value": 7}, "int"),
        ('"{\\"a\\": 1}"', {"a": 1}, "encoded twice"),
        ('{"a": 1}}', {"a": 1}, "stray"),
        ('```json\n{"a": 1}\n```', {"a": 1}, "stray"),
        ('\ufeff{"a": 1}', {"a": 1}, "stray"),
        ('{"a": 1} trailing words', {"a": 1}, "stray"),
        ("{'a': True, 'b': None, 'c': 'it\\'s'}", {"a": True, "b": None, "c": "it's"}, "Python"),
        ("{'re': '\\d+'}", {"re": "\\d+"}, "Python"),
        ('{"code": "line 1\nline 2\tx"}', {"code": "line 1\nline 2\tx"}, "control"),
        ('{"a": NaN, "b": -Infinity}', {"a": "NaN", "b": "-Infinity"}, "NaN"),
        ({"a": float("inf"), 1: b"\xff"}, {"a": "Infinity", "1": "\\xff"}, "object"),
        ('{"a": [1, {"b": "c', {"a": [1, {"b": "c"}]}, "truncated"),
        ('{"a": 1, "b": tr', {"a": 1}, "truncated"),
        ('{"a": 12', {}, "truncated"),
        ("ls -la", {"raw_arguments": "ls -la"}, "raw_arguments"),
        ("{'a': os.system('x')}", {"raw_arguments": "{'a': os.system('x')}"}, "raw_arguments"),
        ('{"a": 1] ', {"raw_arguments": '{"a": 1] '}, "raw_arguments"),
        (b'{"a": 1}', {"a": 1}, "bytes"),
        ({3, 1, 2}, {"value": [1, 2, 3]}, "set"),
    ],
)
def test_normalize_cases(value: object, expected: dict[str, Any], reason_part: str) -> None:
    text, reason = normalize_arguments(value)
    assert json.loads(text) == expected
    assert reason is not None
    assert reason_part in reason
    assert normalize_arguments(text) == (text, None)


def test_normalize_recovers_arguments_sliced_by_a_compactor() -> None:
    content = file_content(400)
    arguments = json.dumps(
        {"path": "src/app.py", "content": content, "mode": "w"}, ensure_ascii=False
    )
    for end in (5_000, 12_345, len(arguments) - 20):
        out, reason = normalize_arguments(arguments[:end])
        parsed = json.loads(out)
        assert parsed["path"] == "src/app.py"
        assert content.startswith(parsed["content"])
        assert len(json.dumps(parsed["content"], ensure_ascii=False)) > end - 40  # all of it
        assert reason is not None
        assert "truncated" in reason


def test_normalize_returns_a_valid_object_string_itself() -> None:
    arguments = '{ "a" : [1, 2.50, "ü"] }'
    out, reason = normalize_arguments(arguments)
    assert out is arguments
    assert reason is None


def test_normalize_escapes_unpaired_surrogates() -> None:
    out, reason = normalize_arguments('{"a": "\ud800"}')  # raw: cannot be sent as UTF-8
    assert out == '{"a": "\\ud800"}'
    assert reason is not None
    assert "surrogates" in reason


def test_normalize_survives_cycles_and_deep_nesting() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    deep = "[" * 100_000
    for value in (cyclic, deep, "{" * 50_000 + "}" * 50_000):
        text, _ = normalize_arguments(value)
        assert is_json_object_string(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"a": 1}', True),
        (" {} ", True),
        ("[]", False),
        ('"{}"', False),
        ('{"a": NaN}', False),
        ('{"a": "\ud800"}', False),
        ('{"a": "\\ud800"}', True),
        ('{"a": 1', False),
        ({"a": 1}, False),
        (None, False),
        ('{"n": ' + "9" * 5000 + "}", True),
    ],
)
def test_is_json_object_string(value: object, expected: bool) -> None:
    assert is_json_object_string(value) is expected


# -- one definition of valid arguments: validate, repair and the normaliser agree ----------


def _strict_object_text(pairs: dict[str, str]) -> str:
    """A JSON-ish object whose values are written as given (``NaN`` stays bare)."""
    return "{" + ", ".join(f"{json.dumps(key)}: {value}" for key, value in pairs.items()) + "}"


json_objects = st.dictionaries(texts, json_values, max_size=4).map(
    lambda obj: json.dumps(obj, ensure_ascii=False)
)
bare_values = st.sampled_from(
    ["NaN", "Infinity", "-Infinity", "1", "-0.5e3", "true", "null", '"x"', "[NaN]", "{}"]
)
argument_texts = st.one_of(
    json_objects,
    json_values.map(lambda value: json.dumps(value, ensure_ascii=False)),  # maybe not objects
    st.dictionaries(st.text(max_size=4), bare_values, max_size=3).map(_strict_object_text),
    st.tuples(json_objects, json_objects).map("".join),  # two objects back to back
    st.tuples(json_objects, st.text(max_size=6)).map("".join),  # trailing text
    st.tuples(st.sampled_from([" ", "\n", "\t", "\ufeff", "\xa0"]), json_objects).map("".join),
    st.text(max_size=20),
)

KNOWN_BAD = [
    '{"x": NaN}',
    '{"x": Infinity}',
    '{"x": -Infinity}',
    '{"x": [1, NaN]}',
    '{"a": "\ud800"}',  # a raw unpaired surrogate: not encodable as UTF-8
    "{}{}",
    '{"a": 1}{"b": 2}',
    '{"a": 1} trailing',
    '{"a": 1}]',
]


def _history(arguments: str) -> list[dict[str, Any]]:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ]


def _argument_codes(history: list[dict[str, Any]], provider: str) -> list[str]:
    return [v.code for v in validate(history, provider=provider) if v.code.startswith("arguments_")]


@pytest.mark.parametrize("arguments", KNOWN_BAD)
def test_validate_and_the_argument_normaliser_agree(arguments: str) -> None:
    """Defect 6: ``'{"x": NaN}'`` passed validate, so repair and compress returned it
    unchanged, though the normaliser would fix it and strict parsers refuse it."""
    history = _history(arguments)
    assert _argument_codes(history, "openai") == ["arguments_invalid_json"]
    fixed, reason = normalize_arguments(arguments)
    assert reason is not None
    result = repair(history, provider="openai")
    assert result.messages[1]["tool_calls"][0]["function"]["arguments"] == fixed
    assert result.changes and not validate(result.messages, provider="openai")
    json.loads(fixed, parse_constant=lambda name: pytest.fail(f"{name} left in {fixed!r}"))


@given(arguments=argument_texts)
@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.too_slow])
@example(arguments='{"x": NaN}')
@example(arguments="{}{}")
@example(arguments='{"a": "\udc00"}')
@example(arguments='{"a": "\\udc00"}')
@example(arguments='{"n": ' + "9" * 5000 + "}")
def test_validate_repair_and_the_normaliser_agree_on_valid_arguments(arguments: str) -> None:
    problem = arguments_problem(arguments)
    assert is_json_object_string(arguments) is (problem is None)
    history = _history(arguments)
    for provider in ("openai", "strict"):
        assert _argument_codes(history, provider) == ([problem] if problem else [])
    fixed, reason = normalize_arguments(arguments)
    assert (reason is None) is (problem is None)
    assert arguments_problem(fixed) is None
    if problem is None:
        assert fixed is arguments
    result = repair(history, provider="openai")
    assert result.messages[1]["tool_calls"][0]["function"]["arguments"] == fixed
    assert result.changed is (problem is not None)
    assert not validate(result.messages, provider="openai")
