"""Mask placeholders that still say something: the file, the key lines, no false labels."""

from __future__ import annotations

import json
from typing import Any

from condense.reduce.mask import placeholder

NOISE = "\n".join(f"2025-03-04T10:{i % 60:02d}:07Z INFO worker heartbeat ok" for i in range(80))


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def test_an_editor_call_names_its_sub_command_and_file() -> None:
    call = _call("str_replace_editor", command="str_replace", path="/repo/src/parser.c")
    text = placeholder(call, "The file /repo/src/parser.c has been edited.\n" + NOISE)
    assert "str_replace_editor str_replace /repo/src/parser.c" in text


def test_the_most_informative_line_is_kept_from_the_middle() -> None:
    error = "ERROR [E4417] reconciliation aborted at src/jobs/ledger_sync.py:218"
    output = "\n".join([NOISE[:1000], error, NOISE[:1000], "[exit code: 1]"])
    text = placeholder(_call("bash", command="python -m jobs.billing"), output)
    assert error in text
    assert "exit code 1" in text
    assert "\n" not in text
    assert len(text) < 450  # small: the bulk is gone


def test_a_diff_is_not_read_as_an_error() -> None:
    diff = "\n".join(
        [
            "diff --git a/CHANGELOG.md b/CHANGELOG.md",
            "+- Fixed the error handling of the importer",
            *(f" context line {i}" for i in range(60)),
        ]
    )
    text = placeholder(_call("bash", command="git diff"), diff)
    assert "first error" not in text
    assert "git diff" in text


def test_a_plain_output_keeps_only_its_size() -> None:
    text = placeholder(_call("bash", command="make"), NOISE)
    assert text.endswith("chars]")
    assert "kept:" not in text
