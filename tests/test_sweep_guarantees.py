"""The corpus sweep (``bench/sweep_guarantees.py``) finds no broken guarantee on the
conversations the tests see: every profile, budgets from the protected part up, and a
next turn (run as users run it, in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import CORPUS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.corpus
def test_the_corpus_sweep_finds_no_broken_guarantee() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "sweep_guarantees.py"), "--records", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CONDENSE_CORPUS": str(CORPUS)},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert " 0 problem(s)" in done.stdout
