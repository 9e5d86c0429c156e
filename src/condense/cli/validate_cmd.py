"""``condense validate FILE``: list what a provider would reject in a history (or many).

Each violation is one line on stdout (``--json``: one JSON object per line), naming the
file, the JSONL line, the message index and the provider's own error text; a JSONL line
that is not a record is listed too (``unreadable``) and reading goes on. The total goes
to stderr. Exit code 0: every history is valid; 1: violations or unreadable lines;
2: the input cannot be read at all.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from condense.cli.app import add_command, add_format, add_provider, describe_chosen, provider_for
from condense.cli.inputs import Input, Rejected, rejected
from condense.cli.outputs import stdout_bytes
from condense.cli.report import Progress
from condense.exceptions import InputError
from condense.formats import Conversation
from condense.validate import validate


def register(commands: Any) -> None:
    add_command(
        commands,
        "validate",
        old="check",
        help="list the violations of a provider's rules (exit 1 if any)",
        description="Validate a history (JSON) or many (JSONL) against a provider profile. "
        "Each violation names its place in the file (messages[3].content[1], input[7]) and "
        "quotes the provider's error with that provider's own paths. Exit code 0: valid; "
        "1: violations or unreadable lines found; 2: unreadable input.",
        configure=configure,
        handler=handle,
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="JSON or JSONL file, or - for stdin")
    add_provider(parser)
    add_format(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per violation")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def handle(args: argparse.Namespace) -> int:
    out = stdout_bytes()
    source = Input(args.file, format=args.format)
    histories = violations = unreadable = 0
    bad: set[int | None] = set()
    chosen: set[str] = set()
    try:
        with Progress(source, label="validate", quiet=args.quiet) as progress:
            for item in source.items():
                progress.advance()
                found = _findings(item, args, chosen, single=not source.jsonl)
                histories += isinstance(item, Conversation)
                for finding in found:
                    if finding["code"] == "unreadable":
                        unreadable += 1
                    else:
                        violations += 1
                    bad.add(finding["line"])
                    out.write(_render(finding, args).encode() + b"\n")
    finally:
        source.close()
    out.flush()
    if not args.json:
        verdict = "valid"
        if violations:
            verdict = f"{violations} violation(s) in {len(bad)} history(ies)"
        extra = f", {unreadable} unreadable line(s)" if unreadable else ""
        against = describe_chosen(chosen)
        progress.say(
            f"condense: {histories} history(ies) checked against {against}: {verdict}{extra}"
        )
    return 1 if violations or unreadable else 0


def _findings(
    item: Conversation | Rejected, args: argparse.Namespace, chosen: set[str], *, single: bool
) -> list[dict[str, Any]]:
    provider = args.provider
    if isinstance(item, Conversation):
        try:
            choice = provider_for(args, item)
            chosen.add(str(choice))
            problems = validate(item, provider=choice)
        except InputError as error:
            if single:
                raise
            item = rejected(item, error)
        else:
            return [
                {
                    "source": item.source,
                    "line": item.line,
                    "location": problem.location or f"message {problem.index}",
                    "index": problem.index,
                    "code": problem.code,
                    "detail": problem.detail,
                    "provider": problem.provider,
                    "provider_error": problem.provider_error,
                }
                for problem in problems
            ]
    return [
        {
            "source": item.source,
            "line": item.line,
            "location": None,
            "index": None,
            "code": "unreadable",
            "detail": item.reason,
            "provider": provider,
            "provider_error": None,
        }
    ]


def _render(finding: dict[str, Any], args: argparse.Namespace) -> str:
    if args.json:
        return json.dumps(finding, ensure_ascii=False)
    where = finding["source"] + (f":{finding['line']}" if finding["line"] is not None else "")
    if finding["location"] is not None:
        where += f": {finding['location']}"
    text = f"{where}: {finding['detail']} [{finding['code']}]"
    if finding["provider_error"]:
        text += f"\n    {finding['provider']} would answer: {finding['provider_error']}"
    return text
