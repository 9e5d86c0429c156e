"""``condense check FILE``: list what a provider would reject in a history."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from condense.cli.app import add_format, add_provider, provider_for
from condense.cli.io import read_conversations
from condense.validate import validate


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "check",
        help="list the violations of a provider's rules (exit 1 if any)",
        description="Validate a history (JSON) or many (JSONL) against a provider profile. "
        "Each violation names its place in the file (messages[3].content[1], input[7]) and "
        "quotes the provider's error with that provider's own paths. "
        "Exit code 0: valid; 1: violations found; 2: unreadable input.",
    )
    parser.add_argument("file", help="JSON or JSONL file, or - for stdin")
    add_provider(parser)
    add_format(parser)
    parser.add_argument("--json", action="store_true", help="print violations as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    conversations = read_conversations(args.file, format=args.format)
    found: list[dict[str, Any]] = []
    chosen: list[str] = []
    for conversation in conversations:
        choice = provider_for(args, conversation)
        chosen.append(str(choice))
        for violation in validate(conversation, provider=choice):
            found.append(
                {
                    "source": conversation.source,
                    "line": conversation.line,
                    "location": violation.location or f"message {violation.index}",
                    "index": violation.index,
                    "code": violation.code,
                    "detail": violation.detail,
                    "provider": violation.provider,
                    "provider_error": violation.provider_error,
                }
            )
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=2))
    else:
        for item in found:
            where = item["source"] + (f":{item['line']}" if item["line"] is not None else "")
            print(f"{where}: {item['location']}: {item['detail']} [{item['code']}]")
            if item["provider_error"]:
                print(f"    {item['provider']} would answer: {item['provider_error']}")
        records = len(conversations)
        bad = len({(i["source"], i["line"]) for i in found})
        verdict = "valid" if not found else f"{len(found)} violation(s) in {bad} history(ies)"
        against = chosen[0] if len(set(chosen)) == 1 else "per-history profiles"
        print(f"{records} history(ies) checked against {against}: {verdict}", file=sys.stderr)
    return 1 if found else 0
