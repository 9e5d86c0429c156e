"""The command line: verbs, options, streams, reports, modes.

In this process through ``main(argv)``; in a real subprocess only where a process is the
point (the installed command, a pipe read record by record, a terminal).
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

import condense
from cli_support import HANG_GUARD
from cli_support import run_cli as run
from condense import validate
from condense.testing.sessions import synthetic_session

NEXT_ASK = {"role": "user", "content": "Thanks. What is left to do?"}

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "examples" / "broken.json"
GOOD = {"messages": [{"role": "user", "content": "hi"}]}


def jsonl(*records: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


# --- verbs, names, version -------------------------------------------------------------


def test_help_lists_the_library_verbs_and_hides_the_old_ones() -> None:
    done = run("--help")
    assert done.returncode == 0
    listed = done.stdout.split("COMMAND", 1)[1]
    for verb in ("compress", "validate", "repair", "compress-dataset", "serve-fake"):
        assert f"\n    {verb}" in listed, verb
    for old in ("session", "check", "dataset "):
        assert f"\n    {old}" not in listed, old
    dataset_help = run("compress-dataset", "--help").stdout
    assert "--budget" in dataset_help and "--tail-turns" in dataset_help
    assert "--max-attempts" in dataset_help and "-O KEY=VALUE" in dataset_help
    for old in ("--target-tokens", "--keep-last", "--retries"):
        assert old not in dataset_help


def test_version() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"condense {condense.__version__}"


def test_the_old_verbs_and_options_still_work_for_one_release(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    checked = run("check", str(good))
    assert checked.returncode == 0
    assert "'check' is now 'validate'" in checked.stderr
    session = run("session", str(good), "--budget", "100", "-o", str(tmp_path / "s.json"))
    assert session.returncode == 0 and "'session' is now 'compress'" in session.stderr
    source = tmp_path / "in.jsonl"
    source.write_text(jsonl({"conversations": [{"from": "human", "value": "hi"}]}))
    old = run(
        "dataset", str(source), "-o", str(tmp_path / "o.jsonl"), "--target-tokens", "100",
        "--keep-last", "2", "--retries", "0", "--workers", "0", "--json",
    )  # fmt: skip
    assert old.returncode == 0, old.stderr
    assert json.loads(old.stdout)["target_tokens"] == 100


def test_a_bad_budget_is_one_message_for_every_command_and_value() -> None:
    said = {
        (verb, value): run(verb, str(BROKEN), "--budget", value).stderr
        for verb in ("compress", "compress-dataset")
        for value in ("0", "-1")
    }
    for (verb, value), stderr in said.items():
        assert stderr == (
            f"condense {verb}: error: argument --budget: expected a positive whole number, "
            f"got '{value}' (see 'condense {verb} --help')\n"
        )


def test_the_budget_is_required() -> None:
    done = run("compress", str(BROKEN))
    assert done.returncode == 2
    assert done.stderr == "condense: error: the option --budget is required\n"


def test_the_installed_command_is_main_in_a_real_process() -> None:
    """The console script of ``[project.scripts]`` and ``python -m condense``, each in a
    real process: main's exit code, the data on stdout, the report on stderr."""
    scripts = sysconfig.get_path("scripts")
    installed = shutil.which("condense", path=os.pathsep.join([scripts, os.environ["PATH"]]))
    assert installed, "the condense command is not installed (pip install -e .)"
    for command in ([installed], [sys.executable, "-m", "condense"]):
        done = subprocess.run(
            [*command, "validate", str(BROKEN)], capture_output=True, text=True,
            timeout=HANG_GUARD, check=False,
        )  # fmt: skip
        assert done.returncode == 1, (command, done.stderr)
        assert "orphan_tool_result" in done.stdout
        assert done.stderr.count("\n") == 1 and "violation(s)" in done.stderr


# --- validate ----------------------------------------------------------------------------


def test_validate_exit_codes_and_provider_text(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert run("validate", str(good)).returncode == 0
    broken = run("validate", str(BROKEN))
    assert broken.returncode == 1
    assert "orphan_tool_result" in broken.stdout and "would answer" in broken.stdout
    assert broken.stderr.count("\n") == 1 and "violation(s)" in broken.stderr


def test_validate_json_is_one_object_per_violation() -> None:
    done = run("validate", str(BROKEN), "--provider", "anthropic", "--json")
    found = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1 and done.stderr == ""
    assert {"index", "code", "detail", "provider_error", "source", "line"} <= set(found[0])
    assert found[0]["provider_error"] == 'messages: first message must use the "user" role'


@pytest.mark.parametrize(
    ("content", "where"),
    [("[1, 2", "bad.json, line 1"), ("", "bad.json: is empty"), ("\xff", "bad.json")],
    ids=["truncated", "empty", "binary"],
)
def test_an_unreadable_document_exits_2_naming_the_place(
    tmp_path: Path, content: str, where: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content.encode("latin-1"))
    done = run("validate", str(path))
    assert done.returncode == 2
    assert where in done.stderr and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_validate_jsonl_reports_a_bad_line_and_goes_on(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    broken = {"messages": json.loads(BROKEN.read_text())}
    source.write_text(jsonl(GOOD, "{not json", broken, GOOD))
    done = run("validate", str(source))
    assert done.returncode == 1
    assert f"{source}:2: invalid JSON" in done.stdout
    assert f"{source}:3: message" in done.stdout  # the record after the bad line is checked
    assert done.stderr.strip().endswith("1 unreadable line(s)")
    assert "3 history(ies) checked" in done.stderr


# --- repair ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["strict", "anthropic", "mistral"])
def test_repair_from_stdin_to_stdout(provider: str) -> None:
    done = run("repair", "-", "--provider", provider, stdin=BROKEN.read_text())
    assert done.returncode == 0, done.stderr
    healed: list[Any] = json.loads(done.stdout)
    assert validate(healed, provider=provider) == []
    assert "drop" in done.stderr and "orphan_tool_result" in done.stderr


def test_repair_jsonl_record_by_record_with_a_bad_line(tmp_path: Path) -> None:
    records = [{"id": i, "messages": json.loads(BROKEN.read_text())} for i in range(3)]
    source = tmp_path / "in.jsonl"
    source.write_text(jsonl(records[0], "[1, 2", records[1], records[2]))
    out = tmp_path / "out.jsonl"
    done = run("repair", str(source), "-o", str(out), "--json")
    assert done.returncode == 1, done.stderr  # a line was rejected
    lines = out.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [0, 1, 2]
    assert all(validate(json.loads(line)["messages"]) == [] for line in lines)
    changes = [json.loads(line) for line in done.stderr.splitlines()]
    assert {c["line"] for c in changes} == {1, 3, 4}
    dropped = [c for c in changes if c["action"] == "drop" and c["code"] == "orphan_tool_result"]
    assert len(dropped) == 3 and dropped[0]["after"] is None
    assert dropped[0]["before"]["tool_call_id"] == "call_zzz"  # the message travels whole
    rewritten = next(c for c in changes if c["action"] == "rewrite")
    assert rewritten["before"] != rewritten["after"] is not None
    (rejected,) = [json.loads(x) for x in (tmp_path / "out.rejects.jsonl").read_text().splitlines()]
    assert rejected == {
        "source": str(source),
        "line": 2,
        "reason": rejected["reason"],
        "text": "[1, 2",
    }


def test_repair_show_changes_prints_the_dropped_message() -> None:
    done = run("repair", str(BROKEN), "--show-changes", "-o", "-")
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    drops = [i for i, line in enumerate(lines) if ": drop message" in line]
    assert all(lines[i + 1].startswith("    - {") for i in drops)
    assert "tool" in {json.loads(lines[i + 1][6:])["role"] for i in drops}
    assert lines[-1].startswith("condense: repaired 1 history(ies)")


def test_repair_streams_one_record_at_a_time() -> None:
    """Each record's output arrives before the next input line is even written: the
    whole input is never held (memory stays flat however long it is)."""
    record = {"messages": json.loads(BROKEN.read_text())}
    with subprocess.Popen(
        [sys.executable, "-m", "condense", "repair", "-", "--format", "openai", "--quiet"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as child:
        assert child.stdin is not None and child.stdout is not None
        for number in range(3):
            child.stdin.write(json.dumps({**record, "n": number}) + "\n")
            child.stdin.flush()
            assert json.loads(child.stdout.readline())["n"] == number
        child.stdin.close()
        assert child.wait(timeout=HANG_GUARD) == 0


# --- compress ----------------------------------------------------------------------------


def test_compress_keeps_the_input_format_and_reports_everything(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    # a new ask ends the loop: a running turn is never reduced (condense.turns)
    source.write_text(json.dumps([*synthetic_session(120, seed=4), NEXT_ASK]))
    out = tmp_path / "out.json"
    done = run("compress", str(source), "--budget", "6000", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("\n") == 1 and "→" in done.stderr
    assert validate(json.loads(out.read_text())) == []
    report = run("compress", str(source), "--budget", "6000", "-o", "-", "--json")
    record = json.loads(report.stderr)
    assert record["fits"] is True and record["tokens_after"] <= 6000 < record["tokens_before"]
    assert record["summary"] and isinstance(record["summary"], str)
    summarized = [unit for unit in record["reduced"] if unit["action"] == "summarized"]
    assert summarized and {"kind", "start", "stop"} <= set(summarized[0])
    shown = run("compress", str(source), "--budget", "6000", "-o", "-", "--show-changes")
    assert f"{source}:1: messages " in shown.stderr and "unit(s)): summarized" in shown.stderr
    assert f"{source}:1: summary:\n    " in shown.stderr


def test_compress_keeps_anthropic_format(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    example = ROOT / "examples" / "session_anthropic.json"
    done = run("compress", str(example), "--budget", "8000", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert set(json.loads(out.read_text())) >= {"system", "messages"}
    assert run("validate", str(out), "--provider", "anthropic").returncode == 0


def test_compress_repairs_are_change_records_with_the_message() -> None:
    done = run("compress", str(BROKEN), "--budget", "5000", "-o", "-", "--json")
    record = json.loads(done.stderr)
    dropped = [c["before"] for c in record["repairs"] if c["action"] == "drop"]
    assert {"role": "tool", "tool_call_id": "call_zzz"}.items() <= dropped[-1].items()


def test_compress_jsonl_streams_and_ends_with_one_total(tmp_path: Path) -> None:
    big = {"messages": [*synthetic_session(80, seed=2), NEXT_ASK]}
    source = tmp_path / "in.jsonl"
    source.write_text(jsonl(GOOD, big, '{"messages": "no list"}', GOOD))
    out = tmp_path / "out.jsonl"
    done = run("compress", str(source), "--budget", "3000", "-o", str(out))
    assert done.returncode == 1  # one line rejected
    assert len(out.read_text().splitlines()) == 3
    assert done.stderr.splitlines() == [
        done.stderr.splitlines()[0],
    ] and done.stderr.startswith("condense: compressed 3 history(ies) to 3,000 tokens: 3 fit")
    assert "1 rejected (see" in done.stderr
    assert (tmp_path / "out.rejects.jsonl").read_text().count("\n") == 1


def test_strict_budget_exits_1_and_still_writes_the_best_effort(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    system = {"role": "system", "content": "rule " * 2000}
    source.write_text(json.dumps([system, {"role": "user", "content": "x"}]))
    done = run("compress", str(source), "--budget", "100", "--strict-budget", "-o", "-")
    assert done.returncode == 1
    assert json.loads(done.stdout)


def test_summarizer_mistakes_fail_before_any_input_is_read() -> None:
    typo = run("compress", "no/such/file.json", "--budget", "100", "--summarizer", "extractiv")
    assert typo.returncode == 2
    assert typo.stderr == (
        "condense: error: unknown summarizer 'extractiv'; known: extractive, openai\n"
    )
    option = run("compress", str(BROKEN), "--budget", "100", "-O", "colour=blue")
    assert option.returncode == 2 and "does not take these options" in option.stderr
    pair = run("compress", str(BROKEN), "--budget", "100", "-O", "colour")
    assert pair.returncode == 2 and "-O expects KEY=VALUE" in pair.stderr


# --- files -------------------------------------------------------------------------------


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_the_mode_the_umask_gives(tmp_path: Path, umask: int, mode: int) -> None:
    out = tmp_path / "healed.json"
    done = run("repair", str(BROKEN), "-o", str(out), umask=umask)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_replacing_a_file_keeps_its_mode(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_text(BROKEN.read_text())
    history.chmod(0o640)
    done = run("repair", str(history), "-o", str(history))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(history.stat().st_mode) == 0o640
    assert validate(json.loads(history.read_text())) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.json"]


def test_a_long_input_shows_progress_on_a_terminal_then_one_total(tmp_path: Path) -> None:
    source = tmp_path / "many.jsonl"
    source.write_text(jsonl(*[{"messages": json.loads(BROKEN.read_text())}] * 300))
    controller, terminal = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "condense", "validate", str(source)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert child.wait(timeout=HANG_GUARD) == 1
    text = shown.decode("utf-8", "replace")
    assert "condense validate" in text and "300 record(s)" in text  # the bar, with a count
    last = text.rstrip().rsplit("\n", 1)[-1]
    total = (
        r"condense: 300 history\(ies\) checked against strict \([^)]*\): \d+ violation\(s\) in 300 "
    )
    assert re.search(total + r"history\(ies\)$", last), last
    assert "Traceback" not in text
