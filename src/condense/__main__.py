"""``python -m condense``: the same as the ``condense`` command."""

import sys

try:
    from condense.cli import run
except KeyboardInterrupt:  # Ctrl-C while starting up: no traceback for that either
    sys.exit(130)

run()
