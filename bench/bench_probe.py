"""Probe benchmark: do compressed histories keep what the next turn needs?

    python bench/bench_probe.py              # generated + real sessions, 8k and 32k
    python bench/bench_probe.py --quick      # fewer sessions
    CONDENSE_BASE_URL=... CONDENSE_MODEL=... python bench/bench_probe.py   # + openai

Probe 1 plants verbatim facts of many kinds (an error code with its file and line, a
decision with its reason, a config key with its value, a host and port, a root-cause
commit, an account id, a ticket id, a flaky test, a URL, a number with its unit) in the
middle third of long sessions — generated ones (``condense.testing.sessions``) and real
third-party conversations from the corpus joined end to end — compresses them to each
budget with each summarizer, and prints the share of facts kept per kind and budget,
the budget use and the time. It then appends a next turn and compresses again with
``previous=state``: the share of the first compression's facts still present.

Probe 2 plants nothing: for real conversations it asks whether the file paths, error
messages and tool names of the span that was summarized appear in the output.

The corpus is ``../shared/corpus`` next to the repository when present (or
``CONDENSE_CORPUS``), else the sample under ``tests/data/corpus``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from condense import compress
from condense.formats.sharegpt import from_sharegpt
from condense.repair import repair
from condense.testing.sessions import synthetic_session
from condense.tokens import count_tokens

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUDGETS = (8_000, 32_000)
# A session is about this many times the larger budget, so its middle third is summarized.
SESSION_TOKENS = 110_000


# -- planted facts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A fact of ``kind``, kept when every string of ``probes`` is in the output."""

    kind: str
    probes: tuple[str, ...]
    unit: tuple[dict[str, Any], ...]


_WORD_LIST = (
    "ledger invoice payout refund settlement reconcile shipment warehouse tenant quota "
    "webhook scheduler gateway replica cache session token billing export importer"
)
_WORDS = _WORD_LIST.split()


def _noise_lines(rng: random.Random, count: int) -> list[str]:
    """Log-like lines that all look alike (timestamps, INFO, the same few words)."""
    lines = []
    for i in range(count):
        words = " ".join(rng.choice(_WORDS) for _ in range(6))
        lines.append(f"2025-03-{rng.randint(1, 28):02d}T10:{i % 60:02d}:07Z INFO {words} ok")
    return lines


def _unit(
    rng: random.Random, ask: str, tool: str, args: dict[str, Any], output: str, after: str
) -> tuple[dict[str, Any], ...]:
    call_id = f"call_probe_{rng.randrange(16**8):08x}"
    return (
        {"role": "user", "content": ask},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(args)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": output},
        {"role": "assistant", "content": after},
    )


def _buried(rng: random.Random, line: str, before: int = 25, after: int = 25) -> str:
    return "\n".join([*_noise_lines(rng, before), line, *_noise_lines(rng, after)])


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def planted_facts(rng: random.Random) -> list[Fact]:
    """One fact of each kind, with fresh values, each carried by a unit of its own."""
    mod = rng.choice(("ledger_sync", "payout_batch", "invoice_render", "quota_guard"))
    code = f"E{rng.randint(1000, 9999)}"
    line = rng.randint(100, 999)
    lib = rng.choice(("grpcio", "urllib3", "protobuf", "sqlalchemy"))
    version = f"{rng.randint(1, 4)}.{rng.randint(10, 60)}.{rng.randint(1, 9)}"
    key = rng.choice(("max_inflight_requests", "retry_backoff_ms", "pool_recycle_seconds"))
    value = rng.randint(1000, 9999)
    host = f"db-replica-{rng.randint(10, 99)}.internal:{rng.randint(5000, 9999)}"
    commit = _hex(rng, 10)
    account = f"ACCT-{rng.randint(10000, 99999)}"
    ticket = f"OPS-{rng.randint(1000, 9999)}"
    test = f"test_{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_race"
    url = f"https://wiki.example.internal/runbooks/{rng.choice(_WORDS)}-{rng.randint(100, 999)}"
    latency = f"{rng.randint(1100, 4900)} ms"
    return [
        Fact(
            "error code file:line",
            (code, f"{mod}.py:{line}"),
            _unit(
                rng,
                "Run the billing job again and tell me what breaks.",
                "bash",
                {"command": "python -m jobs.billing --dry-run"},
                _buried(rng, f"ERROR [{code}] reconciliation aborted at src/jobs/{mod}.py:{line}"),
                "The job fails; see the error above.",
            ),
        ),
        Fact(
            "decision + reason",
            (f"{lib} to {version}", "keepalive"),
            _unit(
                rng,
                "Should we upgrade the dependency or pin it?",
                "bash",
                {"command": f"pip index versions {lib}"},
                "\n".join(_noise_lines(rng, 12)),
                f"I compared both options. We decided to pin {lib} to {version} instead of "
                "upgrading, because the next release breaks the keepalive handshake with "
                "the gateway.",
            ),
        ),
        Fact(
            "config key=value",
            (f"{key} = {value}",),
            _unit(
                rng,
                "What is configured in production?",
                "read_file",
                {"path": "deploy/prod/service.toml"},
                "\n".join(
                    [
                        *(f"{w}_{rng.choice(_WORDS)} = true" for w in rng.sample(_WORDS, 12)),
                        f"{key} = {value}",
                        *(f"{w}_enabled = false" for w in rng.sample(_WORDS, 12)),
                    ]
                ),
                "That is the production configuration.",
            ),
        ),
        Fact(
            "host:port",
            (host,),
            _unit(
                rng,
                "Why does the export hang?",
                "bash",
                {"command": "python -m jobs.export --verbose"},
                _buried(rng, f"psycopg.OperationalError: connection to {host} failed: timeout"),
                "The export cannot reach its database.",
            ),
        ),
        Fact(
            "root-cause commit",
            (commit,),
            _unit(
                rng,
                "Find which change introduced the regression.",
                "bash",
                {"command": "git bisect run pytest -q tests/test_payout.py"},
                "\n".join([*_noise_lines(rng, 10), f"{commit} is the first bad commit"]),
                f"The root cause is commit {commit}: it dropped the retry on HTTP 409.",
            ),
        ),
        Fact(
            "account id",
            (account,),
            _unit(
                rng,
                f"The customer on account {account} reports double charges; check them.",
                "bash",
                {"command": "python -m tools.charges --recent"},
                "\n".join(_noise_lines(rng, 20)),
                "I see the recent charges; nothing unusual in this window.",
            ),
        ),
        Fact(
            "ticket id",
            (ticket,),
            _unit(
                rng,
                "Anything else open on this?",
                "search_issues",
                {"query": "double charge"},
                "\n".join(
                    [*_noise_lines(rng, 8), f"{ticket} [open] double charge on retry", "1 match"]
                ),
                f"This is tracked in {ticket}, still open.",
            ),
        ),
        Fact(
            "flaky test",
            (test,),
            _unit(
                rng,
                "Run the integration tests.",
                "bash",
                {"command": "pytest -q tests/integration"},
                "\n".join(
                    [
                        *("." * 60 for _ in range(8)),
                        f"FAILED tests/integration/test_payout.py::{test} - AssertionError",
                        "1 failed, 480 passed in 93.12s",
                    ]
                ),
                f"{test} is flaky: it passed on the rerun.",
            ),
        ),
        Fact(
            "url",
            (url,),
            _unit(
                rng,
                "Is there a runbook for this?",
                "search_docs",
                {"query": "runbook reconciliation"},
                "\n".join([*_noise_lines(rng, 6), f"found: {url}"]),
                f"Yes, the runbook is at {url}",
            ),
        ),
        Fact(
            "number with unit",
            (latency,),
            _unit(
                rng,
                "How bad is the latency now?",
                "bash",
                {"command": "python -m tools.metrics p99 --since 1h"},
                _buried(rng, f"p99 latency: {latency} (budget 800 ms)", 10, 10),
                "Latency is well over budget.",
            ),
        ),
    ]


def plant(session: list[dict[str, Any]], facts: Sequence[Fact]) -> list[dict[str, Any]]:
    """``session`` with each fact's unit inserted before a user message of its middle third."""
    n = len(session)
    spots = [
        i
        for i in range(n // 3, 2 * n // 3)
        if session[i].get("role") == "user" and not session[i - 1].get("tool_calls")
    ]
    if not spots:
        raise ValueError("no user message in the middle third to plant before")
    at: dict[int, list[Fact]] = defaultdict(list)
    for k, fact in enumerate(facts):
        at[spots[k * len(spots) // len(facts)]].append(fact)
    out: list[dict[str, Any]] = []
    for i, message in enumerate(session):
        for fact in at.get(i, ()):
            out.extend(fact.unit)
        out.append(message)
    return out


# -- sessions -------------------------------------------------------------------------------


def corpus_dir() -> Path:
    for candidate in (os.environ.get("CONDENSE_CORPUS"), ROOT.parent / "shared" / "corpus"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return ROOT / "tests" / "data" / "corpus"


def _conversations(path: Path) -> Iterator[list[dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "messages" in record:
                yield record["messages"]
            else:
                yield from_sharegpt(record)


def real_sessions(limit: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """Conversations of one corpus file joined end to end until SESSION_TOKENS, repaired."""
    root = corpus_dir()
    sessions = []
    for path in sorted(root.glob("*/*.jsonl")):
        joined: list[dict[str, Any]] = []
        for conversation in _conversations(path):
            body = [m for m in conversation if m.get("role") != "system" or not joined]
            joined.extend(body)
            if count_tokens(joined) >= SESSION_TOKENS:
                break
        if count_tokens(joined) < BUDGETS[-1] * 2:
            # A small sample file: repeat it (fresh planted values keep the facts unique).
            joined = joined * max(2, SESSION_TOKENS // max(1, count_tokens(joined)))
        sessions.append((path.stem, list(repair(joined).messages)))
        if len(sessions) >= limit:
            break
    return sessions


def generated_sessions(count: int) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(f"generated-{s}", synthetic_session(280, seed=s)) for s in range(count)]


def next_turn(seed: int) -> list[dict[str, Any]]:
    """A following turn: a new ask and a few thousand tokens of tool work."""
    return synthetic_session(30, seed=1000 + seed)[1:]


# -- measuring ------------------------------------------------------------------------------


def output_text(messages: Sequence[Any]) -> str:
    return json.dumps(list(messages), ensure_ascii=False).replace("\\n", "\n").replace('\\"', '"')


def kept(fact: Fact, text: str) -> bool:
    return all(probe in text for probe in fact.probes)


_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w-]+\.[A-Za-z]{1,5}\b")
# An error message a reader would quote: the line starts with it (not a source listing).
_ERROR = re.compile(
    r"^(?:[\w.]*(?:Error|Exception)\b:?.*|(?:error|ERROR|fatal|FATAL)\b[:\[].*|FAILED .*"
    r"|\S+: .*(?:No such file|not found|Permission denied).*)$",
    re.M,
)


def span_items(messages: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    """What the agent worked with in ``messages``: the file paths named in its tool calls
    and its own text, the error lines of the outputs (first 60 chars), the tool names."""
    items: dict[str, set[str]] = {"paths": set(), "errors": set(), "tools": set()}
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else output_text(content or [])
        if message.get("role") == "assistant":
            items["paths"].update(_PATH.findall(text))
        else:
            for line in _ERROR.findall(text[:20_000]):
                if len(line.strip()) >= 12:
                    items["errors"].add(line.strip()[:60])
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if function.get("name"):
                items["tools"].add(function["name"])
            items["paths"].update(_PATH.findall(str(function.get("arguments") or "")))
    return items


@dataclass
class Tally:
    kept: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.kept += ok
        self.total += 1

    def share(self) -> str:
        return f"{100 * self.kept / self.total:5.1f}%" if self.total else "    —"


def probe(
    name: str,
    sessions: list[tuple[str, list[dict[str, Any]]]],
    summarizer: str,
    budgets: Sequence[int],
    *,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    per_kind: dict[tuple[str, int], Tally] = defaultdict(Tally)
    per_budget: dict[int, Tally] = defaultdict(Tally)
    carried: dict[int, Tally] = defaultdict(Tally)
    use: dict[int, list[float]] = defaultdict(list)
    times: dict[int, list[float]] = defaultdict(list)
    for number, (label, session) in enumerate(sessions):
        rng = random.Random(f"{label}-{number}")
        facts = planted_facts(rng)
        planted = plant(session, facts)
        for budget in budgets:
            started = time.perf_counter()
            first = compress(planted, budget=budget, summarizer=summarizer)
            times[budget].append(time.perf_counter() - started)
            use[budget].append(first.report.tokens_after / budget)
            text = output_text(first.messages)
            present = []
            for fact in facts:
                ok = kept(fact, text)
                per_kind[fact.kind, budget].add(ok)
                per_budget[budget].add(ok)
                if ok:
                    present.append(fact)
            grown = [*planted, *next_turn(number)]
            again = compress(grown, budget=budget, summarizer=summarizer, previous=first.state)
            later = output_text(again.messages)
            for fact in present:
                carried[budget].add(kept(fact, later))
    kinds = sorted({kind for kind, _ in per_kind})
    log(f"\n{name} — {len(sessions)} sessions, summarizer {summarizer}")
    log(f"{'fact kind':>22} " + " ".join(f"{b // 1000:>5}k" for b in budgets))
    for kind in kinds:
        log(f"{kind:>22} " + " ".join(f"{per_kind[kind, b].share():>6}" for b in budgets))
    log(f"{'all facts':>22} " + " ".join(f"{per_budget[b].share():>6}" for b in budgets))
    log(f"{'kept after next turn':>22} " + " ".join(f"{carried[b].share():>6}" for b in budgets))
    log(
        f"{'budget use':>22} " + " ".join(f"{100 * statistics.mean(use[b]):5.1f}%" for b in budgets)
    )
    log(
        f"{'median time':>22} "
        + " ".join(f"{1000 * statistics.median(times[b]):4.0f}ms" for b in budgets)
    )
    return {"facts": per_budget, "carried": carried}


def span_probe(
    sessions: list[tuple[str, list[dict[str, Any]]]],
    summarizer: str,
    budgets: Sequence[int],
    *,
    log: Callable[[str], None] = print,
) -> None:
    log(f"\nreal conversations: items of the summarized span in the output ({summarizer})")
    log(f"{'session':>36} {'budget':>6} {'paths':>14} {'errors':>14} {'tools':>14}")
    for label, session in sessions:
        for budget in budgets:
            result = compress(session, budget=budget, summarizer=summarizer)
            span = [
                message
                for unit in result.report.units
                if unit.action == "summarized"
                for message in session[unit.start : unit.stop]
            ]
            text = output_text(result.messages)
            cells = []
            for found in span_items(span).values():
                tally = Tally()
                for item in found:
                    tally.add(item in text)
                cells.append(f"{tally.share()} of {tally.total:>4}")
            log(f"{label[:36]:>36} {budget // 1000:>5}k " + " ".join(f"{c:>14}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sessions")
    args = parser.parse_args()
    summarizers = ["extractive"]
    if os.environ.get("CONDENSE_BASE_URL"):
        summarizers.append("openai")
    generated = generated_sessions(2 if args.quick else 4)
    real = real_sessions(4 if args.quick else 7)
    print(f"corpus: {corpus_dir()}")
    for summarizer in summarizers:
        probe("generated sessions", generated, summarizer, BUDGETS)
        probe("real conversations", real, summarizer, BUDGETS)
        span_probe(real, summarizer, BUDGETS)


if __name__ == "__main__":
    main()
