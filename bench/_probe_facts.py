"""Facts to plant in a session for ``bench_probe.py``: four sets, and how to plant them.

``team_facts`` are the ten kinds the team planted while the summarizer was being built
(an error code with its file and line buried in a log, a decision with its reason, a
config value, a host and port, a root-cause commit, an account id in an ask, a ticket id,
a flaky test, a URL, a number with its unit), each in the wording it always had.

``heldout_facts`` are kept apart from the summarizer's tuning: other shapes, wordings,
languages and places in a line — a Go ``logfmt`` error in the middle of a long line, a
decision in German, French or Spanish, a YAML value, an IP and port in an nginx log, a
commit named in French, an account in a Spanish ask, a ticket inside minified JSON, a Go
test failure called flaky in Japanese, a URL without digits, a size in Japanese, an id at
the very end of a 2,000-character line, a secret's name in the middle of an ask, a date,
an owner's name. Each kind has several templates; values are fresh per seed.

``heldout2_facts`` were written after the summarizer's last change and never used to tune
it; ``dump_facts`` are facts inside what tools print (tables, CSV, JSON, source, YAML,
psql, tracebacks, test reruns, git log, ``kubectl``) and in a call's arguments.

A fact is kept when every one of its ``probes`` is in the compressed history's text.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

Unit = tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Fact:
    """A fact of ``kind``, kept when every string of ``probes`` is in the output."""

    kind: str
    probes: tuple[str, ...]
    unit: Unit


_WORD_LIST = (
    "ledger invoice payout refund settlement reconcile shipment warehouse tenant quota "
    "webhook scheduler gateway replica cache session token billing export importer"
)
_WORDS = _WORD_LIST.split()


def unit(
    rng: random.Random, ask: str, tool: str, args: dict[str, Any], output: str, after: str
) -> Unit:
    """One exchange: the user asks, the assistant calls ``tool``, it answers, the
    assistant says ``after``."""
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


def _noise_lines(rng: random.Random, count: int) -> list[str]:
    """Log-like lines that all look alike (timestamps, INFO, the same few words)."""
    lines = []
    for i in range(count):
        words = " ".join(rng.choice(_WORDS) for _ in range(6))
        lines.append(f"2025-03-{rng.randint(1, 28):02d}T10:{i % 60:02d}:07Z INFO {words} ok")
    return lines


def _buried(rng: random.Random, line: str, before: int = 25, after: int = 25) -> str:
    return "\n".join([*_noise_lines(rng, before), line, *_noise_lines(rng, after)])


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def team_facts(rng: random.Random) -> list[Fact]:
    """The team's ten kinds, one fact each, with fresh values."""
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
            unit(
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
            unit(
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
            unit(
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
            unit(
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
            unit(
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
            unit(
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
            unit(
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
            unit(
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
            unit(
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
            unit(
                rng,
                "How bad is the latency now?",
                "bash",
                {"command": "python -m tools.metrics p99 --since 1h"},
                _buried(rng, f"p99 latency: {latency} (budget 800 ms)", 10, 10),
                "Latency is well over budget.",
            ),
        ),
    ]


# -- the held-out set -------------------------------------------------------------------------

_SERVICES = ("payments", "ledger", "payouts", "invoicing", "risk", "fx-rates", "notifier")
_GO_PKGS = ("ledger", "payout", "settle", "fxquote", "dunning", "refunds")
_NAMES = (
    ("Priya", "Raman"),
    ("Tomás", "Echeverría"),
    ("Ingrid", "Solberg"),
    ("Kwame", "Mensah"),
    ("Yuki", "Tanabe"),
    ("Dariusz", "Wolny"),
)


def _logfmt(rng: random.Random, count: int, level: str = "info") -> list[str]:
    """``logfmt`` lines, each with its own request id (rare tokens everywhere)."""
    lines = []
    for i in range(count):
        lines.append(
            f"ts=2025-06-{rng.randint(1, 28):02d}T0{rng.randint(0, 9)}:{i % 60:02d}:"
            f"{rng.randint(10, 59)}.{rng.randint(100, 999)}Z level={level} "
            f"svc={rng.choice(_SERVICES)} req={_hex(rng, 12)} route=/v1/"
            f"{rng.choice(('charges', 'payouts', 'refunds', 'quotes'))} "
            f"status={rng.choice((200, 200, 201, 204))} dur={rng.randint(3, 240)}ms"
        )
    return lines


def _nginx(rng: random.Random, count: int) -> list[str]:
    return [
        f"2025/06/{rng.randint(1, 28):02d} 0{rng.randint(0, 9)}:{rng.randint(10, 59)}:"
        f"{rng.randint(10, 59)} [notice] {rng.randint(100, 999)}#0: *{rng.randint(10**5, 10**6)}"
        f' client 10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)} GET "/healthz" 200'
        for _ in range(count)
    ]


def heldout_facts(rng: random.Random) -> list[Fact]:
    """The held-out kinds, one fact each, each in one of its templates, fresh values."""
    pick = rng.choice
    facts: list[Fact] = []

    # An error code and its Go file:line, in the middle of a logfmt line, among many.
    code = f"{pick(('PAY', 'LDG', 'RSK'))}-E{rng.randint(100, 999)}"
    go_file = f"internal/{pick(_GO_PKGS)}/{pick(('sync', 'apply', 'batch'))}.go"
    go_line = rng.randint(40, 900)
    error = (
        f"ts=2025-06-14T03:12:09.{rng.randint(100, 999)}Z level=error svc={pick(_SERVICES)} "
        f"req={_hex(rng, 12)} caller={go_file}:{go_line} code={code} "
        f'msg="ledger mismatch for batch {rng.randint(10, 99)}" attempt=3'
    )
    logs = _logfmt(rng, 60)
    logs.insert(rng.randint(10, 50), error)
    facts.append(
        Fact(
            "error code in logfmt",
            (code, f"{go_file.rsplit('/', 1)[1]}:{go_line}"),
            unit(
                rng,
                pick(("Check the settlement logs from last night.", "¿Qué falló anoche?")),
                "search_logs",
                {"service": "settlement", "since": "12h"},
                "\n".join(logs),
                pick(("One batch failed during the night.", "Eine Charge ist fehlgeschlagen.")),
            ),
        )
    )

    # A decision and its reason, in German, French or Spanish.
    tool, version = pick(
        (
            ("redis", f"7.2.{rng.randint(1, 9)}"),
            ("nginx", f"1.24.{rng.randint(1, 9)}"),
            ("numpy", f"1.26.{rng.randint(1, 9)}"),
        )
    )
    reason_word, sentence = pick(
        (
            (
                "Lua-Skripte",
                f"Wir bleiben bei {tool} {version}, weil das Upgrade unsere Lua-Skripte bricht.",
            ),
            (
                "geoip2",
                f"Nous gardons {tool} {version} plutôt que la suite, parce que le module "
                "geoip2 ne compile plus.",
            ),
            (
                "ABI",
                f"Decidimos fijar {tool} en {version} porque la versión siguiente rompe el ABI "
                "de nuestras extensiones.",
            ),
        )
    )
    facts.append(
        Fact(
            "decision, other language",
            (
                f"{tool} {version}" if " en " not in sentence else f"{tool} en {version}",
                reason_word,
            ),
            unit(
                rng,
                pick(("Upgrade or stay?", "Should we take the new release?")),
                "http_get",
                {"url": f"https://pypi.example/{tool}/json"},
                json.dumps({"releases": [f"{version}", "next"], "yanked": False}),
                f"Ich habe beide Wege geprüft. {sentence}",
            ),
        )
    )

    # A YAML value in a config dump.
    key = pick(("maxConnectionsPerHost", "idleTimeoutSeconds", "drainGracePeriod"))
    value = rng.randint(101, 977)
    yaml_lines = [f"  {w}Enabled: {pick(('true', 'false'))}" for w in rng.sample(_WORDS, 14)]
    yaml_lines.insert(rng.randint(3, 12), f"  {key}: {value}")
    facts.append(
        Fact(
            "yaml value",
            (f"{key}: {value}",),
            unit(
                rng,
                "What does the gateway config say?",
                "kubectl",
                {"args": ["get", "configmap", "gateway", "-o", "yaml"]},
                "apiVersion: v1\nkind: ConfigMap\ndata:\n" + "\n".join(yaml_lines),
                "That is the live gateway configuration.",
            ),
        )
    )

    # An IP and port in an nginx error log.
    octets = ".".join(str(rng.randint(2, 250)) for _ in range(3))
    address = f"10.{octets}:{rng.randint(1025, 9999)}"
    log = _nginx(rng, 40)
    log.insert(
        rng.randint(5, 35),
        f"2025/06/14 03:12:44 [error] 311#0: *88412 upstream prematurely closed connection "
        f'while reading response header from upstream, upstream: "http://{address}/v1/quotes"',
    )
    facts.append(
        Fact(
            "ip:port in nginx log",
            (address,),
            unit(
                rng,
                "Why do quote requests fail with 502?",
                "read_file",
                {"path": "/var/log/nginx/error.log"},
                "\n".join(log),
                "An upstream closes connections early.",
            ),
        )
    )

    # A commit named in French prose.
    commit = _hex(rng, 10)
    facts.append(
        Fact(
            "commit in French",
            (commit,),
            unit(
                rng,
                "Which commit broke the queue?",
                "git",
                {"args": ["log", "--oneline", "-20"]},
                "\n".join(
                    f"{_hex(rng, 10)} {pick(_WORDS)}: {pick(_WORDS)}" for _ in range(20)
                ).replace("\n", f"\n{commit} queue: drop lock\n", 1),
                f"Le commit fautif est {commit} : il supprime le verrou sur la file d'attente.",
            ),
        )
    )

    # An account in a Spanish ask.
    account = f"CUST-{rng.randint(10000, 99999)}"
    facts.append(
        Fact(
            "account in Spanish ask",
            (account,),
            unit(
                rng,
                f"La cuenta {account} tiene cargos duplicados desde ayer, ¿puedes revisarla?",
                "sql_query",
                {"sql": "select * from charges order by created desc limit 20"},
                "\n".join(
                    f"| ch_{_hex(rng, 14)} | {rng.randint(100, 9999)} | EUR | succeeded |"
                    for _ in range(20)
                ),
                "No veo nada raro en los últimos cargos.",
            ),
        )
    )

    # A ticket id inside minified JSON.
    ticket = f"INC-{rng.randint(10000, 99999)}"
    payload = {
        "total": 1,
        "took_ms": rng.randint(3, 90),
        "issues": [
            {
                "key": ticket,
                "summary": "duplicate charge on retry",
                "status": "open",
                "labels": ["payments", "p2"],
                "fields": {w: pick(_WORDS) for w in rng.sample(_WORDS, 12)},
            }
        ],
    }
    facts.append(
        Fact(
            "ticket in JSON",
            (ticket,),
            unit(
                rng,
                "Is someone already on the double charges?",
                "jira_search",
                {"jql": "text ~ 'duplicate charge'"},
                json.dumps(payload, separators=(",", ":")),
                "Yes, there is an open issue.",
            ),
        )
    )

    # A Go test failure, called flaky in Japanese.
    test = f"Test{pick(('Refund', 'Payout', 'Quote'))}{pick(('Idempotency', 'Retry', 'Rounding'))}"
    passes = [f"--- PASS: Test{pick(_WORDS).title()}{i} (0.0{i % 9}s)" for i in range(30)]
    passes.insert(rng.randint(5, 25), f"--- FAIL: {test} (0.31s)")
    facts.append(
        Fact(
            "flaky Go test",
            (test,),
            unit(
                rng,
                "Run the Go tests.",
                "run_tests",
                {"pkg": "./..."},
                "\n".join([*passes, "FAIL", "ok  \tgithub.com/acme/payments/internal/fx\t0.412s"]),
                f"{test} は不安定です（再実行で成功しました）。",
            ),
        )
    )

    # A URL without digits.
    url = f"https://runbooks.example.org/{pick(_SERVICES)}/{pick(('drift', 'replay', 'backfill'))}"
    facts.append(
        Fact(
            "url without digits",
            (url,),
            unit(
                rng,
                "Do we have a runbook?",
                "search_docs",
                {"q": "runbook"},
                "\n".join([*_logfmt(rng, 4), f"title=Runbook href={url}"]),
                f"Follow {url} for this.",
            ),
        )
    )

    # A size in Japanese.
    size = f"{rng.randint(2, 9)}.{rng.randint(1, 9)} GiB"
    facts.append(
        Fact(
            "size in Japanese",
            (size,),
            unit(
                rng,
                "メモリはどうですか？",
                "metrics",
                {"query": "container_memory_working_set_bytes"},
                "\n".join([*_logfmt(rng, 8), f"メモリ使用量: {size}（上限 10 GiB）"]),
                "メモリ使用量が多いです。",
            ),
        )
    )

    # An id at the very end of a 2,000-character line.
    rollout = f"ro-{_hex(rng, 8)}"
    fields = {f"{w}_{i}": pick(_WORDS) * 3 for i, w in enumerate(rng.choices(_WORDS, k=60))}
    line = json.dumps({**fields, "rollout_id": rollout}, separators=(",", ":"))
    facts.append(
        Fact(
            "id at the end of a long line",
            (rollout,),
            unit(
                rng,
                "Which rollout is live?",
                "http_get",
                {"url": "https://deploy.example/api/rollouts/current"},
                line,
                "That is the current rollout.",
            ),
        )
    )

    # A secret's name in the middle of an ask.
    secret = f"svc-{pick(_SERVICES)}-prod-{rng.randint(2, 9)}"
    facts.append(
        Fact(
            "name in the middle of an ask",
            (secret,),
            unit(
                rng,
                f"When you are done, rotate the key named {secret} before Friday and tell me.",
                "vault",
                {"args": ["list", "secret/"]},
                "\n".join(f"svc-{w}" for w in rng.sample(_WORDS, 10)),
                "Noted; I will rotate it after the fix.",
            ),
        )
    )

    # A date.
    day = f"2025-{rng.randint(7, 12):02d}-{rng.randint(10, 28)}"
    facts.append(
        Fact(
            "date",
            (day,),
            unit(
                rng,
                "When is the change freeze?",
                "calendar",
                {"q": "freeze"},
                f"Change freeze: starts {day} 18:00 UTC, ends two weeks later.",
                f"The freeze starts on {day}.",
            ),
        )
    )

    # An owner's name.
    first, last = pick(_NAMES)
    facts.append(
        Fact(
            "owner's name",
            (f"{first} {last}",),
            unit(
                rng,
                "Who owns the payouts service?",
                "directory",
                {"team": "payouts"},
                f"owner: {first} {last} <{first.lower()}@example.org>\noncall: rotation",
                f"{first} {last} owns it; ask before touching the payout scheduler.",
            ),
        )
    )
    return facts


def heldout2_facts(rng: random.Random) -> list[Fact]:
    """A second held-out set, written after the summarizer's last change and never used to
    tune it: a Java stack frame, an environment value, a decision in Italian, a docker
    port mapping, an issue in a Korean ask, an S3 path, a downgrade with its reason, a job
    UUID, a percentage in a table, a branch name, a host and port in Portuguese, a cron
    schedule."""
    pick = rng.choice
    line = rng.randint(100, 700)
    pool = rng.randint(1, 4)
    env_value = rng.randint(120, 900)
    pg = f"15.{rng.randint(2, 9)}"
    port = rng.randint(15000, 16999)
    issue = f"BILL-{rng.randint(1000, 9999)}"
    bucket = f"s3://acme-exports/2025/q{rng.randint(1, 4)}/ledger-{_hex(rng, 6)}.parquet"
    axios = f"0.27.{rng.randint(0, 9)}"
    job = "-".join(_hex(rng, n) for n in (8, 4, 4, 4, 12))
    rate = f"{rng.randint(2, 9)}.{rng.randint(1, 9)}%"
    branch = f"fix/ledger-rounding-{rng.randint(100, 999)}"
    host = f"stg-app-{rng.randint(10, 99)}.acme.io"
    ssh_port = rng.randint(2200, 2299)
    cron = f"{rng.randint(1, 59)} {rng.randint(0, 5)} * * {rng.randint(1, 6)}"
    frames = [
        f"\tat com.acme.core.Worker.run(Worker.java:{rng.randint(10, 99)})" for _ in range(12)
    ]
    frames.insert(
        rng.randint(2, 10), f"\tat com.acme.billing.Reconciler.apply(Reconciler.java:{line})"
    )
    trace = "\n".join(
        [
            'Exception in thread "main" java.lang.IllegalStateException: reconcile failed',
            *frames,
            f"Caused by: java.sql.SQLTransientConnectionException: HikariPool-{pool} - "
            "Connection is not available, request timed out after 30000ms.",
        ]
    )
    env = [f"{w.upper()}_{pick(_WORDS).upper()}={pick(('on', 'off', 'auto'))}" for w in _WORDS]
    env.insert(rng.randint(3, 15), f"STRIPE_WEBHOOK_TOLERANCE={env_value}")
    deps = {f"{w}-{pick(_WORDS)}": f"^{rng.randint(1, 9)}.{rng.randint(0, 20)}.0" for w in _WORDS}
    deps["axios"] = axios
    rows = [f"| {w}_rate | {rng.randint(10, 99)} |" for w in rng.sample(_WORDS, 10)]
    rows.insert(rng.randint(2, 8), f"| error_rate | {rate} |")
    return [
        Fact(
            "java frame + cause",
            (f"Reconciler.java:{line}", f"HikariPool-{pool}"),
            unit(
                rng,
                "Why does the nightly job crash?",
                "bash",
                {"command": "tail -n 40 job.log"},
                trace,
                "It crashes in the reconciler when the pool is empty.",
            ),
        ),
        Fact(
            "env value",
            (f"STRIPE_WEBHOOK_TOLERANCE={env_value}",),
            unit(
                rng,
                "Show me the production env.",
                "bash",
                {"command": "cat .env.production"},
                "\n".join(env),
                "Those are the production settings.",
            ),
        ),
        Fact(
            "decision in Italian",
            (f"Postgres {pg}", "GIN"),
            unit(
                rng,
                "Which database do we use for search?",
                "read_file",
                {"path": "ADR-7.md"},
                "# ADR 7\nStatus: accepted",
                f"Abbiamo deciso di usare Postgres {pg} invece di MySQL perché ci servono "
                "gli indici GIN per la ricerca.",
            ),
        ),
        Fact(
            "docker port mapping",
            (f"{port}->5432",),
            unit(
                rng,
                "Where is the test database listening?",
                "bash",
                {"command": "docker ps"},
                "CONTAINER ID   IMAGE         PORTS                     NAMES\n"
                f"{_hex(rng, 12)}   postgres:15   0.0.0.0:{port}->5432/tcp   db\n"
                f"{_hex(rng, 12)}   redis:7       6379/tcp                  cache",
                "The database container is up.",
            ),
        ),
        Fact(
            "issue in a Korean ask",
            (issue,),
            unit(
                rng,
                f"{issue} 이슈를 먼저 확인해 주세요. 고객 환불이 두 번 처리되었습니다.",
                "jira_get",
                {"id": "current"},
                '{"fields": {"status": "In Progress"}}',
                "확인했습니다.",
            ),
        ),
        Fact(
            "s3 path",
            (bucket,),
            unit(
                rng,
                "Where did the export go?",
                "bash",
                {"command": "aws s3 ls --recursive"},
                "\n".join(
                    [
                        *(
                            f"2025-06-0{i} 10:0{i}:00   {rng.randint(10**5, 10**7)} tmp/x{i}"
                            for i in range(1, 8)
                        ),
                        f"upload: ./ledger.parquet to {bucket}",
                    ]
                ),
                "The export is uploaded.",
            ),
        ),
        Fact(
            "downgrade with reason",
            (f"axios to {axios}",),
            unit(
                rng,
                "Why did the proxy break?",
                "read_file",
                {"path": "package.json"},
                json.dumps({"dependencies": deps}, separators=(",", ":")),
                f"I downgraded axios to {axios} since 1.x drops our proxy agent; "
                "the proxy works again.",
            ),
        ),
        Fact(
            "job uuid",
            (job,),
            unit(
                rng,
                "Which job failed?",
                "bash",
                {"command": "kubectl get jobs"},
                "\n".join(
                    [
                        *(f"job {_hex(rng, 8)} succeeded" for _ in range(6)),
                        f"job {job} failed after 3 retries",
                    ]
                ),
                "One job failed.",
            ),
        ),
        Fact(
            "percentage in a table",
            (f"| error_rate | {rate} |",),
            unit(
                rng,
                "What do the dashboards say?",
                "sql_query",
                {"sql": "select * from kpis"},
                "\n".join(["| metric | value |", *rows]),
                "Here are the KPIs.",
            ),
        ),
        Fact(
            "branch name",
            (branch,),
            unit(
                rng,
                "Push the fix.",
                "bash",
                {"command": "git push"},
                f"To github.com:acme/ledger.git\n * [new branch]      {branch} -> {branch}",
                "Pushed.",
            ),
        ),
        Fact(
            "host and port in Portuguese",
            (host, str(ssh_port)),
            unit(
                rng,
                "Como acesso o staging?",
                "read_file",
                {"path": "docs/acesso.md"},
                "Acesso restrito à VPN.",
                f"O servidor de staging é {host} na porta {ssh_port}, só pela VPN.",
            ),
        ),
        Fact(
            "cron schedule",
            (cron,),
            unit(
                rng,
                "When does the cleanup run?",
                "read_file",
                {"path": "deploy/cron.yaml"},
                f"jobs:\n  - name: cleanup\n    schedule: '{cron}'\n    command: python -m cleanup",
                "It runs on a weekly schedule.",
            ),
        ),
    ]


# -- facts inside dumps -----------------------------------------------------------------------

_OWNERS = ("Ines Okafor", "Tomasz Wrona", "Priya Raman", "Lea Brandt", "Kenji Mori")
_CUSTOMERS = ("Globex GmbH", "Initech SARL", "Umbrella KK", "Hooli BV")


def dump_facts(rng: random.Random) -> list[Fact]:
    """Facts inside what tools print — a markdown table, a CSV export, pretty JSON, a
    source file, a Kubernetes manifest, an environment, a psql result, a traceback, a
    test run with a rerun, a git log, ``kubectl describe`` — and a value the assistant
    set in a call's arguments. Written when the summarizer's weakest facts were those in
    tool outputs; the rows that stand out of their column, quantities with their unit
    and exceptions with their frame were built while it was looked at (not held out)."""
    pick = rng.choice
    facts: list[Fact] = []

    service = f"{pick(('ledger', 'payout', 'invoice', 'refund', 'quota'))}-api"
    owner = pick(_OWNERS)
    rows = [
        f"| {w}-svc | team-{pick(_WORDS)} | {rng.randint(8000, 8999)} | "
        f"{pick(('green', 'amber'))} |"
        for w in rng.sample(_WORDS, 14)
    ]
    rows.insert(rng.randint(3, 11), f"| {service} | {owner} | {rng.randint(8000, 8999)} | red |")
    table = "| service | owner | port | health |\n|---|---|---|---|\n" + "\n".join(rows)
    facts.append(
        Fact(
            "table row, status red",
            (service, owner),
            unit(
                rng,
                "Which services are unhealthy?",
                "bash",
                {"command": "svcctl status"},
                table,
                "Only one service is red.",
            ),
        )
    )

    invoice = f"INV-{rng.randint(20000, 29999)}"
    amount = f"{rng.randint(1000, 20000)}.{rng.randint(10, 99)}"
    csv = [
        f"INV-{rng.randint(10000, 19999)},{pick(('Acme Ltd', 'Stark Inc', 'Wonka AG'))},"
        f"{rng.randint(10, 900)}.00,EUR,paid"
        for _ in range(30)
    ]
    csv.insert(rng.randint(5, 25), f"{invoice},{pick(_CUSTOMERS)},{amount},EUR,disputed")
    facts.append(
        Fact(
            "csv row, disputed",
            (invoice, amount),
            unit(
                rng,
                "Export last month's invoices.",
                "run_sql",
                {"query": "select * from invoices where month = '2025-05'"},
                "invoice_id,customer,amount,currency,status\n" + "\n".join(csv),
                "The export has 31 invoices.",
            ),
        )
    )

    refund = f"re_{_hex(rng, 16)}"
    records: list[dict[str, Any]] = [
        {"id": f"re_{_hex(rng, 16)}", "amount": rng.randint(100, 9999), "status": "succeeded"}
        for _ in range(6)
    ]
    records.insert(
        rng.randint(1, 5),
        {
            "id": refund,
            "amount": rng.randint(100, 9999),
            "status": "failed",
            "failure_reason": "expired_or_canceled_card",
        },
    )
    facts.append(
        Fact(
            "json record, failed",
            (refund,),
            unit(
                rng,
                "Did all the refunds go through?",
                "http_get",
                {"url": "https://api.example.com/v1/refunds?limit=7"},
                json.dumps({"object": "list", "data": records}, indent=2),
                "Most refunds succeeded.",
            ),
        )
    )

    constant = pick(("MAX_BATCH_SIZE", "LEDGER_FLUSH_EVERY", "PAYOUT_CHUNK_ROWS"))
    value = rng.randint(300, 2000)
    code = ["import logging", "", "log = logging.getLogger(__name__)", ""]
    code += [f"{w.upper()}_TIMEOUT = {rng.randint(5, 60)}" for w in rng.sample(_WORDS, 6)]
    code.insert(6, f"{constant} = {value}  # larger batches time out on the replica")
    code += [
        "",
        "",
        "def flush(rows):",
        f"    for chunk in chunks(rows, {constant}):",
        "        write(chunk)",
    ]
    facts.append(
        Fact(
            "code constant",
            (f"{constant} = {value}",),
            unit(
                rng,
                "How big are the ledger batches?",
                "read_file",
                {"path": "src/ledger/flush.py"},
                "\n".join(f"{i + 1:6}\t{line}" for i, line in enumerate(code)),
                "The batch size is set at the top of the file.",
            ),
        )
    )

    memory = f"{rng.randint(3, 15) * 128}Mi"
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payouts-worker\n"
        f"spec:\n  replicas: {rng.randint(3, 19)}\n  template:\n    spec:\n      containers:\n"
        "        - name: worker\n          image: registry.example.com/payouts:2025.06.3\n"
        f"          resources:\n            limits:\n              memory: {memory}\n"
        "              cpu: 500m"
    )
    facts.append(
        Fact(
            "yaml memory limit",
            (f"memory: {memory}",),
            unit(
                rng,
                "What limits does the payouts worker have?",
                "bash",
                {"command": "kubectl get deploy payouts-worker -o yaml"},
                manifest,
                "Here is the deployment.",
            ),
        )
    )

    redis = (
        f"redis://cache-{rng.randint(2, 9)}.internal:{rng.randint(6380, 6399)}/{rng.randint(1, 9)}"
    )
    env = [f"{w.upper()}_ENABLED={pick(('true', 'false'))}" for w in _WORDS]
    env.insert(rng.randint(3, 17), f"SESSION_REDIS_URL={redis}")
    facts.append(
        Fact(
            "env url",
            (redis,),
            unit(
                rng,
                "Where do sessions live?",
                "bash",
                {"command": "printenv | sort"},
                "\n".join(env),
                "Sessions are in Redis.",
            ),
        )
    )

    account = rng.randint(40000, 49999)
    lines = [
        f" {rng.randint(10000, 39999)} | {pick(_WORDS)}-corp | active    | "
        f"2024-1{rng.randint(0, 2)}-{rng.randint(10, 28)}"
        for _ in range(18)
    ]
    lines.insert(
        rng.randint(3, 15),
        f" {account} | {pick(_WORDS)}-corp | suspended | "
        f"2025-0{rng.randint(1, 9)}-{rng.randint(10, 28)}",
    )
    psql = (
        " account_id |  name  |  status   |   since\n------------+--------+-----------+---\n"
        + "\n".join(lines)
        + f"\n({len(lines)} rows)"
    )
    facts.append(
        Fact(
            "psql row, suspended",
            (str(account), "suspended"),
            unit(
                rng,
                "List the accounts and their states.",
                "psql",
                {"sql": "select account_id, name, status, since from accounts"},
                psql,
                "That is every account.",
            ),
        )
    )

    function = pick(("compute_vat", "apply_discount", "round_cents"))
    line = rng.randint(100, 400)
    key = f"vat_rate_{pick(('AT', 'BE', 'PT', 'FI'))}"
    run = [
        "============================= test session starts ==============================",
        *(f"tests/test_{w}.py ....." for w in rng.sample(_WORDS, 8)),
        "tests/test_tax.py F",
        "=================================== FAILURES ===================================",
        "Traceback (most recent call last):",
        '  File "/app/billing/api.py", line 41, in handle',
        "    return compute(order)",
        f'  File "/app/billing/tax.py", line {line}, in {function}',
        "    rate = RATES[country]",
        f"KeyError: '{key}'",
        "FAILED tests/test_tax.py::test_eu_orders - KeyError",
        "1 failed, 40 passed in 3.21s",
    ]
    facts.append(
        Fact(
            "exception and its frame",
            (f'tax.py", line {line}', key),
            unit(
                rng,
                "Run the tax tests.",
                "bash",
                {"command": "pytest tests -q"},
                "\n".join(run),
                "One test fails.",
            ),
        )
    )

    test = f"test_{pick(_WORDS)}_{pick(('retry', 'timeout', 'ordering'))}_{rng.randint(2, 9)}"
    results = [f"tests/e2e/test_{w}.py::test_{w}_flow PASSED" for w in rng.sample(_WORDS, 10)]
    results.insert(rng.randint(2, 8), f"tests/e2e/test_webhooks.py::{test} RERUN")
    results.insert(rng.randint(2, 9), f"tests/e2e/test_webhooks.py::{test} PASSED")
    results.append("========== 11 passed, 1 rerun in 48.20s ==========")
    facts.append(
        Fact(
            "flaky, passed on a rerun",
            (test, "RERUN"),
            unit(
                rng,
                "Run the e2e suite.",
                "bash",
                {"command": "pytest tests/e2e --reruns 2"},
                "\n".join(results),
                "All green.",
            ),
        )
    )

    sha = _hex(rng, 7)
    flag = pick(("batch_writes", "async_ledger", "parallel_payouts"))
    log = [
        f"{_hex(rng, 7)} {pick(('fix typo', 'bump deps', 'update docs', 'refactor tests'))}"
        for _ in range(15)
    ]
    log.insert(rng.randint(3, 12), f'{sha} Revert "enable {flag}" (it double-posts ledger entries)')
    facts.append(
        Fact(
            "git log revert",
            (sha, flag),
            unit(
                rng,
                "What changed this week?",
                "bash",
                {"command": "git log --oneline -16"},
                "\n".join(log),
                "Mostly small changes.",
            ),
        )
    )

    pod = f"payouts-worker-{_hex(rng, 5)}"
    described = (
        f"Name:         {pod}\nNamespace:    payments\nStatus:       Running\nContainers:\n"
        "  worker:\n    State:          Running\n    Last State:     Terminated\n"
        "      Reason:       OOMKilled\n      Exit Code:    137\n"
        f"    Restart Count:  {rng.randint(5, 40)}\n    Limits:\n      memory:  256Mi"
    )
    facts.append(
        Fact(
            "pod OOMKilled",
            (pod, "OOMKilled"),
            unit(
                rng,
                "Why does the worker restart?",
                "bash",
                {"command": "kubectl describe pod -l app=payouts-worker"},
                described,
                "Let me check the limits.",
            ),
        )
    )

    window = rng.randint(20, 90)
    facts.append(
        Fact(
            "value set in a call's arguments",
            ("ledger.reconcile.window_minutes", str(window)),
            unit(
                rng,
                "Widen the reconcile window.",
                "config_set",
                {"key": "ledger.reconcile.window_minutes", "value": window, "env": "prod"},
                "ok",
                "Done.",
            ),
        )
    )
    return facts
