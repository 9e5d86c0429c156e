"""The curated public API: sorted, complete, and importing it does no work."""

from __future__ import annotations

import subprocess
import sys

import condense


def test_all_is_sorted_and_importable() -> None:
    assert condense.__all__ == sorted(condense.__all__)
    for name in condense.__all__:
        assert getattr(condense, name) is not None


def test_import_does_no_work() -> None:
    code = (
        "import sys, condense\n"
        "from condense.tokens import encodings\n"
        "assert not encodings._loaded, 'a vocabulary was loaded at import time'\n"
        "assert 'openai' not in sys.modules, 'openai was imported at import time'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
