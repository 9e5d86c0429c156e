"""``condense validate|repair|compress`` with no ``--provider``: the history picks its
profile, the report says which and why, and all replay state comes back unchanged
(the CLI in this process, through ``main(argv)``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_support import run_cli as _run

SIGNATURE = "EqQBCkYIBxgCKkBp" * 40
ENCRYPTED = "gAAAAABo_c2Q" * 200
BULK = "line of build output\n" * 300


NEXT_ASK = "Good, go on with the remaining steps."
"""Asked after step 3: the steps before it are an earlier turn, which may be reduced."""


def _anthropic() -> dict[str, Any]:
    turns: list[Any] = [{"role": "user", "content": "Find why the build fails."}]
    for n in range(6):
        if n == 4:
            turns.append({"role": "assistant", "content": "Steps 0-3 done."})
            turns.append({"role": "user", "content": NEXT_ASK})
        turns.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"Step {n}: look.", "signature": SIGNATURE},
                    {"type": "text", "text": f"Running step {n}."},
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "bash", "input": {"n": n}},
                ],
            }
        )
        turns.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": BULK}],
            }
        )
    return {"model": "claude-sonnet-4-5", "system": "You are careful.", "messages": turns}


def _responses() -> dict[str, Any]:
    items: list[Any] = [{"role": "user", "content": "Find why the build fails."}]
    for n in range(6):
        if n == 4:
            items.append({"role": "user", "content": NEXT_ASK})
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [],
                "encrypted_content": ENCRYPTED,
            }
        )
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": "bash",
                "arguments": json.dumps({"n": n}),
                "status": "completed",
            }
        )
        items.append({"type": "function_call_output", "call_id": f"call_{n}", "output": BULK})
    return {"model": "gpt-5", "input": items}


def _chat(replay: str) -> dict[str, Any]:
    messages: list[Any] = [{"role": "user", "content": "Find why the build fails."}]
    for n in range(6):
        if n == 4:
            messages.append({"role": "assistant", "content": "Steps 0-3 done."})
            messages.append({"role": "user", "content": NEXT_ASK})
        call: dict[str, Any] = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"n": n})},
        }
        assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        if replay == "gemini":
            call["extra_content"] = {"google": {"thought_signature": SIGNATURE}}
        else:
            assistant["reasoning_content"] = f"Step {n}: I should look at the logs."
        messages += [assistant, {"role": "tool", "tool_call_id": f"call_{n}", "content": BULK}]
    return {"messages": messages}


FILES = {
    "anthropic": (_anthropic, "anthropic", "Anthropic Messages format"),
    "responses": (_responses, "responses", "OpenAI Responses format"),
    # replay state several providers send tells what to keep, not whose rules apply
    "gemini": (lambda: _chat("gemini"), "strict", "thought signatures is kept"),
    "deepseek": (lambda: _chat("deepseek"), "strict", "reasoning_content is kept"),
}


def _replay_values(document: Any) -> list[str]:
    """Every replay-state value in a native document, in order."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in (
                    "signature",
                    "encrypted_content",
                    "thought_signature",
                    "reasoning_content",
                ):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(document)
    return found


@pytest.mark.parametrize("kind", sorted(FILES))
def test_check_and_repair_pick_the_profile_and_keep_replay_state(kind: str, tmp_path: Path) -> None:
    build, profile, why = FILES[kind]
    document = build()
    source = tmp_path / f"{kind}.json"
    source.write_text(json.dumps(document), encoding="utf-8")

    checked = _run("validate", str(source))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"against {profile} (" in checked.stderr and why in checked.stderr

    healed = tmp_path / "healed.json"
    repaired = _run("repair", str(source), "-o", str(healed))
    assert repaired.returncode == 0, repaired.stderr
    assert f"for {profile} (" in repaired.stderr
    assert json.loads(healed.read_text(encoding="utf-8")) == document


@pytest.mark.parametrize("kind", sorted(FILES))
def test_session_keeps_replay_state_whole(kind: str, tmp_path: Path) -> None:
    build, profile, why = FILES[kind]
    document = build()
    source = tmp_path / f"{kind}.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "out.json"
    done = _run("compress", str(source), "--budget", "6000", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["provider"] == profile and why in report["provider_reason"]
    compressed = json.loads(out.read_text(encoding="utf-8"))
    assert report["tokens_after"] < report["tokens_before"]
    kept = _replay_values(compressed)
    original = _replay_values(document)
    assert kept, "every replay value was dropped"
    # what is kept is byte-identical; only whole values are ever left out
    assert all(value in original for value in kept)
    checked = _run("validate", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_model_name_picks_the_provider(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]),
        encoding="utf-8",
    )
    for model, profile in (
        ("claude-opus-4-1", "anthropic"),
        ("mistral-large-latest", "mistral"),
        ("openrouter/deepseek/deepseek-v4", "deepseek"),
        ("kimi-k2-thinking", "kimi"),
        ("gpt-4.1", "openai"),
    ):
        done = _run("validate", str(source), "--model", model)
        assert f"against {profile} (model '{model}')" in done.stderr, done.stderr
    plain = _run("validate", str(source))
    assert "against strict (nothing in the history names its provider)" in plain.stderr
