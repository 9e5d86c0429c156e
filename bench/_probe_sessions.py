"""Sessions for ``bench_probe.py``: generated ones of two kinds, and real ones joined.

- ``team_session``: the team's generator (``condense.testing.sessions``), a coding agent
  reading files, grepping, running tests.
- ``ops_session``: held out from the summarizer's tuning — an operations agent whose
  outputs are full of rare-looking tokens: ``logfmt`` lines each with its own request id,
  pod tables with random suffixes, minified JSON with charge ids, SQL rows, Go source and
  Go test output, YAML; the user writes in English, Spanish, German and Japanese.
- ``real_session``: real third-party conversations of one corpus file (or of all of them,
  in turn) joined end to end until the size is reached; a file too small is repeated.

Each ends with the user's new ask (:data:`LATEST_ASK`): the moment an agent compresses its
history before calling the model. (The turn since the latest ask is never reduced; a
session whose only ask is its first could not be compressed at all.)
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from condense.formats.sharegpt import from_sharegpt
from condense.repair import repair
from condense.testing.sessions import synthetic_session
from condense.tokens import count_tokens

Message = dict[str, Any]
ROOT = Path(__file__).resolve().parent.parent
_TOKENS_PER_TEAM_MESSAGE = 425  # about, in synthetic_session
LATEST_ASK: Message = {"role": "user", "content": "Thanks. Where do we stand, and what is left?"}


def team_session(tokens: int, seed: int) -> list[Message]:
    """The team's generated coding session of about ``tokens`` tokens."""
    session = synthetic_session(max(40, tokens // _TOKENS_PER_TEAM_MESSAGE), seed=seed)
    while count_tokens(session) > tokens * 1.1 and len(session) > 40:
        shorter = synthetic_session(int(len(session) * 0.9), seed=seed)
        if len(shorter) >= len(session):  # the shortest session there is (it never ends)
            break
        session = shorter
    return [*session, dict(LATEST_ASK)]


# -- the held-out generator -------------------------------------------------------------------

_SVC = ("payments", "ledger", "payouts", "invoicing", "risk", "fx-rates", "notifier", "kyc")
_WORD_LIST = (
    "charge refund payout quote settle batch retry queue worker cursor shard tenant merchant"
    " currency rounding ledger entry window backfill replay drift snapshot"
)
_WORDS = _WORD_LIST.split()
_ASKS = (
    "Settlement totals drift by a few cents every night; find out why.",
    "Los reembolsos parciales fallan a veces con 409. ¿Puedes investigarlo?",
    "Bitte prüfe, warum die Auszahlungen seit gestern langsamer sind.",
    "決済のリトライが二重に走っていないか確認してください。",
    "Keep the public API of the payouts service unchanged while you fix this.",
    "Also check whether the FX quotes are cached for too long.",
)
_THOUGHTS = (
    "I'll look at the {w} logs next.",
    "Let me check the {w} worker.",
    "Nothing conclusive in the {w} output yet.",
    "The {w} numbers look normal here.",
    "Voy a revisar el {w} ahora.",
    "Ich schaue mir den {w} genauer an.",
    "{w} のログを確認します。",
)


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _logfmt(rng: random.Random, count: int) -> str:
    return "\n".join(
        f"ts=2025-06-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}.{rng.randint(100, 999)}Z level={rng.choice(('info', 'debug'))}"
        f" svc={rng.choice(_SVC)} req={_hex(rng, 12)} route=/v1/{rng.choice(_WORDS)}s"
        f" status={rng.choice((200, 200, 201, 204, 304))} dur={rng.randint(2, 300)}ms"
        for _ in range(count)
    )


def _pods(rng: random.Random, count: int) -> str:
    rows = ["NAME                                READY   STATUS    RESTARTS   AGE"]
    for _ in range(count):
        name = f"{rng.choice(_SVC)}-{_hex(rng, 9)}-{_hex(rng, 5)}"
        rows.append(
            f"{name:<36}1/1     Running   {rng.randint(0, 3)}          {rng.randint(1, 90)}d"
        )
    return "\n".join(rows)


def _json_charges(rng: random.Random, count: int) -> str:
    data = [
        {
            "id": f"ch_{_hex(rng, 14)}",
            "amount": rng.randint(100, 99_999),
            "currency": rng.choice(("eur", "usd", "jpy")),
            "status": "succeeded",
            "merchant": f"m_{_hex(rng, 8)}",
            "created": 1_717_000_000 + rng.randint(0, 10**6),
        }
        for _ in range(count)
    ]
    return json.dumps({"data": data, "has_more": True}, separators=(",", ":"))


def _sql(rng: random.Random, count: int) -> str:
    rows = ["id | tenant | amount | state", "---+--------+--------+------"]
    rows += [
        f"{rng.randint(10**6, 10**7)} | t_{_hex(rng, 6)} | {rng.randint(1, 9999)}."
        f"{rng.randint(0, 99):02d} | {rng.choice(('open', 'settled', 'settled'))}"
        for _ in range(count)
    ]
    return "\n".join(rows)


def _go_source(rng: random.Random, count: int) -> str:
    lines = ["package ledger", "", 'import "context"', ""]
    for i in range(count):
        w = rng.choice(_WORDS)
        lines.append(f"func ({w[0]} *{w.title()}) Apply{i}(ctx context.Context) error {{")
        lines.append(f"\tif err := {w[0]}.store.Load(ctx, {w[0]}.id); err != nil {{")
        lines.append(f'\t\treturn fmt.Errorf("{w}: %w", err)')
        lines.append("\t}")
        lines.append("\treturn nil")
        lines.append("}")
    return "\n".join(lines)


def _go_tests(rng: random.Random, count: int) -> str:
    lines = [f"=== RUN   Test{rng.choice(_WORDS).title()}{i}" for i in range(count)]
    lines += [f"--- PASS: Test{rng.choice(_WORDS).title()}{i} (0.0{i % 9}s)" for i in range(count)]
    lines.append(f"ok  \tgithub.com/acme/{rng.choice(_SVC)}/internal\t{rng.random():.3f}s")
    return "\n".join(lines)


def _yaml(rng: random.Random, count: int) -> str:
    return "\n".join(
        f"  {rng.choice(_WORDS)}{rng.choice(_WORDS).title()}: "
        f"{rng.choice(('true', 'false', 'auto'))}"
        for _ in range(count)
    )


def _tool_turn(rng: random.Random) -> tuple[str, dict[str, Any], str]:
    """One tool call of the operations agent: its name, arguments and output."""
    kind = rng.randrange(7)
    if kind == 0:
        return "search_logs", {"service": rng.choice(_SVC)}, _logfmt(rng, rng.randint(10, 120))
    if kind == 1:
        return "kubectl", {"args": ["get", "pods"]}, _pods(rng, rng.randint(5, 40))
    if kind == 2:
        return "http_get", {"url": "https://api.internal/v1/charges"}, _json_charges(rng, 30)
    if kind == 3:
        return "sql_query", {"sql": "select * from entries"}, _sql(rng, rng.randint(5, 50))
    if kind == 4:
        path = f"internal/{rng.choice(_WORDS)}/apply.go"
        return "read_file", {"path": path}, _go_source(rng, rng.randint(3, 30))
    if kind == 5:
        return "run_tests", {"pkg": "./internal/..."}, _go_tests(rng, rng.randint(5, 40))
    return "kubectl", {"args": ["get", "cm", "-o", "yaml"]}, _yaml(rng, rng.randint(5, 40))


def ops_session(tokens: int, seed: int) -> list[Message]:
    """A held-out generated operations session of about ``tokens`` tokens."""
    rng = random.Random(f"ops-{seed}")
    history: list[Message] = [
        {"role": "system", "content": "You are an operations agent for a payments company."},
        {"role": "user", "content": rng.choice(_ASKS)},
    ]
    size = 0
    serial = 0
    while size < tokens * 4:  # about four characters a token
        if rng.random() < 0.05:
            history.append({"role": "assistant", "content": _thought(rng)})
            history.append({"role": "user", "content": rng.choice(_ASKS)})
            continue
        calls, results = [], []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            serial += 1
            name, arguments, output = _tool_turn(rng)
            call_id = f"call_ops_{seed}_{serial:06d}"
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": output})
            size += len(output) + 200
        history.append({"role": "assistant", "content": _thought(rng), "tool_calls": calls})
        history.extend(results)
    history.append({"role": "assistant", "content": "Done for now; the drift is explained."})
    return [*history, dict(LATEST_ASK)]


def tool_loop(tokens: int, seed: int) -> list[Message]:
    """About ``tokens`` tokens of the operations agent's tool calls and their noisy outputs
    (logs, pod tables, charges, SQL rows, Go source and tests, YAML), with no ask: a
    running turn that finishes."""
    rng = random.Random(f"loop-{seed}")
    loop: list[Message] = []
    size = 0
    while size < tokens * 4:
        name, arguments, output = _tool_turn(rng)
        call_id = f"call_loop_{seed}_{len(loop):06d}"
        call = {"id": call_id, "type": "function", "function": {"name": name}}
        call["function"]["arguments"] = json.dumps(arguments)
        loop.append({"role": "assistant", "content": _thought(rng), "tool_calls": [call]})
        loop.append({"role": "tool", "tool_call_id": call_id, "content": output})
        size += len(output) + 200
    return loop


def _thought(rng: random.Random) -> str:
    return rng.choice(_THOUGHTS).format(w=rng.choice(_WORDS))


# -- real sessions ----------------------------------------------------------------------------

SOURCES = (
    "openai/tau_bench_gpt4o_airline.jsonl",
    "openai/swe_agent_trajectories.jsonl",
    "openai/openhands_trajectories.jsonl",
    "openai/toolbench_data_example.jsonl",
    "sharegpt/llamafactory_glaive_toolcall_en.jsonl",
    "sharegpt/llamafactory_glaive_toolcall_zh.jsonl",
    "sharegpt/llamafactory_reason_tool_use.jsonl",
)


def corpus_dir() -> Path:
    """``../shared/corpus`` next to the repository when present (or ``CONDENSE_CORPUS``),
    else the sample under ``tests/data/corpus``."""
    for candidate in (os.environ.get("CONDENSE_CORPUS"), ROOT.parent / "shared" / "corpus"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return ROOT / "tests" / "data" / "corpus"


def _conversations(path: Path) -> Iterator[list[Message]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            yield record["messages"] if "messages" in record else from_sharegpt(record)


def real_session(sources: tuple[str, ...], tokens: int) -> list[Message]:
    """Conversations of ``sources`` (corpus files, taken in turn) joined end to end until
    about ``tokens`` tokens, repaired; a source that runs out starts over."""
    root = corpus_dir()
    streams = [
        itertools.cycle(list(_conversations(root / source)))
        for source in sources
        if (root / source).is_file()
    ]
    joined: list[Message] = []
    size = 0
    for stream in itertools.cycle(streams):
        conversation = next(stream)
        body = [m for m in conversation if m.get("role") != "system" or not joined]
        joined.extend(body)
        size += count_tokens(body)
        if size >= tokens:
            break
    return [*repair(joined).messages, dict(LATEST_ASK)]
