"""``condense repair FILE``: write the healed history, list every change on stderr.

The output is in the input's format (JSON in, JSON out; JSONL in, one line per record,
in order). Each change is one line on stderr; ``--show-changes`` adds the message before
and after it, ``--json`` writes one JSON object per change carrying both. A JSONL line
that is not a record goes to the rejects file (``OUT.rejects.jsonl``, or stderr when the
output is stdout) and the others are still repaired. Exit code 0: done; 1: some lines
were rejected; 2: the input cannot be read at all.
"""

from __future__ import annotations

import argparse
from typing import Any

from condense.cli.app import add_command, add_format, add_provider, describe_chosen, provider_for
from condense.cli.inputs import Input, Rejected, rejected, where
from condense.cli.outputs import Output, Rejects
from condense.cli.report import Progress, change_record, emit, show_change
from condense.exceptions import InputError
from condense.formats import Conversation
from condense.repair import repair


def register(commands: Any) -> None:
    add_command(
        commands,
        "repair",
        help="heal a history so a provider accepts it; changes go to stderr",
        description="Repair a history (JSON) or many (JSONL) for a provider profile and write "
        "it in the input's format. Every change is listed on stderr; a dropped message is "
        "shown with --show-changes and carried in --json.",
        configure=configure,
        handler=handle,
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="JSON or JSONL file, or - for stdin")
    parser.add_argument("-o", "--output", help="output file (default: stdout; - for stdout)")
    add_provider(parser)
    add_format(parser)
    parser.add_argument(
        "--show-changes", action="store_true", help="show each changed message, before and after"
    )
    parser.add_argument(
        "--json", action="store_true", help="list changes on stderr as JSON lines, with messages"
    )
    parser.add_argument("--rejects", help="rejects file (default: OUT.rejects.jsonl)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def handle(args: argparse.Namespace) -> int:
    with Output(args.output) as output:
        source = Input(args.file, format=args.format)
        rejects = Rejects(args.rejects, output, jsonl=source.jsonl)
        histories = changes = changed = 0
        chosen: set[str] = set()
        try:
            with Progress(source, label="repair", quiet=args.quiet) as progress:
                for item in source.items():
                    progress.advance()
                    if isinstance(item, Rejected):
                        rejects.add(item)
                        continue
                    found = _repair(item, args, progress, chosen, single=not source.jsonl)
                    if isinstance(found, Rejected):
                        rejects.add(found)
                        continue
                    native, count = found
                    output.write(native, jsonl=source.jsonl)
                    histories += 1
                    changes += count
                    changed += bool(count)
            output.commit(array=source.array)
            rejects.commit()
        finally:
            source.close()
            rejects.discard()
    if not args.json:
        against = describe_chosen(chosen)
        progress.say(
            f"condense: repaired {histories} history(ies) for {against}: "
            f"{changes} change(s) in {changed} history(ies){rejects.describe()}"
        )
    return 1 if rejects.count else 0


def _repair(
    conversation: Conversation,
    args: argparse.Namespace,
    progress: Progress,
    chosen: set[str],
    *,
    single: bool,
) -> tuple[Any, int] | Rejected:
    """The repaired native document and its number of changes, or the record rejected."""
    try:
        choice = provider_for(args, conversation)
        chosen.add(str(choice))
        result = repair(conversation, provider=choice)
    except InputError as error:
        if single:
            raise
        return rejected(conversation, error)
    for change in result.changes:
        if args.json or args.show_changes:
            record = change_record(conversation, change, conversation.messages, result.messages)
            if args.json:
                emit(record)
            else:
                for line in show_change(record):
                    progress.say(line)
        else:
            progress.say(f"{where(conversation)}: {change}")
    return conversation.dump(result.messages), len(result.changes)
