"""Benchmark: condense.compress on generated agent sessions of 20k to 1M tokens, measured
against counting the same input once with tiktoken o200k, and side by side with
hermes-agent 0.19.0's ContextCompressor (its LLM call stubbed out).

    python bench/bench_compress.py                 # 20k, 100k, 400k, 1M tokens; 8k and 32k
    python bench/bench_compress.py --quick         # 20k and 100k
    python bench/bench_compress.py --sizes 1000000 --budgets 8000 --no-hermes
    python bench/bench_compress.py --kinds generated real ops   # + real and held-out sessions

Sessions are generated coding sessions (``condense.testing.sessions``); ``--kinds`` adds
real corpus conversations joined end to end (``real``) and the held-out operations
sessions of ``bench_probe.py`` (``ops``: logs full of ids, minified JSON, tables). Each
ends with the user's new ask (the turn since the latest ask is never reduced). The
reference is physical: one ``encode_ordinary`` pass over all the message text (the
contents and the calls' arguments) with o200k, the least any exact count of the input
costs. Every row prints, for a session seen for the first time (no cached token counts):

- ``o200k``: that pass; ``compress``: the whole ``compress`` call; ``ratio``: compress in
  passes (each run's compress over the pass measured right before it; the median);
- the split: ``summary`` is the time inside the summarizer (``ExtractiveSummarizer``),
  ``engine`` the rest (repair, measuring, planning, exact counting, reductions, the gate);
  both in passes too;
- ``+1 turn``: the next call with ``previous=state`` after one more ask;
- hermes-agent's time on the same session and budget, and in passes.

hermes-agent pins ``openai==2.x``, so it is installed in its own virtualenv under
``bench/.venv-hermes`` on first use (network: PyPI only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from condense import compress
from condense.summarizers._text import forget
from condense.summarizers.extractive import ExtractiveSummarizer
from condense.testing.sessions import synthetic_session
from condense.tokens import count_tokens
from condense.tokens.counting import shared_counter
from condense.tokens.encodings import counter_backend, get_encoding
from condense.types import RawMessage

HERE = Path(__file__).resolve().parent
HERMES_VENV = HERE / ".venv-hermes"
SIZES = (20_000, 100_000, 400_000, 1_000_000)
BUDGETS = (8_000, 32_000)
NEXT_TURN = [
    {"role": "assistant", "content": "We are done with the fix; the changelog is left."},
    {"role": "user", "content": "Thanks. Now please also update the changelog."},
]


class TimedExtractive(ExtractiveSummarizer):
    """The extractive summarizer, adding up the time spent in it."""

    spent = 0.0

    def summarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        started = time.process_time()
        try:
            return super().summarize(messages, previous=previous, target_tokens=target_tokens)
        finally:
            TimedExtractive.spent += time.process_time() - started


def session_of(tokens: int, kind: str = "generated") -> list[dict[str, Any]]:
    """A session of about ``tokens`` tokens, of ``kind`` (see the module docstring), that
    ends with the user's new ask (``_probe_sessions``: one home for the benches' sessions)."""
    from _probe_sessions import SOURCES, ops_session, real_session, team_session

    if kind == "real":
        return real_session(SOURCES, tokens)
    if kind == "ops":
        return ops_session(tokens, seed=tokens)
    return team_session(tokens, seed=tokens)


def message_text(session: Sequence[dict[str, Any]]) -> list[str]:
    """All the text of ``session``: contents and the calls' names and arguments."""
    texts: list[str] = []
    for message in session:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p["text"] for p in content if isinstance(p, dict) and "text" in p]
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            texts += [str(function.get("name") or ""), str(function.get("arguments") or "")]
    return texts


def o200k_pass(texts: Sequence[str]) -> float:
    encoding = get_encoding("o200k_base")
    started = time.process_time()
    for text in texts:
        encoding.encode_ordinary(text)
    return time.process_time() - started


def time_condense(session: list[dict[str, Any]], budget: int, repeats: int) -> dict[str, float]:
    texts = message_text(session)
    summarizer = TimedExtractive()
    rows: list[dict[str, float]] = []
    for _ in range(repeats):
        reference = o200k_pass(texts)
        shared_counter().clear()  # a session never seen before: no cached counts…
        forget()  # …and nothing the summarizer remembers
        TimedExtractive.spent = 0.0
        started = time.process_time()
        result = compress(session, budget=budget, summarizer=summarizer)
        cold = time.process_time() - started
        summary = TimedExtractive.spent
        grown = [*session, *NEXT_TURN]
        started = time.process_time()
        again = compress(grown, budget=budget, summarizer=summarizer, previous=result.state)
        incremental = time.process_time() - started
        assert again.report.incremental and again.report.fits
        rows.append(
            {
                "reference": reference,
                "cold": cold,
                "summary": summary,
                "incremental": incremental,
                "ratio": cold / reference,
                "summary_ratio": summary / reference,
                "engine_ratio": (cold - summary) / reference,
            }
        )
    median = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
    median["tokens_out"] = result.report.tokens_after
    return median


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


def time_hermes(sessions: dict[str, list[dict[str, Any]]], budget: int) -> dict[str, float]:
    """hermes-agent's seconds per session (its own venv, one subprocess per budget)."""
    python = _hermes_python()
    if python is None:
        print("hermes-agent could not be installed; skipping it", file=sys.stderr)
        return {}
    payload = {name: [*msgs, NEXT_TURN] for name, msgs in sessions.items()}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(payload, handle)
    done = subprocess.run(
        [str(python), str(HERE / "_hermes_runner.py"), handle.name, str(budget)],
        capture_output=True,
        text=True,
        check=False,
    )
    Path(handle.name).unlink()
    if done.returncode != 0:
        print(f"hermes runner failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return {}
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {row["name"]: row["seconds"] for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k and 100k tokens only")
    parser.add_argument("--sizes", type=int, nargs="+", help="session sizes in tokens")
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--no-hermes", action="store_true", help="skip the comparison")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--kinds", nargs="+", default=["generated"], choices=("generated", "real", "ops")
    )
    args = parser.parse_args()
    sizes = args.sizes or ((20_000, 100_000) if args.quick else SIZES)
    sessions = {
        (f"{size // 1000}k" if kind == "generated" else f"{kind} {size // 1000}k"): session_of(
            size, kind
        )
        for kind in args.kinds
        for size in sizes
    }
    compress(synthetic_session(50, seed=1), budget=1_000)  # load the vocabulary once
    print(
        f"compress, cold, against one o200k pass over the input (median of {args.repeats});"
        f" ratios in passes; condense counts with {counter_backend()}; load average {_load()}"
    )
    header = (
        f"{'session':>10} {'tokens in':>10} {'budget':>6} {'out':>7} {'o200k':>8} "
        f"{'compress':>9} {'ratio':>6} {'summary':>7} {'engine':>6} {'+1 turn':>8} "
        f"{'hermes':>9} {'ratio':>6}"
    )
    print(header)
    for budget in args.budgets:
        hermes = {} if args.no_hermes else time_hermes(sessions, budget)
        for name, session in sessions.items():
            ours = time_condense(session, budget, args.repeats)
            theirs = hermes.get(name)
            reference = ours["reference"]
            print(
                f"{name:>10} {count_tokens(session):>10,} {budget // 1000:>5}k "
                f"{ours['tokens_out']:>7,} {reference * 1000:>6.1f}ms "
                f"{ours['cold'] * 1000:>7.1f}ms {ours['ratio']:>6.2f} "
                f"{ours['summary_ratio']:>7.2f} {ours['engine_ratio']:>6.2f} "
                f"{ours['incremental'] * 1000:>6.1f}ms "
                + (
                    f"{theirs * 1000:>7.1f}ms {theirs / reference:>6.2f}"
                    if theirs
                    else f"{'—':>9} {'—':>6}"
                ),
                flush=True,
            )
    print(f"load average at the end: {_load()}")


def _load() -> str:
    """The machine's load average over 1, 5 and 15 minutes (the ratios hold under load
    better than the times, but not entirely: say it next to them)."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
