"""Every way the CLI used to print a traceback.

In this process through ``main(argv)``, except where only a real process shows it: a
stream closed at start-up, a reader that goes away, Ctrl-C.

Each case asserts the exit code, exactly one line on stderr, no traceback, and that no
file was left behind (no temporary output, no ``.partial``, no state file) — except the
resume point an interrupted ``compress-dataset`` keeps on purpose.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import condense
from cli_support import (
    HANG_GUARD,
    Finished,
    HeldSummaries,
    run_cli,
    terminal_job,
    wait_until,
)
from condense.formats import to_sharegpt
from condense.testing import FakeProvider
from condense.testing.sessions import synthetic_session

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "examples" / "broken.json"
DEEP = "[" * 100_000 + "]" * 100_000


def run(*args: str, cwd: Path, stdin: str | None = None) -> Finished:
    """``condense ARGS`` in ``cwd``, in this process."""
    return run_cli(*args, cwd=cwd, stdin=stdin)


def run_closed(*args: str, cwd: Path, close: int) -> subprocess.CompletedProcess[str]:
    """``python -m condense ARGS`` in ``cwd``, started without the file descriptor
    ``close`` (0 or 1), as ``<&-`` / ``>&-`` do: only a real process has that."""
    return subprocess.run(
        [sys.executable, "-m", "condense", *args],
        cwd=cwd,
        stdin=None if close == 0 else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL if close == 1 else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=HANG_GUARD,
        check=False,
        preexec_fn=lambda: os.close(close),
    )


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    return stderr.strip()


def files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty working directory (inputs live next to it, so it shows any leftover)."""
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "deep.json").write_text(DEEP)
    (tmp_path / "deep.jsonl").write_text(DEEP + "\n")
    (tmp_path / "broken.json").write_text(BROKEN.read_text())
    return folder


# --- deep nesting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "verb",
    [("validate",), ("compress", "--budget", "100"), ("repair",), ("check",)],
    ids=lambda verb: verb[0],
)
def test_deep_nesting_is_one_line_naming_the_file(work: Path, verb: tuple[str, ...]) -> None:
    output = () if verb[0] in ("validate", "check") else ("-o", "out.json")
    done = run(*verb, "../deep.json", *output, cwd=work)
    assert done.returncode == 2
    line = done.stderr.splitlines()[-1] + "\n"  # an old verb's note comes first
    assert (
        one_line(line) == "condense: error: ../deep.json, line 1: is nested deeper than 128 levels"
    )
    assert files(work) == set()


def test_deep_nesting_in_a_dataset_is_a_rejected_line(work: Path) -> None:
    done = run(
        "compress-dataset", "../deep.jsonl", "--budget", "100", "--quiet", "--workers", "0",
        cwd=work,
    )  # fmt: skip
    assert done.returncode == 1
    assert one_line(done.stderr) == (
        "condense: ../deep.jsonl:1: rejected: nested deeper than 128 levels"
    )
    to_file = run(
        "compress-dataset", "../deep.jsonl", "-o", "out.jsonl", "--budget", "100", "--quiet",
        "--workers", "2", cwd=work,
    )  # fmt: skip
    assert to_file.returncode == 1 and to_file.stderr == ""
    assert files(work) == {"out.jsonl", "out.rejects.jsonl", "out.stats.json"}
    (reject,) = [json.loads(line) for line in (work / "out.rejects.jsonl").read_text().splitlines()]
    assert reject["line"] == 1 and reject["reason"] == "nested deeper than 128 levels"


def test_the_library_refuses_deep_nesting_and_empty_histories() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    message = {"role": "user", "content": [{"type": "text", "text": "x", "extra": deep}]}
    for entry in (condense.validate, condense.repair):
        with pytest.raises(condense.FormatError, match="message 0: is nested deeper"):
            entry([message])  # type: ignore[operator]
        with pytest.raises(condense.InputError, match="holds no message"):
            entry([])  # type: ignore[operator]
    with pytest.raises(condense.FormatError, match="nested deeper"):
        condense.compress([message], budget=100)
    with pytest.raises(condense.InputError, match="not one message object"):
        condense.compress([1, 2, 3], budget=100)


# --- outputs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "verb",
    [("compress", "--budget", "1000"), ("repair",), ("session", "--budget", "1000")],
    ids=lambda v: v[0],
)
def test_a_directory_as_output_fails_before_any_work(work: Path, verb: tuple[str, ...]) -> None:
    (work / "adir").mkdir()
    done = run(*verb, "../broken.json", "-o", "adir", cwd=work)
    assert done.returncode == 2
    line = done.stderr.splitlines()[-1] + "\n"
    assert (
        one_line(line)
        == "condense: error: adir: is a directory; give the name of the file to write"
    )
    assert "→" not in done.stderr and "repaired" not in done.stderr  # no success printed first
    assert files(work) == {"adir"}


@pytest.mark.parametrize(
    "verb",
    [("compress", "../broken.json", "--budget", "1000"), ("repair", "../broken.json"),
     ("compress-dataset", "../deep.jsonl", "--budget", "100")],
    ids=lambda v: v[0],
)  # fmt: skip
def test_an_output_in_a_missing_directory_fails_at_once(work: Path, verb: tuple[str, ...]) -> None:
    done = run(*verb, "-o", "/nonexistent/x.json", cwd=work)
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "condense: error: /nonexistent/x.json: cannot write: the directory /nonexistent does "
        "not exist"
    )
    assert not Path("/nonexistent").exists() and files(work) == set()


# --- closed streams ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "verb",
    [("validate",), ("repair",), ("compress", "--budget", "100"),
     ("compress-dataset", "--budget", "100")],
    ids=lambda v: v[0],
)  # fmt: skip
def test_a_closed_stdin(work: Path, verb: tuple[str, ...]) -> None:
    done = run_closed(verb[0], "-", *verb[1:], cwd=work, close=0)
    assert done.returncode == 2
    assert (
        one_line(done.stderr) == "condense: error: stdin is closed; give an input file instead of -"
    )
    assert files(work) == set()


@pytest.mark.parametrize(
    "verb",
    [("validate", "../broken.json"), ("repair", "../broken.json"),
     ("compress", "../broken.json", "--budget", "100"),
     ("compress-dataset", "../deep.jsonl", "--budget", "100")],
    ids=lambda v: v[0],
)  # fmt: skip
def test_a_closed_stdout(work: Path, verb: tuple[str, ...]) -> None:
    done = run_closed(*verb, cwd=work, close=1)
    assert done.returncode == 2
    assert (
        one_line(done.stderr)
        == "condense: error: stdout is closed; give an output file with -o FILE"
    )
    assert files(work) == set()


def test_a_reader_that_goes_away_is_not_an_error(work: Path) -> None:
    records = "".join(
        json.dumps({"messages": json.loads(BROKEN.read_text())}) + "\n" for _ in range(2000)
    )
    (work.parent / "many.jsonl").write_text(records)
    done = subprocess.run(
        f"{sys.executable} -m condense repair ../many.jsonl --quiet 2>err | head -c 10 >/dev/null; "
        "echo ${PIPESTATUS[0]}",
        shell=True, executable="/bin/bash", cwd=work, capture_output=True, text=True,
        timeout=HANG_GUARD,
    )  # fmt: skip
    assert done.stdout.strip() == "0"
    errors = (work / "err").read_text()
    assert "Traceback" not in errors and "Error" not in errors and "error:" not in errors


# --- serve-fake --------------------------------------------------------------------------


def test_a_port_out_of_range(work: Path) -> None:
    done = run("serve-fake", "--port", "99999", cwd=work)
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "condense serve-fake: error: argument --port: a port is 0 to 65535, got 99999 "
        "(see 'condense serve-fake --help')"
    )


def test_a_busy_port(work: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("serve-fake", "--port", str(port), cwd=work)
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        f"condense: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


@pytest.mark.parametrize("host", ["192.0.2.1", "no-such-host.invalid"])  # TEST-NET-1: not ours
def test_an_address_not_on_this_machine(work: Path, host: str) -> None:
    done = run("serve-fake", "--host", host, cwd=work)
    assert done.returncode == 2
    assert one_line(done.stderr).startswith(f"condense: error: cannot listen on {host}:0: ")


# --- Ctrl-C ------------------------------------------------------------------------------
#
# Each run is interrupted where the test chooses and while it cannot have finished: a
# dataset run while summaries it asked for are held, a compress run while its stdin is
# still open. Nothing depends on how fast the machine is.

RECORDS = 32
HOLDS = (9, 17, 25)  # lines: three interrupts; each run gets at least a few lines further


def group_alive(group: int) -> list[str]:
    """The processes of ``group`` still running (zombies waiting for init excluded)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(command)
    return alive


def test_ctrl_c_stops_a_dataset_run_cleanly_again_and_again(tmp_path: Path) -> None:
    """A terminal's Ctrl-C (SIGINT to the whole process group) three times in a row, each
    while the run waits for a summary: each time one line, no traceback, every worker
    gone when the command is, the resume point kept; each --resume goes on from there,
    and the last one finishes the exact output of an uninterrupted run."""
    source = tmp_path / "in.jsonl"
    with source.open("w") as handle:
        for seed in range(RECORDS):
            session = synthetic_session(20, seed=seed, output_chars=300)  # over the budget
            handle.write(json.dumps({"id": seed, "conversations": to_sharegpt(session)}) + "\n")
    HeldSummaries.tag_lines(source)
    held = HeldSummaries()
    (tmp_path / "run").mkdir()
    out = tmp_path / "run" / "out.jsonl"
    partial = out.with_name(".out.jsonl.partial")
    state = out.with_name(".out.jsonl.condense-state.json")
    with FakeProvider(responder=held) as fake:
        summaries = ["--summarizer", "openai", "-O", f"base_url={fake.base_url}", "-O", "model=m"]
        # more summaries at once than records: a held one never keeps another waiting
        options = ["--budget", "1000", "--concurrency", str(2 * RECORDS), *summaries]
        uninterrupted = tmp_path / "uninterrupted.jsonl"
        whole = run_cli(
            "compress-dataset", str(source), "-o", str(uninterrupted), "--workers", "0",
            "--quiet", *options,
        )  # fmt: skip
        assert whole.returncode == 0, whole.stderr
        command = [
            sys.executable, "-m", "condense", "compress-dataset", str(source), "-o", str(out),
            "--workers", "2", "--checkpoint-every", "0.05", *options,
        ]  # fmt: skip
        written = lines = 0
        for attempt, first_held in enumerate(HOLDS):
            held.hold_from(first_held)
            child = subprocess.Popen(
                command + (["--resume"] if attempt else []),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                preexec_fn=terminal_job,
            )
            wait_until(
                lambda done=written: (
                    held.held.is_set() and partial.exists() and partial.stat().st_size > done
                ),
                "the run wrote more and waits for a held summary",
            )
            os.killpg(child.pid, signal.SIGINT)
            stdout, stderr = child.communicate(timeout=HANG_GUARD)
            assert child.returncode == 130, stderr
            assert stdout == ""
            assert one_line(stderr) == (
                "condense: interrupted; run the same command with --resume to continue"
            )
            group = child.pid
            assert not [p for p in group_alive(group) if "spawn_main" in p]  # no worker left
            wait_until(lambda group=group: not group_alive(group), "the whole group is gone")
            assert state.exists() and not out.exists()
            assert [p.name for p in out.parent.iterdir() if not p.name.startswith(".")] == []
            done = json.loads(state.read_text())
            assert lines < done["line"] < first_held  # nothing held was written
            assert done["output_bytes"] > written and done["offset"] > 0
            written, lines = done["output_bytes"], done["line"]
        held.release()
        # the last one here: how many workers a run has is not part of what it resumes
        finished = run_cli(*command[3:], "--workers", "0", "--resume", "--quiet")
    assert finished.returncode == 0, finished.stderr
    assert out.read_bytes() == uninterrupted.read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "out.jsonl", "out.rejects.jsonl", "out.stats.json",
    ]  # fmt: skip


def test_ctrl_c_during_compress_leaves_no_partial_output(tmp_path: Path) -> None:
    """Ctrl-C once the output is being written, while more input is still to come."""
    record = json.dumps({"messages": synthetic_session(200, seed=1)})
    out = tmp_path / "out.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-m", "condense", "compress", "-", "--budget", "3000", "-o", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=terminal_job,
    )  # fmt: skip
    assert child.stdin is not None
    child.stdin.write((record + "\n") * 3)
    child.stdin.flush()  # and left open: the run cannot end before it is interrupted
    wait_until(
        lambda: any(p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith(".out")),
        "the output is being written",
    )
    os.killpg(child.pid, signal.SIGINT)
    _, stderr = child.communicate(timeout=HANG_GUARD)
    assert child.returncode == 130
    assert one_line(stderr) == "condense: interrupted"
    assert list(tmp_path.iterdir()) == []
