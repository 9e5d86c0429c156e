"""Claude Code sessions and Codex rollouts read as requests and as trajectories.

The judge is the corpus: the request bodies in ``tests/data/corpus/agents`` were rebuilt
from the raw transcripts in ``agents/raw`` by the rules of its ``SOURCES.md``, by someone
else, with other code; the readers must give the same requests. Rules the real files do
not exercise (a torn line, a branch left behind, a sidechain inside a main session) are
tested on small sessions written here in the real files' event shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import condense
from condense.datasets import DatasetOptions, compress_dataset
from condense.datasets.sources import plan_jobs, read_lines
from condense.exceptions import FormatError
from corpus import CORPUS, SAMPLE

AGENTS = CORPUS / "agents"
MANIFEST: dict[str, dict[str, Any]] = json.loads((AGENTS / "manifest.json").read_text())


def _raw_file(entry: dict[str, Any], folder: Path) -> Path | None:
    """The raw transcript a manifest entry was rebuilt from, if ``folder`` holds it (the
    files are named after the last part of their repository path)."""
    name = Path(entry["path"]).name.removeprefix("rollout-")
    found = [path for path in (folder / "raw").glob("*.jsonl") if path.name.endswith(name)]
    return found[0] if found else None


def _expected(entry: dict[str, Any]) -> dict[str, Any]:
    """The shipped request, less two things its rebuild added that Codex never sends:
    each user message a second time, taken from the UI's ``event_msg`` (their redaction
    marks them: ``[REDACTED_MESSAGE …]``, where ``response_item`` texts read
    ``[REDACTED_TEXT …]``), and nothing else; SOURCES.md says ``input`` is the
    ``response_item`` payloads, in order."""
    body: dict[str, Any] = json.loads((AGENTS / entry["file"]).read_text())
    if entry["agent"] == "codex-cli":
        body["input"] = [item for item in body["input"] if not _ui_echo(item)]
    return body


def _ui_echo(item: dict[str, Any]) -> bool:
    content = item.get("content")
    return (
        item.get("type") == "message"
        and item.get("role") == "user"
        and isinstance(content, list)
        and str(content[0].get("text", "")).startswith("[REDACTED_MESSAGE")
    )


def _as_shipped(body: Any, agent: str) -> Any:
    """The body with the rebuild's one documented edit: the author's non-JSON
    ``[REDACTED_ARGUMENTS …]`` became ``{"redacted": "<placeholder>"}``."""
    if agent != "codex-cli":
        return body
    items = []
    for item in body["input"]:
        arguments = item.get("arguments")
        if item.get("type") == "function_call" and str(arguments).startswith("[REDACTED"):
            item = {**item, "arguments": json.dumps({"redacted": arguments})}
        items.append(item)
    return {**body, "input": items}


def _cases(folder: Path) -> list[tuple[str, Path]]:
    cases = []
    for name, entry in sorted(MANIFEST.items()):
        raw = _raw_file(entry, folder)
        if raw is not None:
            cases.append((name, raw))
    return cases


def _check_reproduced(name: str, raw: Path) -> None:
    entry = MANIFEST[name]
    key = "messages" if entry["agent"] == "claude-code" else "input"
    want = _expected(entry)
    contexts = [_as_shipped(c.dump(), entry["agent"]) for c in condense.load_records(raw)]
    if entry["cut"] == "final":
        assert contexts[-1] == want
        assert _as_shipped(condense.load(raw).dump(), entry["agent"]) == want
    elif entry["cut"] == "pre":  # the last request before the agent compacted
        assert len(contexts) >= 2
        assert want in contexts[:-1]
    else:  # a request in the middle of a loop: the start of its context's request
        assert any(body[key][: len(want[key])] == want[key] for body in contexts)


@pytest.mark.parametrize(("name", "raw"), _cases(SAMPLE / "agents"), ids=lambda v: str(v)[-40:])
def test_the_readers_rebuild_the_shipped_requests(name: str, raw: Path) -> None:
    _check_reproduced(name, raw)


def test_the_sample_holds_both_kinds_of_transcript() -> None:
    agents = {MANIFEST[name]["agent"] for name, _ in _cases(SAMPLE / "agents")}
    assert agents == {"claude-code", "codex-cli"}


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "raw"), _cases(AGENTS), ids=lambda v: str(v)[-40:])
def test_the_readers_rebuild_every_request_of_the_corpus(name: str, raw: Path) -> None:
    """``CONDENSE_CORPUS=../shared/corpus pytest -m corpus``: all five transcripts, with
    compactions, subagents and loops."""
    _check_reproduced(name, raw)


# -- small sessions, in the real files' shapes -------------------------------------------


def _event(kind: str, uuid: str, parent: str | None, message: Any = None, **more: Any) -> str:
    event: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "sessionId": "s-1",
        "version": "2.1.39",
        "type": kind,
        "uuid": uuid,
        "timestamp": "2026-02-12T16:00:00.000Z",
    }
    if message is not None:
        event["message"] = message
    event.update(more)
    return json.dumps(event)


def _user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _response(response: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "claude-opus-4-6",
        "id": response,
        "type": "message",
        "role": "assistant",
        "content": list(blocks),
    }


def _call(call: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": call}}


def _result(call: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call, "content": f"out {call}"}


PARALLEL = [
    json.dumps({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}),
    _event("user", "u1", None, _user("list both dirs")),
    _event("assistant", "a1", "u1", _response("msg_1", {"type": "text", "text": "two calls"})),
    _event("assistant", "a2", "a1", _response("msg_1", _call("c1"))),
    _event("progress", "p1", "a2", data={}),
    _event("assistant", "a3", "p1", _response("msg_1", _call("c2"))),
    _event("user", "r2", "a3", _user([_result("c2")])),  # the chain goes through c2's result
    _event("user", "r1", "a2", _user([_result("c1")])),  # c1's result sits off the chain
    _event("assistant", "a4", "r2", _response("msg_2", {"type": "text", "text": "  "})),
    _event("assistant", "a5", "a4", _response("msg_2", {"type": "text", "text": "done"})),
    _event("user", "side", "a5", _user("subagent prompt"), isSidechain=True),
    _event("user", "u2", "a5", _user("thanks")),
]


def _write(tmp_path: Path, lines: list[str], name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_parallel_results_come_back_in_call_order_and_sidechains_stay_out(
    tmp_path: Path,
) -> None:
    loaded = condense.load(_write(tmp_path, PARALLEL))
    body = loaded.dump()
    assert body["messages"] == [
        {"role": "user", "content": "list both dirs"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "two calls"}, _call("c1"), _call("c2")],
        },
        {"role": "user", "content": [_result("c1"), _result("c2")]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": "thanks"},
    ]
    assert body["model"] == "claude-opus-4-6"
    assert [tool["name"] for tool in body["tools"]] == ["Bash"]
    assert condense.validate(loaded) == []


def test_a_branch_left_behind_is_not_part_of_the_thread(tmp_path: Path) -> None:
    edited = [
        *PARALLEL[:2],
        _event("assistant", "old", "u1", _response("msg_0", {"type": "text", "text": "stale"})),
        _event("user", "abandoned", "old", _user("a message the user took back")),
        *PARALLEL[2:],
    ]
    body = condense.load(_write(tmp_path, edited)).dump()
    texts = json.dumps(body["messages"])
    assert "stale" not in texts
    assert "took back" not in texts


def test_a_compact_boundary_starts_a_new_context(tmp_path: Path) -> None:
    boundary = _event(
        "system",
        "b1",
        None,
        subtype="compact_boundary",
        logicalParentUuid="u2",
        compactMetadata={"trigger": "auto", "preTokens": 1000},
    )
    after = [
        boundary,
        _event("user", "s1", "b1", _user("This session is being continued …")),
        _event("assistant", "a9", "s1", _response("msg_9", {"type": "text", "text": "ok"})),
        _event("user", "u9", "a9", _user("go on")),
    ]
    path = _write(tmp_path, [*PARALLEL, *after])
    contexts = list(condense.load_records(path))
    assert [len(c.messages) for c in contexts] == [6, 3]  # two tool messages for the two results
    assert [c.line for c in contexts] == [len(PARALLEL), len(PARALLEL) + 4]
    current = condense.load(path)
    assert current.dump()["messages"][0]["content"] == "This session is being continued …"
    assert current.line == len(PARALLEL) + 4


def test_a_torn_line_is_named_by_its_number(tmp_path: Path) -> None:
    torn = [*PARALLEL[:3], PARALLEL[3][:40], *PARALLEL[4:]]
    with pytest.raises(FormatError) as caught:
        condense.load(_write(tmp_path, torn))
    assert caught.value.line == 4
    assert "invalid JSON" in str(caught.value)


def test_a_list_of_parsed_events_loads_like_the_file(tmp_path: Path) -> None:
    events = [json.loads(line) for line in PARALLEL]
    assert condense.load(events).dump() == condense.load(_write(tmp_path, PARALLEL)).dump()


def test_a_codex_rollout_compaction_replaces_the_history(tmp_path: Path) -> None:
    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps(
            {"timestamp": "2026-02-23T11:47:42.429Z", "type": kind, "payload": payload}
        )

    def said(role: str, text: str) -> dict[str, Any]:
        part = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}

    call = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    summary = {"type": "compaction", "encrypted_content": "opaque"}
    lines = [
        line("session_meta", {"id": "x", "base_instructions": {"text": "be brief"}}),
        line("turn_context", {"model": "gpt-5.3-codex"}),
        line("response_item", said("user", "fix it")),
        line("event_msg", {"type": "user_message", "message": "fix it"}),
        line("response_item", call),
        line("response_item", output),
        line("response_item", said("assistant", "fixed")),
        line(
            "compacted", {"message": "", "replacement_history": [said("user", "fix it"), summary]}
        ),
        line("response_item", said("user", "and the tests")),
        line("response_item", said("assistant", "done")),
    ]
    path = _write(tmp_path, lines, "rollout.jsonl")
    before, after = (c.dump() for c in condense.load_records(path))
    assert before["input"] == [said("user", "fix it"), call, output]
    assert before["instructions"] == "be brief"
    assert before["model"] == "gpt-5.3-codex"
    assert after["input"] == [said("user", "fix it"), summary, said("user", "and the tests")]
    assert [tool["name"] for tool in before["tools"]] == ["exec_command"]


# -- as a dataset ------------------------------------------------------------------------


def test_compress_dataset_writes_one_trajectory_per_context(tmp_path: Path) -> None:
    raw = _cases(SAMPLE / "agents")
    folder = tmp_path / "sessions"
    folder.mkdir()
    for _, path in raw:
        (folder / path.name).write_bytes(path.read_bytes())
    out = tmp_path / "out"
    report = compress_dataset(folder, out, options=DatasetOptions(target_tokens=8_000), workers=0)
    for _, path in raw:
        records = [json.loads(line) for line in (out / path.name).read_text().splitlines()]
        contexts = list(condense.load_records(path))
        assert len(records) == len(contexts)
        for record in records:
            stats = record.get("condense", {"status": "passed", "tokens_after": 0})
            assert stats["status"] in ("passed", "compressed")
            assert stats["tokens_after"] <= 8_000
            assert record["model"] == contexts[-1].dump()["model"]
    assert report["rejected"] == 0
    assert report["compressed"] >= 1
    assert report["lines"] == sum(len(list(condense.load_records(p))) for _, p in raw)


def test_a_trajectory_ends_with_the_models_last_answer(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            *PARALLEL,
            _event(
                "assistant", "a6", "u2", _response("msg_3", {"type": "text", "text": "welcome"})
            ),
        ],
    )
    assert condense.load(path).dump()["messages"][-1] == {"role": "user", "content": "thanks"}
    out = tmp_path / "out.jsonl"
    compress_dataset(path, out, options=DatasetOptions(target_tokens=100_000), workers=0)
    (trajectory,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert trajectory["messages"][-1]["role"] == "assistant"
    assert "welcome" in json.dumps(trajectory["messages"][-1])


def test_compress_dataset_rejects_a_torn_line_and_keeps_the_session(tmp_path: Path) -> None:
    torn = [*PARALLEL[:3], "{not json", *PARALLEL[3:]]
    path = _write(tmp_path, torn)
    rejects = tmp_path / "rejects.jsonl"
    report = compress_dataset(
        path,
        tmp_path / "out.jsonl",
        options=DatasetOptions(target_tokens=100_000),
        rejects=rejects,
        workers=0,
    )
    written = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(written) == 1
    trajectory = json.loads(written[0])
    assert trajectory["messages"][-1] == {"role": "user", "content": "thanks"}
    rejected = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [r["line"] for r in rejected] == [4]
    assert report["rejected"] == 1


def test_a_resumed_run_reads_on_after_the_last_context_written(tmp_path: Path) -> None:
    boundary = _event("system", "b1", None, subtype="compact_boundary", logicalParentUuid="u2")
    after = [boundary, _event("user", "s1", "b1", _user("continued")), "{torn"]
    path = _write(tmp_path, [*PARALLEL, *after])
    jobs = plan_jobs(str(path), str(tmp_path / "out.jsonl"))
    lines = list(read_lines(jobs))
    assert [line.number for line in lines] == [len(PARALLEL), len(PARALLEL) + 2, len(PARALLEL) + 3]
    assert lines[-1].raw == b"{torn"  # the reader rejects it, naming its line
    first = lines[0]
    assert list(read_lines(jobs, offset=first.end, line=first.number)) == lines[1:]
    assert list(read_lines(jobs, offset=lines[-1].end, line=lines[-1].number)) == []


def test_transcript_events_are_never_misread_as_messages() -> None:
    events = [json.loads(line) for line in PARALLEL]
    with pytest.raises(FormatError, match="claude-code transcript events"):
        condense.detect_format(events)


def test_the_command_line_reads_a_transcript_as_its_contexts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from condense.cli import main

    torn = [*PARALLEL[:3], "{torn", *PARALLEL[3:]]
    path = _write(tmp_path, torn)
    out = tmp_path / "out.jsonl"
    assert main(["compress", str(path), "--budget", "4000", "-o", str(out)]) == 1  # one reject
    (written,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert (
        written["messages"]
        == condense.load(_write(tmp_path, PARALLEL, "whole.jsonl")).dump()["messages"]
    )
    assert "1 rejected" in capsys.readouterr().err
    (reject,) = [
        json.loads(line) for line in (tmp_path / "out.rejects.jsonl").read_text().splitlines()
    ]
    assert reject["line"] == 4
