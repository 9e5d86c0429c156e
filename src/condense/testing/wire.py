"""Answers in each wire API's own shape, for the fake providers.

Three APIs are spoken, each named by a key of :data:`APIS`:

- ``chat`` — OpenAI Chat Completions (``POST /v1/chat/completions``);
- ``anthropic`` — Anthropic Messages (``POST /v1/messages``; ``count_tokens`` is the
  ``POST /v1/messages/count_tokens`` sibling, answered ``{"input_tokens": N}``);
- ``responses`` — OpenAI Responses (``POST /v1/responses``).

For each there is a complete answer (``answer``), the server-sent events of a streamed
one (``events``: each item is one event's bytes, framed exactly as the provider frames
it), an error body in the provider's shape (``error_body``) and the request's history as
canonical messages (``request_messages``), so a fake can validate and count it. The
shapes follow the providers' API references closely enough for the official ``openai``
and ``anthropic`` SDKs to parse them, streaming helpers included.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

__all__ = [
    "APIS",
    "answer",
    "api_for_path",
    "error_body",
    "events",
    "keepalive",
    "request_messages",
]

APIS = ("chat", "anthropic", "responses", "count_tokens")

_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def api_for_path(path: str) -> str | None:
    """The API a request path speaks (``None`` for a path no fake serves); the same
    lookup as the proxy's (:func:`condense.server.apis.api_for_path`)."""
    from condense.server.apis import api_for_path as lookup

    api = lookup(path)
    return api.name if api is not None else None


def request_messages(api: str, body: Mapping[str, Any]) -> list[Any]:
    """The history of a request as canonical (OpenAI chat) messages.

    Raises ``condense.FormatError`` when the body is not a request of that API.
    """
    from condense.formats import Conversation

    if api == "chat":
        messages = body.get("messages")
        return messages if isinstance(messages, list) else []
    native = "responses" if api == "responses" else "anthropic"
    return Conversation.read(dict(body), format=native).messages


def error_body(
    api: str, status: int, message: str, *, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """An error body in ``api``'s provider shape: the provider module's own builder, the
    one the proxy answers with (:func:`condense.server.apis.error_body`)."""
    from condense.server.apis import APIS
    from condense.server.apis import error_body as body

    return body(APIS[api], status, message, code=code, param=param)


def answer(
    api: str, body: Mapping[str, Any], text: str | None, finish: str, usage: tuple[int, int]
) -> dict[str, Any]:
    """A complete (non-streamed) answer with ``text``; ``usage`` is (prompt, completion)."""
    prompt, completion = usage
    model = str(body.get("model", "fake-model"))
    if api == "count_tokens":
        return {"input_tokens": prompt}
    if api == "anthropic":
        return {
            "id": "msg_condense_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text or ""}] if text is not None else [],
            "stop_reason": _ANTHROPIC_STOP.get(finish, "end_turn"),
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }
    if api == "responses":
        return _response(body, text, finish, usage, status=_responses_status(finish))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def events(
    api: str, body: Mapping[str, Any], text: str | None, finish: str, usage: tuple[int, int]
) -> list[bytes]:
    """The streamed answer as SSE events, each framed as the provider frames it."""
    pieces = _pieces(text)
    if api == "anthropic":
        return _anthropic_events(body, text, pieces, finish, usage)
    if api == "responses":
        return _responses_events(body, text, pieces, finish, usage)
    return _chat_events(body, text, pieces, finish, usage)


def keepalive(api: str) -> bytes:
    """The idle keep-alive a provider sends in a quiet stream."""
    if api == "anthropic":
        return _sse("ping", {"type": "ping"})
    return b": keep-alive\n\n"


# -- chat ------------------------------------------------------------------------------------


def _chat_events(
    body: Mapping[str, Any],
    text: str | None,
    pieces: list[str],
    finish: str,
    usage: tuple[int, int],
) -> list[bytes]:
    base = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": str(body.get("model", "fake-model")),
    }
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "content": "" if text is not None else None}
    ]
    deltas += [{"content": piece} for piece in pieces]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        for delta in deltas
    ]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        prompt, completion = usage
        totals = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        chunks.append({**base, "choices": [], "usage": totals})
    return [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [b"data: [DONE]\n\n"]


# -- anthropic -------------------------------------------------------------------------------


def _anthropic_events(
    body: Mapping[str, Any],
    text: str | None,
    pieces: list[str],
    finish: str,
    usage: tuple[int, int],
) -> list[bytes]:
    prompt, completion = usage
    message = answer("anthropic", body, None, finish, (prompt, 1))
    message.update(content=[], stop_reason=None)
    out = [_sse("message_start", {"type": "message_start", "message": message})]
    if text is not None:
        start = {"type": "text", "text": ""}
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": start},
            )
        )
        out.append(_sse("ping", {"type": "ping"}))
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            out.append(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
            )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    stop = {"stop_reason": _ANTHROPIC_STOP.get(finish, "end_turn"), "stop_sequence": None}
    out.append(
        _sse(
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": completion}},
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


# -- responses -------------------------------------------------------------------------------


def _responses_status(finish: str) -> str:
    return "incomplete" if finish == "length" else "completed"


def _response(
    body: Mapping[str, Any],
    text: str | None,
    finish: str,
    usage: tuple[int, int],
    *,
    status: str,
) -> dict[str, Any]:
    prompt, completion = usage
    output: list[dict[str, Any]] = []
    if text is not None and status != "in_progress":
        output.append(_output_message(text, "completed"))
    return {
        "id": "resp_condense_fake",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": str(body.get("model", "fake-model")),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None
        if status == "in_progress"
        else {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
        "metadata": body.get("metadata") or {},
    }


def _output_message(text: str, status: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_condense_fake",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _responses_events(
    body: Mapping[str, Any],
    text: str | None,
    pieces: list[str],
    finish: str,
    usage: tuple[int, int],
) -> list[bytes]:
    sequence = iter(range(1_000_000))
    out: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        out.append(_sse(kind, {"type": kind, "sequence_number": next(sequence), **fields}))

    pending = _response(body, None, finish, usage, status="in_progress")
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    if text is not None:
        item = {**_output_message("", "in_progress"), "content": []}
        where = {"item_id": item["id"], "output_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        emit("response.output_item.added", output_index=0, item=item)
        emit("response.content_part.added", **where, content_index=0, part=part)
        for piece in pieces:
            emit("response.output_text.delta", **where, content_index=0, delta=piece)
        emit("response.output_text.done", **where, content_index=0, text=text)
        emit("response.content_part.done", **where, content_index=0, part={**part, "text": text})
        emit("response.output_item.done", output_index=0, item=_output_message(text, "completed"))
    done = _response(body, text, finish, usage, status=_responses_status(finish))
    emit(f"response.{done['status']}", response=done)
    return out


# -- shared ----------------------------------------------------------------------------------


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(text: str | None) -> list[str]:
    """``text`` in a few chunks, split after spaces, the way a server streams tokens."""
    if not text:
        return []
    words = text.split(" ")
    step = max(1, len(words) // 4)
    groups = [words[i : i + step] for i in range(0, len(words), step)]
    pieces = [" ".join(group) for group in groups]
    return [piece + " " for piece in pieces[:-1]] + pieces[-1:]
