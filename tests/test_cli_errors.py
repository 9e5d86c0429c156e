"""Every way the CLI used to print a traceback, through a real subprocess.

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
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import condense
from condense.datasets import DatasetOptions, compress_dataset
from condense.formats import to_sharegpt
from condense.testing.sessions import synthetic_session

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "examples" / "broken.json"
DEEP = "[" * 100_000 + "]" * 100_000


def run(
    *args: str,
    cwd: Path,
    close: int | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m condense ARGS`` in ``cwd``; ``close``: a file descriptor (0 or 1) the
    child starts without, as ``<&-`` / ``>&-`` do."""

    def closed() -> None:
        if close is not None:
            os.close(close)

    return subprocess.run(
        [sys.executable, "-m", "condense", *args],
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None or close == 0 else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL if close == 1 else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=closed if close is not None else None,
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
    done = run(verb[0], "-", *verb[1:], cwd=work, close=0)
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
    done = run(*verb, cwd=work, close=1)
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
        shell=True, executable="/bin/bash", cwd=work, capture_output=True, text=True, timeout=60,
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


@pytest.fixture(scope="module")
def trajectories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A dataset that takes a few seconds with two workers, and its expected output."""
    folder = tmp_path_factory.mktemp("ctrl-c")
    source = folder / "in.jsonl"
    with source.open("w") as handle:
        for seed in range(1500):  # long enough that a resumed run is still going when hit
            session = synthetic_session(60, seed=seed, output_chars=600)
            handle.write(json.dumps({"id": seed, "conversations": to_sharegpt(session)}) + "\n")
    compress_dataset(
        source, folder / "expected.jsonl", options=DatasetOptions(target_tokens=2000), workers=0
    )
    return source, (folder / "expected.jsonl").read_bytes()


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


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_ctrl_c_stops_a_dataset_run_cleanly_again_and_again(
    trajectories: tuple[Path, bytes], tmp_path: Path
) -> None:
    """A terminal's Ctrl-C (SIGINT to the whole process group) three times in a row: each
    time one line, no traceback, every worker gone at once, the resume point kept; each
    --resume goes on from there, and the last one finishes the exact expected output."""
    source, expected = trajectories
    out = tmp_path / "out.jsonl"
    partial = tmp_path / ".out.jsonl.partial"
    state = tmp_path / ".out.jsonl.condense-state.json"
    command = [
        sys.executable, "-m", "condense", "compress-dataset", str(source), "-o", str(out),
        "--budget", "2000", "--workers", "2", "--checkpoint-every", "0.1",
    ]  # fmt: skip
    progress = 0
    for attempt in range(3):
        child = subprocess.Popen(
            command + (["--resume"] if attempt else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own group, as a terminal's job is
        )
        grown = wait_for(
            lambda done=progress: partial.exists() and partial.stat().st_size > done, 30
        )
        assert grown and child.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.2 * attempt)
        os.killpg(child.pid, signal.SIGINT)
        started = time.monotonic()
        stdout, stderr = child.communicate(timeout=15)  # no hang
        assert time.monotonic() - started < 5
        assert child.returncode == 130, stderr
        assert stdout == ""
        assert one_line(stderr) == (
            "condense: interrupted; run the same command with --resume to continue"
        )
        group = child.pid
        assert wait_for(lambda group=group: not group_alive(group), 3), group_alive(group)
        assert state.exists() and not out.exists()
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == []
        done = json.loads(state.read_text())
        assert done["offset"] > 0 and done["output_bytes"] >= progress
        progress = done["output_bytes"]
    finished = subprocess.run(
        [*command, "--resume", "--quiet"], capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 0, finished.stderr
    assert out.read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "out.jsonl", "out.rejects.jsonl", "out.stats.json",
    ]  # fmt: skip


def test_ctrl_c_during_compress_leaves_no_partial_output(tmp_path: Path) -> None:
    record = json.dumps({"messages": synthetic_session(200, seed=1)})
    source = tmp_path / "many.jsonl"
    source.write_text((record + "\n") * 200)
    out = tmp_path / "out.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-m", "condense", "compress", str(source), "--budget", "3000",
         "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert wait_for(lambda: any(p.name.startswith(".out.jsonl.") for p in tmp_path.iterdir()), 30)
    time.sleep(0.3)
    os.killpg(child.pid, signal.SIGINT)
    _, stderr = child.communicate(timeout=15)
    assert child.returncode == 130
    assert one_line(stderr) == "condense: interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.jsonl"]
