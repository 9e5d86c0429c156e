"""Writing results in order, atomically, with a resume point that survives SIGKILL.

Each output file is written as a hidden ``.NAME.partial`` next to it and renamed into
place only when complete (keeping the mode of a file it replaces, see
:mod:`condense._files`), so a reader never sees half a file; the rejects file likewise.
Every couple of seconds the sink flushes and fsyncs what it wrote
and then saves a small state file (atomically too): which job, the input offset and line
number reached, how many bytes of output and rejects belong to those lines, and the
statistics so far.

``--resume`` reads that state, checks that the input and the options are the same,
truncates the partial files to the saved sizes, and reading goes on from the saved
offset. Lines written after the last state are simply written again, identically, since
every record's result depends only on the record and the options.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from condense import _files
from condense.datasets.record import RecordResult, Status
from condense.datasets.sources import Job, Line
from condense.datasets.stats import Aggregate
from condense.exceptions import InputError

_VERSION = 1
CHECKPOINT_SECONDS = 2.0


def partial_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.partial")


def state_path(output: Path) -> Path:
    return output.with_name(f".{output.name}.condense-state.json")


class Sink:
    """Writes each line's output in input order; see the module docstring."""

    def __init__(
        self,
        jobs: list[Job],
        *,
        output: Path | None,
        rejects: Path | None,
        fingerprint: str,
        checkpoint_seconds: float = CHECKPOINT_SECONDS,
    ) -> None:
        self.jobs = jobs
        self.rejects_path = rejects
        self.state_file = state_path(output) if output is not None else None
        self.fingerprint = fingerprint
        self.checkpoint_seconds = checkpoint_seconds
        self.stats = Aggregate()
        self.job = 0
        self.offset = 0
        self.line = 0
        self._out: BinaryIO | None = None
        self._rejects: BinaryIO | None = None
        self._last_checkpoint = self._started = time.monotonic()

    def elapsed(self) -> float:
        """Wall time of this run and of the runs it resumed."""
        return self.stats.elapsed + time.monotonic() - self._started

    # -- starting ----------------------------------------------------------------------

    def start(self, *, resume: bool) -> bool:
        """Open the outputs; with ``resume``, continue an interrupted run. Returns True
        when a run was resumed."""
        state = self._load_state() if resume else None
        if resume and self.state_file is None:
            raise InputError("--resume needs an output file or directory (-o)")
        if state is not None:
            self.job, self.offset, self.line = state["job"], state["offset"], state["line"]
            self.stats = Aggregate.from_state(state["stats"])
            for done in self.jobs[: self.job]:
                if done.target is not None and not done.target.exists():
                    raise InputError(
                        f"cannot resume: {done.target} of the interrupted run is missing; "
                        "run again without --resume"
                    )
        self._open_job(self.job, keep=state["output_bytes"] if state else 0)
        if self.rejects_path is not None:
            self._rejects = _open_partial(
                partial_path(self.rejects_path), keep=state["rejects_bytes"] if state else 0
            )
        return state is not None

    def _load_state(self) -> dict[str, Any] | None:
        if self.state_file is None or not self.state_file.exists():
            return None
        try:
            state: dict[str, Any] = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise InputError(
                f"cannot resume: the state file {self.state_file} is unreadable; "
                "run again without --resume"
            ) from None
        if state.get("version") != _VERSION or state.get("fingerprint") != self.fingerprint:
            raise InputError(
                "cannot resume: the input files or the options changed since the interrupted "
                "run; run again without --resume to start over"
            )
        return state

    def _open_job(self, index: int, *, keep: int) -> None:
        self._out = None
        target = self.jobs[index].target if index < len(self.jobs) else None
        if target is None:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        self._out = _open_partial(partial_path(target), keep=keep)

    # -- writing -----------------------------------------------------------------------

    def write(self, line: Line, result: RecordResult) -> None:
        """Write one line's result (lines must arrive in input order)."""
        while line.job > self.job:
            self._finish_job()
        if result.status is Status.REJECTED:
            self._reject(line, result.reason or "rejected")
        else:
            data = line.raw if result.line is None else result.line
            if self._out is None:
                sys.stdout.buffer.write(data + b"\n")
            else:
                self._out.write(data + b"\n")
        self.stats.add(result)
        self.offset, self.line = line.end, line.number
        if time.monotonic() - self._last_checkpoint >= self.checkpoint_seconds:
            self.checkpoint()

    def _reject(self, line: Line, reason: str) -> None:
        source = self.jobs[line.job].name
        if self._rejects is None:
            print(f"condense: {source}:{line.number}: rejected: {reason}", file=sys.stderr)
            return
        entry = {
            "source": source,
            "line": line.number,
            "reason": reason,
            "text": line.raw.decode("utf-8", "replace"),
        }
        self._rejects.write(json.dumps(entry, ensure_ascii=False).encode() + b"\n")

    def checkpoint(self) -> None:
        """Make everything written so far durable, then record how far that is."""
        self._last_checkpoint = time.monotonic()
        if self.state_file is None:
            sys.stdout.flush()
            return
        output_bytes = _sync(self._out)
        rejects_bytes = _sync(self._rejects)
        state = {
            "version": _VERSION,
            "fingerprint": self.fingerprint,
            "job": self.job,
            "offset": self.offset,
            "line": self.line,
            "output_bytes": output_bytes,
            "rejects_bytes": rejects_bytes,
            "stats": {**self.stats.to_state(), "elapsed": self.elapsed()},
        }
        _atomic_write(self.state_file, json.dumps(state).encode())

    def _finish_job(self) -> None:
        target = self.jobs[self.job].target
        if self._out is not None and target is not None:
            _sync(self._out)
            self._out.close()
            _files.replace(partial_path(target), target)
        self.job += 1
        self.offset = self.line = 0
        self._open_job(self.job, keep=0)
        self.checkpoint()

    def finish(self) -> dict[str, Any]:
        """Put every output in place, drop the state file; returns the final report."""
        while self.job < len(self.jobs):
            self._finish_job()
        if self._rejects is not None and self.rejects_path is not None:
            _sync(self._rejects)
            self._rejects.close()
            _files.replace(partial_path(self.rejects_path), self.rejects_path)
        if self.state_file is not None:
            with contextlib.suppress(FileNotFoundError):
                self.state_file.unlink()
        sys.stdout.flush()
        return self.stats.report(elapsed=self.elapsed() - self.stats.elapsed)

    def close(self) -> None:
        """Stop without finishing (interrupted): save the resume point and the time."""
        with contextlib.suppress(OSError, ValueError):
            self.checkpoint()
        for handle in (self._out, self._rejects):
            if handle is not None:
                handle.close()


def _open_partial(path: Path, *, keep: int) -> BinaryIO:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "r+b" if keep and path.exists() else "wb")  # noqa: SIM115
    if keep:
        if os.path.getsize(path) < keep:
            handle.close()
            raise InputError(
                f"cannot resume: {path} is shorter than recorded; run without --resume"
            )
        handle.truncate(keep)
        handle.seek(keep)
    return handle


def _sync(handle: BinaryIO | None) -> int:
    if handle is None:
        return 0
    handle.flush()
    os.fsync(handle.fileno())
    return handle.tell()


def _atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
