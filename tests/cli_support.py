"""The command line as users run it: ``python -m condense ARGS`` in a real subprocess."""

from __future__ import annotations

import subprocess
import sys


def run_cli(
    *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``condense ARGS`` with ``stdin`` as its input; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "condense", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
