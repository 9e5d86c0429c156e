"""Local OpenAI-compatible servers: vLLM, llama.cpp's server, SGLang, Ollama, LM Studio.

They render the history through the model's chat template, so the rules are the
template's: historical ``arguments`` are parsed with ``json.loads`` and must be a JSON
object string, results answer calls positionally (in call order), and a system prompt
may only open the history. ``reasoning_content`` is replayed by reasoning parsers.
"""

from __future__ import annotations

import dataclasses

from condense.providers import openai
from condense.providers.base import OPENAI_REFUSALS, Provider

PROFILE = dataclasses.replace(
    openai.PROFILE,
    name="local",
    description="vLLM, llama.cpp, SGLang, Ollama and other local OpenAI-compatible servers",
    system_only_at_start=True,
    results_in_call_order=True,
    id_max_length=None,
    errors={
        **openai.PROFILE.errors,
        # vllm-project/vllm#43995: historical arguments go through json.loads
        "arguments_invalid_json": "{json_error}",
        # sgl-project/sglang PR #28035: a template iterates the parsed arguments
        "arguments_not_object": "'str object' has no attribute 'items'",
        # bytedance/deer-flow#4445
        "arguments_not_string": "Input should be a valid string",
    },
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=dataclasses.replace(
        OPENAI_REFUSALS,
        overflow="This model's maximum context length is {window} tokens. However, you "
        "requested {total} tokens ({prompt} in the messages, 0 in the completion). Please "
        "reduce the length of the messages or completion.",
    ),
    hosts=("localhost", "127.0.0.1", "0.0.0.0", "[::1]"),
)
