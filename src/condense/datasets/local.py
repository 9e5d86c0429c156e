"""The local engine: worker processes for parsing, counting and planning; asyncio for
LLM calls; results written in input order.

Lines are read in chunks and each chunk goes to a worker process (``workers=0`` runs
everything in this process). A plain summarizer (``extractive``) runs inside the worker,
so a chunk comes back finished. An async summarizer (``openai``) runs here instead, on
the event loop, at most ``concurrency`` calls at a time, each record under its timeout;
the worker then assembles the record from the summary. A bounded window of chunks in
flight keeps memory flat, and the writer takes chunks strictly in order.

Workers never see Ctrl-C: they start with SIGINT ignored, so a Ctrl-C (which a terminal
sends to every process of the job) reaches only this process, which ends them at once
and leaves the resume point for ``--resume``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from condense.datasets.options import DatasetOptions
from condense.datasets.record import RecordProcessor, RecordResult, SummaryRequest
from condense.datasets.sink import Sink
from condense.datasets.sources import Line
from condense.datasets.summaries import SummaryFailed, summarize_gated
from condense.datasets.tokenizer import load_tokenizer
from condense.exceptions import CondenseRuntimeError
from condense.summarizers import Summarizer, SummaryOutcome

T = TypeVar("T")
Progress = Callable[[int, int], None]  # (lines, bytes) done since the last call

_CHUNK_BYTES = 8 << 20
_processor: RecordProcessor | None = None


def _init_worker(options: DatasetOptions, summarizer: Summarizer | None) -> None:
    global _processor
    _processor = RecordProcessor(options, summarizer)


# Sent by the parent when it was interrupted: finish the record at hand, skip the rest.
_STOP = getattr(signal, "SIGUSR1", None)
_stopping = False


def _init_process(options: DatasetOptions, summarizer: Summarizer | None) -> None:
    """Worker start-up: ignore Ctrl-C (the parent handles it), stop early on ``_STOP``,
    build the processor and exit with the parent, even a killed one (a SIGKILLed parent
    cannot stop its pool, and orphans would idle forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _STOP is not None:
        signal.signal(_STOP, _stop_early)
    _init_worker(options, summarizer)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="condense-parent-watch", daemon=True).start()


def _stop_early(signum: int, frame: object) -> None:
    global _stopping
    _stopping = True


def _ready() -> None:
    """A task that does nothing: submitting one per worker starts them all."""


def can_fork() -> bool:
    """Whether workers can start as copies of this process (``fork``): on Linux, while
    this process runs one thread. A copy starts in milliseconds, with condense imported
    and the vocabulary loaded; a thread running at the moment of the copy could hold a
    lock the copy would wait on forever, so with more than one thread (a library
    caller's, a progress bar's) workers are ``spawn``ed instead: a new interpreter each,
    about half a second of CPU to start. (macOS has ``fork`` too, but its system
    libraries are not safe to copy, and Python spawns there by default.)"""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _start_workers(
    workers: int, options: DatasetOptions, summarizer: Summarizer | None
) -> concurrent.futures.ProcessPoolExecutor:
    """The pool, every worker already started with SIGINT (and ``_STOP``) ignored.

    The pool starts a worker when work is submitted, so one empty task per worker is
    submitted while those signals are ignored here: a started process inherits that
    (``fork`` copies the handlers; ``spawn`` execs a new interpreter, and an ignored
    signal stays ignored across exec), so no worker can die of a KeyboardInterrupt, not
    even while it imports condense. Before a ``fork`` the tokenizer is loaded here (each
    copy inherits it) and the standard streams are flushed (a copy flushes them when it
    exits: what waited in their buffers would be written twice).
    """
    method = "fork" if can_fork() else "spawn"
    if method == "fork":
        load_tokenizer(options.tokenizer)
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_init_process,
        initargs=(options, summarizer),
    )
    with _signals_ignored():
        for _ in range(workers):
            executor.submit(_ready)
    return executor


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signals belong to the main thread; a library caller's thread has none
        return
    numbers = [signal.SIGINT] + ([_STOP] if _STOP is not None else [])
    previous = {number: signal.signal(number, signal.SIG_IGN) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _stop_workers(executor: concurrent.futures.ProcessPoolExecutor, *, now: bool) -> None:
    """Shut the pool down; ``now`` (interrupted): tell the workers to drop their chunks.

    Killing a worker could leave half a result in the pool's pipe, and the pool would
    then wait for the rest forever; instead each worker is told (``_STOP``) to finish
    the record at hand and skip the others, so shutting down takes one record's time.
    """
    if now and _STOP is not None:
        # The pool has no public list of its processes: read it, signal only live ones.
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            with contextlib.suppress(OSError, ValueError):
                if process.is_alive() and process.pid is not None:
                    os.kill(process.pid, _STOP)
    executor.shutdown(wait=True, cancel_futures=True)


def _prepare(raws: Sequence[bytes]) -> list[RecordResult | SummaryRequest]:
    assert _processor is not None
    return [_processor.process(raw) for raw in _until_stopped(raws)]


def _finish(
    items: Sequence[tuple[bytes, SummaryRequest, SummaryOutcome | SummaryFailed]],
) -> list[RecordResult]:
    assert _processor is not None
    return [_processor.finish(*item) for item in _until_stopped(items)]


def _until_stopped(items: Sequence[T]) -> Iterator[T]:
    """``items`` until the parent says stop (what is left is not wanted any more)."""
    for item in items:
        if _stopping:
            return
        yield item


def chunks(lines: Iterable[Line], *, records: int) -> Iterator[list[Line]]:
    """Consecutive lines, at most ``records`` or about 8 MB at a time."""
    chunk: list[Line] = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line.raw)
        if len(chunk) >= records or size >= _CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def run_local(
    lines: Iterable[Line],
    sink: Sink,
    *,
    options: DatasetOptions,
    summarizer: Summarizer,
    asynchronous: bool,
    workers: int,
    concurrency: int,
    progress: Progress,
) -> None:
    """Process every line and hand the results to ``sink`` in order."""
    try:
        asyncio.run(
            _run(
                lines,
                sink,
                options=options,
                summarizer=summarizer,
                asynchronous=asynchronous,
                workers=workers,
                concurrency=concurrency,
                progress=progress,
            )
        )
    except BrokenProcessPool as error:
        raise CondenseRuntimeError(
            f"a worker process died ({error}); the machine may be out of memory: use fewer "
            "--workers, then run again with --resume to continue"
        ) from error


async def _run(
    lines: Iterable[Line],
    sink: Sink,
    *,
    options: DatasetOptions,
    summarizer: Summarizer,
    asynchronous: bool,
    workers: int,
    concurrency: int,
    progress: Progress,
) -> None:
    in_worker = None if asynchronous else summarizer
    executor: concurrent.futures.ProcessPoolExecutor | None = None
    if workers > 0:
        executor = _start_workers(workers, options, in_worker)
    else:
        _init_worker(options, in_worker)
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(concurrency)

    async def cpu(function: Callable[[Any], T], argument: Any) -> T:
        if executor is None:
            return function(argument)
        return await loop.run_in_executor(executor, function, argument)

    async def summarize(request: SummaryRequest) -> SummaryOutcome | SummaryFailed:
        return await summarize_gated(
            summarizer,
            request.messages,
            gate=gate,
            target_tokens=request.target_tokens,
            policy=options.retry,
            timeout=options.timeout,
        )

    async def work(chunk: list[Line]) -> list[RecordResult]:
        raws = [line.raw for line in chunk]
        prepared = await cpu(_prepare, raws)
        waiting = [(i, r) for i, r in enumerate(prepared) if isinstance(r, SummaryRequest)]
        results: list[Any] = list(prepared)
        if waiting:
            outcomes = await asyncio.gather(*(summarize(request) for _, request in waiting))
            items = [(raws[i], req, out) for (i, req), out in zip(waiting, outcomes, strict=True)]
            for (i, _), done in zip(waiting, await cpu(_finish, items), strict=True):
                results[i] = done
        return results

    per_chunk = 4 if asynchronous else 16
    window = asyncio.Semaphore(
        max(2 * max(workers, 1) + 2, (2 * concurrency) // per_chunk + 2 if asynchronous else 0)
    )
    queue: asyncio.Queue[tuple[list[Line], asyncio.Task[list[RecordResult]]] | Exception | None]
    queue = asyncio.Queue()  # unbounded: the window semaphore bounds it

    async def produce() -> None:
        try:
            for chunk in chunks(lines, records=per_chunk):
                await window.acquire()
                queue.put_nowait((chunk, asyncio.create_task(work(chunk))))
        except Exception as error:  # re-raised by the consumer, in order
            queue.put_nowait(error)
        else:
            queue.put_nowait(None)

    async def consume() -> None:
        while (entry := await queue.get()) is not None:
            if isinstance(entry, Exception):
                raise entry
            chunk, task = entry
            for line, result in zip(chunk, await task, strict=True):
                sink.write(line, result)
            window.release()
            progress(len(chunk), sum(len(line.raw) + 1 for line in chunk))

    producer = asyncio.create_task(produce())
    finished = False
    try:
        await consume()
        await producer
        finished = True
    finally:
        producer.cancel()
        if executor is not None:
            _stop_workers(executor, now=not finished)
