"""``compress_dataset``: one call that runs a whole dataset job with either engine.

    from condense.datasets import DatasetOptions, compress_dataset

    report = compress_dataset(
        "trajectories.jsonl", "out.jsonl", options=DatasetOptions(target_tokens=16_000)
    )
    report["compressed"], report["tokens"]["saved"]

The input is a JSONL file, a directory of them or ``-`` (stdin); lines in = lines out +
rejects, in order. See :mod:`condense.datasets` for the behaviour of each record.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from condense import _files
from condense.datasets.options import DatasetOptions
from condense.datasets.sink import CHECKPOINT_SECONDS, Sink
from condense.datasets.sources import STDIN, Job, input_size, plan_jobs, read_lines
from condense.datasets.sources import identity as job_identity
from condense.datasets.summaries import build_summarizer, is_async
from condense.exceptions import InputError
from condense.summarizers import Summarizer

ENGINES = ("local", "ray")
Progress = Callable[[int, int], None]


WORKERS_FROM_BYTES = 64 << 20
"""Inputs below this run in one process by default when workers must be ``spawn``ed: a
spawned worker costs about half a second of CPU to start (the interpreter, condense,
the tokenizer's vocabulary), about what 15 MB of records take to compress, and on a
busy machine every extra process waits for a core; a larger input repays one worker
per core (``bench/bench_dataset.py``)."""

FORKED_WORKERS_FROM_BYTES = 16 << 20
"""The same threshold when workers start as copies of this process (``fork``, see
:func:`condense.datasets.local.can_fork`): a copy starts in milliseconds with the
vocabulary loaded, so only the pipes to it cost (5–10 % more CPU in all). Measured on a
shared 2-core machine: at 4 and 16 MB two copies were no faster than one process (the
start, about 0.4 s of imports and vocabulary, is most of the run); at 380 MB they took
10 s where one process took 16 (``bench/bench_dataset.py``)."""


def default_workers(total_bytes: int, *, stdin: bool = False, forked: bool = False) -> int:
    """The worker processes for an input of ``total_bytes`` (stdin: unknown, so large);
    ``forked``: workers would start as copies of this process."""
    threshold = FORKED_WORKERS_FROM_BYTES if forked else WORKERS_FROM_BYTES
    if stdin or total_bytes >= threshold:
        return os.cpu_count() or 1
    return 0


def default_sidecar(jobs: list[Job], output: str | None, suffix: str) -> Path | None:
    """``OUT.rejects.jsonl`` / ``OUT.stats.json`` next to the output (None for stdout)."""
    path = _anchor(jobs, output)
    return None if path is None else _files.sidecar(path, suffix)


def compress_dataset(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    options: DatasetOptions,
    summarizer: str | Summarizer | None = "extractive",
    summarizer_options: Mapping[str, Any] | None = None,
    engine: str = "local",
    workers: int | None = None,
    concurrency: int = 16,
    resume: bool = False,
    rejects: str | os.PathLike[str] | None = None,
    stats: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
) -> dict[str, Any]:
    """Compress every record of ``source`` into ``output`` (``None``/``-``: stdout).

    ``rejects`` and ``stats`` default to ``OUT.rejects.jsonl`` and ``OUT.stats.json``
    next to a file output. ``workers`` are processes beside this one (``0``: this
    process only); by default one per core for an input of ``WORKERS_FROM_BYTES`` or
    more (or stdin), none below (see :func:`default_workers`). Workers start as copies
    of this process (``fork``) where the platform has it and this process runs one
    thread, else with ``spawn``, so a script that calls this with workers must do so
    under ``if __name__ == "__main__":``.
    ``on_start(total_bytes, done_bytes)`` is called once reading starts, then
    ``progress(lines, bytes)`` as lines are written. The resume point is saved every
    ``checkpoint_seconds``. Returns the aggregate report.
    """
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, got {concurrency}")
    if workers is not None and workers < 0:
        raise InputError(f"workers must be 0 or more, got {workers}")
    out = None if output is None else os.fspath(output)
    if out in (None, "-") and sys.stdout is None:
        raise InputError("stdout is closed; give an output file with -o FILE")
    if os.fspath(source) == STDIN and sys.stdin is None:
        raise InputError("stdin is closed; give an input file instead of -")
    jobs = plan_jobs(os.fspath(source), out)
    if resume and jobs[0].source == STDIN:
        raise InputError("--resume cannot continue reading stdin; give an input file")
    chosen = build_summarizer(summarizer, **dict(summarizer_options or {}))
    rejects_path = Path(rejects) if rejects else default_sidecar(jobs, out, ".rejects.jsonl")
    stats_path = Path(stats) if stats else default_sidecar(jobs, out, ".stats.json")
    ours = {path.resolve() for path in (rejects_path, stats_path) if path is not None}
    jobs = [job for job in jobs if job.source == STDIN or Path(job.source).resolve() not in ours]
    if not jobs:
        raise InputError(f"{os.fspath(source)} holds no input besides this run's own files")
    fingerprint = options.fingerprint(_describe(chosen, summarizer_options))
    sink = Sink(
        jobs,
        output=_anchor(jobs, out),
        rejects=rejects_path,
        fingerprint=f"{fingerprint}:{json.dumps(job_identity(jobs))}",
        checkpoint_seconds=checkpoint_seconds,
    )
    sink.start(resume=resume)
    total = input_size(jobs)
    if workers is None:
        forked = engine == "local" and _local_engine_forks()
        workers = default_workers(total, stdin=jobs[0].source == STDIN, forked=forked)
    done = sum(input_size([job]) for job in jobs[: sink.job]) + sink.offset
    if on_start is not None:
        on_start(total, done)
    lines = read_lines(jobs, job=sink.job, offset=sink.offset, line=sink.line)
    report_progress = progress or (lambda lines, size: None)
    try:
        if engine == "ray":
            from condense.datasets.ray_engine import run_ray

            run_ray(
                jobs,
                sink,
                options=options,
                summarizer=chosen,
                workers=workers,
                concurrency=concurrency,
                progress=report_progress,
            )
        else:
            from condense.datasets.local import run_local

            run_local(
                lines,
                sink,
                options=options,
                summarizer=chosen,
                asynchronous=is_async(chosen),
                workers=workers,
                concurrency=concurrency,
                progress=report_progress,
            )
    except BaseException:
        sink.close()
        raise
    report = sink.finish()
    report["engine"] = engine
    report["target_tokens"] = options.target_tokens
    report["tokenizer"] = options.tokenizer.describe()
    report["summarizer"] = chosen.name
    if stats_path is not None:
        _write_json(stats_path, report)
    return report


def _local_engine_forks() -> bool:
    from condense.datasets.local import can_fork  # the engine's modules load on use

    return can_fork()


def _anchor(jobs: list[Job], output: str | None) -> Path | None:
    """The output file (or directory) that names the state and sidecar files."""
    if output is None or output == "-":
        return None
    single = len(jobs) == 1 and jobs[0].target is not None and jobs[0].target.parent != Path(output)
    return jobs[0].target if single else Path(output)


def _describe(summarizer: Summarizer, options: Mapping[str, Any] | None) -> str:
    shown = {k: v for k, v in (options or {}).items() if k not in ("api_key", "fallback")}
    return f"{summarizer.name}:{json.dumps(shown, sort_keys=True, default=str)}"


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _files.temporary_sibling(path)
    try:
        temporary.write_text(
            json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        _files.replace(temporary, path)
    finally:
        _files.remove(temporary)
