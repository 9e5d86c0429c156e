"""The README's examples run as tests, so they cannot drift from the code."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_support import run_cli

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


def test_there_are_cli_examples_with_the_new_verbs() -> None:
    commands = _condense_commands()
    for verb in ("compress", "validate", "repair", "compress-dataset"):
        assert any(c.startswith(f"condense {verb} ") for c in commands), verb
    for old in ("session", "check", "dataset"):
        assert not any(c.startswith(f"condense {old} ") for c in commands), old


def test_ci_runs_the_readme_test_commands() -> None:
    """Each line of ``.ci/run`` is a README line and ends in ``|| exit``: under ``set -e``
    a failure inside an ``A && B`` list does not stop bash, so a line whose ruff or mypy
    failed would run on, skipping the tests, and the run could still pass."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    lines = [line for line in ci if line and not line.startswith(("#", "set ", "cd "))]
    assert all(line.endswith(" || exit") for line in lines), lines
    commands = [line.removesuffix(" || exit") for line in lines]
    readme = [line for block in _blocks("bash") for line in block.splitlines()]
    assert len(commands) >= 2 and all(command in readme for command in commands)


def test_a_failing_command_stops_the_ci_run(tmp_path: Path) -> None:
    """The shape of ``.ci/run``'s lines, run by bash: a failure in the middle of a line's
    ``&&`` list ends the run with its status, and nothing after it runs."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    header = [line for line in ci if line.startswith("set ")]
    script = tmp_path / "run"
    script.write_text("\n".join([*header, "true && false && true || exit", "touch ran"]) + "\n")
    done = subprocess.run(["bash", str(script)], cwd=tmp_path, check=False)
    assert done.returncode == 1 and not (tmp_path / "ran").exists()


def test_cli_examples_run_in_order(workdir: Path) -> None:
    for command in _condense_commands():
        # outputs go to /tmp in the README (not into a checkout); here, to the test's folder
        argv = [arg.replace("/tmp/", f"{workdir}/") for arg in shlex.split(command)]
        if "--summarizer" in argv and "openai" in argv:
            continue  # needs a local LLM server (see the README)
        if argv[1] == "serve-fake":
            continue  # a server that runs until Ctrl-C; tests/test_strict_provider.py runs it
        if argv[1] == "proxy" and "--print-env" not in argv:
            continue  # a server that runs until Ctrl-C; tests/test_proxy.py runs it
        done = run_cli(*argv[1:])
        assert done.returncode == 0, (command, done.stderr)
        if "-o" in argv:
            assert (workdir / argv[argv.index("-o") + 1]).stat().st_size > 0
