"""The extractive summarizer: sections, surviving facts, bounds, folding, robustness."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense.exceptions import InputError
from condense.summarizers import ExtractiveSummarizer
from condense.summarizers._text import estimate_tokens

Message = dict[str, Any]


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def tool(call_id: str, content: Any) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def session() -> list[Message]:
    """A small but realistic agent session with one of every kind of fact."""
    return [
        {
            "role": "user",
            "content": "Ticket 48213: the importer crashes on files over 2 GiB. "
            "Fix src/importer/reader.py and keep the retry limit at 7.",
        },
        {
            "role": "assistant",
            "content": "I will reproduce the crash first. Then I'll read the reader.",
            "tool_calls": [call("c1", "bash", command="python -m importer big.bin")],
        },
        tool(
            "c1",
            "Traceback (most recent call last):\n"
            '  File "src/importer/reader.py", line 88, in read_chunk\n'
            "    raise ValueError('chunk header too large: 2147483649')\n"
            "ValueError: chunk header too large: 2147483649\n"
            "[Command finished with exit code 1]",
        ),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("c2", "str_replace_editor", command="view", path="src/importer/reader.py"),
                call("c3", "web_search", query="struct unpack 64-bit length python"),
            ],
        },
        tool("c2", "84 def read_chunk(self):\n85     size = struct.unpack('<i', ...)"),
        tool("c3", "HTTP 503 Service Unavailable"),
        {
            "role": "assistant",
            "content": "The fix is to unpack the size as an unsigned 64-bit integer ('<Q').",
            "tool_calls": [call("c4", "cargo_build", command="cargo build")],
        },
        tool("c4", "error[E0308]: mismatched types\n  --> src/lib.rs:12:5\nreturncode=101"),
        {"role": "user", "content": [{"type": "text", "text": "Also run the tests please."}]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("c5", "execute_bash", command="pytest -x tests/test_reader.py")],
        },
        tool("c5", "FAILED tests/test_reader.py::test_big_file - AssertionError\nExit status 1"),
        {"role": "assistant", "content": "Two tests still fail; next I will fix the offsets."},
    ]


def summarize(messages: list[Message], target: int = 1_000, previous: str | None = None) -> str:
    return ExtractiveSummarizer().summarize(messages, previous=previous, target_tokens=target)


def test_every_section_is_written() -> None:
    text = summarize(session())
    for section in (
        "## Scope",
        "## User asks",
        "## Tool calls",
        "## Files",
        "## Commands",
        "## Errors",
        "## Decisions",
        "## Last state",
    ):
        assert section in text


@pytest.mark.parametrize(
    "fact",
    [
        "Ticket 48213",  # the user's numbers, verbatim
        "retry limit at 7",
        "Also run the tests please.",  # an ask given as content parts
        "src/importer/reader.py",  # a file
        "str_replace_editor(command=view, path=src/importer/reader.py)",  # call + key args
        "web_search(query=struct unpack 64-bit length python)",
        "python -m importer big.bin → exit 1",  # command + exit code
        "cargo_build(command=cargo build) → exit 101",  # any tool's exit code
        "pytest -x tests/test_reader.py → exit 1",
        "ValueError: chunk header too large: 2147483649",  # a traceback's last line
        "error[E0308]: mismatched types",
        "FAILED tests/test_reader.py::test_big_file",
        "HTTP 503",
        "I will reproduce the crash first.",  # decisions
        "The fix is to unpack the size as an unsigned 64-bit integer ('<Q').",
        "Two tests still fail; next I will fix the offsets.",  # last state
    ],
)
def test_distinctive_facts_survive(fact: str) -> None:
    assert fact in summarize(session())


def test_deterministic() -> None:
    assert summarize(session()) == summarize(copy.deepcopy(session()))


def test_input_is_not_mutated() -> None:
    messages = session()
    before = copy.deepcopy(messages)
    summarize(messages, target=50, previous="## Files\n- a.py")
    assert messages == before


@pytest.mark.parametrize("target", [1, 5, 20, 60, 200, 1_000])
def test_stays_within_target(target: int) -> None:
    long_session = session() * 200
    text = summarize(long_session, target=target, previous="## Errors\n- old error (×3)")
    assert estimate_tokens(text) <= target


def test_first_ask_survives_trimming() -> None:
    messages = session() + [
        {"role": "user", "content": f"follow-up question number {i} " * 5} for i in range(300)
    ]
    text = summarize(messages, target=120)
    assert "Ticket 48213" in text
    assert estimate_tokens(text) <= 120


def test_newest_items_win_over_oldest() -> None:
    messages: list[Message] = []
    for i in range(200):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{i}", "read", path=f"f{i}.py")],
            },
            tool(f"c{i}", "ok"),
        ]
    text = summarize(messages, target=150)
    assert "f199.py" in text
    assert "f0.py" not in text


def test_repeats_are_counted_once() -> None:
    messages: list[Message] = []
    for i in range(5):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{i}", "bash", command="make")],
            },
            tool(f"c{i}", "make: *** [all] Error 2\nexit code 2"),
        ]
    text = summarize(messages)
    assert text.count("make → exit 2") == 1
    assert "make → exit 2 (×5)" in text


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("done\nexit code 0", 0),
        ("Process exited with code 3", 3),
        ("CompletedProcess(args='x', returncode=2)", 2),
        ('{"stdout": "", "exit_code": 4}', 4),
        ("Exit status: 127", 127),
        ("return code: 5", 5),
    ],
)
def test_exit_codes_are_read_from_outputs(output: str, code: int) -> None:
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("x", "run_shell", cmd="./go")]},
        tool("x", output),
    ]
    assert f"./go → exit {code}" in summarize(messages)


def test_bare_error_label_takes_the_next_line() -> None:
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("x", "edit", path="a.c")]},
        tool("x", "ERROR:\nNo replacement was performed, old_str `foo` did not appear"),
    ]
    assert "ERROR: No replacement was performed" in summarize(messages)


def test_long_outputs_are_read_at_both_ends_only() -> None:
    middle = "npm ERR! hidden in the middle\n"
    output = (
        "error: first line of the build\n"
        + "x" * 50_000
        + middle
        + "y" * 50_000
        + ("\nSegmentation fault (core dumped)")
    )
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("x", "bash", command="make")]},
        tool("x", output),
    ]
    text = summarize(messages)
    assert "error: first line of the build" in text
    assert "Segmentation fault (core dumped)" in text
    assert "hidden in the middle" not in text


def test_huge_arguments_still_give_the_path() -> None:
    arguments = json.dumps({"path": "src/big.py", "content": "x = 1\n" * 5_000})
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "w",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": arguments},
                }
            ],
        }
    ]
    assert "src/big.py" in summarize(messages)


def test_work_is_bounded_on_huge_spans() -> None:
    messages = session() * 1_000  # 12,000 messages
    text = summarize(messages, target=300)
    assert "12,000 messages summarized (details from the newest" in text
    assert "Ticket 48213" in text  # the first ask is always looked for
    assert estimate_tokens(text) <= 300


# -- folding in a previous summary ----------------------------------------------------------


def test_previous_digest_is_folded_not_nested() -> None:
    first = summarize(session()[:6])
    second = summarize(session()[6:], previous=first)
    assert second.count("## Scope") == 1
    assert second.count("## User asks") == 1
    assert "12 messages summarized" in second  # 6 + 6
    assert "Ticket 48213" in second  # from the first span
    assert "cargo_build(command=cargo build) → exit 101" in second  # from the second span
    assert "summary of" not in second.lower()


def test_folding_is_stable_over_many_rounds() -> None:
    summary: str | None = None
    for _ in range(30):
        summary = summarize(session(), target=400, previous=summary)
    assert summary is not None
    assert summary.count("## Scope") == 1
    assert "360 messages summarized" in summary
    assert estimate_tokens(summary) <= 400


def test_repeats_across_folds_add_up() -> None:
    previous = "## Commands\n- make → exit 2 (×4)"
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("x", "bash", command="make")]},
        tool("x", "exit code 2"),
    ]
    assert "make → exit 2 (×5)" in summarize(messages, previous=previous)


def test_free_text_previous_becomes_the_earlier_section_once() -> None:
    previous = "The user wants the importer fixed; we found an overflow at offset 0x7fffffff."
    once = summarize(session()[:3], previous=previous)
    twice = summarize(session()[3:], previous=once)
    assert twice.count("## Earlier") == 1
    assert "offset 0x7fffffff" in twice


def test_previous_last_state_is_kept_when_the_span_has_none() -> None:
    previous = "## Last state\nWaiting for the CI run 9911."
    messages = [{"role": "user", "content": "any news?"}]
    assert "Waiting for the CI run 9911." in summarize(messages, previous=previous)


def test_rejects_a_target_below_one() -> None:
    with pytest.raises(InputError, match="target_tokens"):
        summarize(session(), target=0)


# -- untrusted input -------------------------------------------------------------------------

text_st = st.text(max_size=40)
json_st = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text_st,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text_st, inner, max_size=3),
    max_leaves=4,
)
part_st = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": text_st}),
    st.fixed_dictionaries(
        {"type": st.just("image_url"), "image_url": st.fixed_dictionaries({"url": text_st})}
    ),
    json_st,
)
content_st = st.one_of(st.none(), text_st, st.lists(part_st, max_size=3), json_st)
arguments_st = st.one_of(
    st.dictionaries(st.sampled_from(["path", "command", "query", "x"]), json_st, max_size=3).map(
        json.dumps
    ),
    text_st,
    json_st,
)
tool_call_st = st.one_of(
    st.fixed_dictionaries(
        {
            "id": st.one_of(st.none(), text_st),
            "type": st.just("function"),
            "function": st.fixed_dictionaries(
                {
                    "name": st.one_of(st.sampled_from(["bash", "read", "edit"]), json_st),
                    "arguments": arguments_st,
                }
            ),
        }
    ),
    json_st,
)
message_st = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["system", "user", "assistant", "tool", "developer", "x"]),
            "content": content_st,
        },
        optional={
            "tool_calls": st.one_of(st.lists(tool_call_st, max_size=3), json_st),
            "tool_call_id": st.one_of(text_st, json_st),
        },
    ),
    json_st,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(message_st, max_size=8),
    previous=st.one_of(st.none(), text_st, st.just("## Files\n- a.py (×2)\n## Last state\nok")),
    target=st.integers(min_value=1, max_value=400),
)
def test_any_span_gives_a_bounded_deterministic_digest(
    messages: list[Any], previous: str | None, target: int
) -> None:
    before = copy.deepcopy(messages)
    text = ExtractiveSummarizer().summarize(messages, previous=previous, target_tokens=target)
    assert isinstance(text, str)
    assert estimate_tokens(text) <= target
    assert messages == before
    assert (
        ExtractiveSummarizer().summarize(messages, previous=previous, target_tokens=target) == text
    )
