"""Local OpenAI-compatible servers: vLLM, llama.cpp's server, SGLang, Ollama, LM Studio.

They render the history through the model's chat template, so the rules are the
template's: historical ``arguments`` are parsed with ``json.loads`` and must be a JSON
object string, results answer calls positionally (in call order), and a system prompt
may only open the history. ``reasoning_content`` is replayed by reasoning parsers.
"""

from __future__ import annotations

import dataclasses

from condense.providers import openai
from condense.providers.base import Provider

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

# The wordings these servers use for a prompt longer than the window.
CONTEXT_OVERFLOW_WORDINGS = (
    # vLLM (vllm-project/vllm): the Responses endpoint (serving_responses.py), the V1 engine
    # ("The prompt (total length N) is too long to fit into the model (context length M)",
    # vllm#12165) and the scheduler ("Input prompt (N tokens) is too long and exceeds limit
    # of M", vllm#525)
    r"engine prompt length \d+ exceeds the max_model_len",
    r"too long to fit into the model",
    r"input prompt \(\d+ tokens\) is too long",
    # candle-vllm (EricLBuehler/candle-vllm src/api.rs: "Prompt length N exceeds maximum
    # model length M") and other vLLM-compatible engines
    r"prompt length \d+ exceeds maximum model length",
    # llama.cpp server (ggml-org/llama.cpp tools/server): "request (N tokens) exceeds the
    # available context size (M tokens)", "Input prompt is too big compared to KV size",
    # "Context size has been exceeded." (also LM Studio's llama.cpp engine), a slot whose
    # context has no space left
    r"exceeds? the available context size",
    r"prompt is too big compared to kv size",
    r"context size has been exceeded",
    r"\bslot\b[^\n]{0,100}\bnot enough (?:space|room)",
    r"context shift is disabled",
    r"input is too large to process",
    r"is larger than the (?:max(?:imum)? )?context size",
    # SGLang (sgl-project/sglang tokenizer_manager.py)
    r"requested token count exceeds the model'?s? maximum context length",
    r"is longer than the model'?s? context length",
    # Ollama ("the input length exceeds the context length", also as a 400 or a 500)
    r"input length exceeds the context length",
    # LM Studio ("Trying to keep the first N tokens when context the overflows. However,
    # the model is loaded with context length of only M tokens, which is not enough.")
    r"trying to keep the first \d+ tokens when (?:the )?context (?:the )?overflows",
    r"loaded with (?:a )?context length of only \d+",
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=dataclasses.replace(
        openai.REFUSALS,
        overflow="This model's maximum context length is {window} tokens. However, you "
        "requested {total} tokens ({prompt} in the messages, 0 in the completion). Please "
        "reduce the length of the messages or completion.",
    ),
    hosts=("localhost", "127.0.0.1", "0.0.0.0", "[::1]"),
    wordings={"context_overflow": CONTEXT_OVERFLOW_WORDINGS},
)
