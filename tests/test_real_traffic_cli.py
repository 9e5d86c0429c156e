"""``condense compress FILE`` on the real Claude Code requests of
``tests/data/corpus/agents``, as a user runs it (``main(argv)``, the function the
``condense`` command calls): the request written passes the Messages API's rules
(``tests/native_anthropic_rules.py``), keeps the current turn byte for byte, and the JSON
report accounts for what was reduced; ``--bound-thinking drop-block`` writes the setting
into the request and says which header to send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from condense.cli import main
from corpus import agent_requests
from native_anthropic_rules import problems, unbound_thinking
from test_real_traffic import same_but_cut

CLAUDE = [path for path in agent_requests() if path.stem.startswith("cc_")]


def _native_turn_start(turns: list[Any]) -> int:
    start = 0
    for index, turn in enumerate(turns):
        content = turn["content"]
        if turn["role"] == "user" and (
            isinstance(content, str) or any(b.get("type") != "tool_result" for b in content)
        ):
            start = index + 1
    return start


def _compress(
    source: Path, out: Path, budget: int, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], dict[str, Any], str]:
    code = main(
        ["compress", str(source), "--budget", str(budget), "-o", str(out), "--json", *extra]
    )
    err = capsys.readouterr().err
    report = json.loads(err.strip().splitlines()[-1])
    return code, json.loads(out.read_text(encoding="utf-8")), report, err


@pytest.mark.parametrize("budget", [4_000, 16_000, 64_000])
@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.stem)
def test_condense_compress_writes_a_request_anthropic_accepts(
    path: Path, budget: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.loads(path.read_text(encoding="utf-8"))
    code, written, report, _ = _compress(path, tmp_path / "out.json", budget, capsys)
    assert code == 0, report
    assert report["provider"] == "anthropic" and report["repairs"] == []
    assert problems(written) == []
    assert {k: v for k, v in written.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    tail = body["messages"][_native_turn_start(body["messages"]) :]
    cut = {c["tool_call_id"] for c in report["cuts"] if c["running"]}  # the last resort
    if tail:
        assert same_but_cut(written["messages"][-len(tail) :], tail, cut) == []
    # the budget is Claude's count: planned below it by the measured ratio, the whole
    # request in condense's tokens may have ``room.request``
    room = report["room"]
    assert room["tokenizer"] == "claude" and room["request"] == int(budget / room["ratio"])
    assert report["fits"] == (report["tokens_after"] <= room["request"])
    if report["tokens_after"] < report["tokens_before"]:
        assert report["reduced"] or report["superseded"]
    else:
        assert written == body


def test_drop_block_writes_the_setting_and_names_the_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = next(p for p in CLAUDE if p.stem == "cc_spotter_258c7280")
    body = {**json.loads(path.read_text(encoding="utf-8")), "model": "claude-fable-5-1"}
    source = tmp_path / "fable.json"
    source.write_text(json.dumps(body), encoding="utf-8")
    out = tmp_path / "out.json"
    code, written, report, err = _compress(
        source, out, 16_000, capsys, "--bound-thinking", "drop-block"
    )
    assert code == 0
    assert written["thinking"] == {
        "type": "adaptive",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    assert "anthropic-beta: thinking-binding-controls-2026-08-01" in err
    assert report["request_settings"]["headers"] == {
        "anthropic-beta": "thinking-binding-controls-2026-08-01"
    }
    assert problems(written) == [] and unbound_thinking(written, body) == []
    # without the option, adaptive thinking has the bound blocks removed
    code, plain, report, _ = _compress(source, out, 16_000, capsys)
    assert code == 0 and plain["thinking"] == body["thinking"] and report["replay_removed"]
    assert problems(plain) == [] and unbound_thinking(plain, body) == []
