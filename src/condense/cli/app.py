"""The argument parser: one subcommand per job, each handled by its own module."""

from __future__ import annotations

import argparse

from condense.formats import Conversation
from condense.providers import AUTO, PROFILES, ProviderChoice, choose_provider


def build_parser() -> argparse.ArgumentParser:
    from condense.cli import check, dataset_cmd, proxy_cmd, repair_cmd, serve_fake, session

    parser = argparse.ArgumentParser(
        prog="condense",
        description="Fit LLM-agent histories to a token budget without breaking them; "
        "check and heal broken histories.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (session, check, repair_cmd, serve_fake, dataset_cmd, proxy_cmd):
        command.register(commands)
    return parser


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
