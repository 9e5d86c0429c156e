"""Real Codex CLI requests (``tests/data/corpus/agents/codex_localpush_*``), judged by the
Responses API's rules as written out in ``native_responses_rules`` (no condense code).

The accepted requests: ``validate`` finds nothing, ``repair`` changes nothing, and
``compress`` at 4k, 16k and 64k returns a request the API's rules accept, with the
current turn as it came and every input item either in the output or named in the
report. The broken one (a call without its output) is still reported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import condense
from condense.compress import CompressionResult
from condense.formats import Conversation
from corpus import BROKEN_AGENT_REQUESTS, agent_requests, corpus_files
from native_responses_rules import (
    compactions_kept,
    current_turn,
    items_of,
    kept_with_neighbours,
    problems,
)

CODEX = [path for path in agent_requests() if path.name.startswith("codex_")]
BROKEN = [p for p in corpus_files("agents/codex_*.json") if p.stem in BROKEN_AGENT_REQUESTS]
BUDGETS = (4_000, 16_000, 64_000)


def _ids(paths: list[Path]) -> list[str]:
    return [path.stem for path in paths]


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def test_the_shipped_codex_requests_are_there() -> None:
    assert len(CODEX) >= 3 and len(BROKEN) == 1


@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
def test_an_accepted_codex_request_breaks_no_native_rule(path: Path) -> None:
    """The checker itself agrees with the provider: the request was accepted."""
    assert problems(json.loads(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
@pytest.mark.parametrize("provider", ["auto", "responses"])
def test_validate_finds_nothing_in_an_accepted_codex_request(path: Path, provider: str) -> None:
    assert condense.validate(condense.load(path), provider=provider) == []


@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
@pytest.mark.parametrize("provider", ["auto", "responses"])
def test_repair_leaves_an_accepted_codex_request_as_it_is(path: Path, provider: str) -> None:
    conversation = condense.load(path)
    healed = condense.repair(conversation, provider=provider)
    assert healed.changes == ()
    assert all(a is b for a, b in zip(healed.messages, conversation.messages, strict=True))
    assert conversation.dump(healed.messages) == json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", BROKEN, ids=_ids(BROKEN))
def test_the_broken_codex_request_is_still_reported(path: Path) -> None:
    request = json.loads(path.read_text(encoding="utf-8"))
    [problem] = problems(request)  # the independent checker names the one broken call
    found = condense.validate(condense.load(path))
    assert [v.code for v in found] == ["unanswered_tool_call"]
    assert found[0].location is not None and found[0].location in problem
    healed = condense.repair(condense.load(path))
    [change] = healed.changes
    assert change.action == "insert" and change.code == "unanswered_tool_call"
    assert problems(condense.load(path).dump(healed.messages)) == []


def _compressed(path: Path, budget: int) -> tuple[Conversation, CompressionResult, Any]:
    conversation = condense.load(path)
    result = condense.compress(conversation, budget=budget)
    return conversation, result, conversation.dump(result.messages)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
def test_compress_returns_a_request_the_responses_api_accepts(path: Path, budget: int) -> None:
    request = json.loads(path.read_text(encoding="utf-8"))
    _, result, out = _compressed(path, budget)
    assert result.report.fits
    assert problems(out) == []
    assert {k: v for k, v in out.items() if k != "input"} == {
        k: v for k, v in request.items() if k != "input"
    }


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
def test_compress_keeps_the_current_turn_as_it_came(path: Path, budget: int) -> None:
    request = json.loads(path.read_text(encoding="utf-8"))
    _, _, out = _compressed(path, budget)
    turn = current_turn(request)
    assert items_of(out)[-len(turn) :] == turn


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
def test_compress_keeps_reasoning_with_its_following_item(path: Path, budget: int) -> None:
    request = json.loads(path.read_text(encoding="utf-8"))
    _, _, out = _compressed(path, budget)
    assert kept_with_neighbours(request, out) == []


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
def test_compress_never_reduces_a_compaction_item(path: Path, budget: int) -> None:
    request = json.loads(path.read_text(encoding="utf-8"))
    _, _, out = _compressed(path, budget)
    assert compactions_kept(request, out)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("path", CODEX, ids=_ids(CODEX))
def test_every_input_item_is_in_the_output_or_named_in_the_report(path: Path, budget: int) -> None:
    conversation, result, out = _compressed(path, budget)
    kept = {_key(item) for item in items_of(out)}
    reported = {
        index
        for unit in result.report.units
        if unit.action != "kept"
        for index in range(unit.start, unit.stop)
    }
    reported.update(i for span in result.report.left_out for i in range(span.start, span.stop))
    locator = conversation.locator
    for index in range(len(conversation.messages)):
        place = locator.place(index)
        assert place is not None
        items = {place.path[1], *(p[1] for p in place.calls), *(p[1] for p in place.replay)}
        missing = [i for i in items if _key(items_of(conversation.dump())[i]) not in kept]
        assert not missing or index in reported, (index, missing)
