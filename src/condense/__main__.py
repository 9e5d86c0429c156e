"""``python -m condense``: the same as the ``condense`` command."""

from condense.cli import run

run()
