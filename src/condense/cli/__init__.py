"""The ``condense`` command line: a thin layer over the library.

``main(argv) -> int`` is the testable entry point; ``run()`` is the console script.
Exit codes: 0 success, 1 the input has problems (``check`` found violations, a budget
could not be met under ``--strict-budget``), 2 unusable input or options, 3 a failure
while working, 130 interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from condense.cli.app import build_parser
from condense.exceptions import CondenseError, InputError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
EXIT_FAILURE = 3


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except InputError as error:
        print(f"condense: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CondenseError as error:
        print(f"condense: failed: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("condense: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    return code


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
