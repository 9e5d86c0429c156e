"""The extractive summarizer: sections, value, surviving facts, bounds, folding, robustness."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense.exceptions import InputError
from condense.summarizers import ExtractiveSummarizer
from condense.summarizers.digest import _stem
from condense.testing.sessions import synthetic_session
from condense.tokens import count_text
from profiles import examples

Message = dict[str, Any]
EXAMPLE = Path(__file__).parent.parent / "examples" / "session.json"


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
            "content": "Ticket IMP-48213: the importer crashes on files over 2 GiB. "
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


def sections(text: str) -> dict[str, list[str]]:
    """The lines of each section of a digest, by title, in order."""
    found: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("## "):
            lines = found.setdefault(line[3:], [])
        else:
            lines.append(line)
    return found


def test_every_section_is_written_most_valuable_first() -> None:
    order = [
        "Scope",
        "User asks",
        "Last state",
        "Errors",
        "Decisions",
        "Key facts",
        "Identifiers",
        "Commands",
        "Files",
        "Tool calls",
    ]
    text = summarize(session())
    found = list(sections(text))
    assert found == [title for title in order if title in found]
    # every kind of fact has its section (the decisions here are the last state's words)
    assert set(order) - set(found) <= {"Decisions"}
    assert "The fix is to unpack the size as an unsigned 64-bit integer ('<Q')." in text


def test_what_the_asks_or_the_facts_say_is_not_listed_again() -> None:
    """An identifier the asks hold is not repeated under Identifiers; one that neither the
    asks nor a written fact hold is listed there."""
    text = summarize(session())
    listed = "\n".join(sections(text)["Identifiers"])
    assert "IMP-48213" in "\n".join(sections(text)["User asks"])
    assert "IMP-48213" not in listed
    assert "big.bin" in listed


def test_look_alike_identifiers_are_listed_a_few_and_counted() -> None:
    """Twenty pods of one deployment on twenty nodes are two stems of look-alikes: a few
    of each are listed, the rest counted, and the room goes to what else there is."""
    rng = random.Random(4)
    messages: list[Message] = [{"role": "user", "content": "Why do payouts restart?"}]
    for n in range(20):
        suffix = "".join(rng.choice("bcdfgkmnqxz2456789") for _ in range(5))
        pod = f"payouts-{rng.randrange(16**9):09x}-{suffix}"
        node = f"ip-10-0-{rng.randint(1, 200)}-{rng.randint(1, 200)}"
        messages += [
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "kubectl get"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call_{n}",
                "content": f"Name: {pod}\nStatus: Running\nRestarts: {n % 4}\nNode: {node}",
            },
        ]
    messages.append({"role": "user", "content": "Now fix it."})
    listed = sections(summarize(messages, target=3_000))["Identifiers"]
    assert len(listed) == 1, listed
    names = listed[0].removeprefix("- ").split(", ")
    assert sum(name.startswith("payouts-") for name in names) == 3
    assert sum(name.startswith("ip-10-0-") for name in names) == 3
    assert names[-1] == "+34 more"


@pytest.mark.parametrize(
    ("one", "other", "alike"),
    [
        ("payouts-7d9f8c6b5-x2kqp", "payouts-54c4b9d7f-mccqz", True),  # one deployment's pods
        ("ch_3Pq81xYzT0", "ch_9Zz01yQ2", True),
        ("HAT142", "HAT266", True),
        ("l.store.Load", "d.store.Load", True),  # receivers
        ("src/app/server.py:794", "src/app/server.py:12", True),
        ("payouts-7d9f8c6b5-x2kqp", "refunds-7d9f8c6b5-x2kqp", False),
        ("payments-api", "payouts-api", False),
        ("HAT142", "ORD-4102", False),
    ],
)
def test_look_alikes_share_a_stem(one: str, other: str, alike: bool) -> None:
    assert (_stem(one) == _stem(other)) is alike


@pytest.mark.parametrize(
    "fact",
    [
        "Ticket IMP-48213",  # the user's numbers, verbatim
        "retry limit at 7",
        "Also run the tests please.",  # an ask given as content parts
        "src/importer/reader.py",  # a file
        "str_replace_editor(view): src/importer/reader.py",  # tool(action): telling argument
        "web_search: struct unpack 64-bit length python",
        "python -m importer big.bin → exit 1",  # command + exit code
        "cargo_build: command=cargo build → exit 101",  # any tool's exit code
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
    assert count_text(text) <= target  # o200k_base: what compress counts the summary with


@pytest.mark.parametrize("target", [64, 100, 250, 600, 1_000, 4_096])
def test_real_sessions_fit_the_real_tokenizer(target: int) -> None:
    """Dense text (paths, code, CJK) is counted with o200k_base, not estimated."""
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    for span in (example[2:114], example[1:], synthetic_session(600, seed=target)[2:]):
        text = summarize(span, target=target)
        assert count_text(text) <= target
        if target <= 1_000:  # each span holds more than this: the room is used (at 64
            # tokens, but for a gap smaller than any whole item)
            assert count_text(text) >= target * 0.75


def test_first_ask_survives_trimming() -> None:
    messages = session() + [
        {"role": "user", "content": f"follow-up question number {i} " * 5} for i in range(300)
    ]
    text = summarize(messages, target=120)
    assert "Ticket IMP-48213" in text
    assert count_text(text) <= 120


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
    # Files that differ only in a number are one range, counted over the whole span.
    assert "f0.py … f199.py ×200" in text
    assert "read ×200: f" in text and "… f199.py" in text  # one line for the tool


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


def test_long_outputs_are_read_whole() -> None:
    """An error in the middle of a 100 kB output is found as well as those at its ends."""
    middle = "error: linker hidden in the middle failed at step 4417\n"
    output = (
        "error: first line of the build\n"
        + "x" * 50_000
        + "\n"
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
    assert "hidden in the middle" in text


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


def test_huge_spans_are_read_to_the_end() -> None:
    """Every message is read, however many: the scope counts them all, nothing says
    "details from the newest"; the first ask and a fact of the oldest message survive."""
    messages = session() * 1_000  # 12,000 messages
    messages[2] = tool("c1", "ERROR [E7731] ledger drift at src/jobs/ledger_sync.py:512")
    text = summarize(messages, target=300)
    assert "- 12,000 messages summarized\n" in text
    assert "details from" not in text
    assert "Ticket IMP-48213" in text
    assert "E7731" in text
    assert count_text(text) <= 300


# -- value: what gets the room -------------------------------------------------------------


def reads(paths: list[str], name: str = "read_file") -> list[Message]:
    """An assistant turn per path that reads it, with a source listing as the output."""
    messages: list[Message] = []
    for i, path in enumerate(paths):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call(f"r{i}", name, path=path)]},
            tool(f"r{i}", f"     1\t# {path}\n     2\traise ValueError('x')\n"),
        ]
    return messages


def test_tool_calls_are_one_line_per_tool() -> None:
    paths = [f"orders/module_{i}.py" for i in range(23)]
    messages = [
        *reads(paths),
        {"role": "assistant", "content": None, "tool_calls": [call("g", "grep", pattern="x")]},
        tool("g", "orders/module_1.py:2: raise ValueError('x')"),
    ]
    lines = sections(summarize(messages))["Tool calls"]
    assert lines[0] == "- read_file ×23: orders/module_0.py … orders/module_22.py"  # a range
    assert lines[1:] == ["- grep: x"]


def test_every_tool_used_is_named_while_room_remains() -> None:
    """Many tools, older than the walk reads in detail: those without a line of their own
    are named on one ``also:`` line, which a later fold reads back as tools."""
    messages: list[Message] = []
    for i in range(40):
        name = f"lookup_{chr(97 + i % 26)}{i}"
        messages += [
            {"role": "user", "content": f"Question {i}: what does {name} say?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{i}", name, path=f"src/pkg_{i}/deeply/nested/mod_{i}.py")],
            },
            tool(f"c{i}", f"{name} answered {i}" + " filler" * 400),
            {"role": "assistant", "content": f"It says {i}."},
        ]
    names = {f"lookup_{chr(97 + i % 26)}{i}" for i in range(40)}
    text = summarize(messages, target=1_000)  # the 40 asks come first
    lines = sections(text)["Tool calls"]
    assert lines[-1].startswith("- also: ")
    assert all(name in text for name in names)
    again = summarize(
        [{"role": "user", "content": "Go on."}, {"role": "assistant", "content": "Done."}],
        target=1_000,
        previous=text,
    )
    assert all(name in again for name in names)


def test_files_are_one_line_of_real_paths_most_touched_first() -> None:
    commands = [
        "ls",
        "git blame -L '/def allocate_discount/,+17' orders/pricing.py",
        "python - <<'EOF'\nfrom orders.models import Cart\nimport decimal.getcontext\nEOF",
        "pytest tests/test_pricing.py::test_jpy -x --rootdir=. && git diff v2.14.0 origin/main",
        "ruff check --config=ruff.toml src/ orders/pricing.py:12:5 a.py,b.py c++/x.h '*.py'",
    ]
    messages: list[Message] = []
    for i, command in enumerate(commands):
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"b{i}", "bash", command=command)],
            },
            tool(f"b{i}", "ok"),
        ]
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("l1", "ls", path="."),
                call("l2", "ls", path="orders"),
                call("l3", "grep", pattern="x", path="tests/"),
                call("r1", "read_file", path="Makefile"),
                call("r2", "read_file", path="./orders/pricing.py"),
            ],
        }
    ]
    assert sections(summarize(messages))["Files"] == [
        "- orders/pricing.py ×3, Makefile, ruff.toml, tests/test_pricing.py"
    ]


def test_error_lines_in_what_was_read_are_not_errors() -> None:
    source = (
        '     1\t"""Failed checkouts are stored too (status FAILED with the error code)."""\n'
        '     2\tFAILED = "failed"\n'
        "     3\texcept TimeoutError as error:\n"
    )
    log = "2024-04-18 12:17:55,915 ERROR orders.api [req=5eff] request failed: ORD-4102\n"
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("a", "read_file", path="orders/models.py"),
                call("b", "bash", command="cat logs/app.log | tail -n 5"),
                call("c", "str_replace_editor", command="view", path="orders/app.py"),
                call("d", "read_file", path="missing.py"),
                call("e", "bash", command="python -m pytest -x"),
            ],
        },
        tool("a", source),
        tool("b", log),
        tool("c", "def error_response(error: ServiceError) -> Response:\n    raise OrderError()"),
        tool("d", "Error: [Errno 2] No such file or directory: 'missing.py'"),
        tool("e", "E   KeyError: 'sku'\n=========== 1 failed, 42 passed in 0.88s ===========\n"),
    ]
    assert sections(summarize(messages))["Errors"] == [
        "- Error: [Errno 2] No such file or directory: 'missing.py'",
        "- KeyError: 'sku'",
        "- 1 failed, 42 passed",
    ]


def valuable_session() -> list[Message]:
    """Many reads of many files around one error, one finding and one plan."""
    paths = [f"src/service/deeply/nested/package/module_{i:02}.py" for i in range(40)]
    return [
        {"role": "user", "content": "Fix the 2 failing tests in tests/test_io.py; keep 3 retries."},
        *reads(paths),
        {
            "role": "assistant",
            "content": "The root cause is the retry counter starting at 1 instead of 0.",
            "tool_calls": [call("t", "bash", command="pytest tests/test_io.py")],
        },
        tool(
            "t",
            "E   AssertionError: retries 2 != 3\nFAILED tests/test_io.py::test_retry\nexit code 1",
        ),
        *reads(paths[:10], name="view_file"),
        {"role": "assistant", "content": "I will start the counter at 0 and rerun the tests."},
    ]


@pytest.mark.parametrize("target", [64, 120, 200, 400])
def test_small_targets_spend_the_room_on_what_matters(target: int) -> None:
    text = summarize(valuable_session(), target=target)
    found = sections(text)
    assert count_text(text) <= target
    assert found["User asks"]  # the asks come first, whatever the room
    if target >= 120:
        assert "I will start the counter at 0" in "\n".join(found["Last state"])  # the newest
        assert "Fix the 2 failing tests in tests/test_io.py; keep 3 retries." in text
        assert "I will start the counter at 0 and rerun the tests." in text
        assert "AssertionError: retries 2 != 3" in text
        assert "The root cause is the retry counter starting at 1 instead of 0." in text
    if target >= 200:
        assert "pytest tests/test_io.py → exit 1" in text
    # Tool calls and files, the least valuable, come last and get what is left.
    titles = list(found)
    assert titles[: len(titles) - len({"Files", "Tool calls"} & set(titles))] == [
        title for title in titles if title not in ("Files", "Tool calls")
    ]
    assert len(found.get("Tool calls", [])) <= 2  # one line per tool, however many calls


def test_example_session_keeps_its_distinctive_facts_at_600() -> None:
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    work = summarize(example[2:114], target=600)  # the agent's work, without the user's ask
    assert count_text(work) <= 600
    for fact in (
        "ord_8f3a2c91",  # ids
        "ORD-4102",
        "#412",
        "orders/pricing.py ×10",  # paths, most touched first
        "tests/test_pricing.py",
        'rg -n "\\.quantize\\(" orders → exit 127',  # a command and its exit code
        "Reproduced: the exact shares are 1044, 412.5 and 580.5.",  # a finding
        "One last look at checkout.py",  # the last state
        "read_file ×27",  # reads collapsed
    ):
        assert fact in work
    failure = (  # the failure, by one of its lines at least
        "AssertionError: assert Decimal('2036') == Decimal('2037')",
        "FAILED tests/test_pricing.py::test_line_discounts_add_up_to_order_discount_jpy",
    )
    assert any(line in work for line in failure)
    files = sections(work)["Files"]
    assert len(files) == 1
    for path in files[0][2:].split(", ")[:-1]:
        assert re.fullmatch(r"[\w/.-]+\.\w+(?: ×\d+)?", path), path
    asked = summarize(example[1:116], target=600)  # the user's ask and a follow-up too
    assert count_text(asked) <= 600
    for fact in ("ORD-4102", "11544", "11543", "37 failed checkouts out of 1,184", "3.1%"):
        assert fact in asked  # the numbers the user gave
    assert "Don't touch the Paylane client." in asked


# -- folding in a previous summary ----------------------------------------------------------


def test_previous_digest_is_folded_not_nested() -> None:
    first = summarize(session()[:6])
    second = summarize(session()[6:], previous=first)
    assert second.count("## Scope") == 1
    assert second.count("## User asks") == 1
    assert "12 messages summarized" in second  # 6 + 6
    assert "Ticket IMP-48213" in second  # from the first span
    assert "cargo_build: command=cargo build → exit 101" in second  # from the second span
    assert "summary of" not in second.lower()


def test_folding_is_stable_over_many_rounds() -> None:
    summary: str | None = None
    for _ in range(30):
        summary = summarize(session(), target=400, previous=summary)
    assert summary is not None
    assert summary.count("## Scope") == 1
    assert "360 messages summarized" in summary
    assert count_text(summary) <= 400


def test_repeats_across_folds_add_up() -> None:
    previous = "## Commands\n- make → exit 2 (×4)"
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("x", "bash", command="make")]},
        tool("x", "exit code 2"),
    ]
    assert "make → exit 2 (×5)" in summarize(messages, previous=previous)


def test_grouped_tools_files_and_ids_fold_with_their_counts() -> None:
    first = summarize([*reads(["a.py", "b.py"]), {"role": "user", "content": "see PR #77"}])
    second = summarize(reads(["b.py", "c.py"]), previous=first)
    found = sections(second)
    assert found["Tool calls"] == ["- read_file ×4: c.py, b.py, a.py"]
    assert found["Files"] == ["- b.py ×2, c.py, a.py"]
    assert "- see PR #77" in found["User asks"]  # the ask says it: not listed again
    assert "#77" not in "\n".join(found.get("Identifiers", []))


def test_a_digest_in_the_old_format_is_folded_too() -> None:
    previous = (
        "## Tool calls\n- str_replace_editor(command=view, path=/src/io.py) (×2)\n"
        "## Files\n- src/io.py (×3)\n- README.md\n"
    )
    found = sections(summarize(reads(["src/io.py"]), previous=previous))
    assert found["Files"] == ["- src/io.py ×4, README.md"]
    assert found["Tool calls"] == [
        "- str_replace_editor(command=view, path=/src/io.py) ×2",
        "- read_file: src/io.py",
    ]


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


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
    assert count_text(text) <= target  # o200k_base: what compress counts the summary with
    assert messages == before
    assert (
        ExtractiveSummarizer().summarize(messages, previous=previous, target_tokens=target) == text
    )


# -- the budget, by the real tokenizer -------------------------------------------------------

# Words that make text dense (paths, code, ids, CJK, emoji) or trigger every extractor.
word_st = st.sampled_from(
    [
        "orders/pricing.py",
        "tests/test_pricing.py::test_jpy",
        "ORD-4102",
        "ord_8f3a2c91",
        "Decimal('2037')",
        "割引額が表示されています",
        "🙂",
        "the root cause is",
        "I will",
        "Traceback",
        "ValueError: bad",
        "FAILED",
        "ERROR",
        "exit code: 1",
        "\n",
        "    ",
        ".",
        "x" * 60,
        "3,480",
        '{"k": [1, 2]}',
    ]
)
prose_st = st.lists(word_st, max_size=80).map(" ".join)


@st.composite
def agent_span(draw: st.DrawFn) -> list[Message]:
    span: list[Message] = []
    for turn in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "calls"]))
        if kind != "calls":
            span.append({"role": kind, "content": draw(prose_st)})
            continue
        names = draw(st.lists(st.sampled_from(["bash", "read_file", "grep", "edit"]), max_size=4))
        calls = [
            call(f"t{turn}.{i}", name, command=draw(prose_st), path=draw(word_st))
            for i, name in enumerate(names)
        ]
        span.append({"role": "assistant", "content": draw(prose_st), "tool_calls": calls})
        span += [tool(c["id"], draw(prose_st)) for c in calls]
    return span


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    span=agent_span(),
    target=st.integers(min_value=64, max_value=4_000),
    previous=st.one_of(
        st.none(), prose_st, st.just("## Files\n- a.py ×2, b.py\n## Last state\nok")
    ),
)
def test_the_digest_fits_the_target_by_the_real_tokenizer(
    span: list[Message], target: int, previous: str | None
) -> None:
    text = ExtractiveSummarizer().summarize(span, previous=previous, target_tokens=target)
    assert count_text(text) <= target
