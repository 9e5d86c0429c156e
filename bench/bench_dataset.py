"""Benchmark: `condense dataset` against hermes-agent 0.19.0's trajectory_compressor.

    python bench/bench_dataset.py --ratios   # the issue's ratios (below)
    python bench/bench_dataset.py            # 10,000 trajectories of 2k–200k tokens
    python bench/bench_dataset.py --quick    # 400 trajectories, same size distribution
    python bench/bench_dataset.py --records 300 --max-tokens 120000 --command --no-llm
                                             # 300 of 2k–120k, condense run as a command
    python bench/bench_dataset.py --split --records 300 --max-tokens 120000
                                             # where condense's CPU goes, part by part

Both tools get the same generated ShareGPT trajectories (agent sessions with parallel
tool calls; sizes log-uniform between 2k and 200k tokens, 1.7 GB of JSONL for 10,000),
the same tokens (o200k_base: hermes counts with tiktoken, condense with its ``fast``
extra's counter where installed, which gives tiktoken's counts; the tables say which),
the same target and summary reservation, the last 4 turns kept. Measured end to end
(read, compress, write):

- condense, extractive summarizer, local engine on every core;
- condense, a simulated LLM (1 s per summary, async) at concurrency 64;
- hermes, an instant stub summarizer (its summary calls cost nothing);
- hermes, the same 1 s simulated latency at concurrency 64.

``--ratios`` prints the speed ratio of the two as commands a user runs, on 300 and on
3,000 trajectories of 2k–120k tokens at a 16k budget: ``condense compress-dataset`` with
its default workers against hermes' compressor in its own process, each timed whole
from start to exit (interpreter, imports, vocabulary, reading, compressing, writing),
run in turns (condense, hermes, hermes, condense, …) after one untimed run of each,
and the ratio taken pair by pair; the median seconds and records/s of each, the
median ratio and its spread are printed, with the ratio of CPU seconds (user + system,
workers included) and the load average. Twice: as the machine is ("at rest": other
users' load is shown, not removed), then "under load", with one busy process per core
running beside both tools (``--load``). condense runs from this source tree compiled to
bytecode (as an installed package is, hermes' among them), never recompiled per run.
condense writes real extractive summaries; hermes' summary calls are an instant stub.

hermes-agent is never a dependency of condense: it is installed into a throwaway venv
under the data directory (``pip install hermes-agent==0.19.0``) the first time, and run
there with plain tiktoken as its tokenizer, o200k_base read offline from a tiktoken
cache made of the copy condense ships. ``--no-hermes`` skips it. Generated data is
cached in the data directory (default: the system temp dir) and reused.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import json
import math
import multiprocessing
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from condense.datasets import DatasetOptions, compress_dataset  # noqa: E402
from condense.formats import to_sharegpt  # noqa: E402
from condense.testing import SimulatedLLM  # noqa: E402
from condense.testing.sessions import synthetic_session  # noqa: E402
from condense.tokens.encodings import counter_backend  # noqa: E402

HERMES = "hermes-agent==0.19.0"
TOKENS_PER_MESSAGE = 250  # a little under synthetic_session's mean, so sessions run long
SUMMARY_TOKENS = 750  # hermes' default summary_target_tokens; condense reserves the same
TAIL_TURNS = 4


# --- data -------------------------------------------------------------------------------


def _record(index_seed_and_top: tuple[int, int, int]) -> bytes:
    """One trajectory of a log-uniform 2k–``top`` tokens: a synthetic session cut at a
    unit boundary once its estimated size (4 characters per token) reaches the draw."""
    index, seed, top = index_seed_and_top
    rng = random.Random(seed * 1_000_003 + index)
    tokens = math.exp(rng.uniform(math.log(2_000), math.log(top)))
    session = synthetic_session(round(tokens / TOKENS_PER_MESSAGE) + 8, seed=seed * 100_000 + index)
    size = 0
    cut = len(session)
    for position, message in enumerate(session):
        if size >= tokens * 4 and message["role"] == "assistant":
            cut = position
            break
        size += len(str(message.get("content") or "")) + sum(
            len(call["function"]["arguments"]) for call in message.get("tool_calls", ())
        )
    closing = {"role": "assistant", "content": "All tests pass now; the fix is in place."}
    kept = [*session[:cut], closing] if cut < len(session) else session
    record = {"id": index, "conversations": to_sharegpt(kept), "source": "bench"}
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def dataset(directory: Path, records: int, seed: int, top: int = 200_000) -> Path:
    """``records`` trajectories in ``directory/bench-N-S/trajectories.jsonl`` (cached)."""
    folder = (
        directory / f"bench-v2-{records}-{seed}"
        if top == 200_000
        else (directory / f"bench-v2-{records}-{seed}-{top}")
    )
    path = folder / "trajectories.jsonl"
    if path.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    started = time.perf_counter()
    with open(partial, "wb") as out, multiprocessing.Pool() as pool:
        for line in pool.imap(_record, [(i, seed, top) for i in range(records)], chunksize=8):
            out.write(line)
    os.replace(partial, path)
    size = path.stat().st_size / 1e6
    took = time.perf_counter() - started
    print(f"generated {records:,} trajectories ({size:,.0f} MB) in {took:.0f} s")
    return folder


# --- condense ---------------------------------------------------------------------------


def run_condense(data: Path, out: Path, *, target: int, llm: float | None, workers: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    options = DatasetOptions(
        target_tokens=target,
        summary_tokens=SUMMARY_TOKENS,
        tail_turns=TAIL_TURNS,
        turn_overhead=0,  # hermes counts turn values only
    )
    started = time.perf_counter()
    report = compress_dataset(
        data,
        out,
        options=options,
        summarizer=SimulatedLLM(llm) if llm else "extractive",
        concurrency=64,
        workers=workers,
    )
    elapsed = time.perf_counter() - started
    print(
        f"  condense ({_label(llm, 'extractive')}): {report['lines']:,} lines, "
        f"{report['compressed']:,} compressed, {report['passed_under_target']:,} under target, "
        f"{report['still_over_limit']:,} over limit, {report['failed']:,} failed"
    )
    return elapsed


def run_condense_command(data: Path, out: Path, *, target: int, workers: int) -> float:
    """``condense compress-dataset`` as a user runs it (a subprocess, end to end)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    command = [
        sys.executable, "-m", "condense", "compress-dataset",
        str(data / "trajectories.jsonl"), "-o", str(out / "trajectories.jsonl"),
        "--budget", str(target), "--summary-tokens", str(SUMMARY_TOKENS),
        "--tail-turns", str(TAIL_TURNS), "--turn-overhead", "0", "--workers", str(workers),
    ]  # fmt: skip
    env = command_env(data.parent)
    subprocess.run([*command[:3], "--help"], capture_output=True, env=env)  # compile once
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"condense compress-dataset failed:\n{done.stderr[-2000:]}")
    # the command's stderr is a table for people; its statistics file is for programs
    report = json.loads((out / "trajectories.stats.json").read_text())
    print(
        f"  condense compress-dataset (command): {report['lines']:,} lines, "
        f"{report['compressed']:,} compressed, {report['passed_under_target']:,} under target, "
        f"{report['still_over_limit']:,} over limit, {report['failed']:,} failed"
    )
    return elapsed


def command_env(directory: Path) -> dict[str, str]:
    """The environment condense runs in as a command: its source tree, compiled to
    bytecode once (in ``directory/pycache``) as ``pip install`` compiles an installed
    package, hermes' among them: an interpreter told not to write bytecode
    (``PYTHONDONTWRITEBYTECODE``) would compile condense's source on every start."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PYTHONPYCACHEPREFIX"] = str(directory / "pycache")
    return env


def _label(llm: float | None, otherwise: str) -> str:
    return f"llm {llm:g}s" if llm else otherwise


# --- hermes -----------------------------------------------------------------------------

_HERMES_RUNNER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from pathlib import Path
    import tiktoken                            # o200k_base from TIKTOKEN_CACHE_DIR, offline
    import trajectory_compressor as tc

    source, target, latency = sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])
    summary = int(sys.argv[6])
    encoding = tiktoken.get_encoding("o200k_base")

    class Shim:                                # hermes calls tokenizer.encode(text)
        def encode(self, text):
            return encoding.encode_ordinary(text)

    class Bench(tc.TrajectoryCompressor):
        def _init_tokenizer(self):
            self.tokenizer = Shim()
        def _init_summarizer(self):
            self.client = self.async_client = None
            self._use_call_llm = False
        def _generate_summary(self, content, metrics):
            metrics.summarization_api_calls += 1
            time.sleep(latency)
            return "[CONTEXT SUMMARY]: stub"
        async def _generate_summary_async(self, content, metrics):
            metrics.summarization_api_calls += 1
            await asyncio.sleep(latency)
            return "[CONTEXT SUMMARY]: stub"

    config = tc.CompressionConfig(
        target_max_tokens=int(sys.argv[5]), summary_target_tokens=summary,
        protect_last_n_turns=4, max_concurrent_requests=64, metrics_enabled=False,
    )
    compressor = Bench(config)
    started = time.perf_counter()
    compressor.process_directory(Path(source), target)
    elapsed = time.perf_counter() - started
    summary = compressor.aggregate_metrics.to_dict()["summary"]
    print("RESULT " + json.dumps({"elapsed": elapsed, **summary}))
    """
)


_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def tiktoken_cache(directory: Path) -> Path:
    """A ``TIKTOKEN_CACHE_DIR`` holding o200k_base (condense's shipped copy of the same
    file): hermes loads it with plain tiktoken, offline, and imports nothing of condense."""
    cache = directory / "tiktoken-cache"
    path = cache / hashlib.sha1(_O200K_URL.encode()).hexdigest()  # tiktoken's cache key
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        shipped = ROOT / "src" / "condense" / "tokens" / "data" / "o200k_base.tiktoken.gz"
        path.write_bytes(gzip.decompress(shipped.read_bytes()))
    return cache


def hermes_python(directory: Path) -> Path:
    """The python of a throwaway venv with hermes-agent installed (made once)."""
    venv = directory / "hermes-venv"
    python = venv / "bin" / "python"
    if not (venv / ".ready").exists():
        print(f"installing {HERMES} into {venv} (once) ...")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", HERMES, "tiktoken"],
            check=True,
        )
        (venv / ".ready").touch()
    return python


def run_hermes(python: Path, data: Path, out: Path, *, target: int, llm: float) -> float:
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as home:
        runner = Path(home) / "run_hermes.py"
        runner.write_text(_HERMES_RUNNER)
        env = {**os.environ, "HERMES_HOME": home, "TERM": "dumb"}
        env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(data.parent))
        done = subprocess.run(
            [
                str(python),
                str(runner),
                str(ROOT / "src"),
                str(data),
                str(out),
                str(llm),
                str(target),
                str(SUMMARY_TOKENS),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=home,
        )
    result = next(
        (json.loads(line[7:]) for line in done.stdout.splitlines() if line.startswith("RESULT ")),
        None,
    )
    if done.returncode or result is None:
        raise SystemExit(f"hermes failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    print(
        f"  hermes ({_label(llm, 'instant stub')}): "
        f"{result['total_trajectories']:,} trajectories, {result['trajectories_compressed']:,} "
        f"compressed, {result['trajectories_skipped_under_target']:,} under target, "
        f"{result['trajectories_still_over_limit']:,} over limit, "
        f"{result['trajectories_failed']:,} failed"
    )
    return float(result["elapsed"])


# --- the ratios of the two commands ------------------------------------------------------


def hermes_command(python: Path, home: Path, data: Path, out: Path, *, target: int) -> list[str]:
    """hermes' compressor with its instant stub summarizer, as one process."""
    runner = home / "run_hermes.py"
    runner.write_text(_HERMES_RUNNER)
    return [
        str(python), str(runner), str(ROOT / "src"), str(data), str(out), "0",
        str(target), str(SUMMARY_TOKENS),
    ]  # fmt: skip


def condense_command(data: Path, out: Path, *, target: int) -> list[str]:
    """``condense compress-dataset`` as a user runs it, with its default workers."""
    return [
        sys.executable, "-m", "condense", "compress-dataset",
        str(data / "trajectories.jsonl"), "-o", str(out / "trajectories.jsonl"),
        "--budget", str(target), "--summary-tokens", str(SUMMARY_TOKENS),
        "--tail-turns", str(TAIL_TURNS), "--turn-overhead", "0", "-q",
    ]  # fmt: skip


def timed(command: list[str], *, env: dict[str, str], cwd: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, its waited-for children included) of one
    run of ``command``, its output directory emptied first."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{command[1]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` busy loops running beside whatever runs inside."""
    context = multiprocessing.get_context("spawn")
    spinners = [context.Process(target=_spin, daemon=True) for _ in range(processes)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
        for spinner in spinners:
            spinner.join()


def ratios(args: argparse.Namespace) -> None:
    python = hermes_python(args.data_dir)
    table = Table(
        title="condense compress-dataset vs hermes trajectory_compressor, as commands"
        f" (condense counts with {counter_backend()})"
    )
    for column in (
        "records", "condition", "load avg", "condense s", "hermes s", "condense rec/s",
        "hermes rec/s", "× hermes (wall)", "spread", "× hermes (CPU)",
    ):  # fmt: skip
        table.add_column(column, justify="left" if column == "condition" else "right")
    for records in args.ratio_records:
        data = dataset(args.data_dir, records, args.seed, 120_000)
        for condition, load in (("at rest", 0), ("under load", args.load)):
            with busy(load), tempfile.TemporaryDirectory() as home:
                home_path = Path(home)
                out = args.data_dir / "ratio-out"
                env = {**command_env(args.data_dir), "HERMES_HOME": home, "TERM": "dumb"}
                env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(args.data_dir))
                ours = condense_command(data, out, target=args.target)
                theirs = hermes_command(python, home_path, data, out, target=args.target)
                for command in (ours, theirs):  # warm the file cache, compile condense
                    timed(command, env=env, cwd=home_path, out=out)
                load_average = os.getloadavg()[0]
                runs: dict[str, list[tuple[float, float]]] = {"condense": [], "hermes": []}
                for run in range(args.runs):
                    order = [("condense", ours), ("hermes", theirs)]
                    for name, command in order if run % 2 == 0 else order[::-1]:
                        runs[name].append(timed(command, env=env, cwd=home_path, out=out))
                shutil.rmtree(out, ignore_errors=True)
            walls = [h[0] / c[0] for c, h in zip(runs["condense"], runs["hermes"], strict=True)]
            cpus = [h[1] / c[1] for c, h in zip(runs["condense"], runs["hermes"], strict=True)]
            ours_s = statistics.median(w for w, _ in runs["condense"])
            theirs_s = statistics.median(w for w, _ in runs["hermes"])
            table.add_row(
                f"{records:,}",
                f"{condition}" + (f" (+{load} busy)" if load else ""),
                f"{load_average:.1f}",
                f"{ours_s:.2f}",
                f"{theirs_s:.2f}",
                f"{records / ours_s:,.0f}",
                f"{records / theirs_s:,.0f}",
                f"{statistics.median(walls):.2f}×",
                f"{min(walls):.2f}–{max(walls):.2f}",
                f"{statistics.median(cpus):.2f}×",
            )
            ratio = statistics.median(walls)
            print(f"  {records:,} records, {condition}: {ratio:.2f}×", flush=True)
    Console(width=140).print(table)


# --- where condense's time goes ----------------------------------------------------------


class _TimedTokenizer:
    """The record processor's tokenizer, timed: CPU seconds, calls, tokens counted."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.seconds, self.calls, self.tokens = 0.0, 0, 0

    def count(self, text: str) -> int:
        started = time.process_time()
        tokens = self.inner.count(text)
        self.seconds += time.process_time() - started
        self.calls, self.tokens = self.calls + 1, self.tokens + tokens
        return int(tokens)

    def truncate(self, text: str, max_tokens: int) -> str:
        started = time.process_time()
        cut = self.inner.truncate(text, max_tokens)
        self.seconds += time.process_time() - started
        return str(cut)


class _TimedSummarizer:
    """A plain summarizer (``extractive``), timed: its own counting is inside its time."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.seconds, self.calls = 0.0, 0

    def summarize(self, messages: Any, *, previous: str | None, target_tokens: int) -> str:
        started = time.process_time()
        try:
            return str(
                self.inner.summarize(messages, previous=previous, target_tokens=target_tokens)
            )
        finally:
            self.seconds += time.process_time() - started
            self.calls += 1


def split(args: argparse.Namespace) -> None:
    """Where the CPU of ``condense compress-dataset`` goes on the ``--records`` set (of up
    to ``--max-tokens``), in one process: the command's imports and the vocabulary (once
    per run; forked workers share them), then per record the counting, the summarizer,
    JSON parsing and the rest, next to one pass of tiktoken over every turn's text (what
    hermes counts, and more)."""
    data = dataset(args.data_dir, args.records or 300, args.seed, args.max_tokens)
    probe = (
        "import time; started = time.process_time()\n"
        "from condense.cli.app import build_parser\n"
        "build_parser('compress-dataset')\n"
        "import condense.datasets.local, condense.datasets.runner\n"
        "import condense.summarizers.extractive\n"
        "imported = time.process_time()\n"
        "from condense.datasets.tokenizer import load_tokenizer, resolve_tokenizer\n"
        "load_tokenizer(resolve_tokenizer(None))\n"
        "print(imported - started, time.process_time() - imported)\n"
    )
    env = command_env(args.data_dir)
    subprocess.run([sys.executable, "-c", probe], env=env, check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", probe], env=env, check=True, capture_output=True)
    imports, vocabulary = (float(x) for x in done.stdout.split())

    from condense.datasets import RecordProcessor
    from condense.datasets.summaries import build_summarizer
    from condense.datasets.trajectory import read_trajectory

    options = DatasetOptions(
        target_tokens=args.target,
        summary_tokens=SUMMARY_TOKENS,
        tail_turns=TAIL_TURNS,
        turn_overhead=0,
    )
    summarizer = _TimedSummarizer(build_summarizer("extractive"))
    processor = RecordProcessor(options, summarizer)  # type: ignore[arg-type]
    tokenizer = processor.tokenizer = _TimedTokenizer(processor.tokenizer)
    lines = (data / "trajectories.jsonl").read_bytes().splitlines()
    started = time.process_time()
    for line in lines:
        processor.process(line)
    total = time.process_time() - started

    started = time.process_time()
    records = [json.loads(line) for line in lines]
    parse = time.process_time() - started
    texts = [text for record in records for text in read_trajectory(record).texts]
    started = time.process_time()
    once = sum(tokenizer.inner.count(text) for text in texts)
    one_pass = time.process_time() - started

    table = Table(title=f"where condense's CPU goes: {len(lines):,} records, one process")
    for column in ("part", "CPU s", "share", "note"):
        table.add_column(column, justify="left" if column in ("part", "note") else "right")
    whole = imports + vocabulary + total
    rest = total - tokenizer.seconds - summarizer.seconds - parse
    rows = [
        ("imports (the command's)", imports, "once per run"),
        ("vocabulary (o200k_base)", vocabulary, "once per run; forked workers share it"),
        (
            f"counting ({counter_backend()})",
            tokenizer.seconds,
            f"{tokenizer.calls:,} calls, {tokenizer.tokens / 1e6:.2f}M tokens "
            f"(one pass over every turn: {once / 1e6:.2f}M tokens, {one_pass:.2f} s)",
        ),
        ("summarizer (extractive)", summarizer.seconds, f"{summarizer.calls:,} summaries"),
        ("JSON parsing", parse, "the lines' json.loads, timed apart"),
        ("rest of the record work", rest, "plan, placement, output, stats"),
    ]
    for part, seconds, note in rows:
        table.add_row(part, f"{seconds:.2f}", f"{seconds / whole:.0%}", note)
    table.add_row("total", f"{whole:.2f}", "", "")
    Console(width=140).print(table)


# --- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="400 trajectories")
    parser.add_argument("--records", type=int, help="number of trajectories (default 10,000)")
    parser.add_argument("--target", type=int, default=16_000, help="target tokens")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--latency", type=float, default=1.0, help="simulated LLM seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "condense-bench"
    )
    parser.add_argument("--no-hermes", action="store_true", help="skip hermes-agent")
    parser.add_argument("--no-llm", action="store_true", help="skip the simulated-LLM runs")
    parser.add_argument(
        "--max-tokens", type=int, default=200_000, help="largest trajectory drawn (tokens)"
    )
    parser.add_argument(
        "--command", action="store_true", help="also run condense as `condense compress-dataset`"
    )
    parser.add_argument(
        "--ratios", action="store_true", help="the ratios of the two commands (see above)"
    )
    parser.add_argument(
        "--ratio-records", type=int, nargs="+", default=[300, 3000], metavar="N",
        help="--ratios: trajectories per run (default: 300 3000)",
    )  # fmt: skip
    parser.add_argument(
        "--split", action="store_true", help="where condense's CPU goes (--records, one process)"
    )
    parser.add_argument("--runs", type=int, default=5, help="--ratios: pairs of runs")
    parser.add_argument(
        "--load", type=int, default=os.cpu_count() or 1, help="--ratios: busy processes"
    )
    args = parser.parse_args(argv)
    if args.ratios:
        ratios(args)
        return 0
    if args.split:
        split(args)
        return 0
    records = args.records or (400 if args.quick else 10_000)
    data = dataset(args.data_dir, records, args.seed, args.max_tokens)
    size = (data / "trajectories.jsonl").stat().st_size
    out = args.data_dir / "out"
    print(
        f"{records:,} trajectories, {size / 1e6:,.0f} MB, target {args.target:,} tokens, "
        f"{args.workers} workers"
    )

    rows: list[tuple[str, str, float]] = []
    rows.append(
        (
            "condense",
            "extractive",
            run_condense(data, out / "c1", target=args.target, llm=None, workers=args.workers),
        )
    )
    if args.command:
        rows.append(
            (
                "condense (command)",
                "extractive",
                run_condense_command(data, out / "c0", target=args.target, workers=args.workers),
            )
        )
    if not args.no_llm:
        rows.append(
            (
                "condense",
                f"simulated LLM {args.latency:g} s @64",
                run_condense(
                    data, out / "c2", target=args.target, llm=args.latency, workers=args.workers
                ),
            )
        )
    if not args.no_hermes:
        python = hermes_python(args.data_dir)
        rows.append(
            (
                "hermes 0.19.0",
                "instant stub",
                run_hermes(python, data, out / "h1", target=args.target, llm=0.0),
            )
        )
        if not args.no_llm:
            rows.append(
                (
                    "hermes 0.19.0",
                    f"simulated LLM {args.latency:g} s @64",
                    run_hermes(python, data, out / "h2", target=args.target, llm=args.latency),
                )
            )

    hermes_rate = next(
        (records / s for tool, how, s in rows if tool.startswith("hermes") and "stub" in how), None
    )
    table = Table(
        title=f"condense dataset vs hermes trajectory_compressor — {records:,} trajectories"
    )
    for column in ("tool", "summarizer", "wall s", "records/s", "MB/s", "× hermes (stub)"):
        table.add_column(column, justify="left" if column in ("tool", "summarizer") else "right")
    for tool, how, seconds in rows:
        rate = records / seconds
        ratio = f"{rate / hermes_rate:.1f}×" if hermes_rate else "-"
        table.add_row(
            tool, how, f"{seconds:,.1f}", f"{rate:,.1f}", f"{size / 1e6 / seconds:,.1f}", ratio
        )
    Console().print(table)
    shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
