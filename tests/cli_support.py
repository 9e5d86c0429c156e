"""The command line in tests: in this process, or in a real one where only that shows it.

:func:`run_cli` calls ``condense.cli.main(argv)`` here, with its own stdin, stdout and
stderr (bytes underneath, as a process has: the commands write data to
``sys.stdout.buffer``), so a test costs what the command does and not a Python start-up
and a second import of condense. It returns what ``subprocess.run`` would: the exit code
and both streams as text.

A real ``python -m condense`` process is for what only a process shows: the installed
command and its exit codes, a stream closed at start-up, a pipe read record by record or
whose reader goes away, a terminal, signals. A test that interrupts one starts it as a
:func:`terminal_job` and waits for an event that says it is mid-work
(:func:`wait_until`; a summary it asked for and :class:`HeldSummaries` holds), never for
a workload to last long enough; :data:`HANG_GUARD` bounds every wait.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from condense.cli import main

HANG_GUARD = 600
"""Seconds before a real subprocess counts as hung: a guard, never a speed limit."""


@dataclass(frozen=True)
class Finished:
    """The outcome of one in-process run, read as a ``CompletedProcess`` is."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run_cli(
    *args: str,
    stdin: str | None = None,
    cwd: Path | str | None = None,
    umask: int | None = None,
) -> Finished:
    """Run ``condense ARGS`` in this process with ``stdin`` as its input (empty when
    ``None``), in ``cwd`` and under ``umask`` when given.

    Help and usage errors end argparse's way (``SystemExit``); that is an exit code here
    as it is for a process. Any other exception is a bug in condense and propagates, with
    its traceback, instead of hiding in ``stderr``.
    """
    streams = _Streams((stdin or "").encode())
    with streams.installed(), _working_in(cwd), _under_umask(umask), _columns(80):
        try:
            code = main(list(args))
        except SystemExit as done:
            code = _exit_code(done.code, streams)
    return Finished(args, code, streams.text("stdout"), streams.text("stderr"))


def terminal_job() -> None:
    """``preexec_fn`` of a child a test will Ctrl-C: its own process group, as a
    terminal's job has, and SIGINT at its default even when the tests themselves were
    started with it ignored (``pytest &`` in a script starts them so, and a child
    inherits that: Ctrl-C would then do nothing)."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Return once ``condition()`` holds; fail (naming ``what``) only after
    :data:`HANG_GUARD` seconds, which no amount of load explains."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not the case after {HANG_GUARD} s")
        time.sleep(0.01)


class HeldSummaries:
    """A :class:`~condense.testing.FakeProvider` responder that holds the summaries of
    chosen lines of a dataset, so a real ``compress-dataset --summarizer openai`` run
    stops mid-work exactly where a test wants it, for as long as the test wants.

    Lines are told apart by a tag in their text (:meth:`tag_lines`). After
    :meth:`hold_from` ``(n)``, a request summarizing line ``n`` or a later one waits and
    :attr:`held` is set; every other request is answered at once with a text that
    depends only on the line. :meth:`hold_from` again, or :meth:`release`, lets the
    waiting ones go (their client is usually gone by then).
    """

    _TAG = re.compile(r"\[line (\d+)\]")

    def __init__(self) -> None:
        self.held = threading.Event()
        self._changed = threading.Condition()
        self._first_held: int | None = None
        self._round = 0

    @staticmethod
    def tag_lines(path: Path) -> None:
        """Tag every turn of every ShareGPT record of the JSONL file ``path`` with its line
        number (from 1); other lines stay as they are."""
        lines = path.read_bytes().split(b"\n")
        for number, raw in enumerate(lines, start=1):
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("conversations"), list):
                for turn in record["conversations"]:
                    turn["value"] = f"[line {number}] {turn['value']}"
                lines[number - 1] = json.dumps(record, ensure_ascii=False).encode()
        path.write_bytes(b"\n".join(lines))

    def hold_from(self, line: int | None) -> None:
        """Hold the summaries of ``line`` and later ones (``None``: hold none)."""
        with self._changed:
            self._first_held = line
            self._round += 1
            self.held.clear()
            self._changed.notify_all()

    def release(self) -> None:
        self.hold_from(None)

    def __call__(self, body: dict[str, Any]) -> str:
        lines = {int(n) for n in self._TAG.findall(json.dumps(body))}
        assert len(lines) == 1, f"a summary request should cover one line: {lines}"
        (line,) = lines
        with self._changed:
            round_ = self._round
            if self._first_held is not None and line >= self._first_held:
                self.held.set()
                self._changed.wait_for(lambda: self._round != round_)
        return f"summary of line {line}"


class _Streams:
    """Text streams over bytes, standing in for a process's three standard streams."""

    def __init__(self, stdin: bytes) -> None:
        self._buffers = {"stdout": io.BytesIO(), "stderr": io.BytesIO()}
        self._stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        self._out = {
            name: io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
            for name, buffer in self._buffers.items()
        }

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin, sys.stdout, sys.stderr = self._stdin, self._out["stdout"], self._out["stderr"]
        try:
            yield
        finally:
            for stream in self._out.values():
                stream.flush()
            sys.stdin, sys.stdout, sys.stderr = saved

    def write_stderr(self, text: str) -> None:
        self._out["stderr"].write(text)

    def text(self, name: str) -> str:
        """What was written to ``name``, decoded as ``subprocess.run(text=True)`` does."""
        raw = self._buffers[name].getvalue()
        return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


def _exit_code(code: object, streams: _Streams) -> int:
    """The exit status ``sys.exit(code)`` gives a process."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    streams.write_stderr(f"{code}\n")
    return 1


@contextlib.contextmanager
def _working_in(folder: Path | str | None) -> Iterator[None]:
    if folder is None:
        yield
        return
    with contextlib.chdir(folder):
        yield


@contextlib.contextmanager
def _under_umask(mask: int | None) -> Iterator[None]:
    if mask is None:
        yield
        return
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@contextlib.contextmanager
def _columns(width: int) -> Iterator[None]:
    """Help text wrapped as in a process whose stdout is a pipe (argparse asks the
    terminal otherwise, which here is the test runner's)."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = previous or str(width)
    try:
        yield
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
