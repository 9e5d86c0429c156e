"""The ``condense`` command line: a thin layer over the library.

``main(argv) -> int`` is the testable entry point; ``run()`` is the console script.
Every failure is one line on stderr, never a traceback, and an exit code:

- 0 done (also when the reader of stdout went away early, as ``| head`` does);
- 1 the input has problems: violations (``validate``), rejected lines, a budget not met
  under ``--strict-budget``, summaries that failed (``compress-dataset``);
- 2 unusable input, output or options: a usage error, a file that cannot be read or
  written, a directory given as the output, a closed stdin or stdout, a port that
  cannot be bound, a record nested too deeply;
- 3 a failure while working on good input (a worker process died, a bug in condense);
- 130 interrupted (Ctrl-C): partial outputs are removed, except the resume point of
  ``compress-dataset``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from condense.cli.app import build_parser, command_of
from condense.cli.outputs import say
from condense.exceptions import CondenseError, InputError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
EXIT_FAILURE = 3
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(command_of(words)).parse_args(words)
        renamed = getattr(args, "renamed", None)
        if renamed is not None:
            old, new = renamed
            say(f"condense: note: '{old}' is now '{new}'; the old name goes in the next release")
        code: int = args.handler(args)
    except InputError as error:
        say(f"condense: error: {_one_line(error)}")
        return EXIT_BAD_INPUT
    except CondenseError as error:
        say(f"condense: failed: {_one_line(error)}")
        return EXIT_FAILURE
    except KeyboardInterrupt as interrupt:
        hint = f"; {interrupt}" if str(interrupt) else ""
        say(f"condense: interrupted{hint}")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    return code


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush
    does not print a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass
