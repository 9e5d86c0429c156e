"""Options shared by the commands: one flag per idea, one parser per kind of value.

- ``--budget N`` — the token budget (``compress``: the history; ``compress-dataset``: each
  trajectory); the old ``--target-tokens`` is a hidden alias.
- ``--summarizer NAME`` and ``-O KEY=VALUE`` — the summarizer and its options, on every
  command that summarizes. The summarizer is built before any input is read, so a typo
  in its name or a missing option fails at once, not when the first summary is due.
- ``--summary-tokens N`` — the room of the summary.
- ``--max-attempts N`` — tries of a summary (the old ``--retries N`` means ``N + 1``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from condense.cli.app import hidden_alias
from condense.exceptions import InputError
from condense.summarizers import Summarizer, get_summarizer, known_summarizers


def positive(text: str) -> int:
    """A whole number of at least 1."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def count(text: str) -> int:
    """A whole number of at least 0."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {text!r}")
    return value


def seconds(text: str) -> float:
    """A positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def add_budget(parser: argparse.ArgumentParser, *, what: str, old: bool = False) -> None:
    """``--budget N`` (checked by :func:`condense.cli.app.required`); ``old`` also takes
    the previous spelling ``--target-tokens``."""
    parser.add_argument("--budget", type=positive, metavar="TOKENS", help=f"token budget {what}")
    if old:
        hidden_alias(parser, "--target-tokens", dest="budget", type=positive)


def add_summarizer(parser: argparse.ArgumentParser) -> None:
    """``--summarizer`` and ``-O KEY=VALUE`` (repeatable)."""
    parser.add_argument(
        "--summarizer",
        default="extractive",
        help=f"summarizer: {', '.join(known_summarizers())} (default: extractive)",
    )
    parser.add_argument(
        "-O",
        "--summarizer-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="summarizer option (a JSON value or text), e.g. -O model=gpt-4o-mini "
        "-O base_url=http://127.0.0.1:8000/v1; repeat for more",
    )


def summarizer_options(pairs: list[str]) -> dict[str, Any]:
    """``-O KEY=VALUE`` pairs as keyword arguments (values read as JSON when they are)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"-O expects KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def build_summarizer(args: argparse.Namespace) -> Summarizer:
    """The summarizer of ``--summarizer`` / ``-O``, built now (errors are the user's)."""
    return get_summarizer(args.summarizer, **summarizer_options(args.summarizer_option))
