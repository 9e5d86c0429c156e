"""``condense session FILE --budget N``: compress an agent history to a token budget."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from condense.cli.app import add_format, add_provider, provider_for
from condense.cli.io import is_jsonl, read_conversations, render, where, write_output
from condense.compress import BudgetError, CompressionReport, compress
from condense.formats import Conversation
from condense.summarizers import known_summarizers


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "session",
        help="compress an agent history to a token budget (never breaks it)",
        description="Compress a history (JSON) or several (JSONL) to --budget tokens and write "
        "it in the input's format. A short report goes to stderr. Exit code 1 when the budget "
        "cannot be met and --strict-budget is given.",
    )
    parser.add_argument("file", help="JSON or JSONL file, or - for stdin")
    parser.add_argument("-o", "--output", help="output file (default: stdout; - for stdout)")
    parser.add_argument("--budget", type=_positive, required=True, help="token budget")
    parser.add_argument(
        "--model", help="model name: picks the provider and the tokenizer (e.g. gpt-4o)"
    )
    parser.add_argument("--encoding", help="tokenizer encoding: o200k_base or cl100k_base")
    add_provider(parser, model=False)
    parser.add_argument(
        "--summarizer",
        default="extractive",
        help=f"summarizer: {', '.join(known_summarizers())} (default: extractive)",
    )
    parser.add_argument("--tail-tokens", type=_positive, help="tokens of recent history kept")
    parser.add_argument(
        "--strict-budget", action="store_true", help="fail (exit 1) if the budget cannot be met"
    )
    parser.add_argument(
        "--keep-bound-thinking",
        action="store_true",
        help="keep Anthropic thinking blocks after the first edit (for accounts that do not "
        "enforce thinking-block binding; by default they are removed and reported)",
    )
    add_format(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stderr")
    parser.set_defaults(handler=handle)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def handle(args: argparse.Namespace) -> int:
    conversations = read_conversations(args.file, format=args.format)
    written: list[tuple[Conversation, Any]] = []
    over = False
    for conversation in conversations:
        provider = provider_for(args, conversation)
        try:
            result = compress(
                conversation.messages,
                budget=args.budget,
                model=args.model,
                encoding=args.encoding,
                provider=provider,
                summarizer=args.summarizer,
                tail_tokens=args.tail_tokens,
                strict_budget=args.strict_budget,
                keep_bound_thinking=args.keep_bound_thinking,
            )
        except BudgetError as error:
            print(f"condense: {where(conversation)}: {error}", file=sys.stderr)
            over = True
            result = error.result
        written.append((conversation, conversation.dump(result.messages)))
        _print_report(conversation, result.report, as_json=args.json)
    write_output(render(written, jsonl=is_jsonl(args.file, conversations)), args.output)
    return 1 if over else 0


def _print_report(conversation: Conversation, report: CompressionReport, *, as_json: bool) -> None:
    if as_json:
        record = {
            "source": conversation.source,
            "line": conversation.line,
            "provider": report.provider,
            "provider_reason": report.provider_reason,
            "budget": report.budget,
            "encoding": report.encoding,
            "tokens_before": report.tokens_before,
            "tokens_after": report.tokens_after,
            "fits": report.fits,
            "protected_tokens": report.protected_tokens,
            "units": dict(report.actions),
            "summarizer": report.summarizer,
            "summarizer_fell_back": report.summarizer_fell_back,
            "fallback_reason": report.fallback_reason,
            "repairs": [str(change) for change in report.repairs],
            "replay_removed": [
                {"index": removal.index, "blocks": len(removal.blocks), "reason": removal.reason}
                for removal in report.replay_removed
            ],
        }
        print(json.dumps(record, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"{where(conversation)}: {report.describe()}", file=sys.stderr)
