"""An independent judge of what ``compress`` returns on each turn of a session (issue 17).

Nothing here calls ``condense.validate`` or reads condense's plan: the rules are the chat
API's, written out from the error texts real users saw (``shared/provider-rules.md``),
and the token count is a provider's own way of counting:

- a ``tool`` message answers a call of the assistant message before its run of results
  ("messages with role 'tool' must be a response to a preceeding message with
  'tool_calls'", litellm #4931); every call of an assistant message is answered right
  after it ("An assistant message with 'tool_calls' must be followed by tool messages
  responding to each 'tool_call_id'", openai-agents #1061); ``arguments`` is a JSON
  object ("Failed to parse tool call arguments as JSON", OpenHands SDK #2887);
- no two user or two assistant messages side by side that were not side by side in what
  the agent sent ("deepseek-reasoner does not support successive user or assistant
  messages", deepseek-ai/DeepSeek-R1 #21): a same-role run is the caller's or nobody's;
- the latest ask (the last user message that says something) reaches the provider word
  for word, after any summary, and at most one summary is sent;
- the count: what a provider on OpenAI's ``o200k_base`` vocabulary bills, counted here
  with tiktoken straight from the rank file shipped in the package (nothing downloaded)
  and OpenAI's published framing — 3 tokens a message, 1 more for a name, 3 to prime the
  reply, each tool call its name and arguments plus 3 ("How to count tokens with
  tiktoken"); none of condense's counting code. The two can differ on the framing of
  what OpenAI does not publish: a result *fits at the provider* when the judge's count
  is within ``ALLOWANCE`` of the budget.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import tiktoken

ALLOWANCE = 0.02
"""How far above the budget the judge's count may be (framing OpenAI does not publish)."""
SUMMARY_HEADER = "[condense: summary of "
"""How every summary condense writes starts (its documented block format)."""

_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""tiktoken's published pre-tokenizer pattern of ``o200k_base``."""


@functools.cache
def _encoding() -> tiktoken.Encoding:
    data = resources.files("condense.tokens") / "data" / "o200k_base.tiktoken.gz"
    ranks: dict[bytes, int] = {}
    for line in gzip.decompress(data.read_bytes()).splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name="session_judge", pat_str=_O200K_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )


@functools.lru_cache(maxsize=65_536)
def _text(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def _value(value: Any) -> int:
    if value is None or isinstance(value, bool):
        return 0
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, Mapping):
        return sum(_value(v) for k, v in value.items() if k not in ("type", "id"))
    if isinstance(value, list):
        return sum(_value(v) for v in value)
    return _text(json.dumps(value))


def provider_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """What a provider counting OpenAI's way bills for ``messages``."""
    total = 3
    for message in messages:
        total += 3
        for key, value in message.items():
            if key == "tool_calls":
                for call in value or ():
                    function = call.get("function") or {}
                    total += 3 + _value(function.get("name")) + _value(function.get("arguments"))
            else:
                total += _value(value) + (1 if key == "name" else 0)
    return total


def fits_at_provider(messages: Sequence[Mapping[str, Any]], budget: int) -> bool:
    return provider_tokens(messages) <= budget * (1 + ALLOWANCE)


def _texts(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def says_something(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and any(t.strip() for t in _texts(message))


def latest_ask(messages: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The last user message that says something."""
    return next((m for m in reversed(messages) if says_something(m)), None)


def summaries(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many summaries ``messages`` hold."""
    return sum(text.count(SUMMARY_HEADER) for m in messages for text in _texts(m))


def chat_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every rule of the module docstring's first point that ``messages`` break."""
    found: list[str] = []
    pending: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            found.append(f"{index}: unknown role {role!r}")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                found.append(f"{index}: result {call_id!r} answers no pending call")
            else:
                pending.remove(call_id)
            continue
        if pending:
            found.append(f"{index}: calls {pending} left unanswered")
            pending = []
        for call in message.get("tool_calls") or ():
            pending.append(call.get("id"))
            arguments = (call.get("function") or {}).get("arguments")
            try:
                parsed = json.loads(arguments)
            except (TypeError, ValueError):
                parsed = None
            if not isinstance(parsed, dict):
                found.append(f"{index}: arguments of {call.get('id')!r} are not a JSON object")
    if pending:
        found.append(f"end: calls {pending} left unanswered")
    return found


def made_runs(output: Sequence[Mapping[str, Any]], sent: Sequence[Mapping[str, Any]]) -> list[int]:
    """Positions in ``output`` where two user or two assistant messages stand side by side
    that did not in ``sent`` (the same objects, next to each other)."""
    where = {id(m): i for i, m in enumerate(sent)}
    made = []
    for index in range(1, len(output)):
        first, second = output[index - 1], output[index]
        role = first.get("role")
        if role != second.get("role") or role not in ("user", "assistant"):
            continue
        a, b = where.get(id(first)), where.get(id(second))
        if a is None or b is None or b != a + 1:
            made.append(index)
    return made


def ask_verbatim_last(output: Sequence[Mapping[str, Any]], ask: Mapping[str, Any]) -> bool:
    """``ask`` is in ``output`` word for word, and no user message after it says
    anything (nothing took the ask's place)."""
    positions = [i for i, m in enumerate(output) if m == ask]
    if not positions:
        return False
    return not any(says_something(m) for m in output[positions[-1] + 1 :])
