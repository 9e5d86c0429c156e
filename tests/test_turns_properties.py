"""Properties of the turn model and of role placement (issue 16):

- no profile ever gets a same-role run that condense created: every two user (or two
  assistant) messages side by side in what ``compress`` or ``repair`` returns were side by
  side in the input (a message a summary block was written into counts as itself),
  whatever the profile (OpenAI's included: it accepts the run, many OpenAI-compatible
  chat templates do not);
- ``condense validate`` with no ``--provider`` exits 0 on any history made only of
  strict-valid messages, whatever replay state several providers send rides on them;
- the current turn comes back as the same objects, in order, from ``compress``.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import condense
from condense.cli import main
from condense.compress import compress
from condense.providers import PROFILES
from condense.tokens import count_tokens
from condense.turns import current_turn
from profiles import examples
from strategies import histories

PROPERTY = settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
WORDS = ["order", "cache", "retry", "schema", "tenant", "queue", "invoice", "token"]


@st.composite
def sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid agent session long enough to compress: asks (sometimes two in a row, as an
    OpenAI client may send them), replies and tool exchanges with parallel calls."""
    seed = draw(st.integers(min_value=0, max_value=10**6))
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": "You are an agent."})
    messages.append({"role": "user", "content": f"task {seed}"})
    for serial in range(draw(st.integers(min_value=2, max_value=14))):
        size = draw(st.integers(min_value=1, max_value=300))
        text = " ".join(WORDS[(seed + serial + k) % len(WORDS)] for k in range(size))
        kind = draw(st.sampled_from(["ask", "asks", "reply", "tools", "tools"]))
        if kind in ("ask", "asks"):
            if messages[-1]["role"] == "user":
                messages.append({"role": "assistant", "content": f"noted {serial}"})
            messages.append({"role": "user", "content": f"ask {serial}: {text}"})
            if kind == "asks":
                messages.append({"role": "user", "content": f"and also {serial}"})
        elif kind == "reply":
            if messages[-1]["role"] == "assistant":
                messages.append({"role": "user", "content": f"go on {serial}"})
            messages.append({"role": "assistant", "content": text})
        else:
            if messages[-1]["role"] == "assistant":
                messages.append({"role": "user", "content": f"go on {serial}"})
            count = draw(st.integers(min_value=1, max_value=3))
            calls = [
                {
                    "id": f"call_{serial}_{k}",
                    "type": "function",
                    "function": {"name": "read", "arguments": json.dumps({"n": k})},
                }
                for k in range(count)
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            messages += [
                {"role": "tool", "tool_call_id": call["id"], "content": text} for call in calls
            ]
    return messages


def _made_runs(output: list[Any], given: list[Any]) -> list[int]:
    """Indices of output messages that stand right after one of their role (user or
    assistant) without having stood right after it in the input."""
    position = {id(message): index for index, message in enumerate(given)}

    def source(message: dict[str, Any]) -> int | None:
        """The input message ``message`` is, or stands for: a summary block written into
        a message (before or after its text) keeps that message's place."""
        if id(message) in position:
            return position[id(message)]
        text = message.get("content")
        for index, original in enumerate(given):
            if not isinstance(original, dict):  # a malformed message stands for nothing
                continue
            said = original.get("content")
            if (
                original.get("role") == message.get("role")
                and isinstance(text, str)
                and isinstance(said, str)
                and said.strip()
                and text != said
                and (text.endswith("\n\n" + said) or text.startswith(said + "\n\n"))
            ):
                return index
        return None

    made = []
    for index in range(1, len(output)):
        first, second = output[index - 1], output[index]
        role = first.get("role")
        if role != second.get("role") or role not in ("user", "assistant"):
            continue
        a, b = source(first), source(second)
        if a is None or b is None or b != a + 1:
            made.append(index)
    return made


@PROPERTY
@given(
    messages=sessions(),
    fraction=st.floats(min_value=0.05, max_value=0.9),
    profile=st.sampled_from(sorted(PROFILES)),
)
def test_compress_never_makes_a_same_role_run_under_any_profile(
    messages: list[dict[str, Any]], fraction: float, profile: str
) -> None:
    budget = max(60, int(count_tokens(messages) * fraction))
    result = compress(messages, budget=budget, provider=profile)
    assert _made_runs(result.messages, messages) == [], (profile, result.report.describe())
    assert condense.validate(result.messages, provider=profile) == []
    repaired = condense.repair(messages, provider=profile).messages  # what compress worked on
    turn = current_turn(repaired)
    tail = repaired[turn.start :] if turn.running else []  # the running turn (issue 17: a
    cut = {c.tool_call_id for c in result.report.cuts}  # finished one is graded), its
    kept = result.messages[len(result.messages) - len(tail) :]  # outputs cut at most
    for a, b in zip(kept, tail, strict=True):
        if b.get("role") == "tool" and b.get("tool_call_id") in cut:
            assert {**a, "content": None} == {**b, "content": None}
        elif result.report.repairs:  # repaired copies (a fresh repair makes fresh ones)
            assert a == b
        else:
            assert a is b


@PROPERTY
@given(messages=histories(), profile=st.sampled_from(sorted(PROFILES)))
def test_repair_never_makes_a_same_role_run_under_any_profile(
    messages: list[Any], profile: str
) -> None:
    healed = condense.repair(messages, provider=profile).messages
    made = _made_runs(healed, messages)
    if made:  # an edited copy stands where the input had a run of that role
        dicts = [m for m in messages if isinstance(m, dict)]
        roles = [_spoken_role(m.get("role")) for m in dicts]
        had_run = any(a == b and a in ("user", "assistant") for a, b in itertools.pairwise(roles))
        assert had_run and not PROFILES[profile].alternate, (profile, made)


OTHER_NAMES = {"human": "user", "gpt": "assistant", "ai": "assistant", "model": "assistant"}
"""Role names of other formats (ShareGPT, LangChain, Gemini) that mean user or assistant:
``[user, human]`` already is a run of two user messages."""


def _spoken_role(role: object) -> object:
    return OTHER_NAMES.get(role.lower(), role.lower()) if isinstance(role, str) else role


SHARED_STATE = st.sampled_from(["none", "reasoning", "signature", "both"])


@PROPERTY
@given(broken=histories(), state=SHARED_STATE)
def test_validate_with_no_provider_passes_strict_valid_histories(
    broken: list[Any], state: str
) -> None:
    """Any history built from strict-valid messages (here: a broken one repaired under
    ``strict``), with replay state several providers send on it (``reasoning_content``
    on some turns, a Gemini signature on every call): that state tells what to keep and
    picks no looser profile, so ``condense validate`` with no ``--provider`` accepts it."""
    messages = condense.repair(broken, provider="strict").messages
    decorated = []
    for message in messages:
        message = dict(message)
        reply = message["role"] == "assistant" and not message.get("tool_calls")
        if reply and state in ("reasoning", "both"):  # some turns only: DeepSeek would refuse
            message["reasoning_content"] = "thought about it"
        if message.get("tool_calls") and state in ("signature", "both"):
            message["tool_calls"] = [
                {**call, "extra_content": {"google": {"thought_signature": "c2ln"}}}
                for call in message["tool_calls"]
            ]
        decorated.append(message)
    assume(condense.validate(decorated, provider="strict") == [])
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "history.json"
        source.write_text(json.dumps(decorated), encoding="utf-8")
        assert main(["validate", str(source), "--quiet"]) == 0
