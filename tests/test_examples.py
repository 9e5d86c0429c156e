"""The committed examples are exactly what their generator writes (no hand edits)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_examples_are_what_the_generator_writes(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "fixtures" / "build_session.py"),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for name in ("session.json", "session_anthropic.json"):
        assert (tmp_path / name).read_bytes() == (ROOT / "examples" / name).read_bytes(), name
