"""Facts whose parts sit apart in what a tool printed: an error and the place a later line
(or a stack) gives, a long error line whose code and place are at its end, a value and
the id of the record it belongs to (pretty, or minified on one long line). The summary
writes each as one fact, both parts on one line, and so do the key lines a masked output
keeps. Also: a setting a file holds is worth what a command printed, and a failure a log
shows is a key fact."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from condense.summarizers import ExtractiveSummarizer
from condense.summarizers.extractive import extract
from condense.summarizers.failures import ITEM_CHARS, error_text
from condense.summarizers.salient import key_lines, trimmed
from condense.summarizers.scan import (
    OUTPUT,
    SpanText,
    letters_unescaped,
    lines_unescaped,
    output_lines,
    records_apart,
)
from condense.summarizers.worth import is_tally
from profiles import examples

Message = dict[str, Any]
TARGET = 1_500  # tokens: room for a few dozen facts out of hundreds of candidates


def session(
    fact_output: str,
    *,
    seed: int = 7,
    outputs: int = 60,
    read: dict[str, str] | None = None,
) -> list[Message]:
    """A long run of tool calls whose outputs are busy logs (ids, durations, callers),
    the fact's output in the middle (what a ``read_file`` call with the arguments
    ``read`` showed, when given), and an ask at each end."""
    rng = random.Random(seed)
    messages: list[Message] = [{"role": "user", "content": "Find out why the nightly job fails."}]
    for number in range(outputs):
        fact = number == outputs // 2
        output = fact_output if fact else _busy_log(rng)
        name, arguments = ("read_file", read) if fact and read else ("bash", None)
        call_id = f"call_{number}"
        messages.append(
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps(arguments or {"command": f"step {number}"}),
                        },
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    messages.append({"role": "user", "content": "Now fix it."})
    return messages


FIELDS = (
    *("service=ledger", "env=prod", "region=eu-west-1", "cluster=payments-prod-2"),
    *("namespace=settlement", "pod=ledger-worker-7d9f8c6b5-x2kqp", "node=ip-10-0-3-17"),
    *("container=worker", "image=registry.example.com/ledger:2026.03.1", "version=2026.03.1"),
)


def _busy_log(rng: random.Random) -> str:
    return "\n".join(
        f"ts=2026-03-04T10:{rng.randint(10, 59)}:{rng.randint(10, 59)}Z level=info "
        f"caller=worker/{rng.choice(('flush', 'sync', 'poll'))}.go:{rng.randint(10, 400)} "
        f'msg="batch ok" {" ".join(FIELDS)} trace_id={rng.randrange(16**16):016x} '
        f"dur={rng.randint(1, 900)}ms"
        for _ in range(12)
    )


def fact_lines(messages: list[Message]) -> list[str]:
    summary = ExtractiveSummarizer().summarize(messages, previous=None, target_tokens=TARGET)
    return summary.split("\n")


def written_together(lines: list[str], *parts: str) -> bool:
    return any(all(part in line for part in parts) for line in lines)


RUST = (
    "   Compiling ledger v0.4.1 (/app)\n"
    "error[E0502]: cannot borrow `batch` as mutable because it is also borrowed as immutable\n"
    "  --> src/settle/batch.rs:129:11\n"
    "   |\n"
    "88 |     let first = &batch[0];\n"
    "   |                  ----- immutable borrow occurs here\n"
    "error: could not compile `ledger` (lib) due to 1 previous error"
)
GO_PANIC = (
    "starting flusher\n"
    "panic: runtime error: index out of range [7] with length 3\n"
    "\n"
    "goroutine 1 [running]:\n"
    "main.flush(...)\n"
    "\t/app/refund/flush.go:254 +0x1d\n"
    "main.main()\n"
    "\t/app/cmd/flusher/main.go:22 +0x45\n"
    "exit status 2"
)


PYTEST = (
    "..........F.....\n"
    "=================================== FAILURES ===================================\n"
    "____________________________ test_payout_rounding ____________________________\n\n"
    "    def test_payout_rounding():\n"
    ">       assert settle(batch) == 'ok', 'E8808'\n"
    "E       AssertionError: E8808\n"
    "E       assert 'expired' == 'ok'\n\n"
    "tests/test_payout.py:376: AssertionError\n"
    "1 failed, 15 passed in 0.42s"
)
ELIXIR = (
    "** (RuntimeError) E6081 quote expired\n"
    "    (ledger 0.1.0) lib/payout/flush.ex:111: Ledger.Flush.run/1\n"
    "    (elixir 1.15.7) lib/code.ex:572: Code.validated_eval_string/3"
)


NODE = (
    "Error: read ECONNRESET\n"
    "    at TLSWrap.onStreamRead (node:internal/stream_base_commons:217:20)\n"
    "    at async TokenService.fetch (/app/src/tokenService.js:507:15)\n"
    "    at async main (/app/worker.js:12:3)"
)
NODE_OWN_INTERNAL = (  # an app's own internal/ directory is not Node's internals
    "Error: ledger closed before flush\n"
    "    at flush (/app/internal/ledger/flush.js:12:3)\n"
    "    at async main (/app/worker.js:12:3)"
)
JAVA_PAST_A_DRIVER = (  # a vendor's driver and pool are not the program's own code
    "org.springframework.dao.CannotAcquireLockException: could not execute batch\n"
    "Caused by: java.sql.SQLException: ORA-00060: deadlock detected while waiting\n"
    "\tat oracle.jdbc.driver.T4CTTIoer11.processError(T4CTTIoer11.java:509)\n"
    "\tat oracle.jdbc.driver.T4CPreparedStatement.executeBatch(T4CPreparedStatement.java:1322)\n"
    "\tat com.zaxxer.hikari.pool.ProxyStatement.executeBatch(ProxyStatement.java:127)\n"
    "\tat org.hibernate.engine.jdbc.batch.internal.BatchingBatch.execute(BatchingBatch.java:118)\n"
    "\tat com.acme.ledger.SettlementRepository.flush(SettlementRepository.java:212)\n"
    "\tat com.acme.ledger.SettleJob.run(SettleJob.java:48)"
)
PYTHON_IN_A_LIBRARY = (
    "Traceback (most recent call last):\n"
    '  File "/app/ledger/export.py", line 88, in export_batch\n'
    "    rows = client.fetch(batch_id)\n"
    '  File "/usr/lib/python3.12/site-packages/httpx/_client.py", line 1041, in send\n'
    "    raise ReadTimeout(message)\n"
    "httpx.ReadTimeout: timed out after 30s"
)

MIGRATIONS = (  # as ``bin/rails db:migrate`` prints them
    "== 20251101120000 CreateRefunds: migrating ================================\n"
    "-- create_table(:refunds)\n   -> 0.0121s\n"
    "== 20251101120000 CreateRefunds: migrated (0.0122s) =======================\n\n"
    "== 20251226093000 AddReasonToRefunds: migrating ===========================\n"
    "-- add_column(:refunds, :reason, :string)\nbin/rails aborted!\n"
    "StandardError: An error has occurred, this and all later migrations canceled:\n\n"
    'PG::DuplicateColumn: ERROR:  column "reason" of relation "refunds" already exists'
)
CARGO = (
    "   Compiling serde v1.0.210\n   Compiling tokio v1.40.0\n   Compiling ledger v0.3.1 (/src)\n"
    "error: could not compile `ledger` (lib) due to 2 previous errors"
)


@pytest.mark.parametrize(
    ("output", "error", "place"),
    [
        (RUST, "error[E0502]", "src/settle/batch.rs:129:11"),
        (GO_PANIC, "index out of range [7] with length 3", "/app/refund/flush.go:254"),
        (PYTEST, "AssertionError: E8808", "tests/test_payout.py:376"),
        (ELIXIR, "E6081 quote expired", "lib/payout/flush.ex:111"),
        (NODE, "Error: read ECONNRESET", "/app/src/tokenService.js:507:15"),
        (NODE_OWN_INTERNAL, "ledger closed before flush", "/app/internal/ledger/flush.js:12:3"),
        (PYTHON_IN_A_LIBRARY, "httpx.ReadTimeout", '/app/ledger/export.py", line 88'),
        (JAVA_PAST_A_DRIVER, "ORA-00060", "SettlementRepository.java:212"),
        (MIGRATIONS, "PG::DuplicateColumn", "(-- add_column(:refunds, :reason, :string))"),
        (CARGO, "could not compile", "(Compiling ledger v0.3.1 (/src))"),
    ],
    ids=[
        *("rust", "go-panic", "pytest", "elixir", "node-past-runtime", "node-own-internal"),
        *("python-past-library", "java-past-driver", "rails-migration-step", "cargo-step"),
    ],
)
def test_an_error_is_written_with_where_it_was_raised(output: str, error: str, place: str) -> None:
    """The place a later line gives, and in a stack the program's own frame before a
    runtime's or a library's; with no frame, the step of the output's list of steps it
    failed in (the last step before it: a migration's ``-- add_column(…)``, a compiler's
    ``Compiling ledger``)."""
    assert written_together(fact_lines(session(output)), error, place)


def test_a_masked_output_says_the_step_it_failed_in() -> None:
    """What a masked migration run or build keeps names the step that failed, as the
    summary's error line does."""
    for output, step in ((MIGRATIONS, "add_column(:refunds, :reason"), (CARGO, "Compiling ledger")):
        assert any(step in line for line in key_lines(output)), output


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/app/ledger/rates.py", line 786, in rate_for\n'
    "    return RATES[country]\n"
    "ZeroDivisionError: division by zero\n"
)


def test_a_failure_a_log_shows_is_a_key_fact_with_its_place() -> None:
    """What a log shows is what ran and failed (though not in this session: not an
    error of its own); a file's content that looks like a failure is data."""

    def stated(path: str) -> list[tuple[str, str]]:
        found = extract(session(TRACEBACK, read={"path": path}), facts=40).candidates
        return [(c.section, c.text) for c in found if "ZeroDivisionError" in c.text]

    assert stated("logs/api.log") == [
        (
            "Key facts",
            'ZeroDivisionError: division by zero (File "/app/ledger/rates.py", line 786, '
            "in rate_for)",
        )
    ]
    for content in ("docs/rates.txt", "pkg/logs/rates.go"):  # the latter: a logs package
        assert all(section != "Errors" and "(File" not in text for section, text in stated(content))


@pytest.mark.parametrize("where", ["end", "middle"])
def test_a_long_error_line_keeps_its_code_and_place_wherever_they_sit(where: str) -> None:
    rng = random.Random(3)
    # the fields every line of the service's log has (the busy logs around have them too)
    filler = " ".join([*FIELDS, 'user_agent="Go-http-client/1.1"', "attempt=5", "retry=true"])
    telling = "err_code=SETTLE_4417 at=ledger/reconcile.go:318"
    head = 'ts=2026-03-04T11:22:33Z level=error msg="settlement batch rejected upstream"'
    line = f"{head} {filler} {telling}" if where == "end" else f"{head} {telling} {filler}"
    assert len(line) > ITEM_CHARS + len(telling)
    lines = fact_lines(session(line + "\n" + _busy_log(rng)))
    written = [text for text in lines if "SETTLE_4417" in text and "reconcile.go:318" in text]
    assert written, lines
    assert all(len(text) <= len("- ") + ITEM_CHARS for text in written)


@pytest.mark.parametrize(
    "line",
    [
        '36:        raise RuntimeError("Cannot find version information")',  # SWE-agent's open
        '1447:            "format": "{input!r} cannot be formatted as a timedelta.",',
        "   12\traise ValueError(header)",  # cat -n
        "Note however that you cannot use any interactive session commands (e.g. python, vim)",
        "note: expected `u32`, found `i64`",  # a compiler's note beside its error
    ],
)
def test_a_listed_line_of_code_or_advice_states_no_error(line: str) -> None:
    assert error_text(line) is None


@pytest.mark.parametrize(
    ("line", "stated"),
    [
        (  # BuildKit (``docker build``): the step's number and its seconds lead the line
            "#7 12.41 ERROR: No matching distribution found for psycopg2-binary==2.9.99",
            "ERROR: No matching distribution found for psycopg2-binary==2.9.99",
        ),
        (
            '#7 ERROR: process "/bin/sh -c pip install -r req.txt" did not complete successfully',
            'ERROR: process "/bin/sh -c pip install -r req.txt" did not complete successfully',
        ),
        ("# ERROR: this comment is code, not a failure", None),
        ("#12 is where the error handling goes", None),
    ],
)
def test_a_build_step_s_number_is_no_comment(line: str, stated: str | None) -> None:
    """``docker build``'s BuildKit output leads each line with its step (``#7``) and, in
    a command's output, the seconds: its ``ERROR:`` lines are failures, not comments."""
    assert error_text(line) == stated


@pytest.mark.parametrize(
    ("error", "stated"),
    [
        (
            "ERROR: No replacement was performed, old_str `{rare}` did not appear verbatim",
            "ERROR: No replacement was performed",
        ),
        (  # a bare label and the line after it (OpenHands' editor)
            "ERROR:\nInvalid `new_str` parameter: {rare}. No replacement was performed.",
            "ERROR: Invalid `new_str` parameter:",
        ),
    ],
)
def test_a_long_error_is_written_with_what_states_it(error: str, stated: str) -> None:
    """Cut to its telling words, an error keeps the clause that states it, however much
    rarer the words after it are."""
    rare = " ".join(f"TK_{n}_{n * 7919 % 10007:x}(ast_{n})" for n in range(30))
    lines = fact_lines(session(error.format(rare=rare)))
    assert any(line.startswith(f"- {stated}") for line in lines), lines


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (
            "ERROR: for app_api_1  Cannot start service api: driver failed programming external"
            " connectivity on endpoint app_api_1: Bind for 0.0.0.0:5809 failed: port is already"
            " allocated",
            "0.0.0.0:5809 failed: port is already allocated",
        ),
        (
            "sqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedColumn) column"
            ' "webhook_session_at" does not exist',
            '"webhook_session_at" does not exist',
        ),
        (
            "level=error msg=sync failed job=ledger-sync-7 attempt=3 err=failed to sync ledger:"
            " dial tcp 10.0.3.7:5432: connect: connection refused",
            "connect: connection refused",
        ),
    ],
)
def test_a_chain_of_errors_is_written_with_the_cause_it_ends_with(error: str, cause: str) -> None:
    """A long error line whose cause comes last, after its last failure word (Docker's
    ``… failed: port is already allocated``, a driver's ``column … does not exist``, Go's
    wrapped ``…: connection refused``): the cause is written, though its words are the
    commonest. (Before, Docker's and the driver's lines were cut after their last telling
    word; Go's is kept as a guard.)"""
    lines = fact_lines(session(error))
    assert any(cause in line for line in lines), lines


def test_an_error_under_a_bare_label_is_written_once() -> None:
    """The label takes the line after it, which is an error line too: one fact, not two
    (a fact another fact of its message holds whole is that fact)."""
    output = "ERROR:\nNo replacement was performed, old_str `DEF(idseqsingle);` not found."
    written = [line for line in fact_lines(session(output)) if "idseqsingle" in line]
    assert len(written) == 1, written
    assert written[0].startswith("- ERROR: No replacement was performed"), written


def test_a_member_of_a_small_record_is_written_with_the_record_s_id() -> None:
    rng = random.Random(5)
    records: list[dict[str, Any]] = [
        {"id": f"re_{rng.randrange(16**16):016x}", "amount": 500 + n, "status": "succeeded"}
        for n in range(8)
    ]
    records.insert(
        4,
        {
            "id": "re_4f1c9a0b7e2d5c83",
            "amount": 1250,
            "status": "failed",
            "failure_reason": "expired_or_canceled_card",
        },
    )
    output = json.dumps({"object": "list", "data": records}, indent=2)
    lines = fact_lines(session(output))
    assert written_together(lines, "re_4f1c9a0b7e2d5c83", "expired_or_canceled_card"), lines


def test_an_error_body_is_written_with_its_code_and_the_field_it_names() -> None:
    body = {
        "status": 422,
        "error": {
            "type": "invalid_request",
            "code": "INVALID_SETTLEMENT_STATE",
            "param": "warehouse_id",
            "message": "The object is not in a state that allows this operation.",
        },
    }
    lines = fact_lines(session(json.dumps(body, indent=2)))
    assert written_together(lines, "INVALID_SETTLEMENT_STATE", "warehouse_id"), lines


@pytest.mark.parametrize(
    ("path", "content", "setting"),
    [
        ("config/db.toml", '[database]\nhost = "db.internal"\nport = 5432\n', "max_conns = 965"),
        ("/etc/nginx/conf.d/api.conf", "server {\n  listen 443 ssl;\n", "proxy_read_timeout 32s;"),
        ("infra/kms.tf", 'resource "aws_kms_key" "ledger" {\n', "deletion_window_in_days = 67"),
    ],
    ids=["toml", "nginx", "terraform"],
)
def test_a_setting_among_a_few_is_written_with_them_its_value_whole(
    path: str, content: str, setting: str
) -> None:
    """A setting among a few others is written with them, its value whole."""
    listing = content + "\n".join(
        f"  {word}_enabled = true" for word in ("cache", "audit", "metrics", "tracing")
    )
    output = f"{listing}\n  {setting}\n}}\n"
    lines = fact_lines(session(output, read={"path": path}))
    assert written_together(lines, setting), lines


VALUE = "lp-7f3a9c"  # a value distinctive enough to be a candidate wherever it is


@pytest.mark.parametrize(
    ("line", "setting"),
    [
        (f"pool_name = {VALUE}", True),
        (f"    upstream_pool {VALUE};", True),
        (f"      - POOL={VALUE}", True),
        (f'     7\tPOOL_NAME = "{VALUE}"  # the replica\'s pool', True),
        (f'src/app/settings.py:12:POOL_NAME = "{VALUE}"', True),  # a search's hit
        (f'src/app/db.py:40:    return connect(pool="{VALUE}")', False),
        (f'    return connect(pool="{VALUE}")', False),
        (f'log = make_logger("{VALUE}")', False),
        (f'  "pool": "{VALUE}",', False),  # a JSON member: data more often than a setting
    ],
)
def test_a_setting_is_worth_as_much_read_from_a_file_as_printed_by_a_command(
    line: str, setting: bool
) -> None:
    """What a read showed is data, worth less than what a command printed; a setting
    in it (one key, a scalar value; a search's hit of one, after its file and line)
    configures what runs, and is worth as much."""

    def worth(read: dict[str, str] | None) -> float:
        found = extract(session(f"# settings\n{line}\n", read=read), facts=40).candidates
        return max(c.score for c in found if VALUE in c.text)

    printed, read = worth(None), worth({"path": "config/app.conf"})
    assert (read == pytest.approx(printed)) is setting, (read, printed)
    assert read <= printed


@pytest.mark.parametrize("number", ["    24\t", "24:        "], ids=["cat -n", "editor view"])
def test_a_listing_s_line_of_code_is_worth_what_a_read_showed(number: str) -> None:
    """A numbered line of code in what a command printed (SWE-agent's ``open``) is what
    a file holds: worth no more than the same line a read showed."""
    line = f"{number}retry_pool = connect(pool='{VALUE}')"

    def worth(read: dict[str, str] | None) -> float:
        found = extract(session(f"[File: app.py]\n{line}\n", read=read), facts=40).candidates
        return max(c.score for c in found if VALUE in c.text)

    assert worth(None) == pytest.approx(worth({"path": "app.py"}), rel=1e-3)


def test_an_output_s_key_lines_carry_the_record_and_the_place_too() -> None:
    """What a masked output keeps (:func:`key_lines`) is read as the summary reads it."""
    refunds = [{"id": f"re_{n:016x}", "amount": 500 + n, "status": "succeeded"} for n in range(6)]
    refunds.insert(3, {"id": "re_4f1c9a0b7e2d5c83", "status": "failed", "reason": "expired_card"})
    lines = key_lines(json.dumps({"data": refunds}, indent=2))
    assert written_together(lines, "re_4f1c9a0b7e2d5c83", "failed"), lines
    assert len(lines) == len(set(lines))  # two lines of one record: written once
    assert written_together(key_lines(RUST), "error[E0502]", "src/settle/batch.rs:129:11")


def _read(text: str, line: str) -> str:
    """What the span reads around ``line`` of a tool output ``text``, record and all."""
    span = SpanText([(0, OUTPUT, text)])
    at = span.blob.index(line.encode())
    read = span.record(span.snippet(at, 0), at)
    return span.decode(read.start, read.end)


def _charges(failed: dict[str, Any], *, seed: int = 3) -> list[dict[str, Any]]:
    """Forty charges that succeeded, and ``failed`` among them."""
    rng = random.Random(seed)
    charges: list[dict[str, Any]] = [
        {
            "id": f"ch_{rng.randrange(16**14):014x}",
            "object": "charge",
            "amount": rng.randint(500, 9000),
            "currency": "usd",
            "status": "succeeded",
        }
        for _ in range(40)
    ]
    charges.insert(23, failed)
    return charges


FAILED_CHARGE = {"id": "ch_3Pq81xYzT0", "object": "charge", "amount": 4410, "currency": "usd"}


@pytest.mark.parametrize(
    "failed",
    [
        {**FAILED_CHARGE, "status": "failed", "failure_code": "card_declined"},
        {**FAILED_CHARGE, "status": "failed"},  # built like the others: its cell stands out
    ],
    ids=["a record of its own build", "a cell unlike its column's"],
)
@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")], ids=["minified", "spaced"])
def test_the_record_that_stands_out_of_a_list_on_one_line_is_written_with_its_id(
    failed: dict[str, Any], separators: tuple[str, str]
) -> None:
    """A list of records printed on one long line (minified JSON, a framework's tool
    result) is read record by record, as its pretty form would be: the one unlike the
    others is a fact with its id, and what a masked output keeps."""
    output = json.dumps({"object": "list", "data": _charges(failed)}, separators=separators)
    assert "\n" not in output
    telling = [failed["id"], *(str(value) for key, value in failed.items() if "fail" in key)]
    assert written_together(fact_lines(session(output)), *telling)
    assert written_together(key_lines(output), *telling)


def test_records_are_set_apart_by_newlines_only() -> None:
    """Records of a list in a long line go on lines of their own; nothing else changes."""
    data = {"results": [{"sku": f"SKU-{n}", "on_hand": [n, n + 1]} for n in range(30)]}
    for text in (json.dumps(data), json.dumps(data, separators=(",", ":")), repr(data)):
        apart = records_apart(text)
        assert apart.replace("\n", "") == text
        assert apart.count("\n") == 31  # between the records, and at the list's two ends
        assert '{"sku": "SKU-7", "on_hand": [' in records_apart(json.dumps(data))
    short = json.dumps({"data": [{"a": 1}, {"b": 2}]})  # one short line: as it is
    assert records_apart(short) == short
    prose = "x" * 300 + " and a list [1, 2], a set {3}, nothing else"
    assert records_apart(prose) == prose
    tiny = json.dumps([{}] * 1_000 + [[n] for n in range(1_000)])  # no records to compare
    assert records_apart(tiny) == tiny


SYNC_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/app/replica/sync.py", line 786, in run\n'
    "    raise SyncError('E7311: ledger out of balance')\n"
    "replica.errors.SyncError: E7311: ledger out of balance\n"
)


@pytest.mark.parametrize(
    "encode",
    [json.dumps, lambda value: json.dumps(value, indent=2), repr],
    ids=["json", "pretty json", "python repr"],
)
def test_what_a_json_tool_result_holds_escaped_is_read_line_by_line(encode: Any) -> None:
    """A tool result that is a JSON object (or a Python repr) whose strings hold a
    command's output (``{"stderr": "Traceback…\\n  File \\"/app/…"}``) is read as that
    output's lines: its error is written with where it was raised, in the summary and
    in what a masked output keeps."""
    result = {"exit_code": 1, "stdout": "starting sync\n" * 3, "stderr": SYNC_TRACEBACK}
    output = encode(result)
    assert "Traceback (most recent call last):\n" not in output  # the breaks are escaped
    place = 'File "/app/replica/sync.py", line 786'
    error = "SyncError: E7311: ledger out of balance"
    assert written_together(fact_lines(session(output)), error, place)
    assert written_together(key_lines(output, count=2, max_chars=400), error)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet='ab :\\n"t{}', max_size=400), max_size=6))
def test_only_lines_holding_escaped_lines_are_unescaped(lines: list[str]) -> None:
    """A line is unescaped only when it holds two escaped line breaks or more and is
    long or a JSON member whose value is a string; every other line is left as it is,
    and text with no escaped break at all is returned unchanged."""
    text = "\n".join(lines)
    unescaped = lines_unescaped(text)
    if "\\n" not in text:
        assert unescaped is text
    kept = [line for line in lines if line.count("\\n") < 2 or len(line) <= 280]
    kept = [line for line in kept if not line.lstrip().startswith('"')]
    assert all(line in unescaped.split("\n") for line in kept)


def test_a_name_json_escaped_is_written_as_people_write_it() -> None:
    """A JSON tool result written by ``json.dumps`` escapes every letter beyond ASCII
    (``Luc\\u00eda``): the summary and what a masked output keeps write the name as the
    user would (``Lucía``), the same word the user wrote. (Before, the escapes were
    written as they were.)"""
    oncall = {"schedule": "payments-primary", "oncall": [{"user": {"name": "Lucía Ibáñez"}}]}
    output = json.dumps(oncall)
    assert "Lucía" not in output  # escaped
    lines = fact_lines(session(output))
    assert written_together(lines, "Lucía Ibáñez")
    assert not written_together(lines, "\\u00")
    assert any("Lucía Ibáñez" in line for line in key_lines(output, count=2, max_chars=400))


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (json.dumps("Lucía 東京 🚀"), '"Lucía 東京 🚀"'),  # letters, a surrogate pair
        (json.dumps('a "quote", a \x01 control'), json.dumps('a "quote", a \x01 control')),
        ("\\\\u00ed", "\\\\u00ed"),  # an escaped backslash, then ``u00ed``
        ("\\ud83d alone", "\\ud83d alone"),  # a lone surrogate
        ("a\\u2028b\\u0085c", "a\\u2028b\\u0085c"),  # separators that would break a line
        ("C:\\users\\ana", "C:\\users\\ana"),  # no escape at all
    ],
)
def test_only_the_letters_json_escapes_are_unescaped(text: str, read: str) -> None:
    assert letters_unescaped(text) == read


def _ci_log(lines: list[str]) -> str:
    """``lines`` as ``gh run view --log-failed`` prints them: job, step, time, line."""
    return "\n".join(
        f"build\tRun tests\t2026-03-04T10:11:{n:02d}.1234567Z {line}"
        for n, line in enumerate(lines)
    )


def test_a_ci_log_s_error_is_written_with_the_frame_under_it() -> None:
    """A GitHub Actions log (each line after its job, step and time) is read as the log
    it holds: its error is written with the frame under it, in the summary and in what
    a masked output keeps; a log without that prefix is read as it is."""
    passes = [f"PASS src/{word}.test.ts" for word in ("ledger", "payout", "refund", "quota")]
    failure = [
        "FAIL src/gateway.test.ts",
        "  ● gateway › settles › rejects stale quotes",
        "    QuoteError: E9376 stale quote",
        "      at settle (src/gateway.ts:507:11)",
        "##[error]Process completed with exit code 1.",
    ]
    output = _ci_log(passes + failure)
    error, place = "QuoteError: E9376 stale quote", "src/gateway.ts:507"
    assert written_together(fact_lines(session(output)), error, place)
    assert written_together(key_lines(output, count=2, max_chars=400), error, place)
    plain = "\n".join(passes + failure)
    assert output_lines(plain) == plain


def test_line_breaks_escaped_by_the_million_are_left_escaped() -> None:
    """Escaped breaks with next to nothing between them (a string of two million of
    them) are no lines to read: the text stays as it is, and reading it stays cheap."""
    text = json.dumps({"out": "\n" * 2_000_000, "code": 0})
    assert lines_unescaped(text) == text
    assert key_lines(text) == []


def test_a_value_in_a_long_line_is_read_with_the_small_object_around_it() -> None:
    """In a long line of minified JSON, a value is read with its object's other members
    (the pool's size with its sibling setting); an object too long, or braces that are
    text in a string, leave the window around the value as it was."""
    config = {
        "service": "ledger",
        "http": {"port": 8080, "read_timeout_s": 30, "write_timeout_s": 30},
        "db": {"host": "db.internal", "pool": {"max_connections": 380, "min_idle": 4}},
        "features": {f"flag_{n}_enabled": True for n in range(12)},
    }
    text = json.dumps(config, separators=(",", ":"))
    assert _read(text, '"max_connections"') == '{"max_connections":380,"min_idle":4}'
    big = json.dumps({"items": "x" * 400, "meta": {"note": "y" * 250, "code": "E7"}})
    assert _read(big, '"code"').endswith('"code": "E7"}}')  # a window: the object is long
    braces = json.dumps({"log": "a" * 300 + ' saw {"id": 7, "state": "odd"} then ' + "b" * 80})
    assert "then" in _read(braces, "state")  # text in a string: not an object


def test_a_record_is_read_whole_only_when_it_is_small_and_structured() -> None:
    small = "spec:\n  resources:\n    limits:\n      memory: 640Mi\n      cpu: 500m\n  replicas: 3"
    assert _read(small, "memory: 640Mi") == "      memory: 640Mi\n      cpu: 500m"
    # a log's level labels and prose's ``Note:`` are not members of a record
    log = "INFO: started\nINFO: worker ready\nWARN: slow disk on sdb\nINFO: done"
    assert _read(log, "WARN: slow disk") == "WARN: slow disk on sdb"
    # a config of many keys is a dump: each of its lines is read alone
    many = "data:\n" + "\n".join(f"  key{n}: value{n}" for n in range(12))
    assert _read(many, "key5: value5") == "  key5: value5"
    # an object a member opens is not a value beside it
    opens = '{\n  "key": "SEC-6409",\n  "fields": {\n    "priority": "Blocker"\n  }\n}'
    assert _read(opens, '"key": "SEC-6409"') == '  "key": "SEC-6409",'
    # a member beside a long one is not read with it
    long_value = "x" * 300
    beside = f'{{\n  "id": "job_77",\n  "blob": "{long_value}",\n  "state": "stuck"\n}}'
    assert _read(beside, '"state": "stuck"') == '  "state": "stuck"'


def _owner(text: str, line: str) -> str | None:
    """The line naming the record that ``line`` of pretty JSON ``text`` belongs to."""
    span = SpanText([(0, OUTPUT, text)])
    at = span.blob.index(line.encode())
    owner = span.owner_of(span.record(span.snippet(at, 0), at))
    return None if owner is None else span.decode(owner.start, owner.end)


def _invoices(uncollectible: dict[str, Any]) -> str:
    rng = random.Random(5)
    data: list[dict[str, Any]] = [
        {
            "id": f"in_{rng.randrange(36**14):014x}",
            "customer": {"email": f"c{n}@example.com"},
            "payment": {"status": "paid", "attempts": 1},
        }
        for n in range(8)
    ]
    data.insert(5, uncollectible)
    return json.dumps({"data": data}, indent=2)


def test_a_value_deep_in_nested_json_is_written_with_its_record_s_id() -> None:
    """A value in an object nested in a record (an invoice's ``payment.status``) is
    read with the member that names the record, however deep: ``"uncollectible"``
    alone says nothing of which invoice."""
    invoice = {
        "id": "in_1Qx7cA9r2LmT0b",
        "customer": {"email": "ops@globex.example"},
        "payment": {"status": "uncollectible", "attempts": 4},
    }
    output = _invoices(invoice)
    assert _owner(output, '"status": "uncollectible"') == '"id": "in_1Qx7cA9r2LmT0b",'
    assert written_together(fact_lines(session(output)), "in_1Qx7cA9r2LmT0b", "uncollectible")
    assert written_together(key_lines(output), "in_1Qx7cA9r2LmT0b", "uncollectible")
    order = {"order_id": "ORD-48213", "shipment": {"carrier": {"state": "lost"}}, "total": 9}
    assert _owner(json.dumps(order, indent=2), '"state": "lost"') == '"order_id": "ORD-48213",'


def test_a_record_s_owner_is_never_another_record_s() -> None:
    """A record that names itself has no owner to add; and where a record's id comes
    after the nested value (or it has none), the walk up stops at the record's opening
    brace, never taking the id of the record before it."""
    named = json.dumps([{"id": "a1", "state": {"phase": "Failed", "id": "p-9"}}], indent=2)
    assert _owner(named, '"phase": "Failed"') is None
    later = [
        {"payment": {"status": "paid"}, "id": "in_before"},
        {"payment": {"status": "uncollectible"}, "id": "in_after"},
    ]
    assert _owner(json.dumps(later, indent=2), '"status": "uncollectible"') is None
    assert _owner("status: failed\nid: x", "status: failed") is None  # YAML: no JSON


DESCRIBE = """Name:         refunds-api-7d9f8c6b5-x2kqp
Namespace:    prod
Status:       Running
Containers:
  app:
    State:          Running
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Restart Count:  12
"""


def test_a_value_in_an_indented_record_is_written_with_its_name() -> None:
    """In an indented record (``kubectl describe``, a YAML manifest), a value is read
    with the nearest member that names what holds it, up through the keys that hold it:
    the pod's ``Name:`` for its container's last ``Reason: OOMKilled`` (an error line
    too: the summary keeps the name with it), a container's ``- name:`` for its memory
    limit. The walk stops at a line that is no key. (Before, only pretty JSON had
    owners.)"""
    oom = "      Reason:       OOMKilled"
    assert _owner(DESCRIBE, oom) == "Name:         refunds-api-7d9f8c6b5-x2kqp"
    assert written_together(
        fact_lines(session(DESCRIBE)), "refunds-api-7d9f8c6b5-x2kqp", "OOMKilled"
    )
    manifest = "containers:\n  - name: web\n    image: nginx:1.25\n    resources:\n"
    manifest += "      limits:\n        memory: 64Mi\n"
    assert _owner(manifest, "        memory: 64Mi") == "- name: web"
    assert _owner("Name: a\n+++ not a key\n  Reason: Failed\n", "  Reason: Failed") is None


words = st.text(alphabet="abcdefghij_=:0123456789", min_size=1, max_size=12)


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(st.tuples(words, st.floats(0, 1.5)), min_size=1, max_size=80),
    st.integers(8, 300),
)
def test_a_trimmed_line_never_exceeds_its_limit(
    chunks: list[tuple[str, float]], limit: int
) -> None:
    text = " ".join(chunk for chunk, _ in chunks)
    found = {chunk.strip(".:-_/=#+~%$&").encode(): worth for chunk, worth in chunks}
    assert len(trimmed(text, found, limit)) <= limit


# ``pytest --tb=native``: the failure's traceback as Python prints it, then the tally
PYTEST_FAILURE = """\
platform linux -- Python 3.12.4, pytest-8.3.2
collected 58 items

tests/unit/test_carts.py ..........
tests/unit/test_pricing.py ....F.....
tests/unit/test_stock.py ..........

_________________________ test_vat_for_portugal _________________________
Traceback (most recent call last):
  File "/srv/shop/tests/unit/test_pricing.py", line 31, in test_vat_for_portugal
    assert vat_for("PT", 1000) == 230
  File "/srv/shop/shop/pricing.py", line 92, in vat_for
    return cents * RATES[country] // 100
KeyError: 'PT'
=========================== short test summary info ===========================
FAILED tests/unit/test_pricing.py::test_vat_for_portugal - KeyError: 'PT'
1 failed, 57 passed in 1.84s
"""


def test_a_masked_test_run_keeps_its_error_and_frame_before_its_tally() -> None:
    """Of a failed pytest run, what a masked output keeps in two lines is the error with
    where it was raised and the test that failed, not the tally of passed and failed
    tests, which names nothing. (Before, the tally took the error's place.)"""
    kept = key_lines(PYTEST_FAILURE, count=2, max_chars=220)
    assert written_together(kept, "KeyError: 'PT'", 'shop/pricing.py", line 92')
    assert not written_together(kept, "1 failed, 57 passed")


@pytest.mark.parametrize(
    ("line", "tally"),
    [
        ("1 failed, 40 passed in 3.21s", True),  # pytest
        ("=== 212 passed, 2 rerun in 81.22s ===", True),
        ("Tests:       1 failed, 311 passed, 312 total", True),  # jest
        ("test result: FAILED. 40 passed; 1 failed; 0 ignored", True),  # cargo
        ("2 failed tests in payout", False),  # one count
        ("FAILED tests/test_tax.py::test_eu_orders - KeyError", False),
        ("upstream returned 502 after 3 retries", False),
    ],
)
def test_what_is_a_test_runner_s_tally(line: str, tally: bool) -> None:
    assert is_tally(line) is tally


DESCRIBE_WITH_LIMITS = DESCRIBE + "    Limits:\n      memory:  256Mi\n"


def test_a_masked_describe_keeps_why_the_pod_died_and_names_the_pod_once_a_line() -> None:
    """Of ``kubectl describe pod``, what a masked output keeps is why the container died
    (``Reason: OOMKilled``, a failure as the scan reads it) with the pod's name, and a
    line that only names the pod is not kept beside one that names it with a member.
    (Before: ``Name: …`` alone, then the name again with the memory limit.)"""
    kept = key_lines(DESCRIBE_WITH_LIMITS, count=2, max_chars=220)
    assert written_together(kept, "Name: refunds-api-7d9f8c6b5-x2kqp", "Reason: OOMKilled")
    assert "Name: refunds-api-7d9f8c6b5-x2kqp" not in kept


_ANY_CHARACTER = st.characters(exclude_categories=())  # surrogates and controls too
_NEAR_ESCAPES = st.sampled_from(["\\", "u", "d8", "dc", "00", "e9", "2028", "\ud83d", "é", "🚀"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_ANY_CHARACTER, _NEAR_ESCAPES)).map("".join))
def test_a_json_document_unescaped_is_the_same_document(value: str) -> None:
    """Whatever a JSON string holds (escaped backslashes before a ``u``, surrogates,
    separators, controls), its letters unescaped leave a JSON document of the same
    value: only what JSON needs no escape for is written as it reads."""
    for document in (json.dumps(value), json.dumps({"out": value, "n": 1})):
        assert json.loads(letters_unescaped(document)) == json.loads(document)
