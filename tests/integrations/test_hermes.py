"""hermes-agent's own agent loop (``AIAgent.run_conversation``) with condense as its
context engine, selected the way hermes users select one: the ``hermes_agent.plugins``
entry point, ``plugins.enabled: [condense]`` and ``context.engine: condense`` in
``config.yaml``. hermes-agent pins its own ``openai``, so this runs in hermes' own
environment (``pytest -m hermes``, see ``.ci/run``)."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from condense.testing import StrictProvider
from condense.validate import validate

from .support import ASK, broken_history, last_user_text, need, prompt_tokens

pytestmark = pytest.mark.hermes

WINDOW = 80_000  # hermes refuses models under 64K
CONFIG = """\
model:
  default: gpt-4
  provider: custom
  context_length: {window}
plugins:
  enabled: [condense]
context:
  engine: condense
compression:
  enabled: {enabled}
  threshold: 0.6
  protect_first_n: 2
  protect_last_n: 6
"""


@pytest.fixture(scope="module")
def hermes_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A hermes home whose config.yaml selects condense; HERMES_HOME points at it."""
    home = tmp_path_factory.mktemp("hermes")
    before = os.environ.get("HERMES_HOME")
    os.environ["HERMES_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("HERMES_HOME", None)
    else:
        os.environ["HERMES_HOME"] = before


def _configure(home: Path, *, enabled: bool) -> None:
    text = CONFIG.format(window=WINDOW, enabled=str(enabled).lower())
    (home / "config.yaml").write_text(text, encoding="utf-8")


def _agent(fake: StrictProvider) -> Any:
    run_agent = need("run_agent", "hermes")
    return run_agent.AIAgent(
        base_url=fake.base_url,
        api_key="test",
        model="gpt-4",
        quiet_mode=True,
        enabled_toolsets=[],
        save_trajectories=False,
        max_iterations=3,
    )


def _same(message: dict[str, Any]) -> Any:
    """A message with its calls' arguments parsed: equal when the same."""
    calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or []
    ]
    return (message["role"], message.get("content"), calls)


def _history() -> list[dict[str, Any]]:
    return broken_history(tokens=140_000)[:-1]  # the ask comes as the turn's message


def test_hermes_finds_condense_through_its_plugin_entry_point(hermes_home: Path) -> None:
    _configure(hermes_home, enabled=True)
    plugins = need("hermes_cli.plugins", "hermes")
    plugins.discover_plugins()
    engine = plugins.get_plugin_context_engine()
    assert engine is not None and engine.name == "condense"
    with StrictProvider("openai", context_window=WINDOW) as fake:
        selected = _agent(fake).context_compressor
    assert selected.name == "condense"
    assert selected is not engine  # hermes deep-copies the plugin's engine per agent
    # hermes' own compression settings, read from its config.yaml
    assert (selected.threshold_percent, selected.protect_first_n, selected.protect_last_n) == (
        0.6,
        2,
        6,
    )
    assert selected.context_length == WINDOW
    assert selected.threshold_tokens == int(WINDOW * 0.6)
    assert copy.deepcopy(selected).threshold_tokens == selected.threshold_tokens


def test_the_agent_loop_sends_a_valid_history_that_fits(hermes_home: Path) -> None:
    with StrictProvider("openai", context_window=WINDOW) as fake:
        _configure(hermes_home, enabled=False)  # no context engine at work: refused
        result = _agent(fake).run_conversation(ASK, conversation_history=_history())
        assert result.get("failed")
        assert [r.code for r in fake.refusals] == ["context_overflow"]

        _configure(hermes_home, enabled=True)
        history = _history()
        agent = _agent(fake)
        result = agent.run_conversation(ASK, conversation_history=history)

        assert not result.get("failed"), result
        assert len(fake.refusals) == 1  # nothing refused since
        assert len(fake.requests) == 2  # no LLM call of its own: the summary is condense's
        body = fake.requests[-1]
        sent = [m for m in body["messages"] if m.get("role") != "system"]
        assert validate(body["messages"], provider="openai") == []
        assert prompt_tokens(body) <= WINDOW * 0.6
        assert last_user_text(body["messages"]) == ASK
        # protect_first_n: 2 — the head up to the first reply is as it was (hermes itself
        # writes arguments as compact JSON)
        assert [_same(m) for m in sent[:2]] == [_same(m) for m in history[:2]]
        assert agent.context_compressor.compression_count == 1


def test_a_focus_topic_leads_the_summary(hermes_home: Path) -> None:
    _configure(hermes_home, enabled=True)
    hermes = need("condense.integrations.hermes", "hermes")
    engine = hermes.CondenseEngine()
    engine.update_model("gpt-4", WINDOW)
    # long enough that masking old outputs alone does not fit: a span is summarized
    messages = [{"role": "system", "content": "You are hermes."}, *broken_history(tokens=400_000)]
    compressed = engine.compress(messages, focus_topic="orders route")
    summaries = [
        m["content"]
        for m in compressed
        if "Focus (as asked): orders route" in str(m.get("content"))
    ]
    assert len(summaries) == 1
    assert compressed[-1] == messages[-1]
    assert validate(compressed, provider="openai") == []
