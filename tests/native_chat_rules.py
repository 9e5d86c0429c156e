"""The Gemini and Bedrock Converse rules on a request, written out on their own.

No condense code: these read the native request as the API does, so tests can judge
condense's output by the provider's rules. Sources:

Gemini ``generateContent`` (googleapis/python-genai ``types.Content``/``types.Part``;
error texts from ``provider-rules.md``):
- "Please ensure that function response turn comes immediately after a function call
  turn." (langchain #27799); "… the number of function response parts is equal to the
  number of function call parts of the function call turn." (gemini-cli #4504); "…
  function call turn comes immediately after a user turn or after a function response
  turn." (gemini-cli #26486);
- "contents.parts must not be empty"; unknown fields are refused ('Unknown name "id" at
  contents[3].parts[1].function_call', gemini-cli #13972).

Bedrock Converse (AWS API reference ``Message``/``ContentBlock``; error texts seen in
camel-ai #3954, strands-agents #1435, llama_index PR #22775):
- "A conversation must start with a user message." / "… must alternate between user and
  assistant roles.";
- every block is a union with exactly one member;
- "Expected toolResult blocks at messages.N.content for the following Ids: …";
  "The number of toolResult blocks at messages.N.content exceeds the number of toolUse
  blocks of previous turn."; toolUseId matches ``[a-zA-Z0-9_.:-]+``, 1–64 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

GEMINI_PART_KEYS = {
    "text",
    "thought",
    "thoughtSignature",
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
    "videoMetadata",
    "partMetadata",
    "mediaResolution",
}
_SNAKE = {
    "thought_signature": "thoughtSignature",
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "inline_data": "inlineData",
    "file_data": "fileData",
    "executable_code": "executableCode",
    "code_execution_result": "codeExecutionResult",
    "part_metadata": "partMetadata",
}


def gemini_problems(request: Any, *, ids_allowed: bool = False) -> list[str]:
    """Every Gemini rule the request breaks (``ids_allowed``: whether calls may carry an
    ``id``, as they may when the original request had them)."""
    contents = request["contents"] if isinstance(request, dict) else request
    return list(_gemini(contents, ids_allowed))


def _camel_keys(part: dict[str, Any]) -> dict[str, Any]:
    return {_SNAKE.get(key, key): value for key, value in part.items()}


def _gemini(contents: list[Any], ids_allowed: bool) -> Iterator[str]:
    previous: tuple[str, int, int] | None = None  # (role, calls, responses) of the last turn
    for index, turn in enumerate(contents):
        role = turn.get("role", "user")
        parts = turn.get("parts")
        if role not in ("user", "model", "function"):
            yield f"contents[{index}]: role {role!r}"
        if not isinstance(parts, list) or not parts:
            yield f"contents[{index}].parts must not be empty"
            continue
        calls = responses = 0
        for position, raw in enumerate(parts):
            part = _camel_keys(raw)
            unknown = set(part) - GEMINI_PART_KEYS
            if unknown:
                yield f"contents[{index}].parts[{position}]: unknown fields {sorted(unknown)}"
            call = part.get("functionCall")
            if isinstance(call, dict):
                calls += 1
                if "id" in call and not ids_allowed:
                    yield f'Unknown name "id" at contents[{index}].parts[{position}].function_call'
                if not isinstance(call.get("args", {}), dict):
                    yield f"contents[{index}].parts[{position}]: args is not an object"
            if isinstance(part.get("functionResponse"), dict):
                responses += 1
        if calls and role != "model":
            yield f"contents[{index}]: function calls in a {role} turn"
        if calls and previous is not None and previous[0] == "model":
            yield (
                f"contents[{index}]: function call turn comes immediately after a user turn "
                "or after a function response turn"
            )
        if responses:
            if previous is None or previous[1] == 0:
                yield f"contents[{index}]: function response turn comes right after a call turn"
            elif previous[1] != responses:
                yield f"contents[{index}]: response parts ≠ call parts of the call turn"
        elif previous is not None and previous[1]:
            yield f"contents[{index}]: the call turn before it got no function response turn"
        previous = (role if role != "function" else "user", calls, responses)


BEDROCK_MEMBERS = {
    "text",
    "image",
    "document",
    "video",
    "audio",
    "toolUse",
    "toolResult",
    "reasoningContent",
    "cachePoint",
    "guardContent",
    "citationsContent",
    "searchResult",
}
_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$")


def bedrock_problems(request: Any) -> list[str]:
    """Every Converse rule the request breaks."""
    messages = request["messages"] if isinstance(request, dict) else request
    found: list[str] = []
    system = request.get("system") if isinstance(request, dict) else None
    for position, block in enumerate(system or []):
        if not (isinstance(block, dict) and len(block) == 1):
            found.append(f"system[{position}] is not a one-member block")
    pending: list[str] = []  # toolUseIds of the previous assistant message
    for index, message in enumerate(messages):
        role = message.get("role")
        if index == 0 and role != "user":
            found.append("A conversation must start with a user message.")
        if index and role == messages[index - 1].get("role"):
            found.append("A conversation must alternate between user and assistant roles.")
        content = message.get("content")
        if not isinstance(content, list) or not content:
            found.append(f"messages.{index}.content must be a non-empty list")
            continue
        uses: list[str] = []
        results: list[str] = []
        for position, block in enumerate(content):
            if not (isinstance(block, dict) and len(block) == 1 and set(block) <= BEDROCK_MEMBERS):
                found.append(f"messages.{index}.content.{position} is not a one-member block")
                continue
            if "text" in block and not str(block["text"]).strip():
                found.append(f"The text field at messages.{index}.content.{position} is blank")
            if "toolUse" in block:
                ident = block["toolUse"].get("toolUseId")
                if not (isinstance(ident, str) and _TOOL_USE_ID.match(ident)):
                    found.append(f"messages.{index}.content.{position}: toolUseId {ident!r}")
                uses.append(str(ident))
            if "toolResult" in block:
                results.append(str(block["toolResult"].get("toolUseId")))
        if role == "assistant" and results:
            found.append(f"messages.{index}: toolResult blocks in an assistant message")
        if len(results) > len(pending):
            found.append(
                f"The number of toolResult blocks at messages.{index}.content exceeds the "
                "number of toolUse blocks of previous turn."
            )
        missing = [i for i in pending if i not in results]
        if missing:
            found.append(
                f"Expected toolResult blocks at messages.{index}.content for the following "
                f"Ids: {', '.join(missing)}"
            )
        pending = uses
    if pending:
        found.append(f"the last message's toolUse blocks {pending} have no toolResult")
    return found
