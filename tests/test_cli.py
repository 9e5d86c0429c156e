"""The command line, run as a real subprocess: exit codes, stdin/stdout, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from condense import validate
from condense.testing.sessions import synthetic_session

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "examples" / "broken.json"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "condense", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_exit_codes(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert run("check", str(good)).returncode == 0
    broken = run("check", str(BROKEN))
    assert broken.returncode == 1
    assert "orphan_tool_result" in broken.stdout
    assert "would answer" in broken.stdout


def test_check_json_lists_index_code_and_provider_error() -> None:
    done = run("check", str(BROKEN), "--provider", "anthropic", "--json")
    found = json.loads(done.stdout)
    assert done.returncode == 1
    first = found[0]
    assert {"index", "code", "detail", "provider_error", "source"} <= set(first)
    assert first["provider_error"] == 'messages: first message must use the "user" role'


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ('{"messages": [{"role": "user", "content": "a"}]}\n{not json}\n', "line 2"),
        ("[1, 2", "bad.json"),
        ("", "bad.json"),
    ],
)
def test_unreadable_input_exits_2_naming_the_place(
    tmp_path: Path, content: str, where: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = run("check", str(path))
    assert done.returncode == 2
    assert where in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_file_exits_2() -> None:
    done = run("repair", "no/such/file.json")
    assert done.returncode == 2
    assert "no/such/file.json" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("provider", ["strict", "anthropic", "mistral", "gemini", "openai"])
def test_repair_from_stdin_to_stdout(provider: str) -> None:
    done = run("repair", "-", "--provider", provider, stdin=BROKEN.read_text())
    assert done.returncode == 0, done.stderr
    healed: list[Any] = json.loads(done.stdout)
    assert validate(healed, provider=provider) == []
    assert "drop" in done.stderr
    assert "orphan_tool_result" in done.stderr


def test_repair_writes_jsonl_record_by_record(tmp_path: Path) -> None:
    records = [{"id": i, "messages": json.loads(BROKEN.read_text())} for i in range(3)]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out.jsonl"
    done = run("repair", str(source), "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [0, 1, 2]
    assert all(validate(json.loads(line)["messages"]) == [] for line in lines)
    changes = [json.loads(line) for line in done.stderr.splitlines()]
    assert {c["line"] for c in changes} == {1, 2, 3}


def test_session_compresses_in_the_input_format(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    source.write_text(json.dumps(synthetic_session(120, seed=4)))
    out = tmp_path / "out.json"
    done = run("session", str(source), "--budget", "6000", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "→" in done.stderr
    compressed = json.loads(out.read_text())
    assert validate(compressed) == []
    report = run("session", str(source), "--budget", "6000", "-o", "-", "--json")
    record = json.loads(report.stderr.splitlines()[-1])
    assert record["fits"] is True
    assert record["tokens_after"] <= 6000 < record["tokens_before"]


def test_session_keeps_anthropic_format(tmp_path: Path) -> None:
    example = ROOT / "examples" / "session_anthropic.json"
    if not example.exists():
        pytest.skip("examples/session_anthropic.json not built")
    out = tmp_path / "out.json"
    done = run("session", str(example), "--budget", "8000", "-o", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert set(document) >= {"system", "messages"}
    assert run("check", str(out), "--provider", "anthropic").returncode == 0


def test_strict_budget_exits_1(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    source.write_text(
        json.dumps(
            [{"role": "system", "content": "rule " * 2000}, {"role": "user", "content": "x"}]
        )
    )
    done = run("session", str(source), "--budget", "100", "--strict-budget", "-o", "-")
    assert done.returncode == 1
    assert "cannot fit" in done.stderr
    assert json.loads(done.stdout)  # the best effort is still written


def test_bad_option_is_a_usage_error() -> None:
    done = run("session", str(BROKEN), "--budget", "-5")
    assert done.returncode == 2
    assert "positive" in done.stderr
