"""The README's examples run as tests, so they cannot drift from the code."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def _condense_commands() -> list[str]:
    """Every ``condense …`` command of the README's bash blocks (after ``&&`` too)."""
    commands = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("condense "):
                    commands.append(part)
    return commands


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("code", _blocks("python"))
def test_python_examples_run(code: str, workdir: Path) -> None:
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


def test_there_are_cli_examples() -> None:
    assert any(c.startswith("condense session ") for c in _condense_commands())


def test_cli_examples_run_in_order(workdir: Path) -> None:
    for command in _condense_commands():
        argv = shlex.split(command)
        if "--summarizer" in argv and "openai" in argv:
            continue  # needs a local LLM server (see the README)
        if argv[1] == "serve-fake":
            continue  # a server that runs until Ctrl-C; tests/test_strict_provider.py runs it
        if argv[1] == "proxy" and "--print-env" not in argv:
            continue  # a server that runs until Ctrl-C; tests/test_proxy.py runs it
        done = subprocess.run(
            [sys.executable, "-m", "condense", *argv[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (command, done.stderr)
        if "-o" in argv:
            assert (workdir / argv[argv.index("-o") + 1]).stat().st_size > 0
