"""datasets: the per-record function, the planner and the checker, on real and generated
trajectories."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_support import run_cli
from condense.compress.plan import (
    HeadTailProtection,
    SpanChoice,
    Verdict,
    choose_span,
    make_plan,
)
from condense.datasets import (
    DatasetOptions,
    RecordProcessor,
    RecordResult,
    Status,
    check_trajectory,
    load_tokenizer,
    resolve_tokenizer,
)
from condense.datasets.trajectory import (
    canonical_units,
    message_text,
    read_trajectory,
    skeleton,
    turn_units,
)
from condense.exceptions import FormatError
from condense.formats import Conversation, to_sharegpt
from condense.summarizers import ExtractiveSummarizer
from condense.testing import DeterministicSummarizer
from condense.testing.sessions import synthetic_session
from corpus import corpus_files
from profiles import examples

CORPUS_FILES = corpus_files()
TOKENIZER = load_tokenizer(resolve_tokenizer(None))


def processor(target: int, summarizer: Any = None, **options: Any) -> RecordProcessor:
    return RecordProcessor(
        DatasetOptions(target_tokens=target, **options),
        summarizer if summarizer is not None else ExtractiveSummarizer(),
    )


def turn_texts(record: dict[str, Any]) -> list[str]:
    if "messages" in record:
        return [message_text(message) for message in record["messages"]]
    return [turn["value"] for turn in record["conversations"]]


def recount(record: dict[str, Any], overhead: int = 4) -> int:
    return sum(TOKENIZER.count(text) + overhead for text in turn_texts(record))


def turns_of(record: dict[str, Any]) -> list[Any]:
    return record["messages"] if "messages" in record else record["conversations"]


def trajectory(turns: int, *, seed: int = 0, output_chars: int = 600) -> dict[str, Any]:
    """A ShareGPT trajectory with parallel calls, made from a synthetic agent session."""
    session = synthetic_session(turns, seed=seed, output_chars=output_chars)
    return {"id": f"t{seed}", "conversations": to_sharegpt(session), "meta": {"seed": seed}}


def line_of(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode()


def assert_intact(source: dict[str, Any], out: dict[str, Any]) -> None:
    """The output has no tool-pairing problem its input did not have."""
    before = Counter(problem.kind for problem in check_trajectory(source))
    after = Counter(problem.kind for problem in check_trajectory(out))
    assert after <= before, (after, before)


def text_of(turn: dict[str, Any]) -> str:
    return turn["value"] if "from" in turn else message_text(turn)


def assert_replaced(source: dict[str, Any], out: dict[str, Any], stats: dict[str, Any]) -> None:
    """Every turn outside ``stats["span"]`` is written back word for word, and the span
    is replaced as ``stats["placement"]`` says: a turn of its own, text joined to the
    kept turn after or before it (that turn's own text kept whole), or nothing."""
    kept, original = turns_of(out), turns_of(source)
    start, stop = stats["span"]
    placement = stats["placement"]
    assert stats["turns_removed"] == stop - start > 0
    if placement == "turn":
        new = [kept[start]]
        assert kept[:start] == original[:start] and kept[start + 1 :] == original[stop:]
    elif placement == "joined_to_next":
        new = [kept[start]]
        assert kept[:start] == original[:start] and kept[start + 1 :] == original[stop + 1 :]
        assert text_of(kept[start]).endswith(text_of(original[stop]))
    elif placement == "joined_to_previous":
        new = [kept[start - 1]]
        assert kept[: start - 1] == original[: start - 1] and kept[start:] == original[stop:]
        assert text_of(kept[start - 1]).startswith(text_of(original[start - 1]))
    elif placement == "system":
        new = [kept[0]]
        assert kept[1:] in (original[1:start] + original[stop:], original[:start] + original[stop:])
    else:
        assert placement == "left_out" and "left_out" in stats
        assert kept == original[:start] + original[stop:]
        return
    assert len(kept) == stats["turns_after"]
    text = "\n".join(text_of(turn) for turn in new)
    if "left_out" in stats:  # no room for a summary: the one-line notice
        assert "left out to fit the budget]" in text
    else:
        assert "[CONTEXT SUMMARY]" in text


# --- the corpus -------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("target", [400, 4000])
def test_every_corpus_record_fits_or_is_flagged_and_keeps_its_tool_pairs(target: int) -> None:
    worker = processor(target)
    seen: Counter[str] = Counter()
    for path in CORPUS_FILES:
        for raw in path.read_bytes().splitlines():
            result = worker.process(raw)
            seen[result.status] += 1
            source = json.loads(raw)
            if result.status is Status.PASSED:
                assert result.line is None  # the engine writes the input line as it was
                assert recount(source) <= target
                continue
            assert result.line is not None, result
            out = json.loads(result.line)
            stats = out.pop("condense")
            assert {k: v for k, v in out.items() if k not in ("conversations", "messages")} == {
                k: v for k, v in source.items() if k not in ("conversations", "messages")
            }
            if result.status is not Status.COMPRESSED:
                assert out == source  # kept unchanged, only flagged
                assert stats["status"] == "still_over_limit"
                assert recount(source) > target
                continue
            assert stats["tokens_after"] == recount(out) <= target
            assert_intact(source, out)
            assert_replaced(source, out, stats)
    assert seen[Status.REJECTED] == 0
    assert seen[Status.COMPRESSED] > 0 and seen[Status.PASSED] > 0


@pytest.mark.corpus
def test_units_read_off_the_roles_are_the_units_of_the_canonical_messages() -> None:
    records = [json.loads(raw) for path in CORPUS_FILES for raw in path.read_bytes().splitlines()]
    records += [trajectory(n, seed=n) for n in (5, 30, 90)]
    for record in records:
        seen = read_trajectory(record)
        messages = Conversation.read(record).messages
        bounds = [(u.start, u.stop) for u in seen.units]
        assert bounds == [(u.start, u.stop) for u in canonical_units(messages, seen.roles)]
        assert seen.units == turn_units(seen.roles), record.get("id")


def plan_turns(
    roles: list[str], *, cost: int, target: int, reserve: int, tail_turns: int
) -> tuple[SpanChoice, bool]:
    """The shared planner on turns of ``roles``, each costing ``cost`` tokens, under the
    dataset policy: the choice and whether the protection was weakened."""
    units = turn_units(roles)
    plan = make_plan(
        units,
        unit_tokens=lambda unit: cost * len(unit),
        protection=HeadTailProtection(tail_messages=tail_turns),
        messages=skeleton(roles),
        budget=target,
    )
    choice = choose_span(
        plan,
        unit_tokens=lambda unit: cost * len(unit),
        estimate=lambda units: cost * sum(map(len, units)),
        budget=target,
        reserve=reserve,
    )
    return choice, plan.layout.weakened


# --- the planner ------------------------------------------------------------------------


def test_a_record_under_the_target_passes_untouched() -> None:
    record = trajectory(20)
    result = processor(1_000_000).process(line_of(record))
    assert result.status is Status.PASSED and result.line is None
    assert result.tokens == recount(record)


def test_the_span_is_the_fewest_whole_units_from_the_start_of_the_middle() -> None:
    record = trajectory(120, seed=3)
    target = recount(record) // 3
    options = DatasetOptions(target_tokens=target)
    result = processor(target).process(line_of(record))
    assert result.status is Status.COMPRESSED and result.stats is not None
    # the planner's span; the written one differs only to keep the role order (below)
    start, stop = result.stats.get("planned_span", result.stats["span"])
    seen = read_trajectory(record)
    plan = make_plan(
        seen.units,
        unit_tokens=len,
        protection=HeadTailProtection(tail_messages=4),
        messages=seen.skeleton,
    )
    assert start == seen.units[plan.order[0]].start  # from the start of the middle
    boundaries = [unit.start for unit in seen.units]
    assert start in boundaries and stop in boundaries  # whole units only
    # One block fewer would not fit: everything kept plus the reserve would be over.
    shorter = boundaries[boundaries.index(stop) - 1]
    kept = [t for i, t in enumerate(turn_texts(record)) if not shorter <= i < stop]
    assert shorter == start or (
        sum(TOKENIZER.count(t) + 4 for t in kept) + options.reserve > target
    )
    tail_start = plan.layout.tail_start
    assert seen.units[tail_start].start >= len(seen.turns) - 4 - 1  # the tail is protected


def test_first_system_human_gpt_and_tool_turns_and_the_last_turns_are_protected() -> None:
    record = trajectory(80, seed=5)
    turns = record["conversations"]
    firsts = [
        next(i for i, t in enumerate(turns) if t["from"] == role)
        for role in ("system", "human", "gpt", "tool")
    ]
    result = processor(recount(record) // 4, tail_turns=6).process(line_of(record))
    assert result.stats is not None
    start, stop = result.stats["planned_span"]
    assert start > max(firsts)
    assert stop <= len(turns) - 6
    # In a run of tool calls no human turn may follow the first tool turn, so the span
    # is moved to start after the first ask and the summary closes that ask.
    assert result.stats["span"] == [firsts[1] + 1, stop]
    assert result.stats["placement"] == "joined_to_previous"


def test_no_valid_span_keeps_the_record_unchanged_and_flags_it() -> None:
    record = trajectory(40, seed=2)
    raw = line_of(record)
    result = processor(50).process(raw)
    assert result.status is Status.OVER_LIMIT and result.line is not None
    assert result.line.startswith(raw[:-1])  # every original byte, then the flag
    out = json.loads(result.line)
    assert out.pop("condense")["status"] == "still_over_limit"
    assert out == record


def test_summary_role_and_notice_are_configurable() -> None:
    record = trajectory(60, seed=4)
    target = recount(record) // 2
    result = processor(target, summary_role="gpt", notice="[SUMMARY]").process(line_of(record))
    assert result.line is not None and result.stats is not None
    out = json.loads(result.line)
    summary = out["conversations"][result.stats["span"][0]]
    assert summary["from"] == "gpt" and summary["value"].startswith("[SUMMARY]\n")
    bare = processor(target, notice="").process(line_of(record))
    assert bare.line is not None and b"[CONTEXT SUMMARY]" not in bare.line


def test_openai_records_keep_their_messages_and_fields() -> None:
    messages = synthetic_session(60, seed=9, output_chars=800)
    record = {"id": 7, "messages": messages, "meta": {"a": 1}}
    target = recount(record) // 2
    result = processor(target).process(line_of(record))
    assert result.status is Status.COMPRESSED and result.line is not None
    out = json.loads(result.line)
    assert out["id"] == 7 and out["meta"] == {"a": 1}
    assert check_trajectory(out) == []
    assert out["condense"]["tokens_after"] == recount(out) <= target


def test_the_exact_option_counts_the_whole_record() -> None:
    record = trajectory(100, seed=6)
    total = recount(record)
    result = processor(total // 3, exact_counts=True).process(line_of(record))
    assert result.stats is not None and result.stats["tokens_before_exact"] is True
    assert result.stats["tokens_before"] == total


def test_planner_without_middle_flags_an_oversized_record() -> None:
    roles = ["system", "human", "gpt", "tool"]
    assert [(u.start, u.stop) for u in turn_units(roles)] == [(0, 1), (1, 2), (2, 4)]
    chosen, _ = plan_turns(roles, cost=100, target=250, reserve=50, tail_turns=1)
    assert chosen.verdict is Verdict.NO_SPAN


@settings(max_examples=examples(40), deadline=None)
@given(
    turns=st.integers(min_value=6, max_value=80),
    seed=st.integers(min_value=0, max_value=10_000),
    fraction=st.floats(min_value=0.05, max_value=1.2),
    tail_turns=st.integers(min_value=0, max_value=8),
)
def test_property_output_fits_or_is_flagged_and_never_breaks_pairs(
    turns: int, seed: int, fraction: float, tail_turns: int
) -> None:
    record = trajectory(turns, seed=seed, output_chars=300)
    target = max(1, int(recount(record) * fraction))
    result = processor(target, tail_turns=tail_turns).process(line_of(record))
    assert result.status is not Status.REJECTED
    if result.status is Status.PASSED:
        assert recount(record) <= target
        return
    assert result.line is not None
    out = json.loads(result.line)
    stats = out.pop("condense")
    if result.status is Status.COMPRESSED:
        assert stats["tokens_after"] == recount(out) <= target
        assert check_trajectory(out) == []
        kept_tail = 1 if stats.get("protection_weakened") else tail_turns
        assert len(out["conversations"]) >= min(kept_tail, turns) + 1
    else:
        assert out == record


# --- failures ---------------------------------------------------------------------------


def test_a_failed_summary_keeps_the_record_and_says_why() -> None:
    record = trajectory(60, seed=1)
    raw = line_of(record)
    result = processor(
        recount(record) // 2, DeterministicSummarizer(fail=True), max_attempts=2, backoff=0
    ).process(raw)
    assert result.status is Status.FAILED and result.line is not None
    out = json.loads(result.line)
    flag = out.pop("condense")
    assert out == record
    assert flag["status"] == "failed" and "configured to fail" in flag["reason"]


def test_a_summary_that_times_out_once_is_retried() -> None:
    record = trajectory(60, seed=1)
    flaky = DeterministicSummarizer(fail=TimeoutError("slow"), fail_times=1)
    done = processor(recount(record) // 2, flaky, max_attempts=3, backoff=0).process(
        line_of(record)
    )
    assert isinstance(done, RecordResult) and done.status is Status.COMPRESSED
    assert done.stats is not None and done.stats["attempts"] == 2
    assert len(flaky.calls) == 2


def test_a_failure_a_retry_cannot_fix_is_not_retried() -> None:
    record = trajectory(60, seed=1)
    broken = DeterministicSummarizer(fail=True)  # classify: unknown, so no second call
    done = processor(recount(record) // 2, broken, max_attempts=3, backoff=0).process(
        line_of(record)
    )
    assert isinstance(done, RecordResult) and done.status is Status.FAILED
    assert len(broken.calls) == 1


class Numbers:
    name = "numbers"

    def summarize(self, messages: Any, *, previous: Any, target_tokens: int) -> Any:
        return 42


def test_a_summarizer_returning_no_text_fails_the_record_not_the_run() -> None:
    record = trajectory(60, seed=1)
    result = processor(recount(record) // 2, Numbers(), max_attempts=1).process(line_of(record))
    assert result.status is Status.FAILED
    assert result.reason == "the summarizer returned int, not text"


def test_a_bug_costs_one_flagged_record_not_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    record = trajectory(60, seed=1)

    def broken(*args: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("condense.datasets.record.canonical", broken)
    result = processor(recount(record) // 2).process(line_of(record))
    assert result.status is Status.FAILED and result.line is not None
    assert "internal error: RuntimeError: boom" in (result.reason or "")
    out = json.loads(result.line)
    assert out.pop("condense")["status"] == "failed" and out == record


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "blank line"),
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"id": 1}', "cannot tell the format"),
        (b'{"conversations": [{"from": "robot", "value": "x"}]}', "unknown 'from'"),
        (b'{"messages": [{"role": "user", "content": "x"}, 1]}', "message 1: must be a JSON"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_lines_are_rejected_with_a_reason(raw: bytes, reason: str) -> None:
    result = processor(100).process(raw)
    assert result.status is Status.REJECTED
    assert result.reason is not None and reason in result.reason


# --- the checker ------------------------------------------------------------------------


def call(name: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {{}}}}\n</tool_call>'


def test_checker_accepts_paired_calls_and_flags_every_break() -> None:
    good = [
        {"from": "human", "value": "hi"},
        {"from": "gpt", "value": call("a") + "\n" + call("b")},
        {
            "from": "tool",
            "value": "<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n</tool_response>",
        },
        {"from": "gpt", "value": "done"},
    ]
    assert check_trajectory({"conversations": good}) == []
    kinds = {
        "orphan_response": [good[0], good[2]],
        "missing_responses": [good[0], good[1], good[3]],
        "extra_responses": [good[1], good[2], {"from": "tool", "value": "3"}],
        "unbalanced_tags": [{"from": "gpt", "value": "<tool_call>\n{}"}],
    }
    for kind, turns in kinds.items():
        assert kind in {p.kind for p in check_trajectory({"conversations": turns})}, kind


def test_checker_reads_openai_messages() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "where is my answer"},
        {"role": "tool", "tool_call_id": "c1", "content": "late"},
    ]
    kinds = [p.kind for p in check_trajectory({"messages": messages})]
    assert kinds == ["missing_responses", "orphan_response"]


def test_check_trajectory_refuses_a_non_record_with_a_format_error() -> None:
    with pytest.raises(FormatError, match="got int"):
        check_trajectory(42)


def test_the_old_option_names_still_work_for_one_release() -> None:
    with pytest.warns(DeprecationWarning, match="keep_last= is deprecated.*tail_turns="):
        old = DatasetOptions(target_tokens=100, keep_last=2)  # type: ignore[call-arg]
    assert old.tail_turns == 2
    with pytest.warns(DeprecationWarning, match="retries= is deprecated.*max_attempts="):
        retried = DatasetOptions(target_tokens=100, retries=0)  # type: ignore[call-arg]
    assert retried.max_attempts == 1 and retried.retry.max_attempts == 1
    assert old.fingerprint("x") == DatasetOptions(target_tokens=100, tail_turns=2).fingerprint("x")


# --- datasets fit what sessions fit (issue 9) -----------------------------------------------

TAU_BENCH = Path(__file__).parent / "data" / "corpus" / "openai" / "tau_bench_gpt4o_airline.jsonl"


def test_tau_bench_at_2048_the_dataset_fits_every_record_the_session_path_fits(
    tmp_path: Path,
) -> None:

    def run(*args: str) -> None:
        done = run_cli(*args)
        assert done.returncode == 0, done.stderr

    run("compress-dataset", str(TAU_BENCH), "-o", str(tmp_path / "d.jsonl"), "--budget", "2048")
    run("compress", str(TAU_BENCH), "--budget", "2048", "-o", str(tmp_path / "s.jsonl"))
    session_lines = (tmp_path / "s.jsonl").read_text().splitlines()
    dataset = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert len(session_lines) == len(dataset) == 8
    for record in dataset:
        stats = record.get("condense") or {"status": "passed"}
        assert stats["status"] in ("passed", "compressed"), stats
        if stats["status"] == "compressed":
            assert stats["tokens_after"] <= 2048


def test_a_record_whose_protected_turns_fit_is_never_flagged() -> None:
    roles = ["system", "human", "gpt", "tool", "gpt", "human", "gpt"]
    # the full reserve does not fit beside the protected turns; a smaller one does
    chosen, weakened = plan_turns(roles, cost=100, target=520, reserve=200, tail_turns=1)
    assert chosen.verdict is Verdict.SUMMARIZE and not weakened
    assert 0 < chosen.reserve < 200
    tight, weakened = plan_turns(roles, cost=100, target=300, reserve=200, tail_turns=4)
    assert tight.verdict is Verdict.SUMMARIZE and weakened
    over, _ = plan_turns(roles, cost=100, target=150, reserve=50, tail_turns=1)
    assert over.verdict is Verdict.NO_SPAN


def test_openhands_record_at_4096_fits_with_a_smaller_summary_reserve() -> None:
    path = Path(__file__).parent / "data" / "corpus" / "openai" / "openhands_trajectories.jsonl"
    worker = processor(4096)
    statuses = Counter()
    for raw in path.read_bytes().splitlines():
        result = worker.process(raw)
        statuses[result.status] += 1
        if result.status is Status.COMPRESSED:
            assert result.stats is not None and result.stats["tokens_after"] <= 4096
    assert statuses[Status.OVER_LIMIT] == 0  # was 1: the default reserve did not fit
    assert statuses[Status.COMPRESSED] == 2


# --- the summary reads the whole span (issue 18) -------------------------------------------

# Three failures of a kind any summary should keep, at three depths of a long trajectory:
# (the line a tool printed, what identifies it).
SPAN_FACTS = {
    0.1: ("ERROR ledger-batch LDG-E7731 at ledger/batch.go:412: checksum mismatch", "LDG-E7731"),
    0.4: ('FATAL: password authentication failed for user "payout_svc_7q"', "payout_svc_7q"),
    0.7: ("Error: RQ-99214 quota exceeded for project orbital-finch-42", "RQ-99214"),
}


def _long_trajectory_with_facts(tmp_path: Path) -> tuple[Path, list[int]]:
    """A 320k-character ShareGPT trajectory with :data:`SPAN_FACTS` planted in tool turns
    at their depths, as a one-line JSONL file; and the planted turns."""
    turns = to_sharegpt(synthetic_session(400, seed=3, output_chars=900))
    tools = [i for i, turn in enumerate(turns) if turn["from"] == "tool"]
    planted = [tools[int(len(tools) * depth)] for depth in SPAN_FACTS]
    for at, (line, _) in zip(planted, SPAN_FACTS.values(), strict=True):
        turns[at] = {**turns[at], "value": f"{turns[at]['value']}\n{line}"}
    source = tmp_path / "in.jsonl"
    source.write_bytes(line_of({"id": "long", "conversations": turns}) + b"\n")
    return source, planted


def _facts_written(tmp_path: Path, *flags: str) -> list[str]:
    """``condense compress-dataset`` as a user runs it (with ``flags``) on the long
    trajectory: the probes of the planted facts its record still holds (their turns are
    in the summarized span: only the summary can)."""
    source, planted = _long_trajectory_with_facts(tmp_path)
    out = tmp_path / "out.jsonl"
    done = run_cli("compress-dataset", str(source), "-o", str(out), "--budget", "16000", *flags)
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    stats = record["condense"]
    assert stats["status"] == "compressed" and "left_out" not in stats, stats
    start, stop = stats["span"]
    assert all(start <= at < stop for at in planted)
    written = json.dumps(record["conversations"], ensure_ascii=False)
    return [probe for _, probe in SPAN_FACTS.values() if probe in written]


def test_a_fact_anywhere_in_a_long_trajectory_reaches_its_summary(tmp_path: Path) -> None:
    """A failure planted early, in the middle and late in a long trajectory: each is in
    the summary that replaced its span. (The summarizer was once given only the span's
    first ask and newest 48k characters, and the early and middle ones were never read.)"""
    assert _facts_written(tmp_path) == [probe for _, probe in SPAN_FACTS.values()]


def test_the_summary_s_input_can_be_bounded_for_speed(tmp_path: Path) -> None:
    """``--summary-input-chars N``, the opt-in bound: the summarizer is given the span's
    first ask and newest N characters, so the late failure is still found and the early
    and middle ones are not read (what the option's help says)."""
    late = SPAN_FACTS[0.7][1]
    assert _facts_written(tmp_path, "--summary-input-chars", "48000") == [late]


def test_a_summary_s_header_counts_what_its_scope_counts() -> None:
    """A ShareGPT ``tool`` turn of parallel results is several messages to the summarizer:
    the summary's frame says it stands for as many messages as its own scope line says
    were summarized (it once counted the turns: 280 in the header, 314 in the body)."""
    record = trajectory(120, seed=5)
    tool_turns = [turn for turn in record["conversations"] if turn["from"] == "tool"]
    assert any(turn["value"].count("<tool_response>") > 1 for turn in tool_turns)
    result = processor(4000).process(line_of(record))
    assert result.status is Status.COMPRESSED and result.line is not None
    text = json.dumps(json.loads(result.line), ensure_ascii=False)
    header = re.search(r"\[condense: summary of (\d+) earlier messages\]", text)
    scope = re.search(r"## Scope\\n- ([\d,]+) messages summarized", text)
    assert header is not None and scope is not None, text[:2000]
    assert int(header.group(1)) == int(scope.group(1).replace(",", ""))
