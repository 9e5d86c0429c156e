"""datasets: whole runs — files and directories, rejects, order, stats, concurrency, timeouts,
worker processes, resume after SIGKILL, tokenizers, the CLI and the Ray engine."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cli_support import HeldSummaries, wait_until
from condense.cli import main
from condense.datasets import DatasetOptions, check_trajectory, compress_dataset
from condense.formats import to_sharegpt
from condense.testing import Fail, FakeProvider, SimulatedLLM
from condense.testing.sessions import synthetic_session
from condense.types import RawMessage
from corpus import corpus_files

BAD_LINES = [b"{oops", b"", b'{"id": 3}']


def record(index: int, turns: int) -> dict[str, Any]:
    session = synthetic_session(turns, seed=index, output_chars=500)
    return {"id": index, "conversations": to_sharegpt(session), "tools": "[]"}


def write_dataset(path: Path, count: int = 24, *, bad: bool = True) -> list[bytes]:
    """``count`` trajectories of 6–90 turns, with malformed lines among them if ``bad``."""
    lines = [
        json.dumps(record(i, 6 + (i * 37) % 85), ensure_ascii=False).encode() for i in range(count)
    ]
    if bad:
        lines[3:3] = BAD_LINES[:1]
        lines[10:10] = BAD_LINES[1:]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return lines


def output_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


class SlowStub:
    """An async summarizer: waits ``delay`` seconds (a minute on call ``hang_call``)."""

    name = "stub"

    def __init__(self, delay: float = 0.01, *, hang_call: int | None = None) -> None:
        self.delay = delay
        self.hang_call = hang_call
        self.active = self.peak = self.calls = 0

    def summarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        raise AssertionError("an async summarizer must be awaited, not called")

    async def asummarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(60 if self.calls == self.hang_call else self.delay)
        finally:
            self.active -= 1
        return f"stub summary of {len(messages)} messages"


# --- whole runs -------------------------------------------------------------------------


def test_lines_in_equal_lines_out_plus_rejects_in_order(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    lines = write_dataset(source)
    report = compress_dataset(
        source, tmp_path / "out.jsonl", options=DatasetOptions(target_tokens=3000), workers=0
    )
    out = output_lines(tmp_path / "out.jsonl")
    rejects = [json.loads(x) for x in output_lines(tmp_path / "out.rejects.jsonl")]
    assert len(lines) == len(out) + len(rejects) == report["lines"]
    assert [r["line"] for r in rejects] == [4, 11, 12]
    assert [r["reason"][:12] for r in rejects] == ["invalid JSON", "blank line", "cannot tell "]
    assert [r["text"].encode() for r in rejects] == BAD_LINES
    good = [line for line in lines if line not in BAD_LINES]
    ids = [json.loads(line)["id"] for line in out]
    assert ids == [json.loads(line)["id"] for line in good]  # order kept
    for before, after in zip(good, out, strict=True):
        flag = json.loads(after).get("condense")
        if flag is None:
            assert after == before  # passed through byte for byte
        else:
            assert flag["tokens_after"] <= 3000 or flag["status"] == "still_over_limit"
            assert check_trajectory(json.loads(after)) == []
    stats = json.loads((tmp_path / "out.stats.json").read_text())
    assert stats["rejected"] == 3 and stats["lines"] == len(lines)
    assert stats["passed_under_target"] + stats["compressed"] + stats["still_over_limit"] == 24
    assert stats["compressed"] > 0 and stats["passed_under_target"] > 0
    ratio = stats["ratio"]
    assert ratio["min"] <= ratio["p10"] <= ratio["p50"] <= ratio["p90"] <= ratio["max"] < 1
    assert not list(tmp_path.glob(".*"))  # no partial or state file left behind


def test_a_directory_is_mirrored_file_by_file(tmp_path: Path) -> None:
    (tmp_path / "in" / "b").mkdir(parents=True)
    write_dataset(tmp_path / "in" / "a.jsonl", 5, bad=False)
    write_dataset(tmp_path / "in" / "b" / "c.jsonl", 4, bad=False)
    (tmp_path / "in" / "notes.txt").write_text("not data")
    code = main(
        [
            "dataset",
            str(tmp_path / "in"),
            "-o",
            str(tmp_path / "out"),
            "--target-tokens",
            "2000",
            "--workers",
            "0",
            "-q",
        ]
    )
    assert code == 0
    assert len(output_lines(tmp_path / "out" / "a.jsonl")) == 5
    assert len(output_lines(tmp_path / "out" / "b" / "c.jsonl")) == 4
    assert not (tmp_path / "out" / "notes.txt").exists()
    assert json.loads((tmp_path / "out.stats.json").read_text())["lines"] == 9
    # An output directory inside the input directory is not read as input.
    nested = ["dataset", str(tmp_path / "in"), "-o", str(tmp_path / "in" / "out")]
    for _ in range(2):
        assert main([*nested, "--target-tokens", "2000", "--workers", "0", "-q"]) == 0
    assert json.loads((tmp_path / "in" / "out.stats.json").read_text())["lines"] == 9
    assert sorted(p.name for p in (tmp_path / "in" / "out").rglob("*")) == [
        "a.jsonl",
        "b",
        "c.jsonl",
    ]


def test_cli_writes_stdout_and_a_table_and_exit_code_one_for_rejects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    lines = write_dataset(source, 6)
    code = main(["dataset", str(source), "--target-tokens", "2500", "--workers", "0"])
    captured = capsys.readouterr()
    assert code == 1  # rejected lines
    assert len(captured.out.splitlines()) == len(lines) - 3
    assert "rejected: invalid JSON" in captured.err and "in.jsonl:4" in captured.err
    assert "tokens saved" in captured.err and "compressed" in captured.err


def test_bad_input_is_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["dataset", str(missing), "--target-tokens", "10"]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "Traceback" not in err
    assert main(["dataset", str(tmp_path), "--target-tokens", "10"]) == 2
    assert "give an output directory with -o" in capsys.readouterr().err
    (tmp_path / "x.jsonl").write_text("{}\n")
    assert (
        main(
            [
                "dataset",
                str(tmp_path / "x.jsonl"),
                "--target-tokens",
                "10",
                "--tokenizer",
                "Qwen/Qwen2.5-7B",
            ]
        )
        == 2
    )
    assert "never downloads" in capsys.readouterr().err


def test_async_summaries_run_concurrently_under_the_bound_and_time_out(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    write_dataset(source, 40, bad=False)
    stub = SlowStub(0.05)
    report = compress_dataset(
        source,
        tmp_path / "out.jsonl",
        options=DatasetOptions(target_tokens=3000),
        summarizer=stub,
        workers=0,
        concurrency=4,
    )
    assert stub.peak == 4  # concurrent (not one after another), never above the bound
    assert report["compressed"] == stub.calls > 8
    # The second summary hangs: its record is kept, flagged with the timeout, in order.
    hung = SlowStub(0.01, hang_call=2)
    report = compress_dataset(
        source,
        tmp_path / "out2.jsonl",
        options=DatasetOptions(target_tokens=3000, timeout=0.3, max_attempts=1),
        summarizer=hung,
        workers=0,
        concurrency=8,
    )
    assert report["failed"] == 1 and report["compressed"] == stub.calls - 1
    assert list(report["failures"]) == ["no summary within the 0.3s timeout"]
    out = [json.loads(x) for x in output_lines(tmp_path / "out2.jsonl")]
    assert [item["id"] for item in out] == list(range(40))
    assert sum(item.get("condense", {}).get("status") == "failed" for item in out) == 1


@pytest.mark.parametrize("workers", [0, 1])  # 1: the failures travel to a worker (pickled)
def test_an_llm_that_keeps_failing_flags_records_and_never_falls_back(
    tmp_path: Path, workers: int
) -> None:
    source = tmp_path / "in.jsonl"
    write_dataset(source, 8, bad=False)
    with FakeProvider(responder=lambda body: Fail(500)) as fake:  # type: ignore[arg-type,return-value]
        report = compress_dataset(
            source,
            tmp_path / "out.jsonl",
            options=DatasetOptions(target_tokens=3000, max_attempts=1),
            summarizer="openai",
            summarizer_options={"base_url": fake.base_url, "model": "m", "max_attempts": 1},
            workers=workers,
        )
    assert report["compressed"] == 0 and report["failed"] > 0
    assert all(reason.startswith("HTTP 500") for reason in report["failures"])
    out = [json.loads(x) for x in output_lines(tmp_path / "out.jsonl")]
    flagged = [item for item in out if item.get("condense", {}).get("status") == "failed"]
    assert len(flagged) == report["failed"]
    originals = {json.loads(x)["id"]: json.loads(x) for x in output_lines(source)}
    for item in flagged:
        assert item.pop("condense")["status"] == "failed"
        assert item == originals[item["id"]]


def test_worker_processes_give_the_same_output(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    write_dataset(source, 30)
    options = DatasetOptions(target_tokens=2000)
    compress_dataset(source, tmp_path / "a.jsonl", options=options, workers=0)
    compress_dataset(source, tmp_path / "b.jsonl", options=options, workers=2)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.rejects.jsonl").read_bytes() == (
        tmp_path / "b.rejects.jsonl"
    ).read_bytes()


# --- resume -----------------------------------------------------------------------------


def test_resume_after_sigkill_gives_exactly_the_uninterrupted_output(tmp_path: Path) -> None:
    """SIGKILL while summaries from line 25 on are held: the resume point saved after
    every line (a checkpoint a nanosecond apart) is where --resume goes on from."""
    source = tmp_path / "in.jsonl"
    write_dataset(source, 60)
    HeldSummaries.tag_lines(source)
    held = HeldSummaries()
    with FakeProvider(responder=held) as fake:
        args = [
            "dataset",
            str(source),
            "--target-tokens",
            "3000",
            "--workers",
            "0",
            "--summarizer",
            "openai",
            "-O",
            f"base_url={fake.base_url}",
            "-O",
            "model=m",
            "--concurrency",
            "2",
            "-q",
        ]
        assert main([*args, "-o", str(tmp_path / "whole.jsonl")]) == 1  # (3 rejects)
        target = tmp_path / "out.jsonl"
        state = tmp_path / ".out.jsonl.condense-state.json"
        held.hold_from(25)
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "condense",
                *args,
                "-o",
                str(target),
                "--checkpoint-every",
                "1e-9",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(
                lambda: (
                    held.held.is_set()
                    and state.exists()
                    and json.loads(state.read_text() or "{}").get("line", 0) >= 15
                ),
                "the run saved line 15 and waits for a held summary",
            )
            assert run.poll() is None, "the run ended before it could be killed"
            os.kill(run.pid, signal.SIGKILL)
        finally:
            run.wait()
        held.release()
        assert not target.exists()  # nothing half-written in place
        assert (tmp_path / ".out.jsonl.partial").exists()
        assert main([*args, "-o", str(target), "--resume"]) == 1
    assert target.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert (tmp_path / "out.rejects.jsonl").read_bytes() == (
        tmp_path / "whole.rejects.jsonl"
    ).read_bytes()
    whole = json.loads((tmp_path / "whole.stats.json").read_text())
    resumed = json.loads((tmp_path / "out.stats.json").read_text())
    for key in ("wall_time_s", "records_per_s"):
        whole.pop(key), resumed.pop(key)
    assert resumed == whole
    assert not state.exists()


def test_resume_refuses_changed_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    write_dataset(source, 4, bad=False)
    state = tmp_path / ".out.jsonl.condense-state.json"
    state.write_text(json.dumps({"version": 1, "fingerprint": "another run"}))
    code = main(
        [
            "dataset",
            str(source),
            "-o",
            str(tmp_path / "out.jsonl"),
            "--target-tokens",
            "900",
            "--resume",
            "--workers",
            "0",
            "-q",
        ]
    )
    assert code == 2
    assert "changed since the interrupted run" in capsys.readouterr().err


# --- tokenizers -------------------------------------------------------------------------


def test_a_huggingface_tokenizer_json_sets_the_budget(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="the hf extra is not installed")
    from tokenizers import models, pre_tokenizers, trainers

    source = tmp_path / "in.jsonl"
    lines = write_dataset(source, 12, bad=False)
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel()
    texts = [turn["value"] for line in lines for turn in json.loads(line)["conversations"]]
    tokenizer.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=400,
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    model = tmp_path / "model"
    model.mkdir()
    tokenizer.save(str(model / "tokenizer.json"))
    for given in (str(model / "tokenizer.json"), str(model)):
        code = main(
            [
                "dataset",
                str(source),
                "-o",
                str(tmp_path / "out.jsonl"),
                "--target-tokens",
                "3000",
                "--tokenizer",
                given,
                "--workers",
                "0",
                "-q",
            ]
        )
        assert code == 0
        compressed = 0
        for line in output_lines(tmp_path / "out.jsonl"):
            out = json.loads(line)
            flag = out.get("condense")
            if flag and flag["status"] == "compressed":
                compressed += 1
                counted = sum(
                    len(tokenizer.encode(t["value"], add_special_tokens=False).ids) + 4
                    for t in out["conversations"]
                )
                assert flag["tokens_after"] == counted <= 3000
        assert compressed > 0


def test_a_missing_tokenizers_package_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from condense.datasets.tokenizer import HFTokenizer
    from condense.exceptions import InputError

    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import fails as if not installed
    with pytest.raises(InputError, match=r"pip install 'condense\[hf\]'"):
        HFTokenizer(str(tmp_path / "tokenizer.json"))


def test_json_statistics_go_to_stdout_when_the_data_goes_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    write_dataset(source, 5, bad=False)
    args = ["dataset", str(source), "-o", str(tmp_path / "o.jsonl"), "--target-tokens", "2500"]
    assert main([*args, "--workers", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["lines"] == 5 and report["tokenizer"] == "o200k_base"


# --- Ray --------------------------------------------------------------------------------


@pytest.mark.ray  # needs the ray extra; CI runs it with: pytest -m ray
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray warns about its own internals
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_the_ray_engine_writes_what_the_local_engine_writes(tmp_path: Path) -> None:
    import ray
    import ray.data  # the engine needs it: a missing extra fails here, clearly

    data = tmp_path / "in"
    data.mkdir()
    write_dataset(data / "generated.jsonl", 20)
    (corpus,) = corpus_files("sharegpt/llamafactory_reason_tool_use.jsonl")
    (data / "corpus.jsonl").write_bytes(corpus.read_bytes())
    options = DatasetOptions(target_tokens=3000)
    local = compress_dataset(data, tmp_path / "local", options=options, workers=0)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = compress_dataset(
            data,
            tmp_path / "ray",
            options=options,
            engine="ray",
            workers=2,
            summarizer=SimulatedLLM(0.01),
            concurrency=4,
        )
        again = compress_dataset(data, tmp_path / "ray2", options=options, engine="ray", workers=2)
    finally:
        ray.shutdown()
    for name in ("generated.jsonl", "corpus.jsonl"):
        assert (tmp_path / "ray2" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
        assert len(output_lines(tmp_path / "ray" / name)) == len(
            output_lines(tmp_path / "local" / name)
        )
    assert (tmp_path / "ray2.rejects.jsonl").read_bytes() == (
        tmp_path / "local.rejects.jsonl"
    ).read_bytes()
    for key in ("lines", "passed_under_target", "compressed", "still_over_limit", "rejected"):
        assert remote[key] == again[key] == local[key], key
