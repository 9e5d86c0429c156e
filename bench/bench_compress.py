"""Benchmark: condense.compress on generated agent sessions, side by side with
hermes-agent 0.19.0's ContextCompressor (its LLM call stubbed out).

    python bench/bench_compress.py            # 200, 2,000 and 10,000 messages
    python bench/bench_compress.py --quick    # 200 and 2,000
    python bench/bench_compress.py --no-hermes

For each size it prints the time to compress a session seen for the first time (no
cached token counts), the time to re-compress it after one more turn is appended
(``previous=state``: what an agent loop pays every turn), tokens in and out (real
o200k tokens) and peak memory. hermes-agent pins ``openai==2.x``, so it is installed in
its own virtualenv under ``bench/.venv-hermes`` on first use (network: PyPI only).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import venv
from pathlib import Path
from typing import Any

from condense import compress
from condense.testing.sessions import synthetic_session
from condense.tokens import count_tokens
from condense.tokens.counting import shared_counter

HERE = Path(__file__).resolve().parent
HERMES_VENV = HERE / ".venv-hermes"
BUDGET = 100_000
NEXT_TURN = [{"role": "user", "content": "Thanks. Now please also update the changelog."}]


def _time_condense(session: list[dict[str, Any]], repeats: int) -> dict[str, float]:
    cold, incremental = [], []
    for _ in range(repeats):
        shared_counter().clear()  # a session never seen before: no cached counts
        started = time.perf_counter()
        result = compress(session, budget=BUDGET)
        cold.append(time.perf_counter() - started)
        grown = [*session, *NEXT_TURN]
        started = time.perf_counter()
        again = compress(grown, budget=BUDGET, previous=result.state)
        incremental.append(time.perf_counter() - started)
        assert again.report.incremental and again.report.fits
    tracemalloc.start()
    shared_counter().clear()
    compress(session, budget=BUDGET)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "cold": statistics.median(cold),
        "incremental": statistics.median(incremental),
        "tokens_out": result.report.tokens_after,
        "fits": result.report.fits,
        "peak_mib": peak / 2**20,
    }


def _hermes_python() -> Path | None:
    python = HERMES_VENV / "bin" / "python"
    if python.exists():
        return python
    print("installing hermes-agent==0.19.0 into bench/.venv-hermes …", file=sys.stderr)
    venv.create(HERMES_VENV, with_pip=True)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "hermes-agent==0.19.0"], check=False
    )
    return python if done.returncode == 0 else None


def _time_hermes(sessions: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    python = _hermes_python()
    if python is None:
        print("hermes-agent could not be installed; skipping it", file=sys.stderr)
        return {}
    payload = {name: [*msgs, NEXT_TURN] for name, msgs in sessions.items()}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(payload, handle)
    done = subprocess.run(
        [str(python), str(HERE / "_hermes_runner.py"), handle.name, str(BUDGET)],
        capture_output=True,
        text=True,
        check=False,
    )
    Path(handle.name).unlink()
    if done.returncode != 0:
        print(f"hermes runner failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return {}
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {row["name"]: row for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-message case")
    parser.add_argument("--no-hermes", action="store_true", help="skip the comparison")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = (200, 2_000) if args.quick else (200, 2_000, 10_000)
    sessions = {f"{n} msgs": synthetic_session(n, seed=n) for n in sizes}
    compress(synthetic_session(50, seed=1), budget=1_000)  # load the vocabulary once
    rows = []
    for name, session in sessions.items():
        tokens_in = count_tokens(session)
        rows.append((name, tokens_in, _time_condense(session, args.repeats)))
    hermes = {} if args.no_hermes else _time_hermes(sessions)
    header = (
        f"{'session':>11} {'tokens in':>10} {'out':>7} {'condense':>9} {'+1 turn':>8} "
        f"{'peak MiB':>8} {'hermes':>9} {'+1 turn':>8} {'speed-up':>8}"
    )
    print(
        f"compress to a {BUDGET:,}-token budget, extractive summarizer (median of {args.repeats})"
    )
    print(header)
    for name, tokens_in, ours in rows:
        theirs = hermes.get(name, {})
        their_time = theirs.get("seconds")
        speedup = f"{their_time / ours['cold']:.1f}×" if their_time else "—"
        print(
            f"{name:>11} {tokens_in:>10,} {ours['tokens_out']:>7,} "
            f"{ours['cold'] * 1000:>7.1f}ms {ours['incremental'] * 1000:>6.1f}ms "
            f"{ours['peak_mib']:>8.1f} "
            + (f"{their_time * 1000:>7.1f}ms " if their_time else f"{'—':>9} ")
            + (
                f"{theirs['incremental_seconds'] * 1000:>6.1f}ms "
                if "incremental_seconds" in theirs
                else f"{'—':>8} "
            )
            + f"{speedup:>8}"
        )


if __name__ == "__main__":
    main()
