"""The proxy stands on the library's public API (issue 20): it imports no private name,
checks replay state with the library's one definition (an edited ``item_id`` is refused),
takes its retry from the public recovery step, and validates each request once."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import condense.server
import condense.server.prepare as prepare
from condense.errors import Action, next_attempt, recover
from condense.formats import Conversation
from condense.message import carries_replay, keeps_replay, replay_state
from condense.server.apis import api_for_path
from condense.server.config import ProxySettings, Upstream
from condense.server.memory import ConversationMemory
from condense.server.prepare import Preparer
from condense.server.replay import (
    compression_keeps_replay,
    repair_keeps_replay,
    replay_only_dropped,
)
from condense.server.windows import LearnedWindows
from condense.testing.sessions import model_calls, turn_session

SERVER = Path(condense.server.__file__).parent
CHAT = "/v1/chat/completions"


def _private_uses(source: str) -> list[str]:
    """Private names a module reaches for: ``from a._b import c``, ``from a import _c``,
    ``import a._b`` and ``x._attr`` on anything but ``self`` / ``cls``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if any(part.startswith("_") for part in node.module.split(".")[1:]):
                found.append(f"from {node.module} import …")
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name[0] == "_"]
        elif isinstance(node, ast.Import):
            found += [
                f"import {a.name}"
                for a in node.names
                if any(part.startswith("_") for part in a.name.split(".")[1:])
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{ast.unparse(node)} (line {node.lineno})")
    return found


def test_the_proxy_imports_no_private_name() -> None:
    modules = sorted(SERVER.glob("*.py"))
    assert len(modules) > 10  # the whole package is read
    found = {path.name: _private_uses(path.read_text()) for path in modules}
    assert {name: uses for name, uses in found.items() if uses} == {}


def test_the_private_name_finder_finds_them() -> None:
    source = (
        "from condense.formats._common import Group\nfrom x import _y\n"
        "import a._b\nz = conversation._groups\nself._ok = 1\n"
    )
    assert len(_private_uses(source)) == 4


# -- one definition of replay state -------------------------------------------------------

_ITEM = {
    "role": "assistant",
    "content": "done",
    "item_id": "msg_1",
    "responses_items": [{"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA"}],
}
_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "item_id": "fc_1",
            "type": "function",
            "function": {"name": "ls", "arguments": "{}"},
        }
    ],
}
_ASK = {"role": "user", "content": "go"}
_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "a.py"}


def _edited_call_id(message: dict[str, Any], item_id: str) -> dict[str, Any]:
    call = {**message["tool_calls"][0], "item_id": item_id}
    return {**message, "tool_calls": [call]}


def test_the_guard_refuses_an_edited_item_id() -> None:
    history = [_ASK, _CALL, _RESULT, _ITEM]
    edited_message = [_ASK, _CALL, _RESULT, {**_ITEM, "item_id": "msg_2"}]
    edited_call = [_ASK, _edited_call_id(_CALL, "fc_2"), _RESULT, _ITEM]
    for guard in (repair_keeps_replay, compression_keeps_replay, replay_only_dropped):
        assert guard(history, list(history))
        assert not guard(history, edited_message), guard.__name__
        assert not guard(history, edited_call), guard.__name__


def test_an_item_id_may_go_with_its_reasoning_in_a_repair_only_as_left_out() -> None:
    """Repair replays an output item whose reasoning item is gone without its id
    (``condense.repair.chains``): leaving the id out is allowed, changing it never."""
    without = {k: v for k, v in _ITEM.items() if k != "item_id"}
    assert repair_keeps_replay([_ASK, _ITEM], [_ASK, without])
    stripped = {k: v for k, v in _ITEM.items() if k != "responses_items"}
    assert not repair_keeps_replay([_ASK, _ITEM], [_ASK, stripped])
    assert not compression_keeps_replay([_ASK, _ITEM], [_ASK, without])  # the latest turn's
    assert replay_only_dropped([_ASK, _ITEM], [_ASK, without])


def test_the_library_and_the_guard_read_the_same_state() -> None:
    signed_part = {
        "role": "assistant",
        "content": [{"type": "text", "text": "x", "part": {"thoughtSignature": "s"}}],
    }
    gemini_call = {
        "role": "assistant",
        "tool_calls": [{"id": "c", "extra_content": {"google": {"thought_signature": "t"}}}],
    }
    messages = [_ITEM, _CALL, signed_part, gemini_call, {"role": "assistant", "content": "no"}]
    for message in messages:
        assert carries_replay(message) == bool(replay_state([message])), message
    assert not replay_state([{**_ITEM, "role": "user"}])  # only an assistant's is replayed
    assert keeps_replay([_ITEM], [_ITEM], may_lose="none")


# -- the recovery step --------------------------------------------------------------------


class _Refusal(Exception):
    def __init__(self, status: int, body: Any) -> None:
        self.status_code = status
        self.body = body
        super().__init__(f"Error code: {status} - {body}")


_ORPHAN = _Refusal(
    400,
    {
        "error": {
            "message": "Invalid parameter: messages with role 'tool' must be a response to a "
            "preceeding message with 'tool_calls'.",
            "type": "invalid_request_error",
            "code": None,
        }
    },
)


def _broken() -> list[dict[str, Any]]:
    return [_ASK, _CALL, _RESULT, {"role": "tool", "tool_call_id": "ghost", "content": "x"}]


def test_next_attempt_is_the_step_recover_takes() -> None:
    sent: list[list[Any]] = []

    def call(messages: list[Any]) -> str:
        sent.append(messages)
        if len(sent) == 1:
            raise _ORPHAN
        return "ok"

    history = _broken()
    result = recover(call, history, provider="openai")
    step = next_attempt(_ORPHAN, history, provider="openai")
    assert step is not None and step.action is Action.REPAIR
    assert step.messages == sent[1] == result.messages
    assert step.fingerprint == result.attempts[1].fingerprint
    # that payload refused too: the next rung, never the same payload again
    later = next_attempt(_ORPHAN, history, provider="openai", refused=[step.fingerprint])
    assert later is not None and later.fingerprint != step.fingerprint
    assert later.action is not Action.REPAIR or "escalated" in later.detail


def test_next_attempt_says_none_for_what_no_change_heals() -> None:
    rate = _Refusal(429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}})
    assert next_attempt(rate, _broken(), provider="openai") is None  # back off instead
    auth = _Refusal(401, {"error": {"message": "Incorrect API key", "type": "auth"}})
    assert next_attempt(auth, _broken(), provider="openai") is None


# -- one validation per request -----------------------------------------------------------


def test_each_request_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy calls the public ``validate`` once per request with a history, whatever
    it does next (pass through, repair, reuse a compressed head, compress)."""
    calls: list[int] = []
    public = prepare.validate

    def spy(messages: Any, **options: Any) -> Any:
        calls.append(len(messages))
        return public(messages, **options)

    for name, module in list(sys.modules.items()):
        if name.startswith("condense.server") and getattr(module, "validate", None) is public:
            monkeypatch.setattr(module, "validate", spy)
    settings = ProxySettings(upstreams=(Upstream(url="http://127.0.0.1:9", context_window=6000),))
    preparer = Preparer(settings, ConversationMemory(), LearnedWindows())
    api = api_for_path(CHAT)
    assert api is not None
    histories = [*model_calls(turn_session(10, seed=41)), _broken()]
    seen: set[tuple[bool, bool, bool]] = set()
    for history in histories:
        calls.clear()
        body = json.dumps({"model": "gpt-4o", "messages": history}).encode()
        prepared = preparer.prepare(api, CHAT, body, coding=None, beta=None)
        assert calls == [len(history)]
        seen.add((prepared.compressed, prepared.reused, prepared.repairs > 0))
    assert {(False, False, False), (True, False, False), (False, True, False)} <= seen
    assert any(repaired for *_, repaired in seen)  # every path ran


def test_a_rewritten_conversation_writes_the_turns_sent_before_verbatim() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 9,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": {}}]},
            {"role": "assistant", "content": "two"},
            {"role": "user", "content": "three"},
        ],
    }
    first = Conversation.read(body, format="anthropic")
    summary = {"role": "user", "content": "[summary] one two"}
    sent = first.rewritten([summary, first.messages[2]])
    assert sent.dump()["messages"][-1] is body["messages"][2]  # the same native object
    later = dict(body, messages=[*body["messages"], {"role": "assistant", "content": "four"}])
    second = Conversation.read(later, format="anthropic")
    again = second.rewritten([*sent.messages, second.messages[3]], earlier=[sent])
    native = again.dump()
    assert native["messages"][0] == {"role": "user", "content": "[summary] one two"}
    assert native["messages"][1] is body["messages"][2]
    assert native["messages"][2] is later["messages"][3]
    assert native["max_tokens"] == 9 and first.dump() == body
