"""``condense serve-fake``: a strict provider on 127.0.0.1 for testing your own agent.

It enforces one provider's rules and answers a broken history or an oversized prompt the
way that provider does (see :mod:`condense.testing.strict_provider`). The base URL goes
to stdout; refusals and the final tally go to stderr. It runs until Ctrl-C (or SIGTERM)
and then exits 0.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from condense.cli.app import add_command
from condense.cli.options import count, positive
from condense.exceptions import InputError
from condense.testing.counting import ProviderCount
from condense.testing.strict_provider import PROVIDERS, Refusal, StrictProvider
from condense.tokens.encodings import ENCODINGS


def register(commands: Any) -> None:
    add_command(
        commands,
        "serve-fake",
        help="run a strict OpenAI-compatible provider on 127.0.0.1 for tests",
        description="Serve /v1/chat/completions enforcing one provider's rules: invalid "
        "histories and oversized prompts get that provider's real status, body and "
        "error text. Point your agent's base_url at the printed URL. Ctrl-C stops it.",
        configure=configure,
        handler=handle,
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--provider",
        "-p",
        default="strict",
        choices=sorted(PROVIDERS),
        help="rules and error wording to enforce (default: strict)",
    )
    parser.add_argument(
        "--context-window",
        type=positive,
        default=None,
        metavar="TOKENS",
        help="refuse prompts larger than this, with the provider's overflow message",
    )
    parser.add_argument(
        "--count-encoding",
        choices=ENCODINGS,
        default=ProviderCount.encoding,
        help="the vocabulary prompts are counted with, the fake's own way (default: "
        f"{ProviderCount.encoding}, not condense's o200k_base)",
    )
    parser.add_argument(
        "--per-message",
        type=count,
        default=ProviderCount.per_message,
        metavar="TOKENS",
        help=f"tokens counted per message besides its text (default: {ProviderCount.per_message})",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=0, help="port to bind (default: 0, any free port)"
    )
    parser.add_argument(
        "--fail",
        action="append",
        default=[],
        metavar="STATUS[:SECONDS]",
        help="answer the next valid request with this error (e.g. 429:2 sends Retry-After: "
        "2); repeat to queue several",
    )
    parser.add_argument("--api-key", default=None, help="require this bearer token")


def handle(args: argparse.Namespace) -> int:
    failures = _failure_specs(args.fail)  # checked before the port is taken
    try:
        server = StrictProvider(
            args.provider,
            context_window=args.context_window,
            token_counter=ProviderCount(encoding=args.count_encoding, per_message=args.per_message),
            require_api_key=args.api_key,
            host=args.host,
            port=args.port,
            on_refusal=_report,
        )
    except OSError as error:  # a port in use or not allowed, an address not on this machine
        reason = error.strerror or str(error)
        raise InputError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    try:
        server.push(*(server.fail(code, retry_after=wait) for code, wait in failures))
        window = f", context window {args.context_window}" if args.context_window else ""
        print(server.base_url, flush=True)
        print(
            f"condense: strict {args.provider!r} provider at {server.base_url}{window}; "
            "Ctrl-C to stop",
            file=sys.stderr,
            flush=True,
        )
        _wait_for_stop()
    finally:
        server.close()
    print(
        f"condense: served {len(server.requests)} request(s), refused {len(server.refusals)}",
        file=sys.stderr,
    )
    return 0


def _wait_for_stop() -> None:
    stop = threading.Event()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if main else None
    try:
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _report(refusal: Refusal) -> None:
    where = f" (message {refusal.index})" if refusal.index is not None else ""
    print(
        f"condense: refused request {refusal.request + 1}{where} [{refusal.code}]: "
        f"{refusal.message.strip()}",
        file=sys.stderr,
        flush=True,
    )


def _failure_specs(specs: list[str]) -> list[tuple[int, float | None]]:
    """``--fail STATUS[:SECONDS]`` values as ``(status, retry_after)`` pairs."""
    failures: list[tuple[int, float | None]] = []
    for spec in specs:
        status, _, wait = spec.partition(":")
        try:
            code = int(status)
            seconds = float(wait) if wait else None
        except ValueError:
            raise InputError(f"--fail {spec!r}: expected STATUS or STATUS:SECONDS") from None
        if not 400 <= code <= 599:
            raise InputError(f"--fail {spec!r}: the status must be an HTTP error (400-599)")
        failures.append((code, seconds))
    return failures


def _port(text: str) -> int:
    value = count(text)
    if value > 65_535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value
