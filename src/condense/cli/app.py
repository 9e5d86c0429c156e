"""The argument parser: one subcommand per job, named like the library function it runs.

``condense compress`` / ``validate`` / ``repair`` / ``compress-dataset`` are
:func:`condense.compress` / :func:`~condense.validate` / :func:`~condense.repair` /
:func:`~condense.datasets.compress_dataset`; ``serve-fake`` runs the strict fake
provider. The verbs of the previous release (``session``, ``check``, ``dataset``) still
work for one release, hidden from ``--help``, with a note on stderr.

A run imports only the module of the command it runs (:data:`COMMANDS`): ``condense
compress-dataset`` does not load the proxy, the fake provider or the repair engine.
``--help``, ``--version`` and an unknown command load them all.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from condense import __version__
from condense.formats import Conversation
from condense.providers import AUTO, PROFILES, ProviderChoice, choose_provider


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


COMMANDS: dict[str, str] = {
    "compress": "compress_cmd",
    "session": "compress_cmd",
    "validate": "validate_cmd",
    "check": "validate_cmd",
    "repair": "repair_cmd",
    "compress-dataset": "dataset_cmd",
    "dataset": "dataset_cmd",
    "serve-fake": "serve_fake",
    "proxy": "proxy_cmd",
}
"""Every verb (old spellings too) and the ``condense.cli`` module that registers it, in
the order ``--help`` lists them."""


def command_of(argv: Sequence[str]) -> str | None:
    """The verb ``argv`` runs: its first word when that names a command, else ``None``
    (the top level's own flags, ``--help`` and ``--version``, need every command)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def build_parser(command: str | None = None) -> Parser:
    """The parser with every command, or with only ``command``'s (a verb of
    :data:`COMMANDS`), which imports nothing the other commands need."""
    import importlib

    wanted = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    modules = [importlib.import_module(f"condense.cli.{name}") for name in wanted]

    parser = Parser(
        prog="condense",
        description="Fit LLM-agent histories to a token budget without breaking them; "
        "check and heal broken histories.",
        epilog="Exit codes: 0 done; 1 problems found (violations, rejected lines, a budget "
        "not met with --strict-budget, failed summaries); 2 unusable input, output or "
        "options; 3 a failure while working; 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"condense {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in modules:
        module.register(commands)
    return parser


def add_command(
    commands: Any,
    name: str,
    *,
    old: str | None = None,
    help: str,
    description: str,
    configure: Callable[[argparse.ArgumentParser], None],
    handler: Callable[[argparse.Namespace], int],
) -> None:
    """Add subcommand ``name``, and ``old`` as a hidden alias of it (same options)."""
    for verb in (name, old):
        if verb is None:
            continue
        shown = {"help": help} if verb == name else {}
        parser = commands.add_parser(verb, description=description, **shown)
        configure(parser)
        parser.set_defaults(handler=handler, renamed=(verb, name) if verb != name else None)


def hidden_alias(parser: argparse.ArgumentParser, *flags: str, dest: str, **kwargs: Any) -> None:
    """Accept ``flags`` (an old spelling) for ``dest``, without showing them in ``--help``."""
    parser.add_argument(*flags, dest=dest, help=argparse.SUPPRESS, **kwargs)


def add_provider(parser: argparse.ArgumentParser, *, model: bool = True) -> None:
    """``--provider`` (default ``auto``) and, unless the command has its own, ``--model``."""
    parser.add_argument(
        "--provider",
        "-p",
        default=AUTO,
        choices=[AUTO, *sorted(PROFILES)],
        help="the provider whose rules apply (default: auto — from the file's format, the "
        "model name, the replay state in the history; strict when nothing tells)",
    )
    if model:
        parser.add_argument(
            "--model", help="model name the history is sent to (picks the provider)"
        )


def describe_chosen(chosen: set[str]) -> str:
    """The providers a run used, for its total line: the one, with its reason, or a note
    that they differ per history."""
    return next(iter(chosen)) if len(chosen) == 1 else "per-history profiles"


def provider_for(args: argparse.Namespace, conversation: Conversation) -> ProviderChoice:
    """The provider chosen for one conversation from ``--provider`` and ``--model``."""
    return choose_provider(
        args.provider,
        messages=conversation.messages,
        format=conversation.format,
        model=getattr(args, "model", None),
    )


def add_format(parser: argparse.ArgumentParser) -> None:
    from condense.formats import FORMATS

    parser.add_argument(
        "--format",
        default="auto",
        choices=["auto", *FORMATS],
        help="wire format of the input (default: detect it)",
    )


def required(args: argparse.Namespace, parser_flags: Sequence[tuple[str, str]]) -> None:
    """Raise a usage error naming the first ``(dest, flag)`` that was not given (for an
    option that also has a hidden old spelling, which argparse cannot make required)."""
    from condense.exceptions import InputError

    for dest, flag in parser_flags:
        if getattr(args, dest, None) is None:
            raise InputError(f"the option {flag} is required")
