"""The command line loads only the command it runs (``condense.cli.app.COMMANDS``)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from condense.cli.app import COMMANDS, build_parser, command_of


def _verbs(parser: argparse.ArgumentParser) -> set[str]:
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(commands.choices)


def test_the_table_names_every_verb_the_commands_register() -> None:
    assert _verbs(build_parser()) == set(COMMANDS)


@pytest.mark.parametrize("verb", sorted(COMMANDS))
def test_a_verb_alone_registers_its_command_with_its_other_spelling(verb: str) -> None:
    module = COMMANDS[verb]
    same = {other for other, name in COMMANDS.items() if name == module}
    assert _verbs(build_parser(verb)) == same


def test_the_verb_is_the_first_word_only() -> None:
    assert command_of(["compress-dataset", "in.jsonl"]) == "compress-dataset"
    assert command_of(["--help", "compress"]) is None
    assert command_of(["--version"]) is None
    assert command_of(["nonsense"]) is None
    assert command_of([]) is None


def test_compress_dataset_loads_no_other_command() -> None:
    check = (
        "import sys\n"
        "from condense.cli.app import build_parser, command_of\n"
        "argv = ['compress-dataset', 'in.jsonl', '--budget', '16000']\n"
        "assert build_parser(command_of(argv)).parse_args(argv).budget == 16000\n"
        "others = {'condense.cli.proxy_cmd', 'condense.cli.serve_fake', 'condense.testing',"
        " 'condense.errors', 'condense.server', 'rich.progress'}\n"
        "assert not others & set(sys.modules), others & set(sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_help_still_lists_every_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "condense", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    shown = {"compress", "validate", "repair", "compress-dataset", "serve-fake", "proxy"}
    assert all(verb in done.stdout for verb in shown)


def test_compress_loads_neither_the_dataset_engine_nor_what_it_does_not_need(
    tmp_path: Path,
) -> None:
    # every command starts by importing condense: asyncio (~40 ms), tiktoken (~20 ms,
    # needless with the fast extra) and the regex module (~13 ms, for non-ASCII cuts
    # only) are imported where they are used, and `condense compress` never imports the
    # dataset engine
    session = json.dumps([{"role": "user", "content": "hello"}])
    (tmp_path / "s.json").write_text(session, encoding="utf-8")
    check = (
        "import sys\n"
        "import condense\n"
        "heavy = {'asyncio', 'tiktoken', 'regex'}\n"
        "assert not heavy & set(sys.modules), heavy & set(sys.modules)\n"
        "from condense.cli import main\n"
        f"code = main(['compress', {str(tmp_path / 's.json')!r}, '--budget', '1000',"
        f" '-o', {str(tmp_path / 'out.json')!r}, '-q'])\n"
        "assert code == 0, code\n"
        "assert 'condense.datasets' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8")) == json.loads(session)
