"""``condense repair FILE``: write the healed history, list the changes on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from condense.cli.app import add_format, add_provider, provider_for
from condense.cli.io import is_jsonl, read_conversations, render, where, write_output
from condense.repair import repair


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "repair",
        help="heal a history so a provider accepts it; changes go to stderr",
        description="Repair a history (JSON) or many (JSONL) for a provider profile and write "
        "it in the input's format. Every change is listed on stderr.",
    )
    parser.add_argument("file", help="JSON or JSONL file, or - for stdin")
    parser.add_argument("-o", "--output", help="output file (default: stdout; - for stdout)")
    add_provider(parser)
    add_format(parser)
    parser.add_argument("--json", action="store_true", help="list changes on stderr as JSON lines")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    conversations = read_conversations(args.file, format=args.format)
    healed = []
    total = 0
    chosen: list[str] = []
    for conversation in conversations:
        choice = provider_for(args, conversation)
        chosen.append(str(choice))
        result = repair(conversation, provider=choice)
        healed.append((conversation, conversation.dump(result.messages)))
        total += len(result.changes)
        for change in result.changes:
            if args.json:
                record = {
                    "source": conversation.source,
                    "line": conversation.line,
                    "action": change.action,
                    "location": change.location,
                    "index": change.index,
                    "output_index": change.output_index,
                    "code": change.code,
                    "reason": change.reason,
                }
                print(json.dumps(record, ensure_ascii=False), file=sys.stderr)
            else:
                print(f"{where(conversation)}: {change}", file=sys.stderr)
    write_output(render(healed, jsonl=is_jsonl(args.file, conversations)), args.output)
    if not args.json:
        print(
            f"repaired {len(conversations)} history(ies) for "
            f"{chosen[0] if len(set(chosen)) == 1 else 'per-history profiles'}: {total} change(s)",
            file=sys.stderr,
        )
    return 0
