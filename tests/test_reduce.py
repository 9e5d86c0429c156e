"""The cheap reductions: each keeps roles and ids, never mutates, and stops at ``need``."""

from __future__ import annotations

import copy
import json
from typing import Any

from condense import validate
from condense.reduce import dedupe_tool_outputs, mask_tool_outputs, shrink_tool_arguments
from condense.reduce.cut import HELD_FROM, cut_text
from condense.tokens import quick_estimate

LOG = "\n".join(f"line {i}: collecting tests ... ok" for i in range(200))


def _exchange(call_id: str, name: str, arguments: dict[str, Any], output: str) -> list[Any]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    call["function"]["arguments"] = json.dumps(arguments)
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def _history() -> list[Any]:
    return [
        {"role": "user", "content": "run the tests"},
        *_exchange(
            "c1", "bash", {"command": "pytest -q"}, LOG + "\nFAILED t.py::x\n[exit code: 1]"
        ),
        *_exchange("c2", "read_file", {"path": "src/app.py"}, LOG),
        *_exchange("c3", "read_file", {"path": "src/app.py"}, LOG),
        *_exchange("c4", "write_file", {"path": "a.py", "content": "x = 1\n" * 2000}, "ok"),
    ]


def test_dedupe_points_the_older_copy_at_the_newer_one() -> None:
    history = _history()
    before = copy.deepcopy(history)
    result = dedupe_tool_outputs(history, [2, 4, 6], need=10**9, cost=quick_estimate)
    assert history == before
    assert result.changed == (4,)
    assert result.messages[4]["content"] == "[condense: same output as the later tool call c3]"
    assert result.messages[4]["tool_call_id"] == "c2"
    assert result.messages[6] is history[6]
    assert validate(result.messages, provider="openai") == []


def test_mask_writes_tool_aware_one_liners() -> None:
    history = _history()
    result = mask_tool_outputs(history, [2, 4], need=10**9, cost=quick_estimate)
    bash, read = result.messages[2]["content"], result.messages[4]["content"]
    assert "\n" not in bash
    assert "`pytest -q`" in bash
    assert "exit code 1" in bash
    assert "FAILED t.py::x" in bash
    assert "read_file src/app.py" in read
    assert "200 lines" in read
    assert result.saved > 0
    assert validate(result.messages, provider="strict") == []


def test_mask_stops_once_enough_is_saved() -> None:
    history = _history()
    result = mask_tool_outputs(history, [2, 4, 6], need=1, cost=quick_estimate)
    assert result.changed == (2,)


def test_shrink_keeps_arguments_valid_json() -> None:
    history = _history()
    result = shrink_tool_arguments(history, [7], need=10**9, cost=quick_estimate, max_chars=300)
    arguments = json.loads(result.messages[7]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "a.py"
    assert "chars cut" in arguments["content"]
    assert len(result.messages[7]["tool_calls"][0]["function"]["arguments"]) <= 300
    assert (
        json.loads(history[7]["tool_calls"][0]["function"]["arguments"])["content"].count("x = 1")
        == 2000
    )


def test_shrink_reports_arguments_it_could_not_bring_under_max_chars() -> None:
    path = "services/billing/src/invoices/render.py"  # short: never cut
    ids = {f"id_{n}": f"4bf92f3577b34da6a3ce929d0e0e47{n:02d}" for n in range(12)}
    history = [
        {"role": "user", "content": "render the invoices"},
        *_exchange("c1", "render", {"path": path, **ids, "template": "<p>row</p>" * 300}, "ok"),
        *_exchange("c2", "write_file", {"path": "a.py", "content": "x = 1\n" * 2000}, "ok"),
    ]
    result = shrink_tool_arguments(history, [1, 3], need=10**9, cost=quick_estimate, max_chars=300)
    assert result.changed == (1, 3)
    assert result.short_of_target == (1,)  # the ids alone are over 300 characters
    first = json.loads(result.messages[1]["tool_calls"][0]["function"]["arguments"])
    assert first["path"] == path and all(first[key] == value for key, value in ids.items())
    assert "chars cut" in first["template"]
    assert len(result.messages[3]["tool_calls"][0]["function"]["arguments"]) <= 300
    assert validate(result.messages, provider="strict") == []


def test_mask_names_a_call_answered_through_its_call_id_alias() -> None:
    from condense.reduce import mask_tool_outputs

    call = {
        "id": "fc_1",
        "call_id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "make test"}'},
    }
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok\n" * 200},
    ]
    masked = mask_tool_outputs(messages, [1], need=1, cost=quick_estimate).messages[1]
    assert "bash `make test`" in masked["content"]


# -- a cut says what the middle it cut held ----------------------------------------------


def _log_with(line: str, at: int, size: int = 4_000) -> str:
    rows = [
        f"2025-06-01T10:{i % 60:02d}:07Z INFO svc=payments status=200 n={i}" for i in range(size)
    ]
    rows[at] = line
    return "\n".join(rows)


def test_a_gentle_cut_says_what_the_middle_it_cut_held() -> None:
    """Cut to a few thousand characters, a long log keeps its head and tail, and its
    marker names the telling line of the middle (the one 503 among 200s)."""
    news = "2025-06-01T10:17:07Z ERROR svc=payments status=503 upstream=ledger-7 n=2017"
    text = _log_with(news, 2_017)
    cut = cut_text(text, 4_000, "bash")
    marker = next(line for line in cut.split("\n") if line.startswith("[condense:"))
    assert "; it held: " in marker and news in marker
    head, tail = cut.split(marker)
    assert text.startswith(head.rstrip("\n")) and text.endswith(tail.lstrip("\n"))


def test_a_cut_again_keeps_what_the_first_cut_said_the_middle_held() -> None:
    """An output cut twice has one marker counting both cuts, and the telling line the
    first cut found is still named (it was in neither the head nor the tail)."""
    news = "2025-06-01T10:17:07Z ERROR svc=payments status=503 upstream=ledger-7 n=2017"
    text = _log_with(news, 2_017)
    twice = cut_text(cut_text(text, 8_000, "bash"), 3_000, "bash")
    assert twice.count("[condense:") == 1
    assert news in twice
    removed = len(text) - len(twice.split("\n[condense:")[0]) - len(twice.split("]\n", 1)[1])
    assert f"{removed:,} of {len(text):,} chars cut" in twice


def test_a_last_resort_cut_only_says_how_much_it_cut() -> None:
    """Cut below HELD_FROM characters (the running turn's last resort), the marker says
    how much was cut and no more: it must stay small."""
    cut = cut_text(_log_with("x status=503", 2_017), HELD_FROM - 1, "bash")
    assert "; it held:" not in cut
    assert len(cut) < HELD_FROM + 120
