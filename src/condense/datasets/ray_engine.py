"""The Ray engine: the same per-record function, run by Ray Data across a cluster.

Lines are read as opaque text with ``ray.data.read_text`` (Ray's JSON reader infers a
schema and rewrites records, so it is never used), processed in batches by
:func:`process_batch` on Ray workers, and streamed back in input order
(``preserve_order``) to this process, which writes them through the same :class:`Sink`
as the local engine: same output, same rejects, same resume state. An async summarizer
runs inside each batch, ``concurrency`` calls at a time. Ray retries a task only when its
worker dies (``max_retries``, bounded); a record never raises, so no record is retried
forever.

``ray`` is an optional dependency: ``pip install 'condense[ray]'``. When no Ray cluster
is running, a local one is started with ``workers`` CPUs.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import pickle
import warnings
from collections.abc import Sequence
from typing import Any

from condense.datasets.options import DatasetOptions
from condense.datasets.record import RecordProcessor, RecordResult, Status, SummaryRequest
from condense.datasets.sink import Sink
from condense.datasets.sources import STDIN, Line
from condense.datasets.summaries import SummaryFailed, is_async, summarize_gated
from condense.exceptions import CondenseError, CondenseRuntimeError, InputError
from condense.summarizers import Summarizer, SummaryOutcome

INSTALL_HINT = "pip install 'condense[ray]'"
TASK_RETRIES = 2
BATCH_SIZE = 16


def run_ray(
    jobs: Sequence[Any],
    sink: Sink,
    *,
    options: DatasetOptions,
    summarizer: Summarizer,
    workers: int,
    concurrency: int,
    progress: Any,
) -> None:
    """Process every line of ``jobs`` (from the sink's resume point) on Ray Data."""
    ray, data = _import_ray()
    if any(job.source == STDIN for job in jobs):
        raise InputError("the ray engine reads files; save stdin to a file first")
    if not ray.is_initialized():
        ray.init(
            num_cpus=workers or None,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=False,
        )
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    with warnings.catch_warnings():  # Ray's own context warns about its own defaults
        warnings.simplefilter("ignore", DeprecationWarning)
        context = data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False
        context.retried_map_errors = False  # a record never raises; do not retry code
    blob = pickle.dumps((options, summarizer, concurrency))
    try:
        _run(jobs, sink, data, blob, progress)
    except CondenseError:
        raise
    except Exception as error:  # Ray's own failures, translated once, here
        raise CondenseRuntimeError(f"the ray engine failed: {error}") from error


def _run(jobs: Sequence[Any], sink: Sink, data: Any, blob: bytes, progress: Any) -> None:
    # Ray retries a task whose worker died forever by default (max_retries=-1); bound it.
    # Ray 2.60 deprecates passing task options this way but offers no other for reads.
    bounded = {"max_retries": TASK_RETRIES, "retry_exceptions": False}
    for index in range(sink.job, len(jobs)):
        skip = sink.line if index == sink.job else 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            dataset = data.read_text(
                jobs[index].source, drop_empty_lines=False, ray_remote_args=bounded
            ).map_batches(
                process_batch,
                fn_args=(blob,),
                batch_size=BATCH_SIZE,
                batch_format="pyarrow",
                **bounded,
            )
        number = offset = 0
        for batch in dataset.iter_batches(batch_size=BATCH_SIZE, batch_format="pyarrow"):
            columns = batch.to_pydict()
            for text, status, line, reason, stats, tokens in zip(
                columns["text"],
                columns["status"],
                columns["line"],
                columns["reason"],
                columns["stats"],
                columns["tokens"],
                strict=True,
            ):
                number += 1
                raw = text.encode("utf-8")
                offset += len(raw) + 1
                if number <= skip:  # written before the interruption
                    continue
                result = RecordResult(
                    status=Status(status),
                    line=None if line is None else line.encode("utf-8"),
                    stats=None if stats is None else _loads(stats),
                    reason=reason,
                    tokens=tokens,
                )
                sink.write(Line(index, number, raw, offset), result)
                progress(1, len(raw) + 1)


def process_batch(batch: Any, blob: bytes) -> dict[str, list[Any]]:
    """The per-record function over one batch of lines (runs on a Ray worker)."""
    processor, summarizer, concurrency = _processor(blob)
    texts: list[str] = batch.column("text").to_pylist()
    raws = [text.encode("utf-8") for text in texts]
    results: list[Any] = [processor.process(raw) for raw in raws]
    waiting = [(i, r) for i, r in enumerate(results) if isinstance(r, SummaryRequest)]
    if waiting:
        outcomes = asyncio.run(
            _summaries([r for _, r in waiting], summarizer, processor, concurrency)
        )
        for (i, request), outcome in zip(waiting, outcomes, strict=True):
            results[i] = processor.finish(raws[i], request, outcome)
    done: list[RecordResult] = results
    return {
        "text": texts,
        "status": [str(r.status) for r in done],
        "line": [None if r.line is None else r.line.decode("utf-8") for r in done],
        "reason": [r.reason for r in done],
        "stats": [None if r.stats is None else _dumps(r.stats) for r in done],
        "tokens": [r.tokens for r in done],
    }


async def _summaries(
    requests: list[SummaryRequest],
    summarizer: Summarizer,
    processor: RecordProcessor,
    concurrency: int,
) -> list[SummaryOutcome | SummaryFailed]:
    gate = asyncio.Semaphore(concurrency)
    options = processor.options

    async def one(request: SummaryRequest) -> SummaryOutcome | SummaryFailed:
        return await summarize_gated(
            summarizer,
            request.messages,
            gate=gate,
            target_tokens=request.target_tokens,
            policy=options.retry,
            timeout=options.timeout,
        )

    return list(await asyncio.gather(*(one(request) for request in requests)))


@functools.lru_cache(maxsize=4)
def _processor(blob: bytes) -> tuple[RecordProcessor, Summarizer, int]:
    options, summarizer, concurrency = pickle.loads(blob)
    in_worker = None if is_async(summarizer) else summarizer
    return RecordProcessor(options, in_worker), summarizer, concurrency


def _dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _loads(text: str) -> Any:
    import json

    return json.loads(text)


def _import_ray() -> tuple[Any, Any]:
    try:
        import ray
        import ray.data
    except ImportError as error:
        raise InputError(f"the ray engine needs Ray Data: {INSTALL_HINT}") from error
    return ray, ray.data
