"""Sweep: compress real conversations at every budget that matters, for every profile,
and report any broken guarantee.

    python bench/sweep_guarantees.py                       # 12 records a file, all profiles
    python bench/sweep_guarantees.py --records 40 --seed 3
    python bench/sweep_guarantees.py --providers mistral,gemini

For each record of each corpus file (``../shared/corpus`` when present, or
``CONDENSE_CORPUS``, else the sample under ``tests/data/corpus``) and each profile, the
budgets run from the record's protected part upward to just past its size. Each result
must be valid for its profile, leave the input untouched, fit whenever its protected
part does, and never be larger than the (repaired) input. Then a next turn is appended
and compressed with ``previous=state``, and it must hold the same. Every problem is
printed with what reproduces it (file, line, profile, budget). The exit status is 1 if
there was any.

This is the corpus side of ``tests/test_compress_guarantees.py``, which sweeps
generated small layouts in CI. It found the three bugs fixed in session 3: a smaller
output refused, a Mistral bridge not counted, and a filler glued to an ask.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from collections.abc import Iterator
from typing import Any

from bench_probe import corpus_dir

from condense import compress, repair, validate
from condense.formats.sharegpt import from_sharegpt
from condense.providers import PROFILES
from condense.tokens import count_tokens

NEXT_TURN = {"role": "user", "content": "Please continue with the next step."}


def records(per_file: int, rng: random.Random) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(file#line, messages)`` for a random sample of each corpus file's lines."""
    for path in sorted(corpus_dir().glob("*/*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number in sorted(rng.sample(range(len(lines)), min(per_file, len(lines)))):
            record = json.loads(lines[number])
            messages = record.get("messages") if "messages" in record else from_sharegpt(record)
            if isinstance(messages, list) and messages:
                yield f"{path.name}#{number + 1}", messages


def budgets(protected: int, size: int, rng: random.Random) -> list[int]:
    """The budgets where guarantees break: at and just above the protected part, in
    between, and around the record's own size."""
    top = max(protected, size)
    picks = {protected, protected + 1, protected + 7, protected + 40, protected + 200}
    picks |= {(protected + size) // 2, size - 1, size, size + 5}
    picks.add(rng.randint(max(1, protected - 50), top + 10))
    return sorted(b for b in picks if b > 0)


def check(where: str, messages: list[dict[str, Any]], provider: str, budget: int) -> list[str]:
    """The problems of one compression (and of the next turn after it)."""
    problems: list[str] = []
    before = copy.deepcopy(messages)
    result = compress(messages, budget=budget, provider=provider)
    report = result.report
    label = f"{where} provider={provider} budget={budget}"
    if messages != before:
        problems.append(f"MUTATED {label}")
    if broken := validate(result.messages, provider=report.provider):
        problems.append(f"INVALID {label}: {broken[0]}")
    repaired = count_tokens(repair(messages, provider=report.provider).messages)
    if report.tokens_after > max(repaired, report.tokens_before):
        problems.append(f"GREW {label}: {report.describe()}")
    if report.protected_tokens <= budget and not report.fits:
        problems.append(f"OVER {label}: protected {report.protected_tokens}; {report.describe()}")
    grown = [*messages, NEXT_TURN]
    again = compress(grown, budget=budget + 30, provider=provider, previous=result.state)
    if broken := validate(again.messages, provider=again.report.provider):
        problems.append(f"INVALID next turn {label}: {broken[0]}")
    if again.report.protected_tokens <= budget + 30 and not again.report.fits:
        problems.append(f"OVER next turn {label}: {again.report.describe()}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=12, help="records per corpus file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--providers", default="auto," + ",".join(sorted(PROFILES)))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    providers = [name for name in args.providers.split(",") if name]
    problems = runs = 0
    for where, messages in records(args.records, rng):
        for provider in providers:
            probe = compress(messages, budget=1, provider=provider).report
            for budget in budgets(probe.protected_tokens, probe.tokens_before, rng):
                found = check(where, messages, provider, budget)
                runs += 1
                for line in found:
                    print(line, flush=True)
                problems += len(found)
    print(f"{runs} compressions (each with a next turn), {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
