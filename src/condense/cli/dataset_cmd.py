"""``condense compress-dataset IN -o OUT --budget N``: compress training trajectories.

A thin layer over :func:`condense.datasets.compress_dataset`: a progress bar while it
runs (on a terminal) and a summary table at the end, both on stderr; statistics as JSON
next to the output. Exit codes: 0 done, 1 done but some lines were rejected or some
summaries failed (their records are kept and flagged), 2 unusable input or options, 130
interrupted (the resume point is saved: the same command with ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from condense.cli.app import add_command, hidden_alias, required
from condense.cli.options import (
    add_budget,
    add_summarizer,
    count,
    positive,
    seconds,
    summarizer_options,
)
from condense.datasets import DEFAULT_NOTICE, ENGINES, DatasetOptions, compress_dataset
from condense.datasets.options import DEFAULT_TAIL_TURNS, DEFAULT_TURN_OVERHEAD, SUMMARY_ROLES
from condense.datasets.sink import CHECKPOINT_SECONDS
from condense.datasets.tokenizer import resolve_tokenizer

if TYPE_CHECKING:
    from rich.table import Table


def register(commands: Any) -> None:
    add_command(
        commands,
        "compress-dataset",
        old="dataset",
        help="compress training trajectories (ShareGPT/OpenAI JSONL) to a token budget",
        description="Compress every trajectory of a JSONL file (or a directory of them) to "
        "--budget tokens, never splitting a tool call from its response. Records at or "
        "under the budget pass through byte for byte; one output line per input line, "
        "malformed lines go to the rejects file. Exit code 1 when lines were rejected or "
        'summaries failed (those records are kept, flagged under "condense"); 130 when '
        "interrupted (run the same command with --resume to continue).",
        configure=configure,
        handler=handle,
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", help="JSONL file, directory of them, or - (stdin)")
    parser.add_argument(
        "-o", "--output", help="output file (directory for a directory; default: stdout)"
    )
    add_budget(parser, what="of each trajectory", old=True)
    add_summarizer(parser)
    parser.add_argument(
        "--concurrency", type=positive, default=16, help="LLM summaries at once (default: 16)"
    )
    parser.add_argument(
        "--workers",
        type=count,
        help="worker processes (default: one per core for an input of 16 MB or more on "
        "Linux, 64 MB elsewhere, none below; 0: none)",
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted run into the same -o"
    )
    parser.add_argument(
        "--tokenizer",
        help="o200k_base (default), cl100k_base, an OpenAI model, a tokenizer.json "
        "or a local model directory",
    )
    parser.add_argument("--engine", choices=ENGINES, default="local", help="default: local")
    parser.add_argument(
        "--tail-turns",
        type=count,
        default=DEFAULT_TAIL_TURNS,
        help=f"last turns always kept (default: {DEFAULT_TAIL_TURNS})",
    )
    hidden_alias(parser, "--keep-last", dest="tail_turns", type=count)
    parser.add_argument(
        "--summary-role",
        choices=sorted(SUMMARY_ROLES),
        default="human",
        help="role of the summary turn (default: human)",
    )
    parser.add_argument(
        "--notice", default=DEFAULT_NOTICE, help="first line of the summary turn ('' for none)"
    )
    parser.add_argument(
        "--summary-tokens",
        type=positive,
        help="tokens reserved for the summary turn (default: 750, at most budget/4)",
    )
    parser.add_argument(
        "--turn-overhead",
        type=count,
        default=DEFAULT_TURN_OVERHEAD,
        help=f"template tokens counted per turn (default: {DEFAULT_TURN_OVERHEAD})",
    )
    parser.add_argument(
        "--exact-counts",
        action="store_true",
        help="count summarized turns exactly too (slower; exact tokens_before)",
    )
    parser.add_argument(
        "--summary-input-chars",
        type=positive,
        metavar="N",
        help="give the summarizer only the span's first ask and its newest N characters "
        "(faster; what comes before them is not read; default: all of the span)",
    )
    parser.add_argument(
        "--timeout", type=seconds, default=300.0, help="seconds per LLM summary (default: 300)"
    )
    parser.add_argument(
        "--max-attempts",
        type=positive,
        default=3,
        help="tries of a summary whose failure is passing (default: 3)",
    )
    hidden_alias(parser, "--retries", dest="max_attempts", type=_retries)
    parser.add_argument(
        "--checkpoint-every",
        type=seconds,
        default=CHECKPOINT_SECONDS,
        metavar="SECONDS",
        help=f"save the resume point this often (default: {CHECKPOINT_SECONDS:g})",
    )
    parser.add_argument("--rejects", help="rejects file (default: OUT.rejects.jsonl)")
    parser.add_argument("--stats", help="statistics JSON (default: OUT.stats.json)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar or table")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the statistics as JSON (on stdout, or stderr when the data goes there)",
    )


def _retries(text: str) -> int:
    """The old ``--retries N``: ``N + 1`` attempts."""
    return count(text) + 1


def handle(args: argparse.Namespace) -> int:
    required(args, [("budget", "--budget")])
    options = DatasetOptions(
        target_tokens=args.budget,
        tail_turns=args.tail_turns,
        summary_tokens=args.summary_tokens,
        summary_role=args.summary_role,
        notice=args.notice,
        turn_overhead=args.turn_overhead,
        exact_counts=args.exact_counts,
        summary_input_chars=args.summary_input_chars,
        tokenizer=resolve_tokenizer(args.tokenizer),
        max_attempts=args.max_attempts,
        timeout=args.timeout,
    )
    with _progress_bar(shown=not args.quiet) as (started, advance):
        try:
            report = compress_dataset(
                args.input,
                args.output,
                options=options,
                summarizer=args.summarizer,
                summarizer_options=summarizer_options(args.summarizer_option),
                engine=args.engine,
                workers=args.workers,
                concurrency=args.concurrency,
                resume=args.resume,
                rejects=args.rejects,
                stats=args.stats,
                progress=advance,
                on_start=started,
                checkpoint_seconds=args.checkpoint_every,
            )
        except KeyboardInterrupt:
            if args.output in (None, "-"):
                raise
            raise KeyboardInterrupt("run the same command with --resume to continue") from None
    if args.json:  # on stdout unless the data went there
        to_stdout = args.output not in (None, "-")
        print(json.dumps(report, ensure_ascii=False), file=sys.stdout if to_stdout else sys.stderr)
    elif not args.quiet:
        from rich.console import Console

        Console(stderr=True).print(summary_table(report))
    return 1 if report["failed"] or report["rejected"] else 0


Started = Callable[[int, int], None]
Advance = Callable[[int, int], None]


@contextlib.contextmanager
def _progress_bar(*, shown: bool) -> Iterator[tuple[Started, Advance]]:
    """The progress bar on stderr, when ``shown`` and stderr is a terminal, and the two
    callbacks that move it; ``--quiet`` loads nothing of rich."""
    if not shown:
        yield (lambda total, done: None), (lambda lines, size: None)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]condense dataset"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[lines]:,} lines"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
        # redrawn as lines are written, not by a thread of its own: with one thread
        # the workers start as copies of this process (condense.datasets.local.can_fork)
        auto_refresh=False,
    )
    task = bar.add_task("compress", total=None, lines=0)

    def started(total: int, done: int) -> None:
        bar.update(task, total=total or None, completed=done, refresh=True)

    def advance(lines: int, size: int) -> None:
        lines = bar.tasks[0].fields["lines"] + lines
        bar.update(task, advance=size, lines=lines, refresh=True)

    with bar:
        yield started, advance


def _about(tokens: dict[str, Any], total: str) -> str:
    """``≈`` before a token total that includes estimates."""
    return "" if tokens.get(f"{total}_exact", True) else "≈"


def summary_table(report: dict[str, Any]) -> Table:
    """The end-of-run table: what happened to the records, tokens, ratios, time."""
    from rich.table import Table

    table = Table(title="condense compress-dataset", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    tokens = report["tokens"]
    ratio = report["ratio"]
    rows = [
        ("lines", f"{report['lines']:,}"),
        ("passed (under budget)", f"{report['passed_under_target']:,}"),
        ("compressed", f"{report['compressed']:,}"),
        ("still over limit", f"{report['still_over_limit']:,}"),
        ("failed (kept, flagged)", f"{report['failed']:,}"),
        ("rejected", f"{report['rejected']:,}"),
        (
            "tokens before → after",
            f"{_about(tokens, 'before')}{tokens['before']:,} → "
            f"{_about(tokens, 'after')}{tokens['after']:,}",
        ),
        (
            "tokens saved",
            f"{_about(tokens, 'saved')}{tokens['saved']:,} ({tokens['saved_fraction']:.1%})",
        ),
    ]
    if tokens.get("records_with_estimated_before"):
        rows.append(
            (
                "≈ estimated",
                f"{tokens['records_with_estimated_before']:,} records' summarized turns "
                "(--exact-counts counts them)",
            )
        )
    if ratio["p50"] is not None:
        rows.append(
            (
                f"ratio after/before{' ≈' if _about(tokens, 'before') else ''} min·p10·p50·p90·max",
                " · ".join(f"{ratio[k]:.2f}" for k in ("min", "p10", "p50", "p90", "max")),
            )
        )
    for reason, times in list(report["failures"].items())[:5]:
        rows.append((f"failed: {reason[:60]}", f"{times:,}"))
    rate = report["records_per_s"]
    rows.append(("wall time", f"{report['wall_time_s']:.1f} s"))
    rows.append(("throughput", f"{rate:,.1f} lines/s" if rate else "-"))
    for name, value in rows:
        table.add_row(name, value)
    return table
