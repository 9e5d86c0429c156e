"""Probe benchmark: do compressed histories keep what the next turn needs, at any length?

    python bench/bench_probe.py              # 100k, 300k and 1M-token sessions, 8k and 32k
    python bench/bench_probe.py --quick      # 100k and 300k, fewer sessions
    python bench/bench_probe.py --sizes 1000000 --budgets 8000
    python bench/bench_probe.py --quick --dataset   # the same, as ShareGPT records, at 16k
    CONDENSE_BASE_URL=... CONDENSE_MODEL=... python bench/bench_probe.py   # + openai

Facts are planted at every depth of a session — early (a tenth in), in the middle, late
(three quarters in) — in sessions of 100k to 1M tokens: generated ones (the team's coding
sessions, and held-out operations sessions full of rare-looking ids) and real third-party
conversations from the corpus joined end to end (each file alone at 100k; all of them in
turn at every size). Fact sets (``_probe_facts.py``): the ten kinds the team tuned
on; a held-out set of other shapes, wordings, languages and places in a line (its failures
were looked at while the scanner was built); and a second held-out set, written after the
summarizer's last change and never used to tune it. The ``dense`` sessions hold all three
(36 facts, a dozen at each depth): there the summary's room, not the ranking alone,
decides. A fourth set, ``dumps``, puts its facts inside what tools print (a table, CSV,
JSON, source, YAML, psql, a traceback, a test rerun, a git log) and in a call's arguments.

Each session is compressed to each budget; the share of planted facts whose every probe
string is in the output is printed by session, by depth, by kind and by budget. A next
turn is then appended and compressed with ``previous=state``: the share of the first
compression's facts still present; and again after a long next turn (about a budget's
worth of noisy tool loop before the reply and the new ask), which the summary must fold.
Every user ask of the span that was summarized is looked for too, whole or by its first
line. Each session ends with the user's new ask.

``--dataset``: each planted session as one ShareGPT trajectory through the dataset engine
(``condense compress-dataset``'s, with its defaults: a 750-token summary turn), at 16k
unless ``--budgets`` says otherwise; the share of planted facts in the record written, by
session, depth, kind and set.

The corpus is ``../shared/corpus`` next to the repository when present (or
``CONDENSE_CORPUS``), else the sample under ``tests/data/corpus``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from _probe_facts import Fact, dump_facts, heldout2_facts, heldout_facts, team_facts
from _probe_sessions import (
    SOURCES,
    corpus_dir,
    ops_session,
    real_session,
    team_session,
    tool_loop,
)

from condense import compress
from condense.datasets import DatasetOptions, RecordProcessor, Status
from condense.formats import to_sharegpt
from condense.summarizers import ExtractiveSummarizer
from condense.summarizers.salient import ask_positions
from condense.testing.sessions import synthetic_session
from condense.tokens import count_text

Message = dict[str, Any]
BUDGETS = (8_000, 32_000)
DATASET_BUDGETS = (16_000,)  # bench_dataset.py's target
SIZES = (100_000, 300_000, 1_000_000)
DEPTHS = (("early", 0.1), ("middle", 0.5), ("late", 0.75))
FACT_SETS: dict[str, Callable[[random.Random], list[Fact]]] = {
    "team": team_facts,
    "held-out": heldout_facts,
    "held-out-2": heldout2_facts,
    "dumps": dump_facts,
    # all three in one session (36 facts, a dozen at each depth): room is what limits
    "dense": lambda rng: [*team_facts(rng), *heldout_facts(rng), *heldout2_facts(rng)],
}


@dataclass(frozen=True)
class Case:
    """A session to probe: its family, size, the fact set planted in it."""

    family: str
    size: int
    facts: str
    build: Callable[[], list[Message]]

    @property
    def label(self) -> str:
        return f"{self.family} {self.size // 1000}k +{self.facts}"


def cases(sizes: Sequence[int], *, quick: bool) -> list[Case]:
    found: list[Case] = []
    for size in sizes:
        found += [
            Case("generated", size, "team", lambda s=size: team_session(s, seed=s)),
            Case("generated", size, "held-out", lambda s=size: team_session(s, seed=s + 1)),
            Case("generated-ops", size, "held-out", lambda s=size: ops_session(s, seed=s)),
            Case("real-mixed", size, "team", lambda s=size: real_session(SOURCES, s)),
            Case("real-mixed", size, "held-out", lambda s=size: real_session(SOURCES[::-1], s)),
            Case("generated-ops", size, "held-out-2", lambda s=size: ops_session(s, seed=s + 7)),
            Case(
                "real-mixed",
                size,
                "held-out-2",
                lambda s=size: real_session((*SOURCES[3:], *SOURCES[:3]), s),
            ),
            Case("generated", size, "dense", lambda s=size: team_session(s, seed=s + 3)),
            Case("generated-ops", size, "dense", lambda s=size: ops_session(s, seed=s + 3)),
            Case("real-mixed", size, "dense", lambda s=size: real_session(SOURCES[1:], s)),
            Case("generated", size, "dumps", lambda s=size: team_session(s, seed=s + 5)),
            Case("generated-ops", size, "dumps", lambda s=size: ops_session(s, seed=s + 5)),
            Case("real-mixed", size, "dumps", lambda s=size: real_session(SOURCES[2:], s)),
        ]
    if min(sizes) <= 100_000:
        for number, source in enumerate(SOURCES[: 3 if quick else None]):
            name = source.split("/")[1].split(".")[0].split("_")[0]
            if "glaive" in source:
                name += "-zh" if "_zh" in source else "-en"
            found.append(
                Case(
                    f"real-{name}",
                    100_000,
                    "held-out" if number % 2 else "team",
                    lambda source=source: real_session((source,), 100_000),
                )
            )
    return found


# -- planting ---------------------------------------------------------------------------------


def plant(
    session: list[Message], facts: Sequence[Fact], seed: int
) -> tuple[list[Message], dict[int, str], dict[int, range]]:
    """``session`` with each fact's unit inserted at its depth (facts take the depths in
    turn, starting at one chosen by ``seed``), before a user message or after a whole tool
    exchange; the depth of each fact and where its unit is in the result, by its index."""
    n = len(session)
    at: dict[int, list[int]] = defaultdict(list)
    depth_of: dict[int, str] = {}
    for number, _ in enumerate(facts):
        name, fraction = DEPTHS[(number + seed) % len(DEPTHS)]
        depth_of[number] = name
        spot = _spot(session, int(n * fraction) + number)
        at[spot].append(number)
    out: list[Message] = []
    where: dict[int, range] = {}
    for index, message in enumerate(session):
        for number in at.get(index, ()):
            where[number] = range(len(out), len(out) + len(facts[number].unit))
            out.extend(facts[number].unit)
        out.append(message)
    return out, depth_of, where


def _spot(session: list[Message], start: int) -> int:
    """The first index from ``start`` where a whole exchange may be inserted: before a user
    message, or before an assistant message that follows a finished turn."""
    for index in range(max(1, start), len(session)):
        role = session[index].get("role")
        before = session[index - 1]
        if role == "user" and not before.get("tool_calls"):
            return index
        if role == "assistant" and before.get("role") in ("tool", "assistant"):
            return index
    return len(session) - 1


def next_turn(seed: int) -> list[Message]:
    """A following turn: the answer to the latest ask, a new ask and a few tool calls (the
    turn since the new ask is never reduced: it stays well within the smaller budget)."""
    answer = {"role": "assistant", "content": "We stand here: the fix is in; tests are left."}
    return [answer, *synthetic_session(8, seed=1000 + seed, output_chars=800)[1:]]


# -- measuring --------------------------------------------------------------------------------


def output_text(messages: Sequence[Any]) -> str:
    return json.dumps(list(messages), ensure_ascii=False).replace("\\n", "\n").replace('\\"', '"')


def kept(fact: Fact, text: str) -> bool:
    return all(probe in text for probe in fact.probes)


def summarized_asks(messages: Sequence[Message], result: Any) -> list[str]:
    """The text of every ask (a user message that is not a tool observation) of the
    messages ``result`` summarized."""
    asks = ask_positions(messages)
    found = []
    for outcome in result.report.units:
        if outcome.action != "summarized":
            continue
        for index in range(outcome.start, outcome.stop):
            content = messages[index].get("content")
            if index in asks and isinstance(content, str) and content.strip():
                found.append(content.strip())
    return found


@dataclass
class Tally:
    kept: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.kept += ok
        self.total += 1

    def share(self) -> str:
        return f"{100 * self.kept / self.total:5.1f}%" if self.total else "    —"


def fact_tokens(fact: Fact) -> int:
    """What a fact needs in a summary, at least: the lines of its unit that hold its probes
    (one line when one holds them all), each as a bullet."""
    lines = [
        line.strip()
        for message in fact.unit
        for text in (message.get("content"), *_arguments(message))
        if isinstance(text, str)
        for line in text.splitlines()
    ]
    whole = [line for line in lines if all(probe in line for probe in fact.probes)]
    if whole:
        return min(count_text(f"- {line}\n") for line in whole)
    parts = {next((line for line in lines if probe in line), probe) for probe in fact.probes}
    return sum(count_text(f"- {line}\n") for line in parts)


def _arguments(message: Message) -> list[str]:
    return [call["function"]["arguments"] for call in message.get("tool_calls") or []]


def summary_blocks(messages: Sequence[Any]) -> list[str]:
    """The summaries in a compressed history (the text of each block)."""
    return [
        message["content"]
        for message in messages
        if isinstance(message.get("content"), str) and "[condense: summary of" in message["content"]
    ]


@dataclass
class Results:
    per: dict[tuple[str, ...], Tally] = field(default_factory=lambda: defaultdict(Tally))
    room: dict[tuple[str, str], list[tuple[int, int, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    use: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    times: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, ok: bool, *keys: str) -> None:
        self.per[keys].add(ok)

    def share(self, *keys: str) -> str:
        return self.per[keys].share()


def probe_case(
    case: Case, results: Results, number: int, summarizer: str, budgets: Sequence[int]
) -> None:
    rng = random.Random(f"{case.label}-{number}")
    facts = FACT_SETS[case.facts](rng)
    session = case.build()
    planted, depth_of, where = plant(session, facts, seed=number)
    for budget in budgets:
        b = f"{budget // 1000}k"
        started = time.perf_counter()
        first = compress(planted, budget=budget, summarizer=summarizer)
        results.times[budget].append(time.perf_counter() - started)
        results.use[budget].append(first.report.tokens_after / budget)
        text = output_text(first.messages)
        units = first.report.units
        summarized = {i for u in units if u.action == "summarized" for i in range(u.start, u.stop)}
        present = []
        for index, fact in enumerate(facts):
            ok = kept(fact, text)
            depth = depth_of[index]
            # lost from the summary, or from a message kept (an output masked to a line)
            part = "summary" if summarized & set(where[index]) else "kept part"
            results.add(ok, b, "part", part)
            for keys in (
                (b, "all"),
                (b, "set", case.facts),
                (b, "family", case.family, str(case.size)),
                (b, "case", case.label),
                (b, "depth", case.facts, depth),
                (b, "kind", case.facts, fact.kind),
                (b, "size", str(case.size)),
            ):
                results.add(ok, *keys)
            if ok:
                present.append(fact)
        asks_need = 0
        for ask in summarized_asks(planted, first):
            first_line = next(line.strip() for line in ask.splitlines() if line.strip())
            results.add(ask in text, b, "asks whole")
            results.add(first_line in text, b, "asks")
            results.add(first_line in text, b, "asks of", case.family)
            asks_need += count_text(f"- {first_line}\n")
        # the room the summary had, and what the span's planted facts and asks need in it
        facts_need = sum(
            fact_tokens(fact) for index, fact in enumerate(facts) if summarized & set(where[index])
        )
        room = sum(count_text(block) for block in summary_blocks(first.messages))
        results.room[(b, case.family)].append((room, facts_need, asks_need))
        grown = [*planted, *next_turn(number)]
        again = compress(grown, budget=budget, summarizer=summarizer, previous=first.state)
        later = output_text(again.messages)
        for fact in present:
            results.add(kept(fact, later), b, "carried")
            results.add(kept(fact, later), b, "carried", case.facts)
        # the running turn finishes: about a budget's worth of noisy tool loop, a reply and a
        # new ask; the summary must fold that in
        finished = [*planted, *tool_loop(budget, seed=number), *next_turn(number)]
        folded = compress(finished, budget=budget, summarizer=summarizer, previous=first.state)
        after = output_text(folded.messages)
        for fact in present:
            results.add(kept(fact, after), b, "carried long")
            results.add(kept(fact, after), b, "carried long", case.facts)


def probe_dataset_case(case: Case, results: Results, number: int, budgets: Sequence[int]) -> None:
    """``case`` planted as ``probe_case`` plants it, written as one ShareGPT record and
    compressed by the dataset engine at each budget: which facts the record keeps."""
    rng = random.Random(f"{case.label}-{number}")
    facts = FACT_SETS[case.facts](rng)
    planted, depth_of, _ = plant(case.build(), facts, seed=number)
    record = {"id": case.label, "conversations": to_sharegpt(planted)}
    line = json.dumps(record, ensure_ascii=False).encode()
    for budget in budgets:
        b = f"{budget // 1000}k"
        processor = RecordProcessor(DatasetOptions(target_tokens=budget), ExtractiveSummarizer())
        started = time.perf_counter()
        result = processor.process(line)
        results.times[budget].append(time.perf_counter() - started)
        if result.status not in (Status.COMPRESSED, Status.PASSED):
            raise SystemExit(f"{case.label}: the dataset engine wrote no record ({result})")
        written = json.loads(result.line) if result.line is not None else record
        text = output_text(written["conversations"])
        for index, fact in enumerate(facts):
            ok = kept(fact, text)
            for keys in (
                (b, "all"),
                (b, "set", case.facts),
                (b, "case", case.label),
                (b, "depth", case.facts, depth_of[index]),
                (b, "kind", case.facts, fact.kind),
                (b, "size", str(case.size)),
            ):
                results.add(ok, *keys)


def _row(results: Results, heads: Sequence[str]) -> Callable[..., None]:
    def row(name: str, *keys: str) -> None:
        cells = [
            f"{results.share(b, *keys):>7} of {results.per[(b, *keys)].total:<4}" for b in heads
        ]
        print(f"{name:>44} " + " ".join(cells))

    return row


def report_facts(
    results: Results, cases_: Sequence[Case], budgets: Sequence[int], title: str
) -> None:
    """The planted facts kept: by session, depth, kind, size and fact set."""
    heads = [f"{budget // 1000}k" for budget in budgets]
    row = _row(results, heads)
    print(f"\nplanted facts kept — {title}")
    print(f"{'':>44} " + " ".join(f"{h:>15}" for h in heads))
    print("by session")
    for case in cases_:
        row(case.label, "case", case.label)
    print("by depth")
    for fact_set in FACT_SETS:
        for depth, _ in DEPTHS:
            row(f"{fact_set} facts, {depth}", "depth", fact_set, depth)
    print("by kind")
    for fact_set in FACT_SETS:
        kinds = sorted({keys[3] for keys in results.per if keys[1:3] == ("kind", fact_set)})
        for kind in kinds:
            row(f"{fact_set}: {kind}", "kind", fact_set, kind)
    print("by size")
    for size in sorted({case.size for case in cases_}):
        row(f"{size // 1000}k tokens", "size", str(size))
    print("all")
    for fact_set in FACT_SETS:
        row(f"{fact_set} facts", "set", fact_set)
    row("all facts", "all")


def report(
    results: Results, cases_: Sequence[Case], budgets: Sequence[int], summarizer: str
) -> None:
    report_facts(results, cases_, budgets, f"summarizer {summarizer}")
    heads = [f"{budget // 1000}k" for budget in budgets]
    row = _row(results, heads)
    row("  of those in the summarized span", "part", "summary")
    row("  of those in the kept part (masked)", "part", "kept part")
    row("kept after the next turn", "carried")
    for fact_set in FACT_SETS:
        row(f"  {fact_set} facts", "carried", fact_set)
    row("kept after a long next turn (a tool loop)", "carried long")
    for fact_set in FACT_SETS:
        row(f"  {fact_set} facts", "carried long", fact_set)
    row("asks of the span present (first line)", "asks")
    row("asks of the span present whole", "asks whole")
    for family in sorted({case.family for case in cases_}):
        row(f"  first line, {family}", "asks of", family)
    print("room of the summary and what the span's planted facts and asks need in it")
    print(f"{'(mean tokens: room / facts / asks)':>44} " + " ".join(f"{h:>15}" for h in heads))
    for family in sorted({case.family for case in cases_}):
        cells = []
        for b in heads:
            found = results.room.get((b, family), [])
            means = [statistics.mean(x[i] for x in found) if found else 0 for i in range(3)]
            cells.append(f"{means[0]:>5.0f}/{means[1]:>4.0f}/{means[2]:>4.0f}")
        print(f"{family:>44} " + " ".join(f"{cell:>15}" for cell in cells))
    print(
        f"{'budget use':>44} "
        + " ".join(f"{100 * statistics.mean(results.use[b]):14.1f}%" for b in budgets)
    )
    print(
        f"{'median time of a first compression':>44} "
        + " ".join(f"{1000 * statistics.median(results.times[b]):13.0f}ms" for b in budgets)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k and 300k, fewer sessions")
    parser.add_argument("--sizes", type=int, nargs="+", help="session sizes in tokens")
    parser.add_argument("--budgets", type=int, nargs="+", help="default: 8k and 32k")
    parser.add_argument(
        "--dataset", action="store_true", help="through the dataset engine, as ShareGPT records"
    )
    parser.add_argument("--only", help="only the sessions whose label holds this text")
    args = parser.parse_args()
    sizes = args.sizes or ((100_000, 300_000) if args.quick else SIZES)
    summarizers = ["extractive"]
    if os.environ.get("CONDENSE_BASE_URL"):
        summarizers.append("openai")
    chosen = [
        case for case in cases(sizes, quick=args.quick) if not args.only or args.only in case.label
    ]
    print(f"corpus: {corpus_dir()}")
    if args.dataset:
        budgets = args.budgets or list(DATASET_BUDGETS)
        results = probe_all(chosen, lambda *at: probe_dataset_case(*at, budgets), budgets)
        report_facts(results, chosen, budgets, "dataset engine, ShareGPT records")
        print(
            f"{'median time of a record':>44} "
            + " ".join(f"{1000 * statistics.median(results.times[b]):13.0f}ms" for b in budgets)
        )
        return
    budgets = args.budgets or list(BUDGETS)
    for summarizer in summarizers:
        results = probe_all(chosen, lambda *at, s=summarizer: probe_case(*at, s, budgets), budgets)
        report(results, chosen, budgets, summarizer)


def probe_all(
    chosen: Sequence[Case],
    probe: Callable[[Case, Results, int], None],
    budgets: Sequence[int],
) -> Results:
    """Each case probed in turn (``probe(case, results, number)``), its shares printed."""
    results = Results()
    for number, case in enumerate(chosen):
        started = time.perf_counter()
        probe(case, results, number)
        shares = " ".join(results.share(f"{b // 1000}k", "case", case.label) for b in budgets)
        print(f"  {case.label:<40} {shares}  ({time.perf_counter() - started:.0f}s)", flush=True)
    return results


if __name__ == "__main__":
    main()
