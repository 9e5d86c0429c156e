"""The argument parser: one subcommand per job, each handled by its own module."""

from __future__ import annotations

import argparse

from condense.profiles import DEFAULT_PROFILE, PROFILES


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


def add_provider(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--provider",
        "-p",
        default=DEFAULT_PROFILE,
        choices=sorted(PROFILES),
        help=f"validator profile to enforce (default: {DEFAULT_PROFILE})",
    )


def add_format(parser: argparse.ArgumentParser) -> None:
    from condense.formats import FORMATS

    parser.add_argument(
        "--format",
        default="auto",
        choices=["auto", *FORMATS],
        help="wire format of the input (default: detect it)",
    )
