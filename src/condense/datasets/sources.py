"""Where lines come from and where they go: a file, a directory of JSONL files, or stdin.

- ``IN`` a file: one output, ``-o OUT`` (default: stdout);
- ``IN`` a directory: every ``*.jsonl`` / ``*.ndjson`` under it, in sorted order, each
  written to the same relative path under the output directory (``-o`` required);
- ``IN`` ``-``: stdin (no resume).

Lines are read as bytes, split on ``\\n`` only, so a line passed through is written back
byte for byte.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from condense._files import JSONL_SUFFIXES
from condense.exceptions import FormatError, InputError

STDIN = "-"


@dataclass(frozen=True, slots=True)
class Job:
    """One input file and the file its output goes to (``None``: stdout)."""

    source: str
    target: Path | None

    @property
    def name(self) -> str:
        return "<stdin>" if self.source == STDIN else self.source


@dataclass(frozen=True, slots=True)
class Line:
    """Line ``number`` (1-based) of job ``job``; ``end`` is the input offset after it."""

    job: int
    number: int
    raw: bytes
    end: int


def plan_jobs(source: str, output: str | None) -> list[Job]:
    """The jobs for ``IN`` and ``-o``; raises :class:`InputError` naming what is wrong."""
    target = None if output in (None, "-") else Path(output)
    if source == STDIN:
        return [Job(STDIN, target)]
    path = Path(source)
    if path.is_dir():
        if target is None:
            raise InputError(f"{source} is a directory: give an output directory with -o")
        if target.exists() and not target.is_dir():
            raise InputError(f"{output} exists and is not a directory")
        inside = target.resolve()
        files = sorted(
            p
            for p in path.rglob("*")
            if p.is_file() and p.name.endswith(JSONL_SUFFIXES) and inside not in p.resolve().parents
        )
        if not files:
            raise FormatError(f"holds no {' or '.join(JSONL_SUFFIXES)} file", source=source)
        return [Job(str(f), target / f.relative_to(path)) for f in files]
    if not path.exists():
        raise FormatError("no such file or directory", source=source)
    if target is not None and target.is_dir():
        target = target / path.name
    if target is not None and target.resolve() == path.resolve():
        raise InputError(f"the output {output} would overwrite the input")
    if target is not None and not target.parent.is_dir():
        raise InputError(f"{output}: cannot write: the directory {target.parent} does not exist")
    return [Job(str(path), target)]


def input_size(jobs: list[Job]) -> int:
    """Total bytes of the input files (0 for stdin)."""
    return sum(os.path.getsize(job.source) for job in jobs if job.source != STDIN)


def identity(jobs: list[Job]) -> list[list[object]]:
    """What must not change between a run and its resumption: paths, sizes, mtimes."""
    rows: list[list[object]] = []
    for job in jobs:
        if job.source == STDIN:
            rows.append([STDIN, None, None, str(job.target)])
        else:
            status = os.stat(job.source)
            rows.append([job.source, status.st_size, status.st_mtime_ns, str(job.target)])
    return rows


def read_lines(jobs: list[Job], *, job: int = 0, offset: int = 0, line: int = 0) -> Iterator[Line]:
    """Every line of every job from ``job``, starting at byte ``offset`` of that job's
    file, which is after line ``line``."""
    for index in range(job, len(jobs)):
        start, number = (offset, line) if index == job else (0, 0)
        with _open(jobs[index]) as handle:
            if jobs[index].source != STDIN:  # an agent transcript: one line per context
                from condense.datasets.transcripts import transcript_lines

                found = transcript_lines(index, handle, source=jobs[index].name, offset=start)
                if found is not None:
                    yield from found
                    continue
            if start:
                handle.seek(start)
            position = start
            for chunk in handle:
                number += 1
                position += len(chunk)
                yield Line(index, number, chunk.removesuffix(b"\n"), position)


def _open(job: Job) -> BinaryIO:
    if job.source == STDIN:
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    try:
        return open(job.source, "rb")
    except OSError as error:
        raise FormatError(f"cannot read: {error.strerror or error}", source=job.source) from None
