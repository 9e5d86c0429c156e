"""The dataset path's shortcuts give what the plain way gives.

- A tool turn's ``<tool_response>`` blocks are found with ``str.find``; the pattern
  ``<tool_response>(.*?)</tool_response>`` (DOTALL) is the reference it must match,
  blocks, stray text and unclosed tags included.
- Inputs below ``WORKERS_FROM_BYTES`` run in one process by default; the output is the
  same either way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from condense.datasets import DatasetOptions, compress_dataset
from condense.datasets.runner import WORKERS_FROM_BYTES, default_workers
from condense.formats import to_sharegpt
from condense.formats.sharegpt import _responses, _strip_newlines
from condense.testing.sessions import synthetic_session

_PATTERN = re.compile(r"<tool_response>(.*?)</tool_response>", re.DOTALL)


def reference(value: str) -> list[str]:
    blocks = [_strip_newlines(match[1]) for match in _PATTERN.finditer(value)]
    if not blocks or _PATTERN.sub("", value).strip():
        return [value]
    return blocks


PIECES = [
    "<tool_response>",
    "</tool_response>",
    "\n",
    " ",
    "\u3000",
    "x",
    "ab\n",
    "<tool_",
    "response>",
]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_tool_responses_are_read_as_the_pattern_reads_them(pieces: list[str]) -> None:
    value = "".join(pieces)
    assert _responses(value) == reference(value)


def test_small_inputs_run_in_one_process_and_large_ones_on_every_core() -> None:
    assert default_workers(WORKERS_FROM_BYTES - 1) == 0
    assert default_workers(WORKERS_FROM_BYTES) >= 1
    assert default_workers(0, stdin=True) >= 1


def test_the_default_workers_write_what_explicit_workers_write(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    records = [
        {"id": seed, "conversations": to_sharegpt(synthetic_session(40, seed=seed))}
        for seed in range(6)
    ]
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    options = DatasetOptions(target_tokens=3000)
    compress_dataset(source, tmp_path / "auto.jsonl", options=options)
    compress_dataset(source, tmp_path / "two.jsonl", options=options, workers=2)
    assert (tmp_path / "auto.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
