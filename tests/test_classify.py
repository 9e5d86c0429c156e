"""``condense.errors.classify`` over real provider error texts and real SDK exceptions.

Every row of the tables below is an error string seen in the wild; the comment above it
names where (``repo#issue``). The first table holds every string in
``shared/provider-rules.md``; the others were collected from public issue trackers.
"""

from __future__ import annotations

import http.server
import json
import socket
import string
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import condense.errors as errors_api
from cli_support import HANG_GUARD
from condense.errors import Action, Category, Diagnosis, classify
from condense.errors.diagnosis import DEFAULT_ACTIONS
from profiles import examples

C = Category


@dataclass(frozen=True)
class Row:
    """One real error text and what classify must make of it."""

    text: str
    category: Category
    expect: Mapping[str, object] = field(default_factory=dict)


def row(text: str, category: Category, /, id: str, **expect: object) -> Any:
    return pytest.param(Row(text, category, expect), id=id)


# --- every string in shared/provider-rules.md ------------------------------------------

PROVIDER_RULES = [
    # litellm #4931
    row(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        C.TOOL_PAIRING,
        id="openai-tool-without-call",
    ),
    # openai-agents #1061
    row(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_…",
        C.TOOL_PAIRING,
        id="openai-unanswered-call",
    ),
    # langchain #22600
    row(
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
        C.TOOL_PAIRING,
        id="openai-missing-tool-call-id",
    ),
    # openai-node #1161
    row(
        "Additional properties are not allowed ('id' was unexpected) - 'messages.0'",
        C.MESSAGE_FORMAT,
        id="openai-strict-extra-key",
        message_index=0,
    ),
    # openai-agents #4827
    row(
        "No tool call found for function call output with call_id call_….",
        C.TOOL_PAIRING,
        id="responses-orphan-output",
    ),
    # openai-agents #1061
    row("No tool output found for function call call_…", C.TOOL_PAIRING, id="responses-no-output"),
    # vercel/ai #7099
    row(
        "Item 'rs_…' of type 'reasoning' was provided without its required following item.",
        C.MESSAGE_FORMAT,
        id="responses-reasoning-item",
    ),
    # microsoft/agent-framework #2203
    row(
        "Unknown parameter: 'input[1].metadata'.",
        C.MESSAGE_FORMAT,
        id="responses-unknown-key",
        message_index=1,
    ),
    # OpenHands #7512
    row(
        "messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_… Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message.",
        C.TOOL_PAIRING,
        id="anthropic-tool-use-unanswered",
    ),
    # claude-code #14416
    row(
        "messages.N.content.M: unexpected `tool_use_id` found in `tool_result` blocks: toolu_… "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
        C.TOOL_PAIRING,
        id="anthropic-orphan-result",
    ),
    # Antigravity-Manager #522
    row(
        "messages.11: `tool_result` blocks can only be in `user` messages",
        C.TOOL_PAIRING,
        id="anthropic-result-in-assistant",
        message_index=11,
    ),
    # claude-code #6696
    row(
        "messages.N.content.M.tool_use.input: Input should be a valid dictionary",
        C.TOOL_ARGUMENTS,
        id="anthropic-input-not-object",
    ),
    # claude-code #4378
    row(
        "messages.65.content.1.tool_use.text: Extra inputs are not permitted",
        C.MESSAGE_FORMAT,
        id="anthropic-extra-key",
        message_index=65,
    ),
    # lobehub #1601
    row(
        'messages: first message must use the "user" role',
        C.MESSAGE_FORMAT,
        id="bedrock-first-user",
    ),
    # provider-rules.md (Anthropic, historical)
    row(
        'messages: roles must alternate between "user" and "assistant", but found multiple '
        '"user" roles in a row',
        C.MESSAGE_FORMAT,
        id="anthropic-alternation",
    ),
    # langchain #27799
    row(
        "Please ensure that function response turn comes immediately after a function call turn.",
        C.TOOL_PAIRING,
        id="gemini-response-turn",
    ),
    # gemini-cli #4504
    row(
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
        C.TOOL_PAIRING,
        id="gemini-parallel-count",
    ),
    # gemini-cli #26486
    row(
        "Please ensure that function call turn comes immediately after a user turn or after a "
        "function response turn.",
        C.TOOL_PAIRING,
        id="gemini-call-turn",
    ),
    # gemini-cli #13972
    row(
        'Invalid JSON payload received. Unknown name "id" at '
        "'contents[3].parts[1].function_call': Cannot find field.",
        C.MESSAGE_FORMAT,
        id="gemini-unknown-field",
    ),
    # zed #53034
    row(
        "Tool call id was call_… but must be a-z, A-Z, 0-9, with a length of 9.",
        C.MESSAGE_FORMAT,
        id="mistral-id-format",
    ),
    # instructor #724
    row(
        "Not the same number of function calls and responses",
        C.TOOL_PAIRING,
        id="mistral-count",
    ),
    # provider-rules.md (Mistral role order)
    row("Unexpected role RoleEnum.tool", C.MESSAGE_FORMAT, id="mistral-unexpected-role"),
    row(
        "Expected last role to be one of: [tool, user] but got assistant",
        C.MESSAGE_FORMAT,
        id="mistral-last-role",
    ),
    # vllm #43995
    row(
        "Expecting ',' delimiter: line 1 column 54 (char 53)",
        C.TOOL_ARGUMENTS,
        id="vllm-json-loads",
    ),
    # deer-flow #4445
    row("Input should be a valid string", C.TOOL_ARGUMENTS, id="vllm-arguments-not-string"),
    # sglang PR #28035
    row("'str object' has no attribute 'items'", C.TOOL_ARGUMENTS, id="sglang-items"),
    # OpenHands SDK #2887
    row(
        "Failed to parse tool call arguments as JSON",
        C.TOOL_ARGUMENTS,
        id="llamacpp-arguments",
    ),
    # provider-rules.md (MiniMax 2013 family)
    row(
        "invalid params, tool result's tool id(call_function_…_1) not found (2013)",
        C.TOOL_PAIRING,
        id="minimax-orphan-result",
        provider_code="2013",
    ),
    row(
        "invalid params, tool call result does not follow tool call (2013)",
        C.TOOL_PAIRING,
        id="minimax-order",
    ),
    row("invalid params, tool call id is invalid (2013)", C.TOOL_PAIRING, id="minimax-bad-id"),
    row("tool call and result not match (2013)", C.TOOL_PAIRING, id="minimax-not-match"),
    row(
        "invalid params, invalid function arguments json string, tool_call_id: "
        "call_function_… (2013)",
        C.TOOL_ARGUMENTS,
        id="minimax-arguments",
        provider_code="2013",
    ),
    row(
        "invalid params, chat content has invalid message role: system (2013)",
        C.MESSAGE_FORMAT,
        id="minimax-role",
    ),
    # provider-rules.md (Moonshot / Kimi)
    row(
        "… The following tool_call_ids did not have response messages: Shell:58",
        C.TOOL_PAIRING,
        id="kimi-unanswered",
    ),
    row("tool_call_id  is not found", C.TOOL_PAIRING, id="kimi-unknown-id"),
    row(
        "thinking is enabled but reasoning_content is missing in assistant tool call message "
        "at index 2",
        C.MESSAGE_FORMAT,
        id="kimi-thinking-replay",
        message_index=2,
    ),
    # provider-rules.md (DeepSeek, MiMo, Perplexity, strict gateway)
    row(
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        C.TOOL_PAIRING,
        id="deepseek-order",
    ),
    row("'tool_call_id' is not set", C.TOOL_PAIRING, id="mimo-missing-id"),
    row(
        "After the (optional) system message(s), user and assistant roles should be alternating.",
        C.MESSAGE_FORMAT,
        id="perplexity-alternation",
    ),
    row(
        "messages.70.tool_calls.0.function.arguments: arguments must be a valid JSON object string",
        C.TOOL_ARGUMENTS,
        id="gateway-arguments-object",
        message_index=70,
    ),
    # provider-rules.md (reasoning replay state; the 2026 replay-identity refusals)
    # anthropic thinking blocks
    row(
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        C.REPLAY_IDENTITY,
        id="anthropic-thinking-signature",
        message_index=1,
    ),
    row(
        "Invalid 'data' in 'redacted_thinking' block",
        C.REPLAY_IDENTITY,
        id="anthropic-redacted-thinking-data",
    ),
    # opencode #48637
    row(
        "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a "
        "different conversation. Remove the block, or set `thinking.block_binding."
        'prefix_mismatch_behavior` to "drop_block".',
        C.REPLAY_IDENTITY,
        id="anthropic-bound-to-a-different-conversation",
        message_index=1,
    ),
    # opencode #7724
    row(
        "Item with id 'rs_…' not found. Items are not persisted when `store` is set to false.",
        C.REPLAY_IDENTITY,
        id="responses-reasoning-not-stored",
    ),
    # anomalyco/opencode #48942 (was read as auth: "authenticated")
    row(
        "Conflicting authenticated continuation identities",
        C.REPLAY_IDENTITY,
        id="responses-continuation-identities",
    ),
]

# --- context overflow and output limits -------------------------------------------------

OVERFLOW = [
    # webtimemachine/wtm2#579
    row(
        "Error: 400 This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 204308 tokens. Please reduce the length of the messages.",
        C.CONTEXT_OVERFLOW,
        id="openai-messages-resulted",
        status_code=400,
        requested_tokens=204308,
        allowed_tokens=128000,
    ),
    # bytedance/deer-flow#310
    row(
        "BadRequestError('Error code: 400 - {\\'error\\': {\\'message\\': \"This model\\'s "
        "maximum context length is 128000 tokens. However, your messages resulted in 202868 "
        "tokens (202767 in the messages, 101 in the functions). Please reduce the length of "
        "the messages or functions.\", \\'type\\': \\'invalid_request_error\\', \\'param\\': "
        "\\'messages\\', \\'code\\': \\'context_length_exceeded\\'}}')",
        C.CONTEXT_OVERFLOW,
        id="openai-repr-with-functions",
        provider_code="context_length_exceeded",
        requested_tokens=202868,
        allowed_tokens=128000,
    ),
    # rahul2002m/ChatPDF#6
    row(
        "BadRequestError: Error code: 400 - {'error': {'message': \"This model's maximum "
        "context length is 4097 tokens. However, your messages resulted in 6988 tokens. Please "
        "reduce the length of the messages.\", 'type': 'invalid_request_error', 'param': "
        "'messages', 'code': 'context_length_exceeded'}}.",
        C.CONTEXT_OVERFLOW,
        id="openai-sdk-repr",
        status_code=400,
        provider_code="context_length_exceeded",
        requested_tokens=6988,
        allowed_tokens=4097,
        message="This model's maximum context length is 4097 tokens. However, your messages "
        "resulted in 6988 tokens. Please reduce the length of the messages.",
    ),
    # FoundationAgents/OpenManus#62 (DeepSeek): the messages alone overflow
    row(
        "API error: Error code: 400 - {'error': {'message': \"This model's maximum context "
        "length is 65536 tokens. However, you requested 72814 tokens (68718 in the messages, "
        '4096 in the completion). Please reduce the length of the messages or completion.", '
        "'type': 'invalid_request_error', 'param': None, 'code': 'invalid_request_error'}}",
        C.CONTEXT_OVERFLOW,
        id="deepseek-messages-overflow",
        requested_tokens=72814,
        allowed_tokens=65536,
        output_tokens=4096,
    ),
    # BerriAI/litellm#10431 (DeepSeek)
    row(
        "litellm.BadRequestError: ContextWindowExceededError: DeepseekException - "
        '{"error":{"message":"This model\'s maximum context length is 65536 tokens. However, '
        "you requested 68161 tokens (68161 in the messages, 0 in the completion). Please "
        'reduce the length of the messages or completion.","type":"invalid_request_error",'
        '"param":null,"code":"invalid_request_error"}}',
        C.CONTEXT_OVERFLOW,
        id="deepseek-zero-completion",
        requested_tokens=68161,
    ),
    # vllm-project/vllm#20409
    row(
        "ValueError: This model's maximum context length is 16384 tokens. However, you "
        "requested 122946 tokens (112946 in the messages, 10000 in the completion). Please "
        "reduce the length of the messages or completion.",
        C.CONTEXT_OVERFLOW,
        id="vllm-messages-overflow",
        allowed_tokens=16384,
        output_tokens=10000,
    ),
    # fierceX/Document_QA#3 (legacy completions wording)
    row(
        "openai.error.InvalidRequestError: This model's maximum context length is 8191 tokens, "
        "however you requested 8238 tokens (8238 in your prompt; 0 for the completion). Please "
        "reduce your prompt; or completion length.",
        C.CONTEXT_OVERFLOW,
        id="legacy-prompt-overflow",
    ),
    # stanford-crfm/helm#94: the prompt alone fills the window
    row(
        "OpenAI error: This model's maximum context length is 2049 tokens, however you "
        "requested 2054 tokens (2049 in your prompt, 5 for the completion). Please reduce "
        "your prompt or completion length.",
        C.CONTEXT_OVERFLOW,
        id="legacy-prompt-fills-window",
    ),
    # stackblitz/bolt.new#1748
    row(
        "prompt is too long: 202128 tokens > 200000 maximum",
        C.CONTEXT_OVERFLOW,
        id="anthropic-prompt-too-long",
        requested_tokens=202128,
        allowed_tokens=200000,
    ),
    # earendil-works/pi#102
    row(
        'Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt '
        'is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk8'
        '7zw2"}',
        C.CONTEXT_OVERFLOW,
        id="anthropic-json",
        status_code=400,
        provider_code="invalid_request_error",
        message="prompt is too long: 219898 tokens > 200000 maximum",
        requested_tokens=219898,
    ),
    # daisuke-awaji/moca#254 (Bedrock)
    row(
        "The model returned the following errors: prompt is too long: 200049 tokens > 200000 "
        "maximum",
        C.CONTEXT_OVERFLOW,
        id="bedrock-prompt-too-long",
    ),
    # aws-samples/bedrock-chat#95
    row(
        "EventStreamError: An error occurred (validationException) when calling the "
        "InvokeModelWithResponseStream operation: Input is too long for requested model.",
        C.CONTEXT_OVERFLOW,
        id="bedrock-input-too-long",
    ),
    # google-gemini/gemini-cli#6678
    row(
        '[API Error: [{\n    "error": {\n      "code": 400,\n      "message": "The input token '
        'count (1200293) exceeds the maximum number of tokens allowed (1048576).",\n      '
        '"errors": [\n        {\n          "message": "The input token count (1200293) '
        'exceeds the maximum number of tokens allowed (1048576).",\n          "domain": '
        '"global",\n          "reason": "badRequest"\n        }\n      ],\n      "status": '
        '"INVALID_ARGUMENT"\n    }\n  }\n  ]]',
        C.CONTEXT_OVERFLOW,
        id="gemini-list-body",
        status_code=400,
        provider_code="INVALID_ARGUMENT",
        requested_tokens=1200293,
        allowed_tokens=1048576,
    ),
    # google-gemini/gemini-cli#4231: Gemini's error relayed inside another error's message
    row(
        '[API Error: {"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 400,\\n    '
        '\\"message\\": \\"The input token count (3475108) exceeds the maximum number of '
        'tokens allowed (1048576).\\",\\n    \\"status\\": \\"INVALID_ARGUMENT\\"\\n  }\\n}\\n",'
        '"code":400,"status":"Bad Request"}}]',
        C.CONTEXT_OVERFLOW,
        id="gemini-nested-in-message",
        provider_code="INVALID_ARGUMENT",
        message="The input token count (3475108) exceeds the maximum number of tokens allowed "
        "(1048576).",
        requested_tokens=3475108,
    ),
    # google-gemini/gemini-cli#4118
    row(
        '[API Error: got status: INVALID_ARGUMENT. {"error":{"code":400,"message":"The input '
        'token count (132478) exceeds the maximum number of tokens allowed (131072).","status":'
        '"INVALID_ARGUMENT"}}]',
        C.CONTEXT_OVERFLOW,
        id="gemini-status-prefix",
        allowed_tokens=131072,
    ),
    # ggml-org/llama.cpp PR #15780: llama.cpp says 500 but means overflow
    row(
        '{"error": {"code": 500, "message": "the request exceeds the available context size. '
        'try increasing the context size or enable context shift", "type": '
        '"exceed_context_size_error", "n_prompt_tokens": 1407, "n_ctx": 256}}',
        C.CONTEXT_OVERFLOW,
        id="llamacpp-exceed-context-500",
        provider_code="exceed_context_size_error",
        requested_tokens=1407,
        allowed_tokens=256,
    ),
    # oobabooga/textgen#7257
    row(
        '{"error":{"code":400,"message":"the request exceeds the available context size. try '
        'increasing the context size or enable context shift","type":'
        '"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}',
        C.CONTEXT_OVERFLOW,
        id="llamacpp-exceed-context-400",
        status_code=400,
        requested_tokens=14429,
        allowed_tokens=8192,
    ),
    # continuedev/continue#9797
    row(
        "400 the request exceeds the available context size, try increasing it",
        C.CONTEXT_OVERFLOW,
        id="llamacpp-short",
        status_code=400,
    ),
    # fedora-copr/logdetective-website#193 (llama-cpp-python)
    row(
        "Exception: Requested tokens (2285) exceed context window of 2048",
        C.CONTEXT_OVERFLOW,
        id="llama-cpp-python",
        requested_tokens=2285,
        allowed_tokens=2048,
    ),
    # QwenLM/Qwen-Agent#615
    row(
        "Range of input length should be [1, 30720]",
        C.CONTEXT_OVERFLOW,
        id="dashscope-range",
        allowed_tokens=30720,
    ),
    # QwenLM/qwen-code#98
    row(
        "OpenAI API error: 400 <400> InternalError.Algo.InvalidParameter: Range of input "
        "length should be [1, 204800]",
        C.CONTEXT_OVERFLOW,
        id="dashscope-internal-error-prefix",
        allowed_tokens=204800,
    ),
    # LLM-Red-Team/qwen-free-api#23
    row(
        '{"code":"InvalidParameter","message":"Range of input length should be [1, 6000]",'
        '"request_id":"xxxxxx-xxx-xxx-xxx-xxx"}',
        C.CONTEXT_OVERFLOW,
        id="dashscope-json",
        provider_code="InvalidParameter",
    ),
    # MoonshotAI/kimi-cli#2011
    row(
        "LLM provider error: Error code: 400 - {'error': {'message': 'Invalid request: Your "
        "request exceeded model token limit: 262144 (requested: 269030)', 'type': "
        "'invalid_request_error'}}",
        C.CONTEXT_OVERFLOW,
        id="moonshot-token-limit",
        requested_tokens=269030,
        allowed_tokens=262144,
    ),
    # thepersonalaicompany/amurex-backend#51 (Groq)
    row(
        "groq.BadRequestError: Error code: 400 - {'error': {'message': 'Please reduce the "
        "length of the messages or completion.', 'type': 'invalid_request_error', 'param': "
        "'messages', 'code': 'context_length_exceeded'}}",
        C.CONTEXT_OVERFLOW,
        id="groq-reduce-length",
        provider_code="context_length_exceeded",
    ),
    # cline/cline#5140 (Cerebras)
    row(
        "400 Please reduce the length of the messages or completion. Current length is 42328 "
        "while limit is 40000",
        C.CONTEXT_OVERFLOW,
        id="cerebras-current-length",
        requested_tokens=42328,
        allowed_tokens=40000,
    ),
    # tailcallhq/forgecode#1143 (OpenRouter)
    row(
        '400 Bad Request Reason: {"message":"This endpoint\'s maximum context length is 200000 '
        "tokens. However, you requested about 264437 tokens (262437 of text input, 2000 in the "
        'output). Please reduce the length of either one, or use the \\"middle-out\\" transform '
        'to compress your prompt automatically.","metadata":{"provider_name":null}}',
        C.CONTEXT_OVERFLOW,
        id="openrouter-endpoint-context",
        requested_tokens=264437,
        allowed_tokens=200000,
        output_tokens=2000,
    ),
    # crmne/ruby_llm#642
    row(
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 10061 tokens (7911 in the messages, 2150 in the functions). Please reduce the "
        "length of the messages or functions.",
        C.CONTEXT_OVERFLOW,
        id="openai-functions",
    ),
    # Niek/chatgpt-web#525
    row(
        "Error: 400 - This model's maximum context length has been exceeded. Please reduce the "
        "length of the messages.",
        C.CONTEXT_OVERFLOW,
        id="openai-no-numbers",
    ),
    # mangowhoiscloud/geode#668 (Zhipu GLM code 1261)
    row(
        "Error code: 400 {'code': '1261', 'message': 'Prompt exceeds max length'}",
        C.CONTEXT_OVERFLOW,
        id="glm-1261",
        provider_code="1261",
    ),
    # foreveryh/claude-code-switch#12 (GLM code 1210)
    row(
        'API Error: 400 {"type":"error","error":{"message":"API 调用参数有误，请检查文档。Request '
        '182387 input tokens exceeds the model\'s maximum context length 202750","code":'
        '"1210"}}',
        C.CONTEXT_OVERFLOW,
        id="glm-1210-chinese",
        provider_code="1210",
        allowed_tokens=202750,
    ),
    # langgenius/dify#32221 (Volcengine Ark)
    row(
        "Error code: 400 - {'error': {'code': 'InvalidParameter', 'message': 'Input length "
        "203743 exceeds the maximum length 202752'}}",
        C.CONTEXT_OVERFLOW,
        id="volcengine-input-length",
        requested_tokens=203743,
        allowed_tokens=202752,
    ),
    # bytedance/deer-flow#583
    row(
        "Total tokens of image and text exceed max message tokens",
        C.CONTEXT_OVERFLOW,
        id="doubao-image-text",
    ),
    # sgl-project/sglang#8096
    row(
        "ValueError: The input (85050 tokens) is longer than the model's context length (32768 "
        "tokens).",
        C.CONTEXT_OVERFLOW,
        id="sglang-longer-than-context",
        requested_tokens=85050,
        allowed_tokens=32768,
    ),
    # fengshao1227/ccg-workflow#69
    row(
        'API Error: 400 {"type":"error","error":{"type":"prompt_limit","message":"输入内容过长，'
        "请减少 Prompt 中的 token 数量后重试 "
        '(cch_session_id: 1b2f73a9-f879-4ec4-b392-63b2fedf91f6)"}}',
        C.CONTEXT_OVERFLOW,
        id="chinese-input-too-long",
        provider_code="prompt_limit",
    ),
    # the brief's Chinese examples
    row("上下文长度超过限制", C.CONTEXT_OVERFLOW, id="chinese-context-over"),
    row("输入长度超过模型限制", C.CONTEXT_OVERFLOW, id="chinese-input-over"),
    # PaddlePaddle/ERNIE-SDK#336
    row("BadRequestError: prompt tokens too long", C.CONTEXT_OVERFLOW, id="ernie"),
    # danny-avila/LibreChat#3651
    row(
        "Prompt token count of 4662 exceeds max token count of 4095.",
        C.CONTEXT_OVERFLOW,
        id="librechat-count",
        requested_tokens=4662,
        allowed_tokens=4095,
    ),
    # vllm-project/vllm#4667: vLLM derived a negative max_tokens from a prompt too long
    row(
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'max_tokens "
        "must be at least 1, got -186.', 'type': 'BadRequestError', 'param': None, 'code': 400}",
        C.CONTEXT_OVERFLOW,
        id="vllm-negative-max-tokens",
    ),
    # huggingface/llm-vscode#94 (text-generation-inference): the inputs alone overflow
    row(
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3474 "
        "`inputs` tokens and 60 `max_new_tokens`",
        C.CONTEXT_OVERFLOW,
        id="tgi-inputs-overflow",
        allowed_tokens=2048,
        output_tokens=60,
    ),
    # meta-llama/llama#1103 (HF Inference API)
    row(
        "HfHubHTTPError: 422 Client Error: Unprocessable Entity for url: "
        "https://api-inference.huggingface.co/models/meta-llama/Llama-2-7b-chat-hf (Request ID: "
        "gPxf6Ns0plH9zveHLZP_A)\n\nInput validation error: `inputs` must have less than 4096 "
        "tokens. Given: 4545",
        C.CONTEXT_OVERFLOW,
        id="tgi-less-than",
        requested_tokens=4545,
        allowed_tokens=4096,
    ),
    # xorbitsai/inference#3785 (vLLM)
    row(
        "ValueError: [address=0.0.0.0:37591, pid=324770] The decoder prompt (length 17772) is "
        "longer than the maximum model length of 16384.",
        C.CONTEXT_OVERFLOW,
        id="vllm-decoder-prompt",
        requested_tokens=17772,
        allowed_tokens=16384,
    ),
    # langchain-ai/deepagents#468: vLLM behind Xinference answers 500
    row(
        "openai.InternalServerError: Error code: 500 - {'detail': '[address=0.0.0.0:43769, "
        "pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of "
        "65536. Make sure that `max_model_len` is no smaller than the number of text tokens.'}",
        C.CONTEXT_OVERFLOW,
        id="vllm-decoder-prompt-500",
        status_code=500,
        requested_tokens=66501,
        allowed_tokens=65536,
    ),
    # hiyouga/LlamaFactory#7723
    row(
        "ValueError: Prompt length of 5016 is longer than the maximum model length of 4096.",
        C.CONTEXT_OVERFLOW,
        id="vllm-prompt-length",
        requested_tokens=5016,
        allowed_tokens=4096,
    ),
]

OUTPUT_LIMIT = [
    # huggingface/chat-ui#1149 (text-generation-inference)
    row(
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 "
        "`inputs` tokens and 2047 `max_new_tokens`",
        C.OUTPUT_LIMIT,
        id="tgi-new-tokens-too-many",
        allowed_tokens=8192,
        output_tokens=2047,
        requested_tokens=8251,
    ),
    # huggingface/chat-ui#340
    row(
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 1512. Given: 1000 "
        "`inputs` tokens and 1024 `max_new_tokens`",
        C.OUTPUT_LIMIT,
        id="tgi-websearch",
    ),
    # huggingface/transformers#28523
    row(
        "ValueError: Error 422: {'error': 'Input validation error: `max_new_tokens` must be <= 192",
        C.OUTPUT_LIMIT,
        id="tgi-max-new-tokens-cap",
        allowed_tokens=192,
    ),
    # conghaonet/hao_chatgpt#4: the messages fit, the completion budget does not
    row(
        "This model's maximum context length is 4097 tokens. However, you requested 4268 "
        "tokens (4012 in the messages, 256 in the completion). Please reduce the length of the "
        "messages or completion.",
        C.OUTPUT_LIMIT,
        id="openai-completion-too-big",
        requested_tokens=4268,
        allowed_tokens=4097,
        output_tokens=256,
    ),
    # The-Vibe-Company/quivr#505
    row(
        "openai.error.InvalidRequestError: This model's maximum context length is 4097 tokens. "
        "However, you requested 4203 tokens (3703 in the messages, 500 in the completion). "
        "Please reduce the length of the messages or completion.",
        C.OUTPUT_LIMIT,
        id="openai-legacy-completion",
    ),
    # meta-llama/llama-models#240 (vLLM-style)
    row(
        "This model's maximum context length is 2048 tokens. However, you requested 2049 tokens "
        "(1681 in the messages, 368 in the completion).",
        C.OUTPUT_LIMIT,
        id="vllm-completion-too-big",
        output_tokens=368,
    ),
    # FoundationAgents/OpenManus#79 (DeepSeek)
    row(
        "Error code: 400 - {'error': {'message': \"This model's maximum context length is "
        "65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the "
        "completion). Please reduce the length of the messages or completion.\", 'type': "
        "'invalid_request_error', 'param': None, 'code': 'invalid_request_error'}}",
        C.OUTPUT_LIMIT,
        id="deepseek-completion-too-big",
    ),
    # evalstate/fast-agent#621 (DeepSeek)
    row(
        "This model's maximum context length is 131072 tokens. However, you requested 131134 "
        "tokens (122942 in the messages, 8192 in the completion).",
        C.OUTPUT_LIMIT,
        id="deepseek-131k",
    ),
    # zebbern/Devonz#9
    row(
        "AI_APICallError: This model's maximum context length is 131072 tokens. However, you "
        "requested 139162 tokens (130970 in the messages, 8192 in the completion). Please "
        "reduce the length of the messages or completion.",
        C.OUTPUT_LIMIT,
        id="devonz",
    ),
    # tatsu-lab/stanford_alpaca#47
    row(
        "OpenAIError: This model's maximum context length is 4097 tokens, however you requested "
        "4162 tokens (1090 in your prompt; 3072 for the completion). Please reduce your prompt; "
        "or completion length..",
        C.OUTPUT_LIMIT,
        id="legacy-completion-too-big",
        output_tokens=3072,
    ),
    # ChatGPTNextWeb/NextChat#3195
    row(
        "This model's maximum context length is 8192 tokens. However, you requested 8256 tokens "
        "(64 in the messages, 8192 in the completion). Please reduce the length of the messages "
        "or completion.",
        C.OUTPUT_LIMIT,
        id="gpt4-8k-completion",
    ),
    # AIDotNet/OpenCowork#82 (vLLM's newer wording)
    row(
        "This model's maximum context length is 262144 tokens. However, you requested 128000 "
        "output tokens and your prompt contains at least 134145 input tokens, for a total of at "
        "least 262145 tokens. Please reduce the length of the input prompt or the number of "
        "requested output tokens. (parameter=input_tokens, value=134145)",
        C.OUTPUT_LIMIT,
        id="vllm-new-wording",
        requested_tokens=262145,
        allowed_tokens=262144,
        output_tokens=128000,
    ),
    # ChatGPTNextWeb/NextChat#3195
    row(
        "max_tokens is too large: 8192. This model supports at most 4096 completion tokens, "
        "whereas you provided 8192.",
        C.OUTPUT_LIMIT,
        id="openai-max-tokens-cap",
        allowed_tokens=4096,
        output_tokens=8192,
    ),
    # enoch3712/ExtractThinker#346
    row(
        "litellm.BadRequestError: OpenAIException - max_tokens is too large: 32000. This model "
        "supports at most 16384 completion tokens, whereas you provided 32000.",
        C.OUTPUT_LIMIT,
        id="litellm-max-tokens-cap",
        allowed_tokens=16384,
    ),
    # claude-code-best/claude-code#272 (vLLM)
    row(
        "Error: 400 'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's "
        "maximum context length is 64001 tokens and your request has 24235 input tokens (64000 "
        "> 64001 - 24235). None",
        C.OUTPUT_LIMIT,
        id="vllm-max-tokens-vs-window",
        allowed_tokens=64001,
        output_tokens=64000,
    ),
    # continuedev/continue#6080 (Anthropic)
    row(
        'Error in Continue server: {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, '
        'decrease input length or `max_tokens` and try again"}}',
        C.OUTPUT_LIMIT,
        id="anthropic-input-plus-max-tokens",
        requested_tokens=207951,
        allowed_tokens=200000,
        output_tokens=8192,
    ),
    # stackblitz/bolt.new#7414
    row(
        "input length and max_tokens exceed context limit: 90402 + 116650 > 204648, decrease "
        "input length or max_tokens and try again",
        C.OUTPUT_LIMIT,
        id="anthropic-unquoted",
    ),
    # kortix-ai/suna#172
    row(
        'litellm.BadRequestError: AnthropicException - b\'{"type":"error","error":{"type"'
        ':"invalid_request_error","message":"input length and `max_tokens` exceed context '
        "limit: 174167 + 64000 > 200000, decrease input length or `max_tokens` and try "
        "again\"}}'",
        C.OUTPUT_LIMIT,
        id="anthropic-bytes-repr",
    ),
    # TokenRhythm/opensquilla#782 (GLM)
    row(
        "Error code: 400 - {'code': 70000, 'msg': 'Exceeding the limiting length: [max_tokens "
        "should be less or equal to 131072]'}",
        C.OUTPUT_LIMIT,
        id="glm-max-tokens",
        allowed_tokens=131072,
        provider_code="70000",
    ),
    # langgenius/dify#13451 (Doubao)
    row(
        "Model Parameter max_tokens should be less than or equal to 12288.0.",
        C.OUTPUT_LIMIT,
        id="doubao-max-tokens",
        allowed_tokens=12288,
    ),
    # egoist/chatwise-releases#917: Bedrock's refusal relayed in OpenRouter's metadata.raw
    row(
        '{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":'
        '"{\\"message\\":\\"input length and `max_tokens` exceed context limit: 149674 + 64000 '
        '> 204658, decrease input length or `max_tokens` and try again\\"}","provider_name":'
        '"Amazon Bedrock"}},"user_id":"user_2uqLSwEPUxV3eobBtagk2bR7nQw"}',
        C.OUTPUT_LIMIT,
        id="openrouter-raw-bedrock",
        status_code=400,
        allowed_tokens=204658,
        message="input length and `max_tokens` exceed context limit: 149674 + 64000 > 204658, "
        "decrease input length or `max_tokens` and try again",
    ),
]

# --- tool pairing, tool arguments, message format beyond provider-rules.md -------------

REPAIRABLE = [
    # pydantic/pydantic-ai#2327 (Bedrock Converse)
    row(
        "The number of toolResult blocks exceeds the number of toolUse blocks of previous turn",
        C.TOOL_PAIRING,
        id="bedrock-tool-result-count",
    ),
    # Just-Curieous/Curie#16
    row(
        'litellm.BadRequestError: BedrockException - {"message":"The number of toolResult blocks '
        'at messages.2.content exceeds the number of toolUse blocks of previous turn."}',
        C.TOOL_PAIRING,
        id="bedrock-tool-result-count-index",
        message_index=2,
    ),
    # strands-agents/harness-sdk#1223
    row(
        "An error occurred (ValidationException) when calling the Converse operation: "
        "messages.4.content: Conversation blocks and tool result blocks cannot be provided in "
        "the same turn.",
        C.TOOL_PAIRING,
        id="bedrock-mixed-turn",
        message_index=4,
    ),
    # quarkiverse/quarkus-langchain4j#1983
    row(
        "dev.langchain4j.exception.InvalidRequestException: messages.7.content: Conversation "
        "blocks and tool use blocks cannot be provided in the same turn. (Service: "
        "BedrockRuntime, Status Code: 400, Request ID: 45c9c3bb-aa19-49ed-8ef6-b3f01f9b3a53)",
        C.TOOL_PAIRING,
        id="bedrock-mixed-turn-tool-use",
        message_index=7,
    ),
    # Kilo-Org/kilocode#5163 (Claude on Vertex)
    row(
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.33: '
        "`tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b. Each `tool_use` block must have a corresponding "
        '`tool_result` block in the next message."},"request_id":"req_vrtx_011CXDA6q3bAL2vMav'
        'cCemUc"}',
        C.TOOL_PAIRING,
        id="vertex-claude-unanswered",
        message_index=33,
        status_code=400,
    ),
    # lbjlaq/Antigravity-Manager#654: Anthropic's error inside a Gemini-shaped error
    row(
        '{\n  "error": {\n    "code": 400,\n    "message": "{\\"type\\":\\"error\\",\\"error\\"'
        ':{\\"type\\":\\"invalid_request_error\\",\\"message\\":\\"messages.243: `tool_use` ids '
        "were found without `tool_result` blocks immediately after: bash-uOQIdN0O. Each "
        "`tool_use` block must have a corresponding `tool_result` block in the next "
        'message.\\"},\\"request_id\\":\\"req_vrtx_011CX8LKNqFusFUVvygN5vEH\\"}",\n    '
        '"status": "INVALID_ARGUMENT"\n  }\n}',
        C.TOOL_PAIRING,
        id="gemini-wrapping-anthropic",
        message_index=243,
        provider_code="invalid_request_error",
    ),
    # miurla/morphic#136: the index is in OpenAI's param
    row(
        '{"error":{"message":"Invalid parameter: messages with role \'tool\' must be a response '
        "to a preceeding message with 'tool_calls'. (request id: 2024051116100984850589317176109"
        ')","type":"invalid_request_error","param":"messages.[3].role","code":null}}',
        C.TOOL_PAIRING,
        id="openai-param-index",
        message_index=3,
    ),
    # sdcb/chats#132
    row(
        '{"error": {"message": "An assistant message with \'tool_calls\' must be followed by '
        "tool messages responding to each 'tool_call_id'. The following tool_call_ids did not "
        'have response messages: call_ctiGXrgM0r61c6nkf2v7zbKb", "type": '
        '"invalid_request_error", "param": "messages.[57].role", "code": null}}',
        C.TOOL_PAIRING,
        id="openai-unanswered-json",
        message_index=57,
    ),
    # philschmid/mcp-openai-gemini-llama-example#5 (DashScope)
    row(
        "Error code: 400 - {'error': {'code': 'invalid_parameter_error', 'param': None, "
        "'message': '<400> InternalError.Algo.InvalidParameter: messages with role \"tool\" "
        "must be a response to a preceeding message with \"tool_calls\".', 'type': "
        "'invalid_request_error'}, 'id': 'chatcmpl-c9430ea7-5557-9aa3-b97c-549fb5807715', "
        "'request_id': 'c9430ea7-5557-9aa3-b97c-549fb5807715'}",
        C.TOOL_PAIRING,
        id="dashscope-tool-order",
        provider_code="invalid_parameter_error",
    ),
    # itmisx/deepx-code#94 (DeepSeek)
    row(
        '[Error: HTTP 400: {"error":{"message":"Messages with role \'tool\' must be a '
        'response to a preceding message with \'tool_calls\'","type":"invalid_request_error",'
        '"param":null,"code":"invalid_request_error"}}]',
        C.TOOL_PAIRING,
        id="deepseek-http-prefix",
        status_code=400,
    ),
    # agentscope-ai/AgentTeams#299 (Responses API)
    row(
        "400 No tool call found for function call output with call_id fcUdHXdv33lqE3HoR9P6yJNJ7.",
        C.TOOL_PAIRING,
        id="responses-orphan-real-id",
    ),
    # camel-ai/camel#1467 (Mistral)
    row(
        "mistralai.models.sdkerror.SDKError: API error occurred: Status 400\n"
        '{"object":"error","message":"Not the same number of function calls and responses",'
        '"type":"invalid_request_error","param":null,"code":null}',
        C.TOOL_PAIRING,
        id="mistral-sdk-error",
        status_code=400,
    ),
    # MiniMax-AI/MiniMax-M2#76
    row(
        "HTTP 400 invalid_request_error: invalid params, tool result's tool "
        "id(call_function_g094w5htkglv_1) not found (2013) "
        "(request_id:05db5ded497bacba57c1e30ef4778e05)",
        C.TOOL_PAIRING,
        id="minimax-real-id",
        status_code=400,
    ),
    # MiniMax-AI/MiniMax-M2#76 (relayed by OpenRouter)
    row(
        '{"error":{"message":"Minimax midstream error: invalid params, tool result\'s tool '
        'id(call_xxxxxxx) not found","code":400,"metadata":{"provider_name":"Minimax"}},'
        '"user_id":"user_xxxxxx"}',
        C.TOOL_PAIRING,
        id="minimax-via-openrouter",
    ),
    # vllm-project/vllm#43995
    row(
        '{"error":{"message":"Expecting \',\' delimiter: line 1 column 54 (char 53)","type":'
        '"BadRequestError","param":null,"code":400}}',
        C.TOOL_ARGUMENTS,
        id="vllm-json-body",
        status_code=400,
    ),
    # NousResearch/hermes-agent#12643 (vLLM)
    row(
        "Non-retryable client error: Error code: 400 - {'error': {'message': 'Unterminated "
        "string starting at: line 1 column 113 (char 112)', 'type': 'BadRequestError', "
        "'param': None, 'code': 400}}",
        C.TOOL_ARGUMENTS,
        id="vllm-unterminated",
        status_code=400,
    ),
    # anthropics/anthropic-sdk-typescript#648
    row(
        'BadRequestError: 400 {"type":"error","error":{"type":"invalid_request_error","message"'
        ':"messages.3.content.1.tool_use.input: Input should be a valid dictionary"}}',
        C.TOOL_ARGUMENTS,
        id="anthropic-input-dict-index",
        message_index=3,
    ),
    # can1357/oh-my-pi#181 (MiniMax, empty id)
    row(
        "Error: 400 invalid params, invalid function arguments json string, tool_call_id:  (2013)",
        C.TOOL_ARGUMENTS,
        id="minimax-arguments-empty-id",
    ),
    # obot-platform/nanobot#237
    row(
        'litellm.APIConnectionError: MinimaxException - {"type":"error","error":{"type":'
        '"bad_request_error","message":"invalid params, invalid function arguments json '
        'string, tool_call_id: Dyx3YtQx5 (2013)","http_code":"400"}}',
        C.TOOL_ARGUMENTS,
        id="minimax-litellm",
        status_code=400,
        provider_code="bad_request_error",
    ),
    # farion1231/cc-switch#4735 (Bailian)
    row(
        'HTTP 400 invalid_parameter_error "The \\"function.arguments\\" parameter of the code '
        'model must be in JSON format."',
        C.TOOL_ARGUMENTS,
        id="bailian-arguments-json",
    ),
    # vxcontrol/pentagi#313: llama.cpp says 500 for arguments it cannot parse
    row(
        "API returned unexpected status code: 500: litellm.InternalServerError: "
        "InternalServerError: Custom_openaiException - Failed to parse tool call arguments as "
        "JSON: [json.exception.parse_error.101] parse error at line 1, column 131: syntax error "
        "while parsing value - unexpected end of input; expected '[', '{', or a literal.",
        C.TOOL_ARGUMENTS,
        id="llamacpp-500-arguments",
        status_code=500,
    ),
    # vllm-project/vllm#43851
    row(
        "400 BadRequestError: 'None' has no attribute 'items'",
        C.TOOL_ARGUMENTS,
        id="vllm-none-items",
    ),
    # mudler/LocalAI#10256
    row(
        "TypeError: Can only get item pairs from a mapping.",
        C.TOOL_ARGUMENTS,
        id="jinja-item-pairs",
    ),
    # modelcontextprotocol/quickstart-resources#20 (Bedrock)
    row(
        "Error: Error code: 400 - {'message': 'messages: roles must alternate between \"user\" "
        'and "assistant", but found multiple "user" roles in a row\'}',
        C.MESSAGE_FORMAT,
        id="bedrock-alternation-repr",
    ),
    # FlowiseAI/Flowise#2006
    row(
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"messages: roles '
        'must alternate between \\"user\\" and \\"assistant\\", but found multiple '
        '\\"assistant\\" roles in a row"}}',
        C.MESSAGE_FORMAT,
        id="anthropic-two-assistants",
    ),
    # vllm-project/vllm#6862 (Mistral template)
    row(
        "BadRequestError: Error code: 400 - {'object': 'error', 'message': 'After the optional "
        "system message, conversation roles must alternate user/assistant/user/assistant/...', "
        "'type': 'BadRequestError', 'param': None, 'code': 400}",
        C.MESSAGE_FORMAT,
        id="vllm-mistral-template",
    ),
    # FoundationAgents/OpenManus#580 (Perplexity)
    row(
        "API error: Error code: 400 - {'error': {'message': 'After the (optional) system "
        "message(s), user and assistant roles should be alternating.', 'type': "
        "'invalid_message', 'code': 400}}",
        C.MESSAGE_FORMAT,
        id="perplexity-repr",
        provider_code="invalid_message",
    ),
    # mistralai/mistral-inference#135
    row(
        'MistralAPIError: HTTP error! status: 400 Response: \n{"object":"error","message":'
        '"Unexpected role RoleEnum.tool","type":"invalid_request_error","param":null,'
        '"code":null}',
        C.MESSAGE_FORMAT,
        id="mistral-roleenum-json",
        status_code=400,
    ),
    # datapizza-labs/datapizza-ai#98
    row(
        'API error occurred: Status 400. Body: {"object":"error","message":"Unexpected role '
        '\'user\' after role \'tool\'","type":"invalid_request_message_order","param":null,'
        '"code":"3230"}',
        C.MESSAGE_FORMAT,
        id="mistral-user-after-tool",
        provider_code="3230",
    ),
    # BigPizzaV3/CodexPlusPlus#267 (MiniMax)
    row(
        '{"type":"error","error":{"type":"bad_request_error","message":"invalid params, chat '
        'content has invalid message role: system (2013)","http_code":"400"},"request_id":'
        '"0660b098aa1e9dd5a6773a48c479fc89"}',
        C.MESSAGE_FORMAT,
        id="minimax-system-role-json",
    ),
    # Alishahryar1/free-claude-code#1548 (Gemini)
    row(
        '[{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name '
        '\\"metadata\\": Cannot find field.","status":"INVALID_ARGUMENT","details":[{"@type":'
        '"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":'
        '"Invalid JSON payload received. Unknown name \\"metadata\\": Cannot find field."}]}]}}]',
        C.MESSAGE_FORMAT,
        id="gemini-unknown-metadata",
    ),
    # reVrost/go-openrouter#21: OpenAI's refusal in OpenRouter's metadata.raw
    row(
        '{"error": {"message": "Provider returned error", "code": 400, "metadata": {"raw": '
        '"{\\n  \\"error\\": {\\n    \\"message\\": \\"Response input messages must contain the '
        "word 'json' in some form to use 'text.format' of type 'json_object'.\\\",\\n    "
        '\\"type\\": \\"invalid_request_error\\",\\n    \\"param\\": \\"input\\",\\n    \\"code'
        '\\": null\\n  }\\n}", "provider_name": "OpenAI"}}, "user_id": "org_2x...f5"}',
        C.MESSAGE_FORMAT,
        id="openrouter-raw-openai",
        message="Response input messages must contain the word 'json' in some form to use "
        "'text.format' of type 'json_object'.",
    ),
    # diegosouzapw/OmniRoute#3044
    row(
        '{"error": {"message": "Provider returned error", "code": 400, "metadata": {"raw": '
        '"{\\"error\\":{\\"type\\":\\"invalid_request_error\\",\\"code\\":'
        '\\"invalid_request_error\\",\\"message\\":\\"Model \'moonshotai/kimi-k2.6\' supports '
        'at most 1 image per prompt.\\",\\"request_id\\":\\"req_*******\\"}}", "provider_name": '
        '"Crucible", "is_byok": false}}, "user_id": "user_***************"}',
        C.MESSAGE_FORMAT,
        id="openrouter-raw-generic-400",
        message="Model 'moonshotai/kimi-k2.6' supports at most 1 image per prompt.",
    ),
]

# --- backoff, fail and payload categories ---------------------------------------------

OTHERS = [
    # FoundationAgents/MetaGPT#523
    row(
        "openai.error.RateLimitError: Rate limit reached for gpt-4 in organization "
        "org-uVqpjtJiKqvVJMVfvpaounIh on tokens per min (TPM): Limit 10000, Used 8554, "
        "Requested 3082. Please try again in 9.816s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.",
        C.RATE_LIMIT,
        id="openai-tpm",
        retry_after=9.816,
    ),
    # BuilderIO/micro-agent#86
    row(
        "429 Rate limit reached for gpt-4o in organization org-uOtiSEwvUnroadaOnJJquBEC on "
        "tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in "
        "644ms.",
        C.RATE_LIMIT,
        id="openai-tpm-ms",
        retry_after=0.644,
        status_code=429,
    ),
    # TheR1D/shell_gpt#653: one request alone exceeds the per-minute budget
    row(
        "RateLimitError: Error code: 429 - {'error': {'message': 'Request too large for gpt-4o "
        "in organization org-78asdf87asdf9aaa8976 on tokens per min (TPM): Limit 30000, "
        "Requested 31538. The input or output tokens must be reduced in order to run "
        "successfully. Visit https://platform.openai.com/account/rate-limits to learn more.', "
        "'type': 'tokens', 'param': None, 'code': 'rate_limit_exceeded'}}",
        C.RATE_LIMIT,
        id="openai-request-too-large-tpm",
        action=Action.COMPRESS,
        requested_tokens=31538,
        allowed_tokens=30000,
        provider_code="rate_limit_exceeded",
    ),
    # FoundationAgents/OpenManus#746 (Anthropic through an OpenAI-compatible endpoint)
    row(
        "OpenAI API error: Error code: 429 - {'error': {'code': 'rate_limit_error', 'message': "
        "'This request would exceed the rate limit for your organization of 20,000 input "
        "tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits"
        ". You can see the response headers for current usage. Please reduce the prompt length "
        "or the maximum tokens requested, or try again later. You may also contact sales at "
        "https://www.anthropic.com/contact-sales to discuss your options for a rate limit "
        "increase.', 'type': 'invalid_request_error', 'param': None}}",
        C.RATE_LIMIT,
        id="anthropic-itpm-compat",
        provider_code="rate_limit_error",
    ),
    # OpenHands/OpenHands#9259
    row(
        'litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":'
        '"rate_limit_error","message":"This request would exceed the rate limit for your '
        "organization (0dccdde6-f924-4f1b-bb3b-92ef846e0a5b) of 20,000 input tokens per minute."
        ' For details, refer to: https://docs.anthropic.com/en/api/rate-limits."}}',
        C.RATE_LIMIT,
        id="anthropic-itpm",
    ),
    # alex-wolf-ps/dbchatprov2#2 (Azure)
    row(
        "HTTP 429 (429) Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
        "version 2024-05-01-preview have exceeded token rate limit of your current OpenAI S0 "
        "pricing tier. Please retry after 86400 seconds.",
        C.RATE_LIMIT,
        id="azure-retry-after-day",
        retry_after=86400.0,
        status_code=429,
    ),
    # microsoft/sample-app-aoai-chatGPT#406 (Azure)
    row(
        "Requests to the Creates a completion for the chat message Operation under Azure OpenAI "
        "API version 2023-03-15-preview have exceeded token rate limit of your current OpenAI "
        "S0 pricing tier. Please retry after 9 seconds. Please go here: "
        "https://aka.ms/oai/quotaincrease if you would like to further increase the default "
        "rate limit.",
        C.RATE_LIMIT,
        id="azure-retry-after-9",
        retry_after=9.0,
    ),
    # pollinations/pollinations#6260 (Azure under load, relayed)
    row(
        '{"success":false,"error":{"message":"azure-openai error: The system is currently '
        "experiencing high demand and cannot process your request. Your request exceeds the "
        "maximum usage size allowed during peak load. Please retry after 20 seconds. For "
        'improved latency reliability, consider switching to Provisioned Throughput.","code":'
        '"RATE_LIMITED","timestamp":"2025-12-21T01:27:42.111Z"},"status":429}',
        C.RATE_LIMIT,
        id="azure-peak-load",
        retry_after=20.0,
        status_code=429,
    ),
    # ogkalu2/comic-translate#403: Gemini's free tier says "quota" but means "wait"
    row(
        'Exception: API request failed with status code 429: {\n  "error": {\n    "code": 429,\n'
        '    "message": "You exceeded your current quota, please check your plan and billing '
        "details. For more information on this error, head to: "
        "https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head "
        "to: https://ai.dev/rate-limit. \\n* Quota exceeded for metric: "
        "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 20, "
        'model: gemini-2.5-flash\\nPlease retry in 58.821668433s.",\n    "status": '
        '"RESOURCE_EXHAUSTED"\n  }\n}',
        C.RATE_LIMIT,
        id="gemini-free-tier-retry-in",
        retry_after=58.821668433,
        provider_code="RESOURCE_EXHAUSTED",
    ),
    # itcon-pty-au/stremio-ai-search#170 (Gemini RetryInfo)
    row(
        "[429 Too Many Requests] You exceeded your current quota, please check your plan and "
        "billing details. * Quota exceeded for metric: "
        "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 20, "
        'model: gemini-2.5-flash-lite Please retry in 51.606482386s. [{"@type":'
        '"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini '
        'API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":'
        '"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"51s"}]',
        C.RATE_LIMIT,
        id="gemini-retry-info",
        retry_after=51.0,
    ),
    # google-gemini/gemini-cli#14811 (Vertex)
    row(
        '[{\n    "error": {\n      "code": 429,\n      "message": "Resource exhausted. Please '
        "try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/"
        'error-code-429 for more details.",\n      "status": "RESOURCE_EXHAUSTED"\n    }\n  }\n]',
        C.RATE_LIMIT,
        id="vertex-resource-exhausted",
        status_code=429,
    ),
    # google-gemini/gemini-cli#10925
    row(
        "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro "
        "Requests per day per user per tier' of service 'cloudcode-pa.googleapis.com' for "
        "consumer 'project_number:681255809395'.",
        C.RATE_LIMIT,
        id="gemini-quota-metric",
    ),
    # open-webui/computer#293 (OpenRouter relaying an upstream limit as plain text)
    row(
        '{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":'
        '"z-ai/glm-5.3-flash is temporarily rate-limited upstream. Please retry shortly, or add '
        'your own key to accumulate your rate limits: ...","provider_name":"BaseTen"}}}',
        C.RATE_LIMIT,
        id="openrouter-raw-text",
        status_code=429,
        message="z-ai/glm-5.3-flash is temporarily rate-limited upstream. Please retry shortly, "
        "or add your own key to accumulate your rate limits: ...",
    ),
    # Vizards/deepseek-v4-for-copilot#279
    row(
        "status_code=429, TPM (Tokens Per Minute) limit of the model deepseek-v4-1-flash is "
        "exceeded. Please try again later",
        C.RATE_LIMIT,
        id="deepseek-tpm",
        status_code=429,
    ),
    # dyad-sh/dyad#1849 (Azure)
    row(
        "429 litellm.RateLimitError: AzureException RateLimitError - Your requests to gpt-5.1 "
        "for gpt-5.1 in East US 2 have exceeded the token rate limit for your current AIServices "
        "S0 pricing tier. Please retry after 60 seconds.",
        C.RATE_LIMIT,
        id="azure-60s",
        retry_after=60.0,
    ),
    # ChatGPTNextWeb/NextChat#3123
    row(
        '{\n  "error": {\n    "message": "You exceeded your current quota, please check your '
        'plan and billing details.",\n    "type": "insufficient_quota",\n    "param": null,\n'
        '    "code": "insufficient_quota"\n  }\n}',
        C.BILLING,
        id="openai-insufficient-quota",
        provider_code="insufficient_quota",
    ),
    # Chanzhaoyu/chatgpt-web#1965: a 429 that no amount of waiting fixes
    row(
        'ChatGPT error 429: {\n"error": {\n"message": "You exceeded your current quota, please '
        'check your plan and billing details.",\n"type": "insufficient_quota",\n"param": null,\n'
        '"code": "insufficient_quota"\n}\n}',
        C.BILLING,
        id="openai-quota-429",
        retryable=False,
    ),
    # gke-labs/gemini-for-kubernetes-development#1215 (no retry hint: the quota is gone)
    row(
        'ApiError: {"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 429,\\n    '
        '\\"message\\": \\"You exceeded your current quota, please check your plan and billing '
        "details. For more information on this error, head to: "
        "https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head "
        'to: https://ai.dev/rate-limit. \\",\\n    \\"status\\": \\"RESOURCE_EXHAUSTED\\"\\n  '
        '}\\n}\\n","code":429,"status":"Too Many Requests"}}',
        C.BILLING,
        id="gemini-quota-exhausted",
    ),
    # anthropics/claude-quickstarts#229
    row(
        "{'type': 'invalid_request_error', 'message': 'Your credit balance is too low to access "
        "the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'}}",
        C.BILLING,
        id="anthropic-credit",
    ),
    # anthropics/claude-code#66314
    row(
        'Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your '
        "credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
        'upgrade or purchase credits."},"request_id":"req_011CbrFTcXhtiMzr3s6EocF7"}',
        C.BILLING,
        id="anthropic-credit-400",
        status_code=400,
    ),
    # Taewan-P/gpt_mobile#284 (OpenRouter): fewer max_tokens would be affordable
    row(
        "Error: This request requires more credits, or fewer max_tokens. You requested up to "
        "16384 tokens, but can only afford 3919. To increase, visit "
        "https://openrouter.ai/settings/credits and upgrade to a paid account",
        C.BILLING,
        id="openrouter-afford",
        action=Action.REDUCE_OUTPUT,
        allowed_tokens=3919,
        output_tokens=16384,
    ),
    # Gitlawb/openclaude#1125
    row(
        'API Error: 402 {"error":{"message":"This request requires more credits, or fewer '
        "max_tokens. You requested up to 32000 tokens, but can only afford 27342. To increase, "
        'visit https://openrouter.ai/settings/credits and upgrade to a paid account","code":402,'
        '"metadata":{"provider_name":null}},"user_id":"user_3D0IVsejFIV6kOYwkxFE9nKiq0g"}',
        C.BILLING,
        id="openrouter-402",
        action=Action.REDUCE_OUTPUT,
        status_code=402,
        allowed_tokens=27342,
    ),
    # anomalyco/opencode#12219: nothing is affordable
    row(
        "This request requires more credits, or fewer max_tokens. You requested up to 32000 "
        "tokens, but can only afford 0. To increase, visit https://openrouter.ai/settings/keys "
        "and create a key with a higher monthly limit",
        C.BILLING,
        id="openrouter-afford-zero",
        action=Action.FAIL,
    ),
    # popjane/free_chatgpt_api#3
    row(
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
        "provided: sk-PMafP***************************************E873. You can find your API "
        "key at https://platform.openai.com/account/api-keys.', 'type': "
        "'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}",
        C.AUTH,
        id="openai-bad-key",
        provider_code="invalid_api_key",
        status_code=401,
    ),
    # cline/cline#12
    row(
        'API request failed: 401 {"type":"error","error":{"type":"authentication_error",'
        '"message":"invalid x-api-key"}}',
        C.AUTH,
        id="anthropic-bad-key",
        provider_code="authentication_error",
    ),
    # Gitlawb/openclaude#1356
    row(
        '401 {"error":{"message":"API key required","type":"authentication_error","code":'
        '"api_key_required"}}',
        C.AUTH,
        id="gateway-key-required",
    ),
    # crmne/ruby_llm#431 (OpenRouter relaying OpenAI's region block)
    row(
        '{"error": {"message": "Provider returned error", "code": 403, "metadata": {"raw": '
        '"{\\"error\\":{\\"code\\":\\"unsupported_country_region_territory\\",\\"message\\":'
        '\\"Country, region, or territory not supported\\",\\"param\\":null,\\"type\\":'
        '\\"request_forbidden\\"}}", "provider_name": "OpenAI"}}, "user_id": "user_2"}',
        C.AUTH,
        id="openrouter-region",
        provider_code="unsupported_country_region_territory",
    ),
    # truefoundry/models#827
    row(
        "openai.NotFoundError: Error code: 404 - {'status': 'failure', 'message': 'openai "
        "error: The model `gpt-5.5` does not exist or you do not have access to it.', 'error': "
        "{'message': 'openai error: The model `gpt-5.5` does not exist or you do not have "
        "access to it.', 'type': 'APIError', 'code': '404'}, 'error_origin_level': 'api_error'}",
        C.MODEL_NOT_FOUND,
        id="openai-model-missing",
        status_code=404,
    ),
    # microsoft/langchainjs-for-beginners#23
    row("BadRequestError: 400 Unavailable model: gpt-5", C.MODEL_NOT_FOUND, id="github-models"),
    # anthropics/claude-code#35792
    row(
        'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":'
        '"Overloaded"},"request_id":"req_011CZAau32QzxDkriovTaFCB"}',
        C.OVERLOADED,
        id="anthropic-529",
        status_code=529,
        provider_code="overloaded_error",
        message="Overloaded",
    ),
    # waylaidwanderer/node-chatgpt-api#34
    row(
        'Error: Failed to send message. HTTP 503 - {\n  "error": {\n    "message": "That model '
        "is currently overloaded with other requests. You can retry your request, or contact "
        "us through our help center at help.openai.com if the error persists. (Please include "
        'the request ID 169bee8d  in your message.)",\n    "type": "server_error",\n    '
        '"param": null,\n    "code": null\n  }\n}',
        C.OVERLOADED,
        id="openai-503-overloaded",
        status_code=503,
    ),
    # dust-tt/dust#428
    row(
        "OpenAIAPIError: [server_error] That model is currently overloaded with other requests. "
        "You can retry your request, or contact us through our help center at help.openai.com "
        "if the error persists.",
        C.OVERLOADED,
        id="openai-overloaded-text",
    ),
    # lobehub/lobehub#9728
    row(
        '{\n    "error": {\n        "code": 503,\n        "message": "The model is overloaded. '
        'Please try again later.",\n        "status": "UNAVAILABLE"\n    }\n}',
        C.OVERLOADED,
        id="gemini-503",
        status_code=503,
    ),
    # VectifyAI/OpenKB#164
    row(
        'litellm.ServiceUnavailableError: GeminiException - {\n  "error": {\n    "code": 503,\n'
        '    "message": "This model is currently experiencing high demand. Spikes in demand are '
        'usually temporary. Please try again later.",\n    "status": "UNAVAILABLE"\n  }\n}',
        C.OVERLOADED,
        id="gemini-high-demand",
    ),
    # anthropics/claude-code#91800
    row(
        'Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server '
        'error"},"request_id":"req_011CegaXgT3UXCMC4LraDuee"}',
        C.SERVER_ERROR,
        id="anthropic-500",
        status_code=500,
        provider_code="api_error",
    ),
    # anthropics/anthropic-sdk-python#938
    row(
        "anthropic._exceptions.RequestTooLargeError: Error code: 413 - {'error': {'type': "
        "'request_too_large', 'message': 'Request exceeds the maximum size'}}",
        C.PAYLOAD_TOO_LARGE,
        id="anthropic-413",
        status_code=413,
    ),
    # anthropics/claude-code#10314
    row(
        'Error: 413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum '
        'size"}}',
        C.PAYLOAD_TOO_LARGE,
        id="anthropic-413-json",
    ),
    # continuedev/continue#10218 (Groq answers 413 when one request exceeds its TPM)
    row(
        "413 Request too large for model `llama-3.3-70b-versatile` in organization "
        "`org_01kgg5588eftc8k70aes4864eb` service tier `on_demand` on tokens per minute (TPM): "
        "Limit 12000, Requested 14137, please reduce your message size and try again.",
        C.PAYLOAD_TOO_LARGE,
        id="groq-413-tpm",
        requested_tokens=14137,
        allowed_tokens=12000,
    ),
    # HunorLaczko/ha-groq-cloud-api#27
    row(
        "Error code: 413 - {'error': {'message': 'Request too large for model "
        "llama-3.1-8b-instant in organization org_xxxxxxx service tier on_demand on tokens per "
        "minute (TPM): Limit 6000, Requested 12328, please reduce your message size and try "
        "again.', 'type': 'tokens', 'code': 'rate_limit_exceeded'}}",
        C.PAYLOAD_TOO_LARGE,
        id="groq-413-repr",
        requested_tokens=12328,
        allowed_tokens=6000,
    ),
    # anthropics/claude-code#6195
    row(
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
        '"Output blocked by content filtering policy"},"request_id":null}',
        C.CONTENT_FILTER,
        id="anthropic-content-filter",
        retryable=False,
    ),
    # RanFeng/clipsketch-ai#6
    row(
        "OpenAI Image Error: 400 - Your request was rejected as a result of our safety system. "
        "Your prompt may contain text that is not allowed by our safety system.",
        C.CONTENT_FILTER,
        id="openai-safety-system",
    ),
    # microsoft/azurechat#351
    row(
        "400 The response was filtered due to the prompt triggering Azure OpenAI's content "
        "management policy. Please modify your prompt and retry.",
        C.CONTENT_FILTER,
        id="azure-content-filter",
    ),
]

# --- local servers' overflow and the other misreads of condense issue #9 -------------------
# Provider-specific rows are marked with the provider in their id; "issue #9" rows are the
# wordings the third-party test suites used (quoted in condense's issue #9).

LOCAL_OVERFLOW = [
    # vllm-project/vllm vllm/entrypoints/openai/serving_responses.py (_validate_generator_input),
    # with the figures a /v1/responses user reported
    row(
        "{'error': {'message': 'The engine prompt length 1327246 exceeds the max_model_len "
        "131072. Please reduce prompt.', 'type': 'invalid_request_error', 'param': 'input', "
        "'code': 400}}",
        C.CONTEXT_OVERFLOW,
        id="vllm-engine-prompt-length",
        requested_tokens=1327246,
        allowed_tokens=131072,
    ),
    # issue #9 (vLLM)
    row(
        "The engine prompt length 5294 exceeds the max_model_len 2000. Please reduce prompt.",
        C.CONTEXT_OVERFLOW,
        id="vllm-engine-prompt-length-issue",
        requested_tokens=5294,
        allowed_tokens=2000,
    ),
    # issue #9; the wording of EricLBuehler/candle-vllm src/api.rs (validate_prompt)
    row(
        "prompt length 5294 exceeds maximum model length 2000",
        C.CONTEXT_OVERFLOW,
        id="candle-vllm-prompt-length",
        requested_tokens=5294,
        allowed_tokens=2000,
    ),
    # vllm-project/vllm#12165 (V1 engine)
    row(
        "ValueError: The prompt (total length 25938) is too long to fit into the model (context "
        "length 4096). Make sure that `max_model_len` is no smaller than the number of text "
        "tokens plus multimodal tokens.",
        C.CONTEXT_OVERFLOW,
        id="vllm-v1-too-long-to-fit",
        requested_tokens=25938,
        allowed_tokens=4096,
    ),
    # hiyouga/LlamaFactory#3241 (vLLM scheduler)
    row(
        "Input prompt (5556 tokens) is too long and exceeds limit of 2048",
        C.CONTEXT_OVERFLOW,
        id="vllm-scheduler-input-prompt",
        requested_tokens=5556,
        allowed_tokens=2048,
    ),
    # can1357/oh-my-pi#556 (llama.cpp server)
    row(
        "Error: 400 request (20001 tokens) exceeds the available context size (8192 tokens), try "
        "increasing it",
        C.CONTEXT_OVERFLOW,
        id="llamacpp-request-exceeds-context",
        status_code=400,
        requested_tokens=20001,
        allowed_tokens=8192,
    ),
    # ggml-org/llama.cpp examples/server/server.cpp (update_slots: no KV space even at batch 1)
    row(
        "Input prompt is too big compared to KV size. Please try increasing KV size.",
        C.CONTEXT_OVERFLOW,
        id="llamacpp-kv-size",
    ),
    # ggml-org/llama.cpp#23652 (also LM Studio's llama.cpp engine)
    row("Context size has been exceeded.", C.CONTEXT_OVERFLOW, id="llamacpp-context-exceeded"),
    # issue #9 (llama.cpp)
    row("slot context: … not enough space", C.CONTEXT_OVERFLOW, id="llamacpp-slot-no-space"),
    # the wording of sgl-project/sglang tokenizer_manager.py: the input alone is over the window
    row(
        "Requested token count exceeds the model's maximum context length of 131072 tokens. You "
        "requested a total of 140000 tokens: 135000 tokens from the input messages and 5000 "
        "tokens for the completion. Please reduce the number of tokens in the input messages or "
        "the completion to fit within the limit.",
        C.CONTEXT_OVERFLOW,
        id="sglang-input-over-window",
        requested_tokens=140000,
        allowed_tokens=131072,
        output_tokens=5000,
    ),
    # the same SGLang wording where the input fits and max_tokens does not
    row(
        "Requested token count exceeds the model's maximum context length of 32768 tokens. You "
        "requested a total of 70000 tokens: 6000 tokens from the input messages and 64000 tokens "
        "for the completion. Please reduce the number of tokens in the input messages or the "
        "completion to fit within the limit.",
        C.OUTPUT_LIMIT,
        id="sglang-completion-too-large",
        allowed_tokens=32768,
        output_tokens=64000,
        suggested_max_tokens=26768,
    ),
    # nano-step/nano-brain#208 (Ollama)
    row(
        'ollama: unexpected status 400: {"error":"the input length exceeds the context length"}',
        C.CONTEXT_OVERFLOW,
        id="ollama-input-length",
        status_code=400,
    ),
    # lfnovo/open-notebook#350 (Ollama)
    row(
        "Failed to get embeddings: Ollama API error: the input length exceeds the context length",
        C.CONTEXT_OVERFLOW,
        id="ollama-input-length-bare",
    ),
    # lmstudio-ai/lmstudio-bug-tracker#546
    row(
        "Trying to keep the first 111490 tokens when context the overflows. However, the model is "
        "loaded with context length of only 32768 tokens, which is not enough. Try to load the "
        "model with a larger context length, or provide a shorter input. Error Data: n/a, "
        "Additional Data: n/a",
        C.CONTEXT_OVERFLOW,
        id="lmstudio-keep-first",
        requested_tokens=111490,
        allowed_tokens=32768,
    ),
    # n4ze3m/page-assist#356 (LM Studio)
    row(
        "Trying to keep the first 6547 tokens when context overflows. However, the model is "
        "loaded with a context length of only 4096 tokens, which is not enough. Try to load the "
        "model with a larger context length, or provide a shorter input.",
        C.CONTEXT_OVERFLOW,
        id="lmstudio-keep-first-variant",
        requested_tokens=6547,
        allowed_tokens=4096,
    ),
    # BerriAI/litellm#4934 (Together, TGI's validation)
    row(
        "BadRequestError: litellm.BadRequestError: Together_aiException - Error code: 400 - "
        "{'error': {'message': 'Input validation error: `inputs` tokens + `max_new_tokens` must "
        "be <= 4097. Given: 80125 `inputs` tokens and 4096 `max_new_tokens`', 'type': "
        "'invalid_request_error', 'param': 'max_tokens', 'code': None}}",
        C.CONTEXT_OVERFLOW,
        id="together-tgi-inputs",
        allowed_tokens=4097,
        output_tokens=4096,
    ),
    # sjzar/chatlog#30
    row(
        "400 length of prompt_tokens (163280) must be less than max_seq_len (32768).",
        C.CONTEXT_OVERFLOW,
        id="prompt-tokens-max-seq-len",
        status_code=400,
        requested_tokens=163280,
        allowed_tokens=32768,
    ),
    # ddalcu/mlx-serve#66
    row(
        "API Error: 400 Prompt exceeds maximum context length",
        C.CONTEXT_OVERFLOW,
        id="mlx-serve-prompt-exceeds",
        status_code=400,
    ),
    # issue #9 (Chinese)
    row("超过最大长度限制", C.CONTEXT_OVERFLOW, id="chinese-max-length-limit"),
    # earendil-works/pi packages/ai/src/utils/overflow.ts (Ollama)
    row(
        "prompt too long; exceeded max context length by 12345 tokens",
        C.CONTEXT_OVERFLOW,
        id="ollama-exceeded-by",
    ),
    # earendil-works/pi packages/ai/src/utils/overflow.ts (OpenRouter/Poolside)
    row(
        "Input length 140000 exceeds the maximum allowed input length of 131072 tokens.",
        C.CONTEXT_OVERFLOW,
        id="openrouter-poolside-input-length",
        requested_tokens=140000,
        allowed_tokens=131072,
    ),
    # earendil-works/pi packages/ai/src/utils/overflow.ts (LM Studio)
    row(
        "tokens to keep from the initial prompt is greater than the context length",
        C.CONTEXT_OVERFLOW,
        id="lmstudio-tokens-to-keep",
    ),
    # earendil-works/pi packages/ai/src/utils/overflow.ts: Bedrock throttling says "too many
    # tokens" and is a rate limit, not an overflow
    row(
        "ThrottlingException: Too many tokens, please wait before trying again.",
        C.RATE_LIMIT,
        id="bedrock-throttling-too-many-tokens",
    ),
]

MISREADS = [
    # --- a 404 that names no model: the base URL is wrong, not the model
    # chatanywhere/GPT_API_free#258 (nginx in front of the API)
    row(
        "NotFoundError: 404 <html>\n<head><title>404 Not Found</title></head>\n<body>\n"
        "<center><h1>404 Not Found</h1></center>\n<hr><center>nginx</center>\n</body>\n"
        "</html>",
        C.NOT_FOUND,
        id="nginx-404-wrong-base-url",
        status_code=404,
    ),
    # anthropics/claude-code#50229 (a base URL that is not Anthropic's)
    row("Error: 404 404 page not found", C.NOT_FOUND, id="404-page-not-found", status_code=404),
    # ... while a 404 that names the model is the model's: continuedev/continue#11538,
    # anthropics/claude-code#41120
    row(
        '404 {"type":"not_found_error","message":"model: claude-3-7-sonnet-latest"}',
        C.MODEL_NOT_FOUND,
        id="anthropic-404-model",
    ),
    row(
        'Error: 404 {"type":"error","error":{"type":"not_found_error","message":"model '
        '\'claude-haiku-4-5-20251001\' not found"},"request_id":"req_f8e3e09c9db9db59aa1f846a"}',
        C.MODEL_NOT_FOUND,
        id="anthropic-404-model-not-found",
        status_code=404,
    ),
    # --- TLS broken mid-stream: back off and try again
    # mistralai/mistral-vibe#508
    row(
        "Error: API error from mistral (model: mistral-vibe-cli-latest): [SSL: "
        "SSLV3_ALERT_BAD_RECORD_MAC] ssl/tls alert bad record mac (_ssl.c:2580)",
        C.CONNECTION,
        id="tls-bad-record-mac-python",
    ),
    # aj47/dotagents-mono#163 (Go, streaming from Anthropic)
    row("remote error: tls: bad record MAC", C.CONNECTION, id="tls-bad-record-mac-go"),
    # google-gemini/gemini-cli#16215 (Node's OpenSSL)
    row(
        "[API Error: request to https://cloudcode-pa.googleapis.com/v1internal:"
        "streamGenerateContent?alt=sse failed, reason: 402CBC0C02000000:error:0A0003FC:SSL "
        "routines:ssl3_read_bytes:sslv3 alert bad record mac:../deps/openssl/openssl/ssl/record/"
        "rec_layer_s3.c:1605:SSL alert number 20\n]",
        C.CONNECTION,
        id="tls-bad-record-mac-node",
        status_code=None,
    ),
    # HanaokaYuzu/Gemini-API#135
    row(
        "[SSL: DECRYPTION_FAILED_OR_BAD_RECORD_MAC] decryption failed or bad record mac "
        "(_ssl.c:2570)",
        C.CONNECTION,
        id="tls-decryption-failed",
    ),
    # joeShuff/vikunja-homeassistant#22
    row("API Error: [SSL] record layer failure (_ssl.c:1028)", C.CONNECTION, id="tls-record-layer"),
    # langgenius/dify#20916
    row("SSL error: sslv3 alert bad record mac", C.CONNECTION, id="tls-dify"),
    # Andyyyy64/whichllm#135: a certificate problem is a setting, not luck
    row(
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer "
        "certificate (_ssl.c:1081)",
        C.UNKNOWN,
        id="tls-certificate-is-not-transient",
    ),
    # feder-cr/invisible_playwright_mcp#576: https spoken to an http server
    row(
        "Unexpected error occurred: [SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1000)",
        C.UNKNOWN,
        id="tls-wrong-version-is-not-transient",
    ),
    # --- rate limits in other words
    # QwenLM/Qwen#2069 (DashScope)
    row(
        "[API Error: Request rate increased too quickly. To ensure system stability, please "
        "adjust your client logic to scale requests more smoothly over time.]",
        C.RATE_LIMIT,
        id="dashscope-rate-increased",
    ),
    # infiniflow/ragflow#11726 (DashScope through litellm, which calls it a connection error)
    row(
        "ERROR: litellm.APIConnectionError: APIConnectionError: OpenAIException - Request rate "
        "increased too quickly. To ensure system stability, please adjust your client logic to "
        "scale requests more smoothly over time.",
        C.RATE_LIMIT,
        id="dashscope-rate-increased-litellm",
    ),
    # agentscope-ai/QwenPaw#708 (DashScope)
    row(
        "Error in query handler: Request rate increased too quickly. To ensure system stability, "
        "please adjust your client logic to scale requests more smoothly over time.",
        C.RATE_LIMIT,
        id="dashscope-rate-increased-agentscope",
    ),
    # issue #9
    row("key limit exceeded, please wait", C.RATE_LIMIT, id="key-limit-please-wait"),
    # anthropics/claude-code#53915
    row(
        "API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited",
        C.RATE_LIMIT,
        id="anthropic-temporarily-limiting",
    ),
    # kirodotdev/Kiro#8770
    row(
        "Due to suspicious activity, temporary request limits were imposed.",
        C.RATE_LIMIT,
        id="kiro-temporary-request-limits",
    ),
    # --- OpenRouter's per-key spending limits: billing, raised by the owner
    # RooCodeInc/Roo-Code#515
    row(
        "403 Key limit exceeded. Manage it using https://openrouter.ai/keys",
        C.BILLING,
        id="openrouter-key-limit-403",
        status_code=403,
    ),
    # gptme/gptme#1449
    row(
        "Error code: 403 - {'error': {'message': 'Key limit exceeded (monthly limit). Manage it "
        "using https://openrouter.ai/settings/keys', 'code': 403}}",
        C.BILLING,
        id="openrouter-key-limit-monthly",
    ),
    # MCPJam/inspector#1287
    row(
        'An error occurred: {"ok":false,"error":"Key limit exceeded (total limit). Manage it '
        'using https://openrouter.ai/settings/keys"}',
        C.BILLING,
        id="openrouter-key-limit-total",
    ),
    # --- 402/403 that say when to come back: wait that long (issue #9)
    row(
        "402 Payment Required: try again in 5 minutes",
        C.BILLING,
        id="402-try-again-in-5-minutes",
        action=Action.BACKOFF,
        retry_after=300.0,
        status_code=402,
    ),
    row(
        "403 Forbidden: try again in 5 minutes",
        C.AUTH,
        id="403-try-again-in-5-minutes",
        action=Action.BACKOFF,
        retry_after=300.0,
        status_code=403,
    ),
    # --- a 429 asking for the long-context tier: a shorter prompt passes (Anthropic)
    # anthropics/claude-code#42616
    row(
        'API error (attempt 1/11): 429 429 {"type":"error","error":{"type":"rate_limit_error",'
        '"message":"Extra usage is required for long context requests."},"request_id":'
        '"req_011CZf8TJf84hAUziB6LuRoc"}',
        C.RATE_LIMIT,
        id="anthropic-long-context-tier",
        action=Action.COMPRESS,
        allowed_tokens=200_000,
    ),
    # Wei-Shaw/sub2api#572
    row(
        '{"error": {"message": "Extra usage is required for long context requests.", "type": '
        '"rate_limit_error"}, "request_id": "req_011CY5YJLsmBrFu4pcWKKt5b", "type": "error"}',
        C.RATE_LIMIT,
        id="anthropic-long-context-tier-relayed",
        action=Action.COMPRESS,
        allowed_tokens=200_000,
    ),
    # --- OpenRouter finds no endpoint for the request: fail, repairing cannot help
    # issue #9
    row(
        "400 No endpoints available matching your data policy",
        C.MODEL_NOT_FOUND,
        id="openrouter-no-endpoints-400",
        status_code=400,
    ),
    # dnakov/anon-kode#13
    row(
        "API Error: 404 No endpoints found matching your data policy. Check your settings: "
        "https://openrouter.ai/settings/privacy",
        C.MODEL_NOT_FOUND,
        id="openrouter-no-endpoints-data-policy",
    ),
    # unoplat/unoplat-code-confluence#1080
    row(
        "NotFoundError: Error code: 404 - {'error': {'message': 'No endpoints found matching your "
        "data policy (Paid model training). Configure: https://openrouter.ai/settings/privacy', "
        "'code': 404}}",
        C.MODEL_NOT_FOUND,
        id="openrouter-no-endpoints-paid-training",
    ),
    # truefoundry/models#826 (OpenRouter behind a gateway)
    row(
        "openai.NotFoundError: Error code: 404 - {'status': 'failure', 'message': 'openrouter "
        "error: No endpoints available matching your guardrail restrictions and data policy. "
        "Configure: https://openrouter.ai/settings/privacy'}",
        C.MODEL_NOT_FOUND,
        id="openrouter-no-endpoints-guardrails",
    ),
    # dnakov/anon-kode#2
    row(
        "API Error: 404 No endpoints found that support tool use. To learn more about provider "
        "routing, visit: https://openrouter.ai/docs/provider-routing",
        C.MODEL_NOT_FOUND,
        id="openrouter-no-endpoints-tool-use",
    ),
]


ALL_ROWS = (
    PROVIDER_RULES + OVERFLOW + OUTPUT_LIMIT + REPAIRABLE + OTHERS + LOCAL_OVERFLOW + MISREADS
)
HISTORY: list[dict[str, object]] = [{"role": "user", "content": "x"}] * 300


def _check(diagnosis: Diagnosis, expected: Row) -> None:
    assert diagnosis.category is expected.category, diagnosis.summary()
    assert diagnosis.action is expected.expect.get("action", DEFAULT_ACTIONS[diagnosis.category])
    assert diagnosis.retryable is (diagnosis.action is not Action.FAIL)
    for name, value in expected.expect.items():
        if name == "retry_after":
            assert diagnosis.retry_after == pytest.approx(value), name
        else:
            assert getattr(diagnosis, name) == value, name


@pytest.mark.parametrize("case", ALL_ROWS)
def test_real_error_text(case: Row) -> None:
    _check(classify(case.text, messages=HISTORY), case)


def test_table_is_large_and_diverse() -> None:
    assert len(PROVIDER_RULES) >= 40
    assert len(ALL_ROWS) - len(PROVIDER_RULES) >= 60
    assert {case.values[0].category for case in ALL_ROWS} >= set(Category) - {
        C.TIMEOUT,
        C.CONNECTION,
        C.UNKNOWN,
    }


_WRAPPABLE = [
    case
    for case in ALL_ROWS
    if case.values[0].category in (C.TOOL_PAIRING, C.TOOL_ARGUMENTS, C.CONTEXT_OVERFLOW)
    and "{" not in case.values[0].text
]


@pytest.mark.parametrize("case", _WRAPPABLE)
def test_openrouter_raw_relay_keeps_the_category(case: Row) -> None:
    """OpenRouter puts the upstream refusal in ``error.metadata.raw``, as JSON or as text."""
    inner = json.dumps({"error": {"message": case.text, "type": "invalid_request_error"}})
    for raw in (inner, case.text):
        body = {
            "error": {
                "message": "Provider returned error",
                "code": 400,
                "metadata": {"raw": raw, "provider_name": "Upstream"},
            },
            "user_id": "user_x",
        }
        diagnosis = classify((400, json.dumps(body)))
        assert diagnosis.category is case.category
        assert diagnosis.message
        assert case.text.strip().endswith(diagnosis.message)  # upstream words, status prefix cut
        assert diagnosis.status_code == 400


# --- openai SDK exceptions, built the way the SDK builds them -----------------------------

_REQUEST = httpx2.Request("POST", "https://api.example.test/v1/chat/completions")


def _sdk_error(status: int, body: object, headers: dict[str, str] | None = None) -> Exception:
    """An ``openai`` status error as the SDK raises it: inner ``error`` object as ``body``."""
    response = httpx2.Response(status, json=body, headers=headers, request=_REQUEST)
    data = body.get("error", body) if isinstance(body, dict) else body
    message = data.get("message") if isinstance(data, dict) else None
    text = f"Error code: {status}" + (f" - {message}" if message else "")
    kinds: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        403: openai.PermissionDeniedError,
        404: openai.NotFoundError,
        429: openai.RateLimitError,
    }
    cls = kinds.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(text, response=response, body=data)


def test_openai_bad_request_context_length() -> None:
    # rahul2002m/ChatPDF#6
    error = _sdk_error(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 4097 tokens. However, your "
                "messages resulted in 6988 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    )
    diagnosis = classify(error)
    assert diagnosis.category is C.CONTEXT_OVERFLOW
    assert diagnosis.action is Action.COMPRESS
    assert diagnosis.status_code == 400
    assert diagnosis.provider_code == "context_length_exceeded"
    assert (diagnosis.requested_tokens, diagnosis.allowed_tokens) == (6988, 4097)
    assert diagnosis.message.startswith("This model's maximum context length")


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "2"}, 1.5),
        ({"x-ratelimit-reset-requests": "20ms"}, 0.02),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        (
            {
                "x-ratelimit-reset-requests": "12ms",
                "x-ratelimit-reset-tokens": "1m30.5s",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-remaining-tokens": "5000",
            },
            0.012,
        ),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
)
def test_openai_rate_limit_headers(headers: dict[str, str], seconds: float) -> None:
    # FoundationAgents/MetaGPT#523 wording; headers as OpenAI and its proxies send them
    error = _sdk_error(
        429,
        {
            "error": {
                "message": "Rate limit reached for gpt-4 in organization org-x on tokens per "
                "min (TPM): Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        headers=headers,
    )
    diagnosis = classify(error)
    assert diagnosis.category is C.RATE_LIMIT
    assert diagnosis.action is Action.BACKOFF
    assert diagnosis.retry_after == pytest.approx(seconds)


def test_ratelimit_reset_headers_on_other_errors_are_not_a_wait() -> None:
    # OpenAI sends x-ratelimit-* on every response, a 400 included
    error = _sdk_error(
        400,
        {"error": {"message": "prompt is too long: 300000 tokens > 200000 maximum"}},
        {"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-remaining-tokens": "0"},
    )
    assert classify(error).retry_after is None


def test_retry_after_http_date_in_the_future() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    error = _sdk_error(
        429,
        {"error": {"message": "slow down"}},
        {"Retry-After": format_datetime(when, usegmt=True)},
    )
    retry = classify(error).retry_after
    assert retry is not None
    assert 25 <= retry <= 31


def test_openai_429_insufficient_quota_is_billing() -> None:
    # ChatGPTNextWeb/NextChat#3123
    error = _sdk_error(
        429,
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing "
                "details.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        },
        headers={"retry-after": "20"},
    )
    diagnosis = classify(error)
    assert diagnosis.category is C.BILLING
    assert not diagnosis.retryable
    assert diagnosis.action is Action.FAIL


def test_openai_openrouter_raw_nesting() -> None:
    # diegosouzapw/OmniRoute#3044 shape, carrying Anthropic's refusal (claude-code #1237)
    raw = json.dumps(
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "messages.22: `tool_use` ids were found without `tool_result` blocks "
                "immediately after: toolu_01Gho1LhNQt7FjqEiiHkrVMK. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message.",
            },
        }
    )
    body = {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {"raw": raw, "provider_name": "Anthropic"},
        },
        "user_id": "user_x",
    }
    diagnosis = classify(_sdk_error(400, body), messages=HISTORY)
    assert diagnosis.category is C.TOOL_PAIRING
    assert diagnosis.action is Action.REPAIR
    assert diagnosis.message_index == 22
    assert diagnosis.provider_code == "invalid_request_error"
    assert diagnosis.message.startswith("messages.22: `tool_use` ids")


def test_openai_internal_server_error_and_auth() -> None:
    assert classify(_sdk_error(500, {"error": {"message": "boom"}})).category is C.SERVER_ERROR
    assert classify(_sdk_error(502, "<html>bad gateway</html>")).category is C.SERVER_ERROR
    unauthorized = _sdk_error(401, {"error": {"message": "Incorrect API key provided: sk-x"}})
    assert classify(unauthorized).category is C.AUTH


def test_openai_connection_and_timeout_errors() -> None:
    timeout = openai.APITimeoutError(request=_REQUEST)
    timeout.__cause__ = httpx2.ReadTimeout("The read operation timed out", request=_REQUEST)
    assert classify(timeout).category is C.TIMEOUT
    assert classify(timeout).action is Action.BACKOFF
    refused = openai.APIConnectionError(request=_REQUEST)
    refused.__cause__ = httpx2.ConnectError("[Errno 111] Connection refused", request=_REQUEST)
    diagnosis = classify(refused)
    assert diagnosis.category is C.CONNECTION
    assert diagnosis.retryable
    assert diagnosis.message == "Connection error."


def test_openai_stream_error_without_status() -> None:
    # an error event inside a 200 stream: openai raises APIError with a body, no status
    error = openai.APIError(
        "prompt is too long: 210000 tokens > 200000 maximum",
        _REQUEST,
        body={"message": "prompt is too long: 210000 tokens > 200000 maximum"},
    )
    diagnosis = classify(error)
    assert diagnosis.category is C.CONTEXT_OVERFLOW
    assert (diagnosis.requested_tokens, diagnosis.allowed_tokens) == (210000, 200000)


def test_json_decode_error_is_a_truncated_response() -> None:
    # what openai 3.x raises for a 200 whose body was cut off (see test against a socket below)
    try:
        json.loads('{"id":"chatcmpl-1","choices":[{"index":0,"mess')
    except json.JSONDecodeError as exc:
        diagnosis = classify(exc)
    assert diagnosis.category is C.SERVER_ERROR
    assert diagnosis.retryable
    assert diagnosis.action is Action.BACKOFF


# --- the same errors through a real socket -------------------------------------------------


@dataclass
class _Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False


class _Server:
    """A loopback server that answers each path with a canned reply."""

    def __init__(self) -> None:
        self.replies: dict[str, _Reply] = {}
        self.release = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                reply = outer.replies[self.path.split("/v1")[0]]
                if reply.hang:
                    outer.release.wait(10)
                    return
                self.send_response(reply.status)
                for key, value in {"content-length": str(len(reply.body)), **reply.headers}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(reply.body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}/v1"

    def call(self, name: str) -> Exception:
        # 0.5 s trips the timeout of a hanging reply; any other reply has all the time
        # a loaded machine needs
        timeout = 0.5 if self.replies[f"/{name}"].hang else HANG_GUARD
        with openai.OpenAI(
            api_key="test", base_url=self.url(name), max_retries=0, timeout=timeout
        ) as client:
            try:
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
            except Exception as exc:  # the point is to catch whatever the SDK raises
                return exc
        raise AssertionError("the call was expected to fail")


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    srv.thread.start()
    yield srv
    srv.release.set()
    srv.httpd.shutdown()
    srv.httpd.server_close()
    srv.thread.join(5)


def _json(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_socket_rate_limit_with_headers(server: _Server) -> None:
    server.replies["/rl"] = _Reply(
        429,
        _json(
            {
                "error": {
                    "message": "Rate limit reached for requests",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            }
        ),
        {
            "content-type": "application/json",
            "retry-after-ms": "1500",
            "x-ratelimit-reset-tokens": "6m0s",
        },
    )
    diagnosis = classify(server.call("rl"))
    assert isinstance(server.call("rl"), openai.RateLimitError)
    assert diagnosis.category is C.RATE_LIMIT
    assert diagnosis.retry_after == pytest.approx(1.5)
    assert diagnosis.provider_code == "rate_limit_exceeded"


def test_socket_overflow_and_anthropic_style_529(server: _Server) -> None:
    # MoonshotAI/kimi-cli#2011 and anthropics/claude-code#35792
    server.replies["/kimi"] = _Reply(
        400,
        _json(
            {
                "error": {
                    "message": "Invalid request: Your request exceeded model token limit: 262144 "
                    "(requested: 269030)",
                    "type": "invalid_request_error",
                }
            }
        ),
        {"content-type": "application/json"},
    )
    server.replies["/busy"] = _Reply(
        529,
        _json({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        {"content-type": "application/json", "retry-after": "3"},
    )
    kimi = classify(server.call("kimi"))
    assert (kimi.category, kimi.requested_tokens, kimi.allowed_tokens) == (
        C.CONTEXT_OVERFLOW,
        269030,
        262144,
    )
    busy = classify(server.call("busy"))
    assert (busy.category, busy.status_code, busy.retry_after) == (C.OVERLOADED, 529, 3.0)


def test_socket_truncated_body_timeout_and_html(server: _Server) -> None:
    server.replies["/cut"] = _Reply(
        200,
        b'{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"mess',
        {"content-type": "application/json"},
    )
    server.replies["/hang"] = _Reply(200, b"", hang=True)
    server.replies["/proxy"] = _Reply(
        502,
        b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
        {"content-type": "text/html"},
    )
    cut = server.call("cut")
    assert isinstance(cut, json.JSONDecodeError)
    assert classify(cut).category is C.SERVER_ERROR
    assert classify(server.call("hang")).category is C.TIMEOUT
    proxy = classify(server.call("proxy"))
    assert (proxy.category, proxy.status_code, proxy.message) == (
        C.SERVER_ERROR,
        502,
        "502 Bad Gateway",
    )


def test_socket_connection_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    client = openai.OpenAI(api_key="test", base_url=url, max_retries=0, timeout=0.5)
    with client, pytest.raises(openai.APIConnectionError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert classify(caught.value).category is C.CONNECTION


# --- anthropic SDK exceptions, duck-typed (the SDK is not a dependency) ------------------


class _AnthropicStatusError(Exception):
    """Shaped like ``anthropic.APIStatusError``: the whole JSON body is ``body``."""

    def __init__(self, message: str, *, response: httpx2.Response, body: object) -> None:
        super().__init__(message)
        self.message = message
        self.request = response.request
        self.response = response
        self.status_code = response.status_code
        self.body = body


class OverloadedError(_AnthropicStatusError):
    pass


class RateLimitError(_AnthropicStatusError):
    pass


class BadRequestError(_AnthropicStatusError):
    pass


def _anthropic(
    cls: type[_AnthropicStatusError],
    status: int,
    error: dict[str, str],
    headers: dict[str, str] | None = None,
) -> _AnthropicStatusError:
    body = {"type": "error", "error": error, "request_id": "req_011CZAau32QzxDkriovTaFCB"}
    response = httpx2.Response(status, json=body, headers=headers, request=_REQUEST)
    return cls(f"Error code: {status} - {body!r}", response=response, body=body)


def test_anthropic_overloaded() -> None:
    # anthropics/claude-code#35792
    error = _anthropic(OverloadedError, 529, {"type": "overloaded_error", "message": "Overloaded"})
    diagnosis = classify(error)
    assert (diagnosis.category, diagnosis.provider_code, diagnosis.message) == (
        C.OVERLOADED,
        "overloaded_error",
        "Overloaded",
    )
    assert diagnosis.action is Action.BACKOFF


def test_anthropic_rate_limit_reset_headers() -> None:
    # OpenHands/OpenHands#9259 wording; Anthropic sends retry-after and RFC 3339 resets
    reset = (datetime.now(UTC) + timedelta(seconds=40)).isoformat().replace("+00:00", "Z")
    message = (
        "This request would exceed the rate limit for your organization of 20,000 input tokens "
        "per minute."
    )
    with_header = _anthropic(
        RateLimitError, 429, {"type": "rate_limit_error", "message": message}, {"retry-after": "12"}
    )
    assert classify(with_header).retry_after == 12.0
    with_reset = _anthropic(
        RateLimitError,
        429,
        {"type": "rate_limit_error", "message": message},
        {"anthropic-ratelimit-input-tokens-reset": reset},
    )
    retry = classify(with_reset).retry_after
    assert retry is not None
    assert 35 <= retry <= 41


def test_anthropic_prompt_too_long_with_index() -> None:
    # claude-code #14416 and stackblitz/bolt.new#1748 wordings
    pairing = _anthropic(
        BadRequestError,
        400,
        {
            "type": "invalid_request_error",
            "message": "messages.7.content.0: unexpected `tool_use_id` found in `tool_result` "
            "blocks: toolu_01. Each `tool_result` block must have a corresponding `tool_use` "
            "block in the previous message.",
        },
    )
    diagnosis = classify(pairing, messages=HISTORY[:10])
    assert (diagnosis.category, diagnosis.message_index) == (C.TOOL_PAIRING, 7)
    long = _anthropic(
        BadRequestError,
        400,
        {
            "type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum",
        },
    )
    assert classify(long).category is C.CONTEXT_OVERFLOW


# --- httpx/httpx2 responses and errors, tuples, plain exceptions ---------------------------


def test_httpx2_response_and_status_error() -> None:
    response = httpx2.Response(
        503,
        json={
            "error": {
                "code": 503,
                "message": "The model is overloaded. Please try again later.",
                "status": "UNAVAILABLE",
            }
        },
        headers={"Retry-After": "5"},
        request=_REQUEST,
    )
    assert classify(response).category is C.OVERLOADED
    assert classify(response).retry_after == 5.0
    wrapped = httpx2.HTTPStatusError("Server error '503'", request=_REQUEST, response=response)
    assert classify(wrapped).category is C.OVERLOADED
    assert classify(httpx2.ReadTimeout("timed out", request=_REQUEST)).category is C.TIMEOUT
    assert classify(httpx2.ConnectError("refused", request=_REQUEST)).category is C.CONNECTION
    assert (
        classify(httpx2.RemoteProtocolError("peer closed", request=_REQUEST)).category
        is C.CONNECTION
    )


@pytest.mark.parametrize(
    ("error", "category"),
    [
        # (status, body) tuples with str, bytes and parsed bodies
        ((413, "Request Entity Too Large"), C.PAYLOAD_TOO_LARGE),
        ((429, b'{"error":{"message":"slow down"}}'), C.RATE_LIMIT),
        ((402, {"error": {"message": "Payment Required"}}), C.BILLING),
        (
            (
                404,
                {
                    "error": {
                        "message": "The model `gpt-9` does not exist",
                        "code": "model_not_found",
                    }
                },
            ),
            C.MODEL_NOT_FOUND,
        ),
        ((403, "Forbidden"), C.AUTH),
        ((504, "Gateway Timeout"), C.SERVER_ERROR),
        ((529, ""), C.OVERLOADED),
        ((200, '{"id": "chatcmpl-9", "choices": [{"mess'), C.SERVER_ERROR),
        ((200, ""), C.SERVER_ERROR),
        ((400, '{"error": {"message": "Invalid value for \'temperature\'"}}'), C.MESSAGE_FORMAT),
        # MiniMax answers 200 and puts the error in base_resp
        (
            (200, {"base_resp": {"status_code": 1002, "status_msg": "rate limit exceeded(RPM)"}}),
            C.RATE_LIMIT,
        ),
        ((200, {"base_resp": {"status_code": 1039, "status_msg": "token limit"}}), C.RATE_LIMIT),
        ((200, {"base_resp": {"status_code": 1004, "status_msg": "authorization failed"}}), C.AUTH),
        # plain exceptions
        (TimeoutError("timed out"), C.TIMEOUT),
        (ConnectionResetError(104, "Connection reset by peer"), C.CONNECTION),
        (OSError(101, "Network is unreachable"), C.CONNECTION),
        ("Request timed out.", C.TIMEOUT),
        ("Connection error.", C.CONNECTION),
    ],
)
def test_shapes(error: object, category: Category) -> None:
    assert classify(error).category is category


class _JsonOnlyResponse:
    """A response double that offers ``.json()`` but no ``.text``."""

    def __init__(self) -> None:
        self.status_code = 429
        self.headers = {"Retry-After": "4"}

    def json(self) -> object:
        return {"error": {"message": "Rate limit exceeded: free-models-per-min", "code": 429}}


class ClientError(Exception):
    """Shaped like botocore's ``ClientError``: the parsed reply is ``.response``."""

    def __init__(self, response: dict[str, Any], operation: str) -> None:
        error = response["Error"]
        super().__init__(
            f"An error occurred ({error['Code']}) when calling the {operation} operation: "
            f"{error['Message']}"
        )
        self.response = response


class _AiohttpStyleError(Exception):
    """Shaped like aiohttp's ``ClientResponseError``: ``status`` and ``headers`` on itself."""

    def __init__(self) -> None:
        super().__init__("429, message='Too Many Requests'")
        self.status = 429
        self.headers = {"Retry-After": "9"}


def test_duck_typed_shapes() -> None:
    reply = classify(_JsonOnlyResponse())
    assert (reply.category, reply.retry_after) == (C.RATE_LIMIT, 4.0)
    # daisuke-awaji/moca#254 (Bedrock's ValidationException, as botocore raises it)
    boto = ClientError(
        {
            "Error": {
                "Code": "ValidationException",
                "Message": "The model returned the following errors: prompt is too long: "
                "200049 tokens > 200000 maximum",
            },
            "ResponseMetadata": {"HTTPStatusCode": 400},
        },
        "Converse",
    )
    diagnosis = classify(boto)
    assert (diagnosis.category, diagnosis.status_code, diagnosis.provider_code) == (
        C.CONTEXT_OVERFLOW,
        400,
        "ValidationException",
    )
    aiohttp_error = classify(_AiohttpStyleError())
    assert (aiohttp_error.category, aiohttp_error.retry_after) == (C.RATE_LIMIT, 9.0)


@pytest.mark.parametrize(
    ("cls", "category"),
    [
        (OverloadedError, C.OVERLOADED),
        (RateLimitError, C.RATE_LIMIT),
        (BadRequestError, C.MESSAGE_FORMAT),
    ],
)
def test_class_name_stands_in_for_a_missing_status(
    cls: type[Exception], category: Category
) -> None:
    bare = cls.__new__(cls)
    Exception.__init__(bare, "request failed")
    assert classify(bare).category is category


def test_minimax_base_resp_code_is_the_provider_code() -> None:
    diagnosis = classify(
        (200, {"base_resp": {"status_code": 1008, "status_msg": "insufficient balance"}})
    )
    assert (diagnosis.category, diagnosis.provider_code, diagnosis.message) == (
        C.BILLING,
        "1008",
        "insufficient balance",
    )


def test_any_other_exception_is_unknown_with_its_text() -> None:
    diagnosis = classify(ValueError("boom"))
    assert (diagnosis.category, diagnosis.action, diagnosis.retryable) == (
        C.UNKNOWN,
        Action.FAIL,
        False,
    )
    assert diagnosis.message == "boom"
    assert classify(KeyError()).message == "KeyError"


def test_wrapped_exception_reaches_the_provider_error() -> None:
    inner = _sdk_error(
        400, {"error": {"message": "prompt is too long: 300000 tokens > 200000 maximum"}}
    )
    try:
        try:
            raise inner
        except openai.BadRequestError as exc:
            raise RuntimeError("model call failed") from exc
    except RuntimeError as outer:
        diagnosis = classify(outer)
    assert (diagnosis.category, diagnosis.status_code) == (C.CONTEXT_OVERFLOW, 400)


# --- messages, context_window, summary ----------------------------------------------------


def test_message_index_needs_messages() -> None:
    text = (
        "messages.12: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: toolu_1."
    )
    assert classify(text).message_index is None
    assert classify(text, messages=HISTORY[:13]).message_index == 12
    listed = classify("messages[3].content: Input should be a valid list", messages=HISTORY)
    assert listed.message_index == 3
    assert classify("no index here", messages=HISTORY).message_index is None


def test_bare_strings_lose_the_client_prefix() -> None:
    # smol-ai/developer#7
    diagnosis = classify(
        "openai.error.InvalidRequestError: This model's maximum context length is 4097 tokens. "
        "However, your messages resulted in 7575 tokens. Please reduce the length of the "
        "messages."
    )
    assert diagnosis.message.startswith("This model's maximum context length")
    assert (diagnosis.requested_tokens, diagnosis.allowed_tokens) == (7575, 4097)


def test_a_403_worded_as_a_rate_limit_is_a_rate_limit() -> None:
    # issue #9: "key limit exceeded, please wait", as a gateway answers it
    diagnosis = classify((403, '{"error": {"message": "key limit exceeded, please wait"}}'))
    assert (diagnosis.category, diagnosis.action) == (C.RATE_LIMIT, Action.BACKOFF)
    assert classify((403, "Forbidden")).category is C.AUTH


def test_waits_are_read_in_days_too() -> None:
    # openai/codex: UsageLimitReached's "try again in …" suffix
    text = "You've hit your usage limit. Upgrade to Pro or try again in 3 days 1 hour 7 minutes."
    assert classify((429, text)).retry_after == 3 * 86400 + 3600 + 7 * 60


def test_overflow_by_n_tokens_states_the_prompt_size_given_the_window() -> None:
    # earendil-works/pi packages/ai/src/utils/overflow.ts (Ollama's wording)
    text = "prompt too long; exceeded max context length by 3294 tokens"
    diagnosis = classify((400, text), context_window=2000)
    assert diagnosis.category is C.CONTEXT_OVERFLOW
    assert (diagnosis.requested_tokens, diagnosis.allowed_tokens) == (5294, 2000)
    assert classify((400, text)).requested_tokens is None


def test_context_window_fills_a_missing_limit() -> None:
    # aws-samples/assessment-generator#2
    diagnosis = classify(
        "ValidationException: Input is too long for requested model.", context_window=200_000
    )
    assert (diagnosis.category, diagnosis.allowed_tokens) == (C.CONTEXT_OVERFLOW, 200_000)
    stated = classify("prompt is too long: 210000 tokens > 200000 maximum", context_window=1)
    assert stated.allowed_tokens == 200000
    assert classify("Incorrect API key provided", context_window=5).allowed_tokens is None


def test_context_window_decides_overflow_when_the_text_lacks_the_window() -> None:
    text = "you requested 9000 tokens (8000 in the messages, 1000 in the completion)"
    assert classify(text, context_window=8192).category is C.OUTPUT_LIMIT
    assert classify(text, context_window=7000).category is C.CONTEXT_OVERFLOW


BRIEF_EXAMPLES = [
    (
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 130000 tokens.",
        C.CONTEXT_OVERFLOW,
        130000,
        128000,
    ),
    ("prompt is too long: 210000 tokens > 200000 maximum", C.CONTEXT_OVERFLOW, 210000, 200000),
    (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)",
        C.CONTEXT_OVERFLOW,
        1200000,
        1048576,
    ),
    (
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 "
        "maximum context length",
        C.CONTEXT_OVERFLOW,
        40000,
        32768,
    ),
    (
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion)",
        C.OUTPUT_LIMIT,
        5000,
        4096,
    ),
    (
        "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for "
        "claude-3-haiku-20240307",
        C.OUTPUT_LIMIT,
        None,
        4096,
    ),
    ("Input is too long for requested model", C.CONTEXT_OVERFLOW, None, None),
    ("exceeded model token limit", C.CONTEXT_OVERFLOW, None, None),
]


@pytest.mark.parametrize(("text", "category", "requested", "allowed"), BRIEF_EXAMPLES)
def test_the_briefs_examples(
    text: str, category: Category, requested: int | None, allowed: int | None
) -> None:
    diagnosis = classify(text)
    assert diagnosis.category is category
    assert (diagnosis.requested_tokens, diagnosis.allowed_tokens) == (requested, allowed)


def test_the_briefs_figures() -> None:
    reduce = classify(
        "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens"
    )
    assert (reduce.output_tokens, reduce.suggested_max_tokens) == (8192, 4096)
    vllm = classify(
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion)"
    )
    assert (vllm.input_tokens, vllm.output_tokens, vllm.suggested_max_tokens) == (4000, 1000, 96)
    for text, seconds in {
        "try again in 2.5s": 2.5,
        "Please retry in 37.2s": 37.2,
        "retry after 20 seconds": 20.0,
    }.items():
        assert classify((429, text)).retry_after == pytest.approx(seconds)


def test_summary_is_one_line_that_names_the_plan() -> None:
    for case in ALL_ROWS:
        summary = classify(case.values[0].text).summary()
        assert "\n" not in summary
        assert "condense will" in summary
    assert (
        "lower max_tokens to 4096"
        in classify(
            "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens"
        ).summary()
    )
    assert "wait 2.5s" in classify((429, "try again in 2.5s")).summary()
    assert "will not retry" in classify((401, "Unauthorized")).summary()


def test_public_api() -> None:
    assert errors_api.__all__ == sorted(errors_api.__all__)
    assert {"Action", "Category", "Diagnosis", "classify"} <= set(errors_api.__all__)
    assert Category.TOOL_PAIRING == "tool_pairing"
    assert Action.REDUCE_OUTPUT == "reduce_output"
    with pytest.raises(AttributeError):
        classify("x").category = C.AUTH  # type: ignore[misc]


# --- properties -------------------------------------------------------------------------

_texts = st.text(alphabet=string.printable + "上下文超过{}[]\"'", max_size=300)
_bodies = st.one_of(
    _texts,
    st.binary(max_size=200),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(-10, 10_000), _texts),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(
                st.sampled_from(
                    [
                        "error",
                        "message",
                        "code",
                        "type",
                        "status",
                        "metadata",
                        "raw",
                        "base_resp",
                        "status_code",
                    ]
                ),
                inner,
                max_size=4,
            ),
        ),
        max_leaves=12,
    ),
)


@settings(max_examples=examples(300), deadline=None)
@given(status=st.one_of(st.none(), st.integers(100, 599)), body=_bodies)
def test_classify_never_raises_and_stays_consistent(status: int | None, body: object) -> None:
    diagnosis = classify((status, body) if status is not None else body)
    assert isinstance(diagnosis.category, Category)
    assert diagnosis.retryable is (diagnosis.action is not Action.FAIL)
    overrides = {
        (C.RATE_LIMIT, Action.COMPRESS),
        (C.BILLING, Action.REDUCE_OUTPUT),
    }
    assert (
        diagnosis.action is DEFAULT_ACTIONS[diagnosis.category]
        or (diagnosis.category, diagnosis.action) in overrides
    )
    if status == 402:
        assert diagnosis.category is C.BILLING
    assert "\n" not in diagnosis.summary()


@settings(max_examples=examples(100), deadline=None)
@given(minutes=st.integers(0, 59), seconds=st.integers(0, 59), millis=st.integers(0, 999))
def test_reset_durations(minutes: int, seconds: int, millis: int) -> None:
    value = f"{minutes}m{seconds}.{millis:03d}s"
    error = _sdk_error(
        429, {"error": {"message": "Rate limit reached"}}, {"x-ratelimit-reset-tokens": value}
    )
    assert classify(error).retry_after == pytest.approx(minutes * 60 + seconds + millis / 1000)
