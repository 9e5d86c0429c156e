"""The openai summarizer's answer is checked: lost identifiers are put back (fake server)."""

from __future__ import annotations

import json
from typing import Any

from condense.summarizers import OpenAISummarizer
from condense.summarizers import digest as dg
from condense.summarizers.restore import restore_identifiers
from condense.testing import FakeProvider, Reply
from condense.tokens import count_text

ERROR = "ERROR [E4417] reconciliation aborted at src/jobs/ledger_sync.py:218"
HOST = "psycopg.OperationalError: connection to db-replica-07.internal:6432 failed"
SPAN: list[dict[str, Any]] = [
    {"role": "user", "content": "Why does the billing job fail?"},
    {
        "role": "assistant",
        "content": "Running it.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": "make bill"})},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": f"starting\n{ERROR}\n{HOST}\ndone"},
    {"role": "assistant", "content": "The job fails at the ledger sync."},
]


def test_lost_identifiers_are_appended_from_the_span(fake_provider: FakeProvider) -> None:
    answer = f"## {dg.ASKS}\n- why the billing job fails\n## {dg.LAST_STATE}\nIt fails."
    fake_provider.push(Reply(answer))
    summarizer = OpenAISummarizer(base_url=fake_provider.base_url, model="m", timeout=5)
    text = summarizer.summarize(SPAN, previous=None, target_tokens=400)
    assert text.startswith(answer)  # the model's text is never rewritten
    assert f"## {dg.KEY}" in text
    assert ERROR in text and HOST in text
    assert count_text(text) <= 400
    # The prompt asks for the key facts verbatim.
    system = fake_provider.requests[0]["messages"][0]["content"]
    assert dg.KEY in system and "verbatim" in system


def test_nothing_is_appended_when_the_answer_kept_them(fake_provider: FakeProvider) -> None:
    answer = f"## {dg.ERRORS}\n- {ERROR}\n- {HOST}"
    fake_provider.push(Reply(answer))
    summarizer = OpenAISummarizer(base_url=fake_provider.base_url, model="m", timeout=5)
    assert summarizer.summarize(SPAN, previous=None, target_tokens=400) == answer


def test_restoring_stays_within_the_target_and_keeps_the_best_first() -> None:
    answer = "x " * 60
    for target in (40, 70, 90, 400):
        text = restore_identifiers(answer, SPAN, previous=None, target_tokens=target)
        assert text.startswith(answer.rstrip())
        assert count_text(text) <= max(target, count_text(answer))
    assert restore_identifiers(answer, SPAN, previous=None, target_tokens=40) == answer


def test_the_previous_summary_s_facts_count_too() -> None:
    previous = f"## {dg.KEY}\n- commit 3f9c2a7d1e is the root cause"
    text = restore_identifiers("short", SPAN, previous=previous, target_tokens=400)
    assert "3f9c2a7d1e" in text
