"""Worker processes change how fast a dataset is written, never what is written.

Workers of ``condense compress-dataset`` start as copies of the command (``fork``) when
it runs one thread, and are ``spawn``ed otherwise (a library caller with threads of its
own). Whatever way they start, and however many there are, the output, the rejects and
the statistics are those of the same run in one process, byte for byte, on real
third-party records (``tests/data/corpus``: OpenAI and ShareGPT files, bad lines
included) and on long generated agent sessions, at a budget that compresses some
records and passes others through. Only a real command shows the forked path: the test
process may run threads of its own, and then workers are spawned.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from condense.datasets import DatasetOptions, compress_dataset
from condense.datasets.local import can_fork
from condense.datasets.runner import (
    FORKED_WORKERS_FROM_BYTES,
    WORKERS_FROM_BYTES,
    default_workers,
)
from condense.formats import to_sharegpt
from condense.testing.sessions import synthetic_session
from corpus import corpus_files

BUDGET = 2_000
TIMING = ("wall_time_s", "records_per_s")


def mixed_dataset(path: Path) -> int:
    """Every corpus record, a line that is not JSON, and generated sessions long enough
    to be summarized; returns the number of lines."""
    lines = [raw for file in corpus_files() for raw in file.read_bytes().splitlines()]
    lines.append(b"{not json")
    for seed in range(8):
        session = synthetic_session(30 + 10 * seed, seed=seed)
        record = {"id": f"generated-{seed}", "conversations": to_sharegpt(session)}
        lines.append(json.dumps(record, ensure_ascii=False).encode())
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return len(lines)


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``condense compress-dataset`` as a user runs it (one thread: workers fork)."""
    return subprocess.run(
        [sys.executable, "-m", "condense", "compress-dataset", *args, "--budget", str(BUDGET)],
        input=stdin,
        capture_output=True,
        timeout=600,
    )


def statistics(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text())
    for key in TIMING:
        report.pop(key)
    return report


def test_forked_workers_write_what_one_process_writes(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    lines = mixed_dataset(source)
    outputs = {}
    for workers in ("0", "2", "3"):
        out = tmp_path / f"w{workers}" / "out.jsonl"
        out.parent.mkdir()
        done = run(str(source), "-o", str(out), "--workers", workers, "-q")
        assert done.returncode == 1, done.stderr  # the bad line is rejected
        outputs[workers] = (
            out.read_bytes(),
            out.with_name("out.rejects.jsonl").read_bytes(),
            statistics(out.with_name("out.stats.json")),
        )
    alone = outputs["0"]
    assert outputs["2"] == alone
    assert outputs["3"] == alone
    report = alone[2]
    assert report["lines"] == lines
    assert report["compressed"] > 0 and report["passed_under_target"] > 0
    assert report["rejected"] == 1


def test_forked_workers_read_stdin_and_write_stdout_once(tmp_path: Path) -> None:
    """A copy of the command closes its stdin and flushes its standard streams when it
    exits: the command still reads all of its stdin, and what waited in its buffers
    does not come out twice, nor anything of a worker's (stdin: workers by default)."""
    source = tmp_path / "in.jsonl"
    mixed_dataset(source)
    out = tmp_path / "out.jsonl"
    assert run(str(source), "-o", str(out), "--workers", "0", "-q").returncode == 1
    rejects = ("--rejects", str(tmp_path / "r.jsonl"))
    streamed = run(str(source), "--workers", "2", "-q", *rejects)
    assert streamed.returncode == 1, streamed.stderr
    assert streamed.stdout == out.read_bytes()
    piped = run("-", "-q", *rejects, stdin=source.read_bytes())
    assert piped.returncode == 1, piped.stderr
    assert piped.stdout == out.read_bytes()


def test_spawned_workers_write_what_one_process_writes(tmp_path: Path) -> None:
    """A library caller with a thread of its own gets spawned workers: same output."""
    source = tmp_path / "in.jsonl"
    mixed_dataset(source)
    options = DatasetOptions(target_tokens=BUDGET)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="the caller's own thread")
    other.start()
    try:
        assert not can_fork()
        compress_dataset(source, tmp_path / "spawned.jsonl", options=options, workers=2)
    finally:
        stop.set()
        other.join()
    compress_dataset(source, tmp_path / "alone.jsonl", options=options, workers=0)
    assert (tmp_path / "spawned.jsonl").read_bytes() == (tmp_path / "alone.jsonl").read_bytes()
    assert statistics(tmp_path / "spawned.stats.json") == statistics(tmp_path / "alone.stats.json")


def test_a_command_forks_its_workers_and_a_threaded_caller_does_not() -> None:
    probe = (
        "import threading\n"
        "from condense.datasets.local import can_fork\n"
        "alone = can_fork()\n"
        "stop = threading.Event()\n"
        "threading.Thread(target=stop.wait).start()\n"
        "print(alone, can_fork())\n"
        "stop.set()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    linux = sys.platform.startswith("linux")  # elsewhere workers are always spawned
    assert done.stdout.split() == [str(linux), "False"], done.stderr


def test_forked_workers_start_on_smaller_inputs_than_spawned_ones() -> None:
    assert FORKED_WORKERS_FROM_BYTES < WORKERS_FROM_BYTES
    assert default_workers(FORKED_WORKERS_FROM_BYTES - 1, forked=True) == 0
    assert default_workers(FORKED_WORKERS_FROM_BYTES, forked=True) >= 1
    assert default_workers(FORKED_WORKERS_FROM_BYTES, forked=False) == 0
