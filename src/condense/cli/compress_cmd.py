"""``condense compress FILE --budget N``: compress agent histories to a token budget.

The output is in the input's format (JSON in, JSON out; JSONL in, one line per record,
in order, streamed with flat memory). For one history a short report goes to stderr;
for JSONL only the records that did not fit (or whose summarizer fell back) get a line,
and one total line ends the run. ``--json`` writes one JSON report per record instead,
with the summary text, the units that were reduced and the repairs with the messages
they concern; ``--show-changes`` prints the same for people. A JSONL line that is not a
record goes to the rejects file. Exit code 0: done; 1: a budget was not met under
``--strict-budget`` or lines were rejected; 2: unusable input or options.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from condense.cli.app import add_command, add_format, add_provider, provider_for, required
from condense.cli.inputs import Input, Rejected, rejected, where
from condense.cli.options import (
    add_budget,
    add_summarizer,
    build_summarizer,
    count,
    positive,
)
from condense.cli.outputs import Output, Rejects
from condense.cli.report import Progress, change_record, emit, show_change
from condense.compress import BudgetError, CompressionResult, UnitOutcome, compress
from condense.exceptions import InputError
from condense.formats import Conversation
from condense.summarizers import Summarizer


def register(commands: Any) -> None:
    add_command(
        commands,
        "compress",
        old="session",
        help="compress agent histories to a token budget (never breaks them)",
        description="Compress a history (JSON) or many (JSONL) to --budget tokens and write "
        "them in the input's format. Reports go to stderr. Exit code 1 when a budget cannot "
        "be met under --strict-budget or lines were rejected.",
        configure=configure,
        handler=handle,
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="JSON or JSONL file, or - for stdin")
    parser.add_argument("-o", "--output", help="output file (default: stdout; - for stdout)")
    add_budget(parser, what="of each history")
    parser.add_argument(
        "--model", help="model name: picks the provider and the tokenizer (e.g. gpt-4o)"
    )
    parser.add_argument("--encoding", help="tokenizer encoding: o200k_base or cl100k_base")
    parser.add_argument(
        "--no-tokenizer-margin",
        dest="tokenizer_margin",
        action="store_false",
        help="take --budget in condense's own tokens; by default it is in the provider's, "
        "planned below by the measured error of a model whose tokenizer condense does not "
        "ship (Claude, Gemini)",
    )
    add_provider(parser, model=False)
    parser.add_argument(
        "--keep-bound-thinking",
        action="store_true",
        help="keep Anthropic thinking blocks after the first edit (for accounts that do not "
        "enforce the prefix check; same as --bound-thinking keep)",
    )
    parser.add_argument(
        "--bound-thinking",
        choices=("auto", "keep", "drop-block"),
        default="auto",
        help="Anthropic thinking an edit would unbind: decided per request (auto), kept "
        "(keep), or kept with thinking.block_binding 'drop_block' written into the output "
        "(drop-block; send the anthropic-beta header it prints)",
    )
    add_summarizer(parser)
    parser.add_argument(
        "--tail-tokens", type=count, help="tokens of recent history always kept (default: 1/4)"
    )
    parser.add_argument(
        "--summary-tokens",
        type=positive,
        help="tokens the summary may take, at least 1 (default: the room the kept part "
        "leaves, up to half the budget)",
    )
    parser.add_argument(
        "--strict-budget", action="store_true", help="exit 1 if a budget cannot be met"
    )
    add_format(parser)
    parser.add_argument(
        "--show-changes",
        action="store_true",
        help="show the repairs (with their messages), the reduced units and the summary",
    )
    parser.add_argument("--json", action="store_true", help="one JSON report per history on stderr")
    parser.add_argument("--rejects", help="rejects file (default: OUT.rejects.jsonl)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def handle(args: argparse.Namespace) -> int:
    required(args, [("budget", "--budget")])
    summarizer = build_summarizer(args)
    with Output(args.output) as output:
        source = Input(args.file, format=args.format)
        rejects = Rejects(args.rejects, output, jsonl=source.jsonl)
        tally = _Tally()
        try:
            with Progress(source, label="compress", quiet=args.quiet) as progress:
                for item in source.items():
                    progress.advance()
                    if isinstance(item, Rejected):
                        rejects.add(item)
                        continue
                    done = _compress(item, args, summarizer, single=not source.jsonl)
                    if isinstance(done, Rejected):
                        rejects.add(done)
                        continue
                    result, provider, over = done
                    written = item.dump(result.messages)
                    settings = result.request_settings
                    if settings is not None and isinstance(written, dict):
                        written = settings.apply_body(written)
                        headers = ", ".join(f"{k}: {v}" for k, v in settings.headers.items())
                        progress.say(f"{where(item)}: send this request with {headers}")
                    output.write(written, jsonl=source.jsonl)
                    tally.add(result, over=over)
                    _report(item, result, provider, args, progress, many=source.jsonl)
            output.commit(array=source.array)
            rejects.commit()
        finally:
            source.close()
            rejects.discard()
    if source.jsonl and not args.json:
        progress.say(tally.describe(args.budget) + rejects.describe())
    return 1 if tally.over or rejects.count else 0


class _Tally:
    def __init__(self) -> None:
        self.histories = self.fit = self.over = self.before = self.after = 0

    def add(self, result: CompressionResult, *, over: bool) -> None:
        report = result.report
        self.histories += 1
        self.fit += report.fits
        self.over += over
        self.before += report.tokens_before
        self.after += report.tokens_after

    def describe(self, budget: int) -> str:
        missed = self.histories - self.fit
        return (
            f"condense: compressed {self.histories} history(ies) to {budget:,} tokens: "
            f"{self.fit} fit, {missed} over budget; {self.before:,} → {self.after:,} tokens"
        )


def _compress(
    conversation: Conversation, args: argparse.Namespace, summarizer: Summarizer, *, single: bool
) -> tuple[CompressionResult, str, bool] | Rejected:
    """The result, the profile used and whether the budget was missed under
    ``--strict-budget``; or the record rejected."""
    provider = str(provider_for(args, conversation))
    try:
        result = compress(
            conversation,  # repairs are then named in the file's own places
            budget=args.budget,
            model=args.model,
            encoding=args.encoding,
            provider=provider_for(args, conversation),
            summarizer=summarizer,
            keep_bound_thinking=args.keep_bound_thinking,
            bound_thinking="drop_block"
            if args.bound_thinking == "drop-block"
            else args.bound_thinking,
            tail_tokens=args.tail_tokens,
            summary_tokens=args.summary_tokens,
            strict_budget=args.strict_budget,
            tokenizer_margin=args.tokenizer_margin,
        )
    except BudgetError as error:
        return error.result, provider, True
    except InputError as error:
        if single:
            raise
        return rejected(conversation, error)
    return result, provider, False


def _report(
    conversation: Conversation,
    result: CompressionResult,
    provider: str,
    args: argparse.Namespace,
    progress: Progress,
    *,
    many: bool,
) -> None:
    report = result.report
    if args.json:
        emit(_json_report(conversation, result, provider))
        return
    if not many or not report.fits or report.summarizer_fell_back:
        hint = " (--show-changes lists them)" if report.repairs and not args.show_changes else ""
        progress.say(f"{where(conversation)}: {report.describe()}{hint}")
    if args.show_changes:
        for line in _changes(conversation, result):
            progress.say(line)


def _json_report(
    conversation: Conversation, result: CompressionResult, provider: str
) -> dict[str, Any]:
    report = result.report
    return {
        "source": conversation.source,
        "line": conversation.line,
        "provider": report.provider,
        "provider_reason": report.provider_reason,
        "budget": report.budget,
        "encoding": report.encoding,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "fits": report.fits,
        "room": None
        if report.room is None
        else {
            "tokenizer": report.room.tokenizer,
            "ratio": report.room.ratio,
            "fixed": report.room.fixed,
            "request": report.room.request,
        },
        "protected_tokens": report.protected_tokens,
        "units": dict(report.actions),
        "reduced": [
            {"kind": str(unit.kind), "start": unit.start, "stop": unit.stop, "action": unit.action}
            for unit in report.units
            if unit.action != "kept"
        ],
        "summary": result.summary,
        "summarizer": report.summarizer,
        "summarizer_fell_back": report.summarizer_fell_back,
        "fallback_reason": report.fallback_reason,
        "repairs": [
            change_record(conversation, change, conversation.messages) for change in report.repairs
        ],
        "replay_removed": [
            {"index": removal.index, "blocks": len(removal.blocks), "reason": removal.reason}
            for removal in report.replay_removed
        ],
        "cuts": [
            {
                "index": cut.index,
                "tool_call_id": cut.tool_call_id,
                "removed": cut.removed,
                "total": cut.total,
                "running": cut.running,
            }
            for cut in report.cuts
        ],
        "thinking": None if report.thinking is None else str(report.thinking),
        "superseded": None if report.superseded is None else str(report.superseded),
        "request_settings": None
        if result.request_settings is None
        else {
            "body": result.request_settings.body,
            "headers": result.request_settings.headers,
        },
    }


def _runs(units: Sequence[UnitOutcome]) -> list[tuple[str, list[UnitOutcome]]]:
    """Consecutive units that got the same action."""
    runs: list[tuple[str, list[UnitOutcome]]] = []
    for unit in units:
        if runs and runs[-1][0] == unit.action:
            runs[-1][1].append(unit)
        else:
            runs.append((unit.action, [unit]))
    return runs


def _changes(conversation: Conversation, result: CompressionResult) -> list[str]:
    """``--show-changes``: the repairs, the reduced units, the summary text."""
    lines: list[str] = []
    for change in result.report.repairs:
        lines.extend(show_change(change_record(conversation, change, conversation.messages)))
    for action, units in _runs(result.report.units):
        if action != "kept":
            first, last = units[0].start, units[-1].stop - 1
            span = f"message {first}" if first == last else f"messages {first}–{last}"
            lines.append(f"{where(conversation)}: {span} ({len(units)} unit(s)): {action}")
    if result.summary is not None:
        lines.append(f"{where(conversation)}: summary:")
        lines.extend("    " + line for line in result.summary.splitlines())
    return lines
