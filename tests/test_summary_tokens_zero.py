"""``summary_tokens=0`` is refused with a clear error (issue 20): it used to mean "no
cap" silently, the opposite of what it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from condense import InputError, compress
from condense.cli import main

HISTORY = [
    {"role": "user", "content": "Read the files."},
    *[
        message
        for n in range(8)
        for message in (
            {"role": "assistant", "content": f"Reading f{n}.py now. " * 40},
            {"role": "user", "content": f"Go on with file {n}. " * 40},
        )
    ],
    {"role": "user", "content": "Summarize."},
]


def test_compress_refuses_a_summary_of_no_tokens() -> None:
    with pytest.raises(InputError, match=r"summary_tokens=0 leaves a summary no room"):
        compress(HISTORY, budget=600, summary_tokens=0)


def test_a_summary_cap_of_one_token_or_more_is_taken() -> None:
    capped = compress(HISTORY, budget=600, summary_tokens=60).report
    free = compress(HISTORY, budget=600).report
    assert capped.tokens_after <= 600 and free.tokens_after <= 600
    assert capped.tokens_after <= free.tokens_after  # a cap never makes the summary larger


def test_the_cli_refuses_zero_before_reading_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "h.json"
    source.write_text(json.dumps(HISTORY))
    with pytest.raises(SystemExit) as caught:  # argparse's usage error
        main(["compress", str(source), "--budget", "600", "--summary-tokens", "0"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "--summary-tokens" in err and "Traceback" not in err
